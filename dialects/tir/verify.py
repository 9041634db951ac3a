"""Verifier helpers shared by the op families: the `%A[%i, %j lanes 8]` access
syntax and its checks, and lookups of enclosing ops."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from graphcompiler.dialects.tir.expressions import ConstOp
from graphcompiler.dialects.tir.types import TirTensorType, _require, is_integer, lanes_of


def parse_access(parser: Parser) -> tuple[UnresolvedOperand, list[UnresolvedOperand], int]:
    """`%A[%i, %j lanes 8]` (the seed's `A[i, j @ 8]`) -> (tensor, indices, lanes)."""
    tensor = parser.parse_unresolved_operand()
    parser.parse_punctuation("[")
    indices = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(","):
        indices.append(parser.parse_unresolved_operand())
    lanes = 1
    if parser.parse_optional_keyword("lanes"):
        lanes = parser.parse_integer(allow_boolean=False, allow_negative=False)
    parser.parse_punctuation("]")
    return tensor, indices, lanes


def print_access(
    printer: Printer, tensor: SSAValue, indices: Sequence[SSAValue], lanes: int
) -> None:
    printer.print_operand(tensor)
    printer.print_string("[")
    printer.print_list(indices, printer.print_operand)
    if lanes != 1:
        printer.print_string(f" lanes {lanes}")
    printer.print_string("]")


def _resolve_access(
    parser: Parser,
    access: tuple[UnresolvedOperand, list[UnresolvedOperand], int],
    tensor_type: Attribute,
) -> tuple[SSAValue, list[SSAValue]]:
    tensor, indices, _ = access
    resolved = [parser.resolve_operand(i, _index_type_of(parser, i)) for i in indices]
    return parser.resolve_operand(tensor, tensor_type), resolved


def _index_type_of(parser: Parser, operand: UnresolvedOperand) -> Attribute:
    """Indices are written without types: take the type of their definition."""
    values = parser.ssa_values.get(operand.operand_name)
    if values is None:
        parser.raise_error(
            f"use of undeclared SSA value name %{operand.operand_name}", operand.span
        )
    return values[operand.index].type


def _check_access(
    op: Operation, tensor: SSAValue, indices: Sequence[SSAValue], lanes: int
) -> TirTensorType:
    tensor_type = tensor.type
    _require(isinstance(tensor_type, TirTensorType), f"{tensor_type} is not a !tir.tensor")
    shape = tensor_type.get_shape()
    _require(
        len(indices) == len(shape), f"{len(indices)} indices for a tensor of rank {len(shape)}"
    )
    for position, index in enumerate(indices):
        _require(
            is_integer(index.type) and lanes_of(index.type) == 1,
            f"index #{position} has type {index.type}, expected an integer or index",
        )
    if tensor_type.element_count() == 0:  # accessed only in loops that run zero times
        _require(lanes >= 1, f"{lanes} lanes: an access needs at least one")
        return tensor_type
    _require(
        lanes >= 1 and lanes <= shape[-1],
        f"{lanes} lanes do not fit the last dimension {shape[-1]}",
    )
    last = _constant_int(indices[-1])
    if last is not None:
        _require(
            0 <= last and last + lanes <= shape[-1],
            f"access [{last} lanes {lanes}] is out of bounds for the last dimension {shape[-1]}",
        )
    return tensor_type


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ConstOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _enclosing(op: Operation, kind: type[Operation]) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kind):
        parent = parent.parent_op()
    return parent


def _is_inside(op: Operation, ancestor: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op()
    return False
