"""`FunctionLowering`: emits the llvm.func of one tir.func, op by op, with
the helpers patterns share: constants, stack slots, runtime calls, value
conversions (what `tir.cast` and the memory ops' index arithmetic lower to)
and element addresses."""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    NoneType,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.llvm import UIToFPOp, VectorFCmpOp, VectorSelectOp
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES
from graphcompiler.lowering.tir_to_llvm import narrow_floats
from graphcompiler.lowering.tir_to_llvm.types import (
    LEGAL_DIALECTS,
    _fail,
    _icmp,
    _is_unsigned,
    _mangle,
    convert_type,
)
from graphcompiler.runtime.microkernels import GeneratedKernel

Pattern = Callable[["FunctionLowering", Operation], None]
"""Emits the llvm ops of one tir op (of the type it is registered for)."""


class ModuleContext(Protocol):
    """What lowering a function uses of its module's lowering (a
    `ModuleLowering`): the patterns, and the llvm functions to add."""

    patterns: Mapping[type[Operation], Pattern]
    extra: list[Operation]
    wrappers: dict[str, str]

    def require_runtime(self, name: str) -> None: ...

    def require_kernel(self, kernel: GeneratedKernel) -> None: ...


@dataclass
class FunctionLowering:
    """Emits the llvm.func for one tir.func, op by op."""

    module: ModuleContext
    function: tir.FuncOp
    entry: Block = field(default_factory=Block)
    current: Block | None = None
    values: dict[SSAValue, SSAValue] = field(default_factory=dict)
    heap_scopes: list[list[SSAValue]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    source_op: Operation | None = None
    constants: dict[tuple, SSAValue] = field(default_factory=dict)
    known_ints: dict[SSAValue, int] = field(default_factory=dict)  # i64 constants' values
    last_constant: Operation | None = None  # constants keep their first uses' order

    def emit(self, op: Operation) -> Operation:
        if self.source_op is not None:
            op.location = self.source_op.location  # diagnostics point at the tir op
        self.current.add_op(op)
        return op

    def emit_value(self, op: Operation) -> SSAValue:
        """Emit `op` and return its (one) result."""
        return self.emit(op).results[0]

    def value(self, value: SSAValue) -> SSAValue:
        return self.values[value]

    def new_block(self, arg_types: Sequence[Attribute] = ()) -> Block:
        block = Block(arg_types=arg_types)
        self.blocks.append(block)
        return block

    def constant(self, value: int | float | bool, type_: Attribute) -> SSAValue:
        """A constant of an llvm (already converted) type, splatted for vectors."""
        bits = struct.pack("<d", value) if isinstance(value, float) else int(value)

        def attribute() -> Attribute:
            element = type_.element_type if isinstance(type_, VectorType) else type_
            if isinstance(element, IntegerType):
                scalar = IntegerAttr(int(value), element)
            else:
                scalar = FloatAttr(float(value), element)
            if not isinstance(type_, VectorType):
                return scalar
            lanes = type_.get_shape()[0]
            return DenseIntOrFPElementsAttr.from_list(type_, [scalar.value.data] * lanes)

        result = self.constant_value(("value", bits, type_), attribute, type_)
        if type_ == i64:
            self.known_ints[result] = int(value)
        return result

    def index_arithmetic(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """lhs `kind` rhs ("add", "sub", "mul", "sdiv", "srem") on i64 index
        values, folded where operands are known constants: a kernel's index
        arithmetic is mostly constant strides and offsets (0 and 1 above
        all), and every op made costs the lowering, the LLVM IR text and
        LLVM's parser."""
        a, b = self.known_ints.get(lhs), self.known_ints.get(rhs)
        if a is not None and b is not None and (kind in ("add", "sub", "mul") or b not in (0, -1)):
            quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if b else 0
            folded = {
                "add": a + b, "sub": a - b, "mul": a * b,
                "sdiv": quotient, "srem": a - b * quotient,
            }[kind]  # fmt: skip
            if -(2**63) <= folded < 2**63:
                return self.constant(folded, i64)
        if (kind in ("add", "sub") and b == 0) or (kind in ("mul", "sdiv") and b == 1):
            return lhs
        if (kind == "add" and a == 0) or (kind == "mul" and a == 1):
            return rhs
        if (kind == "mul" and 0 in (a, b)) or (kind == "srem" and b == 1):
            return self.constant(0, i64)
        op = {"add": llvm.AddOp, "sub": llvm.SubOp, "mul": llvm.MulOp,
              "sdiv": llvm.SDivOp, "srem": llvm.SRemOp}[kind]  # fmt: skip
        return self.emit_value(op(lhs, rhs))

    def constant_value(
        self, key: tuple, attribute: Callable[[], Attribute], type_: Attribute
    ) -> SSAValue:
        """The function's one `llvm.mlir.constant` for `key` (its value, bit
        for bit: -0.0 is not 0.0, and its type), of `attribute()` and
        `type_`, made at the top of its entry block on first use so that it
        dominates every use. Kernels repeat a few constants hundreds of
        times (716 constant ops, 197 distinct, in the transformer example):
        each op and attribute made costs lowering and translation time,
        and LLVM IR prints constants inline anyway."""
        value = self.constants.get(key)
        if value is None:
            op = llvm.ConstantOp(attribute(), type_)
            if self.last_constant is None:
                self._insert_at_top(op)
            else:
                self.entry.insert_op_after(op, self.last_constant)
            self.last_constant = op
            value = self.constants[key] = op.result
        return value

    def alloca(self, type_: Attribute, count: int = 1, alignment: int = 64) -> SSAValue:
        """Stack memory, allocated once in the entry block (so LLVM promotes vars)."""
        size = self.constant(count, i64)
        slot = llvm.AllocaOp(size, type_, alignment)
        self._insert_at_top(slot)
        size.owner.detach()  # moved up to come before this use too
        self.entry.insert_op_before(size.owner, slot)
        return slot.results[0]

    def _insert_at_top(self, op: Operation) -> None:
        if self.entry.first_op is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_before(op, self.entry.first_op)

    def call(
        self, name: str, args: Sequence[SSAValue], result: Attribute | None = None
    ) -> SSAValue | None:
        self.module.require_runtime(name)
        call = self.emit(llvm.CallOp(name, *args, return_type=result))
        return call.returned

    # Conversions between scalar/vector types: what tir.cast lowers to (after
    # tir-legalize-types, bf16 only converts to and from f32), and the index
    # conversions inside memory ops, brgemm and the parallel call.

    def convert_value(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
        if source == target:
            return value
        # bf16 (stored as i16 bits: xDSL's translator has no bfloat) converts through f32,
        # and so do the 8- and 4-bit floats (stored as their codes).
        as_f32 = tir.with_element(source, Float32Type())
        if isinstance(tir.element_of(source), NARROW_FLOAT_TYPES):
            return self.convert_value(narrow_floats.decode(self, value, source), as_f32, target)
        if isinstance(tir.element_of(target), NARROW_FLOAT_TYPES):
            single = self.convert_value(value, source, tir.with_element(target, Float32Type()))
            return narrow_floats.encode(self, single, target)
        if narrow_floats.is_narrow_int(source):  # held extended in an i8: convert the i8
            signedness = tir.element_of(source).signedness
            byte = tir.with_element(source, IntegerType(8, signedness.data))
            return self.convert_value(value, byte, target)
        if narrow_floats.is_narrow_int(target):
            return narrow_floats.wrap_int(self, value, source, target)
        if isinstance(tir.element_of(source), BFloat16Type):
            return self.convert_value(self.bf16_to_f32(value, source), as_f32, target)
        if isinstance(tir.element_of(target), BFloat16Type):
            single = self.convert_value(value, source, tir.with_element(target, Float32Type()))
            return self.f32_to_bf16(single, target)
        if (
            isinstance(tir.element_of(source), IndexType)
            and isinstance(tir.element_of(target), IntegerType)
            and tir.bit_width(target) == 64
        ):
            return value
        llvm_target = convert_type(target)
        if tir.is_float(source) and tir.is_float(target):
            wider = tir.bit_width(target) > tir.bit_width(source)
            same = tir.bit_width(target) == tir.bit_width(source)
            if same:  # f16 <-> bf16 goes through f32
                widened = self.convert_value(value, source, tir.with_element(source, Float32Type()))
                return self.convert_value(widened, tir.with_element(source, Float32Type()), target)
            op = llvm.FPExtOp(value, llvm_target) if wider else llvm.FPTruncOp(value, llvm_target)
            return self.emit_value(op)
        if not tir.is_float(source) and tir.is_float(target):
            if _is_unsigned(source) or tir.is_bool(source):
                return self.emit_value(UIToFPOp(value, llvm_target))
            return self.emit_value(llvm.SIToFPOp(value, llvm_target))
        if tir.is_float(source) and not tir.is_float(target):
            return self.float_to_int(value, convert_type(source), target)
        source_bits, target_bits = (
            tir.bit_width(tir.element_of(source)),
            tir.bit_width(tir.element_of(target)),
        )
        if tir.element_of(target) == i1:
            zero = self.constant(0, convert_type(source))
            return self.emit_value(llvm.ICmpOp(value, zero, _icmp("ne")))
        if target_bits < source_bits:
            return self.emit_value(llvm.TruncOp(value, llvm_target))
        if target_bits > source_bits:
            extend = (
                llvm.ZExtOp
                if (_is_unsigned(source) or tir.element_of(source) == i1)
                else llvm.SExtOp
            )
            return self.emit_value(extend(value, llvm_target))
        return value

    def bf16_to_f32(self, bits: SSAValue, source: Attribute) -> SSAValue:
        wide_type = convert_type(tir.with_element(source, IntegerType(32)))
        wide = self.emit_value(llvm.ZExtOp(bits, wide_type))
        shifted = self.emit_value(llvm.ShlOp(wide, self.constant(16, wide_type)))
        return self.emit_value(
            llvm.BitcastOp(shifted, convert_type(tir.with_element(source, Float32Type())))
        )

    def f32_to_bf16(self, value: SSAValue, target: Attribute) -> SSAValue:
        """Round to nearest even, as reference.round_to_bf16 does; a NaN
        stays a (quiet) NaN, where rounding its payload could carry into inf or 0."""
        wide_type = convert_type(tir.with_element(target, IntegerType(32)))
        bits = self.emit_value(llvm.BitcastOp(value, wide_type))
        parity = self.emit_value(
            llvm.AndOp(
                self.emit_value(llvm.LShrOp(bits, self.constant(16, wide_type))),
                self.constant(1, wide_type),
            )
        )
        bias = self.emit_value(llvm.AddOp(parity, self.constant(0x7FFF, wide_type)))
        rounded = self.emit_value(llvm.AddOp(bits, bias))
        high = self.emit_value(llvm.LShrOp(rounded, self.constant(16, wide_type)))
        truncated = self.emit_value(llvm.LShrOp(bits, self.constant(16, wide_type)))
        quiet = self.emit_value(llvm.OrOp(truncated, self.constant(0x40, wide_type)))
        is_nan = self.emit_value(VectorFCmpOp(value, value, "uno"))
        chosen = self.emit_value(VectorSelectOp(is_nan, quiet, high))
        return self.emit_value(llvm.TruncOp(chosen, convert_type(target)))

    def float_to_int(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
        """C truncation of floats into the (tir) integer type `target`,
        saturating instead of LLVM's poison when out of range."""
        llvm_target = convert_type(target)
        if tir.element_of(target) == i1:
            return self.emit_value(VectorFCmpOp(value, self.constant(0.0, source), "une"))
        element = llvm_target.element_type if isinstance(llvm_target, VectorType) else llvm_target
        scalar_source = source.element_type if isinstance(source, VectorType) else source
        if element.width.data <= 16 and scalar_source == Float32Type():
            return self._narrow_float_to_int(value, source, llvm_target, _is_unsigned(target))
        kind = "fptoui" if _is_unsigned(target) else "fptosi"
        name = f"llvm.{kind}.sat.{_mangle(llvm_target)}.{_mangle(source)}"
        return self.emit_value(llvm.CallIntrinsicOp(name, [value], [llvm_target]))

    def _narrow_float_to_int(
        self, value: SSAValue, source: Attribute, target: Attribute, unsigned: bool
    ) -> SSAValue:
        """f32 -> an integer of at most 16 bits, as fptosi/fptoui.sat (clamped,
        NaN -> 0, truncated toward zero), in vector instructions: LLVM
        scalarizes the saturating intrinsics lane by lane on x86 (quantizing
        a tensor to u8 took 2-4 ns an element). Clamped and truncated, the
        value is a whole number below 2**16 in magnitude; adding 1.5 * 2**23
        puts it in the low mantissa bits of the sum, read by a bitcast."""
        bits = (target.element_type if isinstance(target, VectorType) else target).width.data
        low, high = (
            (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        )
        for bound, predicate in ((low, "olt"), (high, "ogt")):
            limit = self.constant(float(bound), source)
            outside = self.emit_value(VectorFCmpOp(value, limit, predicate))
            value = self.emit_value(VectorSelectOp(outside, limit, value))
        is_nan = self.emit_value(VectorFCmpOp(value, value, "uno"))
        value = self.emit_value(VectorSelectOp(is_nan, self.constant(0.0, source), value))
        value = self.intrinsic("trunc", [value], source)
        shifted = self.emit_value(llvm.FAddOp(value, self.constant(12582912.0, source)))
        wide = VectorType(i32, source.get_shape()) if isinstance(source, VectorType) else i32
        as_bits = self.emit_value(llvm.BitcastOp(shifted, wide))
        whole = self.emit_value(llvm.SubOp(as_bits, self.constant(0x4B400000, wide)))
        return self.emit_value(llvm.TruncOp(whole, target))

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        """`llvm.<name>.<type>`: math intrinsics are called by their mangled
        name, so scalar and vector uses in one module never share (and
        clash on) one declaration."""
        mangled = f"llvm.{name}.{_mangle(args[0].type)}"
        return self.emit_value(llvm.CallIntrinsicOp(mangled, list(args), [result]))

    # Memory.

    def element_address(self, tensor: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        """Address of tensor[indices] in its dense row-major layout."""
        tensor_type = tensor.type
        shape = tensor_type.get_shape()
        offset = None
        for position, index in enumerate(indices):
            stride = 1
            for dim in shape[position + 1 :]:
                stride *= dim
            term = self.convert_value(self.value(index), index.type, IndexType())
            term = self.index_arithmetic("mul", term, self.constant(stride, i64))
            offset = term if offset is None else self.index_arithmetic("add", offset, term)
        element = convert_type(tensor_type.element_type)
        gep = llvm.GEPOp(self.value(tensor), [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[offset])
        return self.emit_value(gep)

    def free_scope(self, scope: list[SSAValue]) -> None:
        for allocation in reversed(scope):
            self.call("sc_aligned_free", [allocation])

    def lower_region(self, block: Block) -> None:
        """Lower a tir block as a scope: its heap tensors are freed at its end."""
        self.heap_scopes.append([])
        patterns = self.module.patterns
        for op in block.ops:
            if self.current is None:  # code after a return: unreachable, but kept valid
                self.current = self.new_block()
            pattern = patterns.get(type(op))
            if pattern is None:
                raise _fail(
                    op,
                    f"cannot be converted to the llvm dialect (no pattern; legal dialects: {', '.join(LEGAL_DIALECTS)})",
                )
            pattern(self, op)
        scope = self.heap_scopes.pop()
        if not _terminated(self.current):
            self.free_scope(scope)

    def build(self) -> llvm.FuncOp:
        function = self.function
        declaration = declare_function(function)
        inputs = declaration.function_type.inputs.data
        self.entry = Block(arg_types=inputs)
        self.blocks = [self.entry]
        self.current = self.entry
        self.values.update(zip(function.body.block.args, self.entry.args, strict=True))
        self.lower_region(function.body.block)
        if not _terminated(self.current):
            if isinstance(function.return_type, NoneType):
                self.emit(llvm.ReturnOp())
            else:
                self.emit(llvm.UnreachableOp())
        for block in self.blocks:  # the entry first
            declaration.body.add_block(block)
        return declaration


def declare_function(function: tir.FuncOp) -> llvm.FuncOp:
    """The llvm.func of `function`'s signature, without a body: what a
    definition starts from, and how a module converted in parts declares
    the functions another part defines (driver/parallel_lowering.py)."""
    inputs = [convert_type(t) for t in function.function_type.inputs.data]
    result = convert_type(function.return_type)
    function_type = llvm.LLVMFunctionType(
        inputs, None if isinstance(result, llvm.LLVMVoidType) else result
    )
    arg_attrs = ArrayAttr(
        [
            DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, tir.TirTensorType) else {})
            for t in function.function_type.inputs.data
        ]
    )
    return llvm.FuncOp(
        function.sym_name,
        function_type,
        llvm.LinkageAttr("external"),
        other_props={"arg_attrs": arg_attrs},
    )


def _terminated(block: Block | None) -> bool:
    if block is None:
        return True
    return block.last_op is not None and isinstance(
        block.last_op, llvm.BrOp | llvm.CondBrOp | llvm.ReturnOp | llvm.UnreachableOp
    )
