"""The seed's Tensor IR examples built with the Python builder: the printed
text parses back to an equal module, and the verifier rules hold for IR
built in Python too."""

import pytest
from xdsl.dialects.builtin import IndexType, f32, i32

import graphcompiler
from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.ir.verifier import verify_module


def round_trips(module):
    verify_module(module)
    text = str(module)
    parsed = graphcompiler.parse(text)
    assert str(parsed) == text
    assert parsed.is_structurally_equivalent(module)
    return text


def test_seed_002_parallel_for():
    b = TirBuilder()
    with b.make_func("main", []):
        value = b.make_var(f32, b.const(1.0, f32))
        A = b.make_tensor([100], f32)
        with b.make_for(0, 100, 1, parallel=True) as i:
            b.make_store(b.add(b.read(value), i), A, [i])
        b.make_return()
    text = round_trips(b.module)
    assert "tir.for %6 = %3 to %4 step %5 parallel {" in text
    assert "tir.add %7, %6 : (f32, index) -> f32" in text
    assert "tir.store %8, %2[%6] : !tir.tensor<100xf32>" in text


def test_constants_are_shared_within_their_block_only():
    """A constant asked for twice in one block is made once; a loop body
    gets its own (an outlined parallel body must not capture an outer
    one), and one erased is made again."""
    b = TirBuilder()
    with b.make_func("main", []):
        one = b.const(1, IndexType())
        assert b.const(1, IndexType()) is one
        assert b.const(1, i32) is not one  # another type, another constant
        with b.make_for(0, 4, 1) as i:
            inner = b.const(1, IndexType())
            assert inner is not one and b.const(1, IndexType()) is inner
            b.make_store(b.add(i, inner), b.make_tensor([8], IndexType()), [i])
        seven = b.const(7, IndexType())
        seven.owner.detach()
        seven.owner.erase()
        assert b.const(7, IndexType()) is not seven
        b.make_return()
    verify_module(b.module)


def test_seed_000_main_entry():
    b = TirBuilder()
    tensor = tir.TirTensorType([1024, 1024], f32)
    matmul_core = b.make_decl("matmul_core__1", [tensor] * 3)
    add = b.make_decl("add__2", [tensor] * 3)
    with b.make_func("main_entry", [tensor] * 3) as (in0, in1, out):
        matmul_out = b.make_tensor([1024, 1024], f32)
        b.make_evaluate(b.make_call(matmul_core, [matmul_out, in0, in1]))
        b.make_evaluate(b.make_call(add, [out, matmul_out, in1]))
        b.make_return()
    text = round_trips(b.module)
    assert "tir.call @matmul_core__1(%3, %0, %1)" in text
    assert "tir.call @add__2(%2, %3, %1)" in text


def test_every_statement_kind_round_trips():
    b = TirBuilder()
    print_int = b.make_decl("print_int", [i32])
    counter = b.make_global("counter", i32, tir.IntegerAttr(0, i32))
    with b.make_func("work", [i32], i32) as (x,):
        total = b.global_ref(counter)
        positive = b.binary(tir.GtOp, x, 0)
        branch = b.make_if(positive, with_else=True)
        with b.at_end_of(branch.then_region.block):
            b.make_assign(total, x)
        with b.at_end_of(branch.else_region.block):
            b.make_assign(total, b.sub(0, x))
        with b.make_stmts():
            local = b.make_var(i32)
            b.make_assign(local, b.read(total))
            b.make_evaluate(b.make_call(print_int, [b.read(local)]))
        pointer = b.make_func_addr(print_int)
        b.make_evaluate(b.make_call_indirect(pointer, print_int, [x]))
        b.make_return(b.read(total))
    round_trips(b.module)


def test_loop_var_is_only_visible_inside_its_loop():
    b = TirBuilder()
    with b.make_func("escape", []):
        with b.make_for(0, 4) as i:
            pass
        b.add(i, 1)  # the loop var used after the loop
        b.make_return()
    with pytest.raises(DiagnosticError, match="loop variable .* is not visible here"):
        verify_module(b.module)


def test_parallel_body_must_not_write_outer_locals():
    b = TirBuilder()
    with b.make_func("racy", []):
        total = b.make_var(IndexType(), 0)
        with b.make_for(0, 4, parallel=True) as i:
            b.make_assign(total, i)
        b.make_return()
    with pytest.raises(
        DiagnosticError, match="writes a local var defined outside the enclosing parallel tir.for"
    ):
        verify_module(b.module)


def test_auto_cast_in_the_builder():
    b = TirBuilder()
    with b.make_func("mixed", [i32, f32], f32) as (n, x):
        b.make_return(b.mul(n, x))
    assert "tir.mul %0, %1 : (i32, f32) -> f32" in round_trips(b.module)
