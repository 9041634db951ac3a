"""xDSL's `llvm` dialect as graphcompiler uses it: `llvm.fcmp` and
`llvm.select` also take vectors (xDSL 0.74's take scalar conditions only).
`VectorFCmpOp` and `VectorSelectOp` keep the op names, replace xDSL's in the
tools' llvm dialect (`LLVM`) so that printed IR parses back, and are
translated with xDSL's own fcmp/select translation (lowering/llvm/translate.py).
`UIToFPOp` is the unsigned conversion xDSL 0.74 lacks (ui64 -> float has no
wider signed integer to go through).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import llvm
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, VectorType, i1, i64
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class VectorFCmpOp(IRDLOperation):
    """`llvm.fcmp` on scalars or vectors of floats (lane-wise, i1 lanes),
    written as MLIR writes it: `llvm.fcmp "olt" %a, %b : vector<8xf32>`."""

    name = "llvm.fcmp"
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def()
    predicate = prop_def(IntegerAttr)
    fastmathFlags = prop_def(llvm.FastMathAttr, default_value=llvm.FastMathAttr(None))

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, predicate: str, attributes: dict | None = None
    ):
        operand_type = lhs.type
        result = (
            VectorType(i1, operand_type.get_shape()) if isinstance(operand_type, VectorType) else i1
        )
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[result],
            properties={
                "predicate": IntegerAttr(llvm.FCmpPredicateFlag(predicate).to_int(), i64),
                "fastmathFlags": llvm.FastMathAttr(None),
            },
            attributes=attributes or {},
        )

    @classmethod
    def parse(cls, parser: Parser) -> VectorFCmpOp:
        predicate = parser.parse_str_literal()
        lhs = parser.parse_unresolved_operand()
        parser.parse_characters(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_characters(":")
        type_ = parser.parse_type()
        operands = parser.resolve_operands([lhs, rhs], [type_, type_], parser.pos)
        return cls(operands[0], operands[1], predicate, attributes)

    def print(self, printer: Printer) -> None:
        flag = llvm.FCmpPredicateFlag.from_int(self.predicate.value.data)
        printer.print_string(f' "{flag}" ')
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    def verify_(self) -> None:
        operand, result = self.lhs.type, self.res.type
        element = operand.element_type if isinstance(operand, VectorType) else operand
        if not isinstance(element, AnyFloat):
            raise VerifyException(f"operands must be floats or vectors of floats, got {operand}")
        expected = VectorType(i1, operand.get_shape()) if isinstance(operand, VectorType) else i1
        if result != expected:
            raise VerifyException(f"result must be {expected} for operands of type {operand}")


@irdl_op_definition
class VectorSelectOp(IRDLOperation):
    """`llvm.select` with an i1 or a vector-of-i1 condition (lane-wise)."""

    name = "llvm.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        cond, value = self.cond.type, self.res.type
        if cond == i1:
            return
        if not (
            isinstance(cond, VectorType)
            and cond.element_type == i1
            and isinstance(value, VectorType)
            and cond.get_shape() == value.get_shape()
        ):
            raise VerifyException(
                f"condition must be i1 or a vector of i1 of the values' shape, got {cond} for {value}"
            )


@irdl_op_definition
class UIToFPOp(llvm.GenericCastOp):
    """`llvm.uitofp`: an unsigned integer (or vector of them) to floats."""

    name = "llvm.uitofp"


LLVM_OVERRIDES = (VectorFCmpOp, VectorSelectOp)
"""Ops registered in place of xDSL's of the same names (registry.py),
so that printed vector compares and selects parse back."""

LLVM = Dialect(
    llvm.LLVM.name,
    [
        *(op for op in llvm.LLVM.operations if op.name not in {o.name for o in LLVM_OVERRIDES}),
        *LLVM_OVERRIDES,
        UIToFPOp,
    ],
    list(llvm.LLVM.attributes),
)
"""xDSL's llvm dialect with the vector-taking fcmp and select, and uitofp."""
