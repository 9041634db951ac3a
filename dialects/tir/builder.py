"""A Python builder for Tensor IR in the spirit of the seed's `builder::`
(`make_func`, `make_tensor`, `make_var`, `make_for`, `make_call`, ...).

Statements are appended at the current insertion block; `with` blocks open
function bodies, loops, `if` branches and `stmts` blocks:

    b = TirBuilder()
    with b.make_func("main", []):
        value = b.make_var(f32, b.const(1.0, f32))
        A = b.make_tensor([100], f32)
        with b.make_for(0, 100, parallel=True) as i:
            b.make_store(b.add(b.read(value), i), A, [i])
        b.make_return()
    print(b.module)

Python ints and floats given where a value is expected become `tir.const`s
(index for indices and loop bounds).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from graphcompiler.dialects import tir

Value = SSAValue | int | float


class TirBuilder:
    def __init__(self, module: ModuleOp | None = None):
        self.module = module or ModuleOp([])
        self._blocks: list[Block] = [self.module.body.block]
        self.current_function: tir.FuncOp | None = None
        # constants made in a block, by value: appended to that block, one
        # dominates everything built after it there (the same block only: a
        # parallel body outlined later must not capture an outer constant)
        self._constants: dict[tuple[Block, Attribute], tir.ConstOp] = {}
        self._globals: dict[str, tir.GlobalOp] = {}
        self.blob_constants = False
        """Whether big packed constants are made #tir.blob (lowering/graph_to_tir/kernel.py)."""

    # --- placement ---------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        self._blocks[-1].add_op(op)
        return op

    @contextmanager
    def at_end_of(self, block: Block) -> Iterator[Block]:
        """Append statements to `block` inside the `with`."""
        self._blocks.append(block)
        try:
            yield block
        finally:
            self._blocks.pop()

    # --- module level --------------------------------------------------------

    def make_decl(
        self, name: str, params: Sequence[Attribute], ret: Attribute | None = None
    ) -> tir.FuncOp:
        """A body-less function, resolved against runtime symbols at JIT time."""
        return self.insert(tir.FuncOp(name, params, ret))

    @contextmanager
    def make_func(
        self, name: str, params: Sequence[Attribute], ret: Attribute | None = None
    ) -> Iterator[list[SSAValue]]:
        """Define a function; the `with` body builds it and gets its parameters."""
        body = Block(arg_types=params)
        function = self.insert(tir.FuncOp(name, params, ret, Region(body)))
        self.current_function = function
        with self.at_end_of(body):
            yield list(body.args)

    def make_global(
        self, name: str, type_: Attribute, initial_value: Attribute | None = None
    ) -> tir.GlobalOp:
        properties = {"sym_name": StringAttr(name), "type": type_}
        if initial_value is not None:
            properties["initial_value"] = initial_value
        global_op = self.insert(tir.GlobalOp.create(properties=properties))
        self._globals[name] = global_op
        return global_op

    def global_named(self, name: str) -> tir.GlobalOp | None:
        """The global `name` this builder made (a dict lookup: a symbol
        table walk of a module with hundreds of weights took seconds)."""
        return self._globals.get(name)

    def global_ref(self, global_op: tir.GlobalOp) -> SSAValue:
        handle = (
            global_op.type
            if isinstance(global_op.type, tir.TirTensorType)
            else tir.VarType(global_op.type)
        )
        op = tir.GlobalRefOp.create(
            properties={"global_name": SymbolRefAttr(global_op.sym_name)}, result_types=[handle]
        )
        return self.insert(op).result

    # --- statements -------------------------------------------------------------

    def make_tensor(self, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        return self.insert(
            tir.DefineTensorOp.create(result_types=[tir.TirTensorType(shape, element_type)])
        ).result

    def make_var(self, type_: Attribute, init: Value | None = None) -> SSAValue:
        operands = [] if init is None else [self.value(init, type_)]
        return self.insert(
            tir.DefineVarOp.create(operands=operands, result_types=[tir.VarType(type_)])
        ).result

    def make_assign(self, var: SSAValue, value: Value) -> None:
        self.insert(tir.AssignOp.create(operands=[var, self.value(value, var.type.element_type)]))

    def make_store(
        self, value: Value, tensor: SSAValue, indices: Sequence[Value], lanes: int = 1
    ) -> None:
        value = self.value(value, tensor.type.element_type)
        self.insert(
            tir.StoreOp.create(
                operands=[value, tensor, *self.indices(indices)],
                properties={"lanes": IntegerAttr(lanes, 64)},
            )
        )

    def make_prefetch(
        self, tensor: SSAValue, indices: Sequence[Value], locality: int = 3, write: bool = False
    ) -> None:
        """Hint that tensor[indices] is read (or written) soon."""
        properties = {"locality": IntegerAttr(locality, 64), "write": tir.BoolAttr.from_bool(write)}
        self.insert(
            tir.PrefetchOp.create(operands=[tensor, *self.indices(indices)], properties=properties)
        )

    def make_evaluate(self, value: SSAValue) -> None:
        self.insert(tir.EvaluateOp.create(operands=[value]))

    @contextmanager
    def make_stmts(self) -> Iterator[None]:
        body = Block()
        self.insert(tir.StmtsOp.create(regions=[Region(body)]))
        with self.at_end_of(body):
            yield

    def make_if(self, cond: SSAValue, with_else: bool = False) -> tir.IfOp:
        """An if; fill it with `with b.at_end_of(op.then_region.block)` (and else_region)."""
        else_region = Region(Block()) if with_else else Region()
        return self.insert(tir.IfOp.create(operands=[cond], regions=[Region(Block()), else_region]))

    @contextmanager
    def make_for(
        self, start: Value, end: Value, step: Value = 1, parallel: bool = False
    ) -> Iterator[SSAValue]:
        """for (var = start; var < end; var += step); yields the loop var."""
        bounds = [self.value(v, IndexType()) for v in (start, end, step)]
        body = Block(arg_types=[bounds[0].type])
        self.insert(
            tir.ForOp.create(
                operands=bounds,
                regions=[Region(body)],
                properties={"parallel": tir.BoolAttr.from_bool(parallel)},
            )
        )
        with self.at_end_of(body):
            yield body.args[0]

    def make_return(self, value: Value | None = None) -> None:
        operands = [] if value is None else [self.value(value, self.current_function.return_type)]
        self.insert(tir.ReturnOp.create(operands=operands))

    def make_brgemm(
        self, a: SSAValue, b: SSAValue, c: SSAValue, batch: Value, **sizes: int | bool
    ) -> None:
        """C (+)= sum_b A_b x B_b; sizes: m n k lda ldb ldc stride_a stride_b [accumulate]."""
        properties = {
            name: tir.BoolAttr.from_bool(value)
            if isinstance(value, bool)
            else IntegerAttr(value, 64)
            for name, value in sizes.items()
        }
        self.insert(
            tir.BrgemmOp.create(
                operands=[a, b, c, self.value(batch, IndexType())], properties=properties
            )
        )

    def make_brgemm_tile(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        taps: Sequence[tuple[int, int, int]] = (),
        accumulate_if: SSAValue | None = None,
        prefetch_b: SSAValue | None = None,
        a_wrap: tuple[int, int] | None = None,
        **sizes: int | bool,
    ) -> None:
        """One register tile C (+)= sum_b A_b x B_b; sizes: m n k lanes a_row
        a_k ldb ldc [accumulate]; taps: (count, A step, B step) loops, outer first;
        accumulate_if: an i1 deciding at run time whether C is added to;
        prefetch_b: B rows to prefetch, one line per `prefetch_every` K steps
        (a size, default 1); a_wrap: (rows,
        step), A's rows in runs of `rows`, each `step` after the previous."""
        properties: dict[str, Attribute] = {
            name: tir.BoolAttr.from_bool(value)
            if isinstance(value, bool)
            else IntegerAttr(value, 64)
            for name, value in sizes.items()
        }
        if taps:
            flat = [x for level in taps for x in level]
            properties["taps"] = DenseArrayBase.from_list(i64, flat)
        if a_wrap:
            properties["a_wrap"] = DenseArrayBase.from_list(i64, list(a_wrap))
        optional = [accumulate_if, prefetch_b]
        properties["operandSegmentSizes"] = DenseArrayBase.from_list(
            i32, [1, 1, 1, *(int(x is not None) for x in optional)]
        )
        operands = [a, b, c, *(x for x in optional if x is not None)]
        self.insert(tir.BrgemmTileOp.create(operands=operands, properties=properties))

    # --- expressions -----------------------------------------------------------

    def const(self, value: int | float | Attribute, type_: Attribute) -> SSAValue:
        attribute = value if isinstance(value, Attribute) else _constant_attribute(value, type_)
        block = self._blocks[-1]
        known = self._constants.get((block, attribute))
        if known is not None and known.parent is block:
            return known.result
        op = self.insert(
            tir.ConstOp.create(properties={"value": attribute}, result_types=[attribute.type])
        )
        self._constants[(block, attribute)] = op
        return op.result

    def value(self, value: Value, type_: Attribute) -> SSAValue:
        """`value` itself, or a constant of `type_` for a Python number."""
        return value if isinstance(value, SSAValue) else self.const(value, type_)

    def indices(self, indices: Sequence[Value]) -> list[SSAValue]:
        return [self.value(i, IndexType()) for i in indices]

    def binary(self, op_class: type[tir.BinaryExpression], lhs: Value, rhs: Value) -> SSAValue:
        """lhs (op) rhs; a Python number takes the other operand's type."""
        if not isinstance(lhs, SSAValue):
            lhs = self.value(lhs, rhs.type)
        rhs = self.value(rhs, lhs.type)
        result_type = op_class.infer_type(lhs.type, rhs.type)
        return self.insert(op_class.create(operands=[lhs, rhs], result_types=[result_type])).result

    def add(self, lhs: Value, rhs: Value) -> SSAValue:
        return self.binary(tir.AddOp, lhs, rhs)

    def sub(self, lhs: Value, rhs: Value) -> SSAValue:
        return self.binary(tir.SubOp, lhs, rhs)

    def mul(self, lhs: Value, rhs: Value) -> SSAValue:
        return self.binary(tir.MulOp, lhs, rhs)

    def div(self, lhs: Value, rhs: Value) -> SSAValue:
        return self.binary(tir.DivOp, lhs, rhs)

    def mod(self, lhs: Value, rhs: Value) -> SSAValue:
        return self.binary(tir.ModOp, lhs, rhs)

    def select(self, cond: SSAValue, if_true: Value, if_false: Value) -> SSAValue:
        """cond ? if_true : if_false; a Python number takes the other value's type."""
        if not isinstance(if_true, SSAValue):
            if_true = self.value(if_true, if_false.type)
        if_false = self.value(if_false, if_true.type)
        op = tir.SelectOp.create(operands=[cond, if_true, if_false], result_types=[if_true.type])
        return self.insert(op).result

    def unary(
        self,
        op_class: type[tir.ExpressionOp],
        operand: SSAValue,
        result_type: Attribute | None = None,
    ) -> SSAValue:
        """A one-operand expression; the result type defaults to the operand's."""
        op = op_class.create(operands=[operand], result_types=[result_type or operand.type])
        return self.insert(op).result

    def cast(self, value: SSAValue, type_: Attribute) -> SSAValue:
        return self.unary(tir.CastOp, value, type_)

    def read(self, var: SSAValue) -> SSAValue:
        return self.unary(tir.ReadOp, var, var.type.element_type)

    def make_load(self, tensor: SSAValue, indices: Sequence[Value], lanes: int = 1) -> SSAValue:
        element = tensor.type.element_type
        result_type = VectorType(element, [lanes]) if lanes > 1 else element
        op = tir.LoadOp.create(
            operands=[tensor, *self.indices(indices)],
            result_types=[result_type],
            properties={"lanes": IntegerAttr(lanes, 64)},
        )
        return self.insert(op).result

    def tensor_ptr(
        self, tensor: SSAValue, indices: Sequence[Value], view_shape: Sequence[int]
    ) -> SSAValue:
        """`&tensor[indices]` seen as a dense tensor of `view_shape`."""
        view = tir.TirTensorType(view_shape, tensor.type.element_type)
        return self.insert(
            tir.TensorPtrOp.create(operands=[tensor, *self.indices(indices)], result_types=[view])
        ).result

    def make_call(self, callee: tir.FuncOp, args: Sequence[SSAValue]) -> SSAValue:
        """A call expression; wrap it in `make_evaluate` when called for its effect."""
        op = tir.CallOp.create(
            operands=list(args),
            properties={"callee": SymbolRefAttr(callee.sym_name)},
            result_types=[callee.return_type],
        )
        return self.insert(op).result

    def make_func_addr(self, function: tir.FuncOp) -> SSAValue:
        op = tir.FuncAddrOp.create(
            properties={"callee": SymbolRefAttr(function.sym_name)}, result_types=[tir.PtrType()]
        )
        return self.insert(op).result

    def make_call_indirect(
        self, pointer: SSAValue, prototype: tir.FuncOp, args: Sequence[SSAValue]
    ) -> SSAValue:
        op = tir.CallIndirectOp.create(
            operands=[pointer, *args],
            properties={"prototype": SymbolRefAttr(prototype.sym_name)},
            result_types=[prototype.return_type],
        )
        return self.insert(op).result


@functools.lru_cache(maxsize=4096)
def _scalar_attribute(value: int | float, bits: bytes | None, type_: Attribute) -> Attribute:
    """A constant's attribute, made (and verified) once per value and type:
    a kernel asks for the same few indices and floats thousands of times
    (5500 constants for ResNet-50's kernels). `bits` tells -0.0 from 0.0."""
    if isinstance(type_, VectorType):
        return tir.DenseIntOrFPElementsAttr.from_list(type_, [value] * type_.get_shape()[0])
    if tir.is_float(type_):
        return FloatAttr(float(value), type_)
    return IntegerAttr(int(value), type_)


def _constant_attribute(value: int | float, type_: Attribute) -> Attribute:
    bits = struct.pack("<d", value) if isinstance(value, float) else None
    return _scalar_attribute(value, bits, type_)
