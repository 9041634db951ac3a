"""Whatever xDSL raises while building an attribute or type is an error at
that attribute or type (line and column), never an internal error; and a
verifier error survives IR that xDSL cannot print (issue 10, fuzz corpus).
The messages themselves are tested in test/gc-opt/attribute-errors.mlir."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FileLineColLoc,
    Float80Type,
    FloatAttr,
    IntAttr,
    ModuleOp,
    StringAttr,
    i32,
)

import graphcompiler
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.ir.verifier import verify_module


def _error(text: str) -> str:
    with pytest.raises(DiagnosticError) as caught:
        graphcompiler.parse(text, filename="in.mlir")
    return str(caught.value).splitlines()[0]


@pytest.mark.parametrize(
    "attribute, column, message",
    [
        ("dense<[1.0, 3.4e+39]> : tensor<2xf32>", 32, "floating point value too large"),
        ("[1, dense<(1.0e100, 0.0)> : tensor<2xcomplex<f32>>]", 36, "floating point value too"),
        ("array<f16: 1.0e9>", 32, "floating point value too large for its type"),
        ("array<i0: 0>", 32, "elements of zero bits (i0) are not supported here"),
        ("array<i128: 1>", 32, "constants of this type are not supported"),
        ("dense<1.0> : tensor<2xf128>", 32, "constants of this type are not supported"),
        ("dense<[1, 99999999999999999999]> : tensor<2xi32>", 32, "Integer value 9999"),
        ("dense<[(1.0, 0.0), 2.0]> : tensor<2xcomplex<f32>>", 51, "expected a (real, imaginary)"),
        ("dense<(1, 2.0)> : tensor<2xcomplex<f32>>", 38, "Complex value must be either"),
        ("dense<(0x10, 2.0)> : tensor<2xcomplex<i32>>", 38, "expected integer parts"),
        ("dense<(0x1ffff, 2.0)> : tensor<2xcomplex<bf16>>", 38, "hexadecimal literal does not fit"),
        ("{a = [1.0 : f80]}", 38, "f80 attributes are not supported"),
        ("[" * 400 + "]" * 400, None, "attribute nested too deeply"),
    ],
)
def test_an_attribute_xdsl_cannot_build_is_located(attribute, column, message):
    line = _error(f"func.func @f() attributes {{x = {attribute}}} {{\n  func.return\n}}")
    where, text = line.split(": error: ")
    assert text.startswith(message), line
    if column is not None:
        assert where == f"in.mlir:1:{column}"
    else:
        assert where.startswith("in.mlir:1:")


def test_a_dialect_type_with_the_wrong_parameters_is_located():
    line = _error("func.func @f(%p: !tir.ptr<f80>) {\n  func.return\n}")
    assert line == "in.mlir:1:18: error: wrong number of parameters for 'tir.ptr' (it takes 0)"


def test_a_corpus_constant_that_no_longer_reaches_the_verifier():
    text = 'func.func @three() {\n  %0 = "arith.constant"() <{value = 1 : f80}> : () -> i32\n}'
    assert _error(text) == (
        "in.mlir:2:37: error: f80 attributes are not supported (f16, bf16, f32 and f64 are)"
    )


def test_a_verifier_error_survives_ir_that_cannot_be_printed():
    """xDSL prints the whole module into a verifier's exception; an f80
    attribute (built in Python) made that printing raise NotImplementedError
    in place of the verifier's message."""
    op = arith.ConstantOp.create(
        properties={"value": FloatAttr(1.0, Float80Type())}, result_types=[i32]
    )
    op.location = FileLineColLoc(StringAttr("built.mlir"), IntAttr(3), IntAttr(5))
    with pytest.raises(DiagnosticError) as caught:
        verify_module(ModuleOp([op]))
    assert str(caught.value) == (
        "built.mlir:3:5: error: 'arith.constant' op attribute i32 expected from variable 'T',"
        " but got f80"
    )
