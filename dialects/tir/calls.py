"""Calls: direct, through a function address, and the address itself."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure, SymbolTable

from graphcompiler.dialects.tir.expressions import ExpressionOp
from graphcompiler.dialects.tir.statements import FuncOp
from graphcompiler.dialects.tir.types import PtrType, _require


def _lookup_function(op: Operation, name: SymbolRefAttr) -> FuncOp:
    target = SymbolTable.lookup_symbol(op, name)
    _require(isinstance(target, FuncOp), f"{name} does not name a tir.func")
    return target


def _check_call(
    op: Operation, prototype: FuncOp, args: Sequence[SSAValue], result: SSAValue
) -> None:
    expected = prototype.function_type.inputs.data
    variadic = prototype.variadic is not None
    _require(
        len(args) == len(expected) or (variadic and len(args) > len(expected)),
        f"passes {len(args)} arguments to @{prototype.sym_name.data}, which takes "
        f"{len(expected)}{' or more' if variadic else ''}",
    )
    for index, (arg, type_) in enumerate(zip(args, expected, strict=False)):  # variadic tail
        _require(
            arg.type == type_,
            f"argument #{index} has type {arg.type}, but @{prototype.sym_name.data} takes {type_}",
        )
    _require(
        result.type == prototype.return_type,
        f"result type {result.type} should be {prototype.return_type}, the return type of @{prototype.sym_name.data}",
    )
    _require(
        bool(result.uses),
        "a call is an expression: consume its result, or wrap a call made for its effect in tir.evaluate",
    )


@irdl_op_definition
class FuncAddrOp(ExpressionOp):
    """The address of a function, for indirect calls and the parallel call.

    Example:

        builtin.module {
          tir.func @body(%p: !tir.ptr)
          tir.func @f() -> !tir.ptr {
            %fn = tir.func_addr @body : !tir.ptr
            tir.return %fn : !tir.ptr
          }
        }
    """

    name = "tir.func_addr"
    callee = prop_def(SymbolRefAttr)
    result = result_def(PtrType)
    traits = traits_def(Pure())
    assembly_format = "$callee attr-dict `:` type($result)"

    def check_types(self) -> None:
        _lookup_function(self, self.callee)


@irdl_op_definition
class CallOp(ExpressionOp):
    """A direct call; the value is the callee's result (`none` if void).

    Example:

        builtin.module {
          tir.func @twice(i32) -> i32
          tir.func @f(%x: i32) -> i32 {
            %y = tir.call @twice(%x) : (i32) -> i32
            tir.return %y : i32
          }
        }
    """

    name = "tir.call"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def check_types(self) -> None:
        _check_call(self, _lookup_function(self, self.callee), self.args, self.result)


@irdl_op_definition
class CallIndirectOp(ExpressionOp):
    """A call through a pointer whose prototype is the function `prototype`.

    Example:

        builtin.module {
          tir.func @twice(i32) -> i32
          tir.func @f(%fn: !tir.ptr, %x: i32) -> i32 {
            %y = tir.call_indirect %fn(%x) {prototype = @twice} : (i32) -> i32
            tir.return %y : i32
          }
        }
    """

    name = "tir.call_indirect"
    target = operand_def(PtrType)
    args = var_operand_def()
    prototype = prop_def(SymbolRefAttr)
    result = result_def()
    assembly_format = "$target `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def check_types(self) -> None:
        _check_call(self, _lookup_function(self, self.prototype), self.args, self.result)
