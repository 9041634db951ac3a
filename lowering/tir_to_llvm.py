"""convert-tir-to-llvm: Tensor IR to xDSL's `llvm` dialect.

A small conversion driver in MLIR's terms:
- the *target*: after conversion only `LEGAL_DIALECTS` may remain;
- the *type converter*: `convert_type` (tensors, vars and pointers become
  `!llvm.ptr`, `index` becomes i64, `ui8` becomes i8, vectors stay vectors);
- the *patterns*: one function per tir op (or op family) in `PATTERNS`,
  each emitting llvm ops for one tir op through a `FunctionLowering`.

Structured control flow (`tir.for`, `tir.if`, `tir.stmts`) becomes blocks and
branches; vars become allocas; local tensors become allocas when small and
runtime allocations (freed when their block ends) when large. Intrinsics map
to LLVM intrinsics or vector shuffles; brgemm and the parallel call become
runtime calls (runtime/symbols.py). A parallel call's captures are packed
into a stack struct that a generated wrapper unpacks for the outlined body.
The first op without a pattern stops the conversion with a diagnostic.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    Signedness,
    TensorType,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from graphcompiler.dialects import tir
from graphcompiler.dialects.llvm import VectorFCmpOp, VectorSelectOp
from graphcompiler.ir.diagnostics import DiagnosticError, op_diagnostic
from graphcompiler.runtime.microkernels import Microkernel
from graphcompiler.runtime.symbols import PARALLEL_CALL, RUNTIME_SYMBOLS
from graphcompiler.target.description import get_target

LEGAL_DIALECTS = ("llvm", "builtin")
HEAP_THRESHOLD_BYTES = 16 * 1024
"""Local tensors above this size are heap-allocated, not put on the stack."""

_ptr = llvm.LLVMPointerType()


def _fail(op: Operation, message: str) -> DiagnosticError:
    return DiagnosticError(op_diagnostic(op, message))


# --- type converter -------------------------------------------------------------


def convert_type(type_: Attribute) -> Attribute:
    match type_:
        case IndexType():
            return i64
        case IntegerType():
            return IntegerType(type_.width.data)  # signedness lives in the ops
        case BFloat16Type():
            return IntegerType(16)  # bf16 is kept as its bits; see FunctionLowering.convert_value
        case Float16Type() | Float32Type() | Float64Type():
            return type_
        case VectorType():
            return VectorType(convert_type(type_.element_type), type_.get_shape())
        case tir.TirTensorType() | tir.VarType() | tir.PtrType():
            return _ptr
        case NoneType():
            return llvm.LLVMVoidType()
    raise ValueError(f"no LLVM type for {type_}")


def _is_unsigned(type_: Attribute) -> bool:
    element = tir.element_of(type_)
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def _byte_size(type_: Attribute) -> int:
    return max(1, tir.bit_width(type_) // 8) if not isinstance(type_, tir.PtrType) else 8


# --- function lowering ----------------------------------------------------------


@dataclass
class FunctionLowering:
    """Emits the llvm.func for one tir.func, op by op."""

    module: ModuleLowering
    function: tir.FuncOp
    entry: Block = field(default_factory=Block)
    current: Block | None = None
    values: dict[SSAValue, SSAValue] = field(default_factory=dict)
    heap_scopes: list[list[SSAValue]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    source_op: Operation | None = None
    constants: dict[tuple, SSAValue] = field(default_factory=dict)
    last_constant: Operation | None = None  # constants keep their first uses' order

    def emit(self, op: Operation) -> Operation:
        if self.source_op is not None:
            op.location = self.source_op.location  # diagnostics point at the tir op
        self.current.add_op(op)
        return op

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

        return self.constant_value(("value", bits, type_), attribute, type_)

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

    # Conversions between scalar/vector types (the seed's auto-cast and tir.cast).

    def convert_value(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
        if source == target:
            return value
        # bf16 (stored as i16 bits: xDSL's translator has no bfloat) converts through f32.
        as_f32 = tir.with_element(source, Float32Type())
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
            return self.emit(op).results[0]
        if not tir.is_float(source) and tir.is_float(target):
            if _is_unsigned(source) or tir.is_bool(source):  # uitofp via a wider signed int
                value = self.emit(
                    llvm.ZExtOp(value, tir.with_element(convert_type(source), i64))
                ).results[0]
            return self.emit(llvm.SIToFPOp(value, llvm_target)).results[0]
        if tir.is_float(source) and not tir.is_float(target):
            return self.float_to_int(value, convert_type(source), target)
        source_bits, target_bits = (
            tir.bit_width(tir.element_of(source)),
            tir.bit_width(tir.element_of(target)),
        )
        if tir.element_of(target) == i1:
            zero = self.constant(0, convert_type(source))
            return self.emit(llvm.ICmpOp(value, zero, _icmp("ne"))).results[0]
        if target_bits < source_bits:
            return self.emit(llvm.TruncOp(value, llvm_target)).results[0]
        if target_bits > source_bits:
            extend = (
                llvm.ZExtOp
                if (_is_unsigned(source) or tir.element_of(source) == i1)
                else llvm.SExtOp
            )
            return self.emit(extend(value, llvm_target)).results[0]
        return value

    def bf16_to_f32(self, bits: SSAValue, source: Attribute) -> SSAValue:
        wide_type = convert_type(tir.with_element(source, IntegerType(32)))
        wide = self.emit(llvm.ZExtOp(bits, wide_type)).results[0]
        shifted = self.emit(llvm.ShlOp(wide, self.constant(16, wide_type))).results[0]
        return self.emit(
            llvm.BitcastOp(shifted, convert_type(tir.with_element(source, Float32Type())))
        ).results[0]

    def f32_to_bf16(self, value: SSAValue, target: Attribute) -> SSAValue:
        """Round to nearest even, as reference.round_to_bf16 does; a NaN
        stays a (quiet) NaN, where rounding its payload could carry into inf or 0."""
        wide_type = convert_type(tir.with_element(target, IntegerType(32)))
        bits = self.emit(llvm.BitcastOp(value, wide_type)).results[0]
        parity = self.emit(
            llvm.AndOp(
                self.emit(llvm.LShrOp(bits, self.constant(16, wide_type))).results[0],
                self.constant(1, wide_type),
            )
        ).results[0]
        bias = self.emit(llvm.AddOp(parity, self.constant(0x7FFF, wide_type))).results[0]
        rounded = self.emit(llvm.AddOp(bits, bias)).results[0]
        high = self.emit(llvm.LShrOp(rounded, self.constant(16, wide_type))).results[0]
        truncated = self.emit(llvm.LShrOp(bits, self.constant(16, wide_type))).results[0]
        quiet = self.emit(llvm.OrOp(truncated, self.constant(0x40, wide_type))).results[0]
        is_nan = self.emit(VectorFCmpOp(value, value, "uno")).results[0]
        chosen = self.emit(VectorSelectOp(is_nan, quiet, high)).results[0]
        return self.emit(llvm.TruncOp(chosen, convert_type(target))).results[0]

    def float_to_int(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
        """C truncation of floats into the (tir) integer type `target`,
        saturating instead of LLVM's poison when out of range."""
        llvm_target = convert_type(target)
        if tir.element_of(target) == i1:
            return self.emit(VectorFCmpOp(value, self.constant(0.0, source), "une")).results[0]
        kind = "fptoui" if _is_unsigned(target) else "fptosi"
        name = f"llvm.{kind}.sat.{_mangle(llvm_target)}.{_mangle(source)}"
        return self.emit(llvm.CallIntrinsicOp(name, [value], [llvm_target])).results[0]

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        """`llvm.<name>.<type>`: math intrinsics are called by their mangled
        name, so scalar and vector uses in one module never share (and
        clash on) one declaration."""
        mangled = f"llvm.{name}.{_mangle(args[0].type)}"
        return self.emit(llvm.CallIntrinsicOp(mangled, list(args), [result])).results[0]

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
            if stride != 1:
                term = self.emit(llvm.MulOp(term, self.constant(stride, i64))).results[0]
            offset = term if offset is None else self.emit(llvm.AddOp(offset, term)).results[0]
        element = convert_type(tensor_type.element_type)
        gep = llvm.GEPOp(self.value(tensor), [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[offset])
        return self.emit(gep).results[0]

    def free_scope(self, scope: list[SSAValue]) -> None:
        for allocation in reversed(scope):
            self.call("sc_aligned_free", [allocation])

    def lower_region(self, block: Block) -> None:
        """Lower a tir block as a scope: its heap tensors are freed at its end."""
        self.heap_scopes.append([])
        for op in block.ops:
            if self.current is None:  # code after a return: unreachable, but kept valid
                self.current = self.new_block()
            pattern = PATTERNS.get(type(op))
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
        inputs = [convert_type(t) for t in function.function_type.inputs.data]
        result = convert_type(function.return_type)
        function_type = llvm.LLVMFunctionType(
            inputs, None if isinstance(result, llvm.LLVMVoidType) else result
        )
        arg_attrs = ArrayAttr(
            [
                DictionaryAttr(
                    {"llvm.noalias": UnitAttr()} if isinstance(t, tir.TirTensorType) else {}
                )
                for t in function.function_type.inputs.data
            ]
        )
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
        region = Region(self.blocks)
        return llvm.FuncOp(
            function.sym_name,
            function_type,
            llvm.LinkageAttr("external"),
            body=region,
            other_props={"arg_attrs": arg_attrs},
        )


def _terminated(block: Block | None) -> bool:
    if block is None:
        return True
    return block.last_op is not None and isinstance(
        block.last_op, llvm.BrOp | llvm.CondBrOp | llvm.ReturnOp | llvm.UnreachableOp
    )


def _mangle(type_: Attribute) -> str:
    if isinstance(type_, VectorType):
        return f"v{type_.get_shape()[0]}{_mangle(type_.element_type)}"
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    return {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}[
        type(type_)
    ]


_ICMP_PREDICATES = {
    "eq": 0,
    "ne": 1,
    "slt": 2,
    "sle": 3,
    "sgt": 4,
    "sge": 5,
    "ult": 6,
    "ule": 7,
    "ugt": 8,
    "uge": 9,
}


def _icmp(name: str) -> IntegerAttr:
    return IntegerAttr(_ICMP_PREDICATES[name], i64)


# --- patterns: statements ----------------------------------------------------------


def _lower_define_var(fl: FunctionLowering, op: tir.DefineVarOp) -> None:
    slot = fl.alloca(
        convert_type(op.result.type.element_type), alignment=_byte_size(op.result.type.element_type)
    )
    fl.values[op.result] = slot
    if op.init is not None:
        fl.emit(llvm.StoreOp(fl.value(op.init), slot))


def _lower_define_tensor(fl: FunctionLowering, op: tir.DefineTensorOp) -> None:
    tensor_type = op.result.type
    element = convert_type(tensor_type.element_type)
    count = tensor_type.element_count()
    size = count * _byte_size(tensor_type.element_type)
    if size <= HEAP_THRESHOLD_BYTES:
        fl.values[op.result] = fl.alloca(element, count)
        return
    memory = fl.call("sc_aligned_alloc", [fl.constant(size, i64)], _ptr)
    fl.heap_scopes[-1].append(memory)
    fl.values[op.result] = memory


def _lower_assign(fl: FunctionLowering, op: tir.AssignOp) -> None:
    fl.emit(llvm.StoreOp(fl.value(op.value), fl.value(op.var)))


def _lower_store(fl: FunctionLowering, op: tir.StoreOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    fl.emit(
        llvm.StoreOp(fl.value(op.value), address, alignment=_byte_size(op.tensor.type.element_type))
    )


def _lower_prefetch(fl: FunctionLowering, op: tir.PrefetchOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    flags = (int(bool(op.write.value.data)), op.locality.value.data, 1)  # 1: a data (not code) line
    arguments = [address, *(fl.constant(flag, i32) for flag in flags)]
    fl.emit(llvm.CallIntrinsicOp("llvm.prefetch.p0", arguments, []))


def _lower_evaluate(fl: FunctionLowering, op: tir.EvaluateOp) -> None:
    """The expression was emitted where it stands; nothing is left to do."""


def _lower_stmts(fl: FunctionLowering, op: tir.StmtsOp) -> None:
    fl.lower_region(op.body.block)


def _lower_if(fl: FunctionLowering, op: tir.IfOp) -> None:
    then_block, merge = fl.new_block(), fl.new_block()
    else_block = fl.new_block() if op.else_region.blocks else merge
    fl.emit(llvm.CondBrOp(fl.value(op.cond), then_block, [], else_block, []))
    for block, region in ((then_block, op.then_region), (else_block, op.else_region)):
        if block is merge:
            continue
        fl.current = block
        fl.lower_region(region.block)
        if not _terminated(fl.current):
            fl.emit(llvm.BrOp(merge))
    fl.current = merge


def _lower_for(fl: FunctionLowering, op: tir.ForOp) -> None:
    if op.parallel:
        raise _fail(op, "is a parallel loop: run tir-outline-parallel before convert-tir-to-llvm")
    var_type = convert_type(op.loop_var.type)
    header, body, exit_block = fl.new_block([var_type]), fl.new_block(), fl.new_block()
    start, end, step = (fl.value(v) for v in (op.start, op.end, op.step))
    fl.emit(llvm.BrOp(header, start))
    fl.current = header
    induction = header.args[0]
    predicate = "ult" if _is_unsigned(op.loop_var.type) else "slt"
    keep_going = fl.emit(llvm.ICmpOp(induction, end, _icmp(predicate))).results[0]
    fl.emit(llvm.CondBrOp(keep_going, body, [], exit_block, []))
    fl.current = body
    fl.values[op.loop_var] = induction
    fl.lower_region(op.body.block)
    if not _terminated(fl.current):
        following = fl.emit(llvm.AddOp(induction, step)).results[0]
        fl.emit(llvm.BrOp(header, following))
    fl.current = exit_block


def _lower_return(fl: FunctionLowering, op: tir.ReturnOp) -> None:
    for scope in reversed(fl.heap_scopes):
        fl.free_scope(scope)
    fl.emit(llvm.ReturnOp(fl.value(op.value) if op.value is not None else None))
    fl.current = None


def _brgemm_sizes(fl: FunctionLowering, op: tir.BrgemmBase, names: Sequence[str]) -> list[SSAValue]:
    return [fl.constant(getattr(op, name).value.data, i64) for name in names]


def _check_f32_brgemm(op: tir.BrgemmBase, element: Attribute) -> None:
    if not isinstance(element, Float32Type):
        raise _fail(op, f"the runtime has no {element} brgemm yet; only f32 is supported")


def _lower_brgemm(fl: FunctionLowering, op: tir.BrgemmOp) -> None:
    _check_f32_brgemm(op, op.a.type.element_type)
    batch = fl.convert_value(fl.value(op.batch), op.batch.type, IndexType())
    sizes = _brgemm_sizes(fl, op, ("m", "n", "k", "lda", "ldb", "ldc", "stride_a", "stride_b"))
    accumulate = fl.constant(bool(op.accumulate.value.data), i1)
    args = [fl.value(op.a), fl.value(op.b), fl.value(op.c), batch, *sizes, accumulate]
    fl.call("sc_brgemm_f32", args)


def _lower_list_brgemm(fl: FunctionLowering, op: tir.ListBrgemmOp) -> None:
    _check_f32_brgemm(op, op.a_type)
    batch = fl.convert_value(fl.value(op.batch), op.batch.type, IndexType())
    sizes = _brgemm_sizes(fl, op, ("m", "n", "k", "lda", "ldb", "ldc"))
    accumulate = fl.constant(bool(op.accumulate.value.data), i1)
    args = [fl.value(op.a_list), fl.value(op.b_list), fl.value(op.c), batch, *sizes, accumulate]
    fl.call("sc_list_brgemm_f32", args)


def _lower_brgemm_tile(fl: FunctionLowering, op: tir.BrgemmTileOp) -> None:
    sizes = (op.size(name) for name in ("m", "n", "lanes", "a_row", "a_k", "ldb", "ldc"))
    prefetch = op.prefetch_b is not None
    kernel = Microkernel(*sizes, offsets=op.offset_pairs(), prefetch=prefetch)
    fl.module.require_microkernel(kernel)
    k = fl.constant(op.size("k"), i64)
    if op.accumulate_if is not None:
        accumulate = fl.value(op.accumulate_if)
    else:
        accumulate = fl.constant(bool(op.accumulate.value.data), i1)
    args = [fl.value(op.a), fl.value(op.b), fl.value(op.c), k, accumulate]
    if prefetch:
        args.append(fl.value(op.prefetch_b))
    fl.emit(llvm.CallOp(kernel.name, *args))


# --- patterns: expressions -------------------------------------------------------------


def _bf16_bits(value: float) -> int:
    """The bits of `value` rounded to bf16 (bf16 values live as i16 in LLVM)."""
    from graphcompiler.interpreters.reference import round_to_bf16

    single = round_to_bf16(np.array(value, dtype=np.float32))
    return int(single.reshape(1).view(np.uint32)[0] >> 16)


def _llvm_values(values: Sequence[int | float], element: Attribute) -> list[int | float]:
    """Constant values of tir element type `element` as its llvm type holds them."""
    if isinstance(element, BFloat16Type):
        return [_bf16_bits(v) for v in values]
    return [int(v) for v in values] if not tir.is_float(element) else list(values)


def _llvm_scalar(value: Attribute, type_: Attribute) -> Attribute:
    """A scalar IntegerAttr/FloatAttr of tir type `type_` as an llvm constant."""
    llvm_type = convert_type(type_)
    if isinstance(value, FloatAttr) and not isinstance(type_, BFloat16Type):
        return value
    return IntegerAttr(_llvm_values([value.value.data], type_)[0], llvm_type)


def _lower_const(fl: FunctionLowering, op: tir.ConstOp) -> None:
    result_type = convert_type(op.result.type)
    value = op.value

    def attribute() -> Attribute:
        if isinstance(value, IntegerAttr | FloatAttr):
            return _llvm_scalar(value, op.result.type)
        values = _llvm_values(value.get_values(), tir.element_of(op.result.type))
        return DenseIntOrFPElementsAttr.from_list(
            result_type, values * (1 if len(values) > 1 else result_type.get_shape()[0])
        )

    key = ("tir", value, op.result.type)  # xDSL compares float attributes bit for bit
    fl.values[op.result] = fl.constant_value(key, attribute, result_type)


_INT_BINARY: dict[type, Callable[..., Operation]] = {
    tir.AddOp: llvm.AddOp,
    tir.SubOp: llvm.SubOp,
    tir.MulOp: llvm.MulOp,
    tir.IntAndOp: llvm.AndOp,
    tir.IntOrOp: llvm.OrOp,
    tir.IntXorOp: llvm.XOrOp,
    tir.ShlOp: llvm.ShlOp,
    tir.AndOp: llvm.AndOp,
    tir.OrOp: llvm.OrOp,
}
_SIGNED_INT_BINARY = {
    tir.DivOp: (llvm.SDivOp, llvm.UDivOp),
    tir.ModOp: (llvm.SRemOp, llvm.URemOp),
    tir.ShrOp: (llvm.AShrOp, llvm.LShrOp),
}
_FLOAT_BINARY = {
    tir.AddOp: llvm.FAddOp,
    tir.SubOp: llvm.FSubOp,
    tir.MulOp: llvm.FMulOp,
    tir.DivOp: llvm.FDivOp,
}
_COMPARISONS = {
    tir.GtOp: "gt",
    tir.LtOp: "lt",
    tir.GeOp: "ge",
    tir.LeOp: "le",
    tir.EqOp: "eq",
    tir.NeOp: "ne",
}


def _compare(
    fl: FunctionLowering, relation: str, lhs: SSAValue, rhs: SSAValue, type_: Attribute
) -> SSAValue:
    if tir.is_float(type_):
        predicate = "une" if relation == "ne" else f"o{relation}"
        return fl.emit(VectorFCmpOp(lhs, rhs, predicate)).results[0]
    if relation in ("eq", "ne"):
        predicate = relation
    else:
        unsigned = _is_unsigned(type_) or tir.is_bool(type_)  # true > false, as numpy
        predicate = ("u" if unsigned else "s") + relation
    return fl.emit(llvm.ICmpOp(lhs, rhs, _icmp(predicate))).results[0]


def _float_min_max(fl: FunctionLowering, is_max: bool, a: SSAValue, b: SSAValue) -> SSAValue:
    """numpy's maximum/minimum: a NaN operand gives NaN (llvm.maxnum/minnum
    would drop it), ties give `a`. `b > a ? b : a` is one x86 max/min
    instruction (whose NaN answer is `a`), then a NaN `b` is selected; for a
    constant `b` (relu, clamp) that second select folds away."""
    b_wins = fl.emit(VectorFCmpOp(b, a, "ogt" if is_max else "olt")).results[0]
    chosen = fl.emit(VectorSelectOp(b_wins, b, a)).results[0]
    b_is_nan = fl.emit(VectorFCmpOp(b, b, "uno")).results[0]
    return fl.emit(VectorSelectOp(b_is_nan, b, chosen)).results[0]


def _safe_divisor(divisor: SSAValue) -> bool:
    """A constant other than 0 and -1: integer division by it cannot trap."""
    if not isinstance(divisor.owner, tir.ConstOp):
        return False
    value = divisor.owner.value
    values = (
        value.get_values() if isinstance(value, DenseIntOrFPElementsAttr) else [value.value.data]
    )
    return all(v not in (0, -1) for v in values)


def _guarded_division(
    fl: FunctionLowering, kind: type, lhs: SSAValue, rhs: SSAValue, type_: Attribute
) -> SSAValue:
    """Integer div/mod that cannot trap (x86 raises SIGFPE for x / 0 and
    INT_MIN / -1): those divide by 1 instead (so x % 0 = x % -1 = 0), then
    x / -1 is -x (wrapping) and x / 0 is 0."""
    llvm_type = convert_type(type_)
    zero, unsigned = fl.constant(0, llvm_type), _is_unsigned(type_)
    is_zero = fl.emit(llvm.ICmpOp(rhs, zero, _icmp("eq"))).results[0]
    special = is_zero
    if not unsigned:
        is_minus_one = fl.emit(llvm.ICmpOp(rhs, fl.constant(-1, llvm_type), _icmp("eq"))).results[0]
        special = fl.emit(llvm.OrOp(is_zero, is_minus_one)).results[0]
    divisor = fl.emit(VectorSelectOp(special, fl.constant(1, llvm_type), rhs)).results[0]
    signed_op, unsigned_op = _SIGNED_INT_BINARY[kind]
    result = fl.emit((unsigned_op if unsigned else signed_op)(lhs, divisor)).results[0]
    if kind is tir.ModOp:
        return result
    if not unsigned:
        negated = fl.emit(llvm.SubOp(zero, lhs)).results[0]
        result = fl.emit(VectorSelectOp(is_minus_one, negated, result)).results[0]
    return fl.emit(VectorSelectOp(is_zero, zero, result)).results[0]


def _lower_binary(fl: FunctionLowering, op: tir.BinaryExpression) -> None:
    common = tir.common_type(op.lhs.type, op.rhs.type)
    if isinstance(tir.element_of(common), BFloat16Type):
        raise _fail(
            op, "bf16 arithmetic is not supported; compute in f32 (tir.cast) and convert back"
        )
    lhs = fl.convert_value(fl.value(op.lhs), op.lhs.type, common)
    rhs = fl.convert_value(fl.value(op.rhs), op.rhs.type, common)
    kind = type(op)
    if kind in _COMPARISONS:
        result = _compare(fl, _COMPARISONS[kind], lhs, rhs, common)
    elif tir.is_float(common) and kind in _FLOAT_BINARY:
        result = fl.emit(_FLOAT_BINARY[kind](lhs, rhs)).results[0]
    elif tir.is_float(common) and kind in (tir.MinOp, tir.MaxOp):
        result = _float_min_max(fl, kind is tir.MaxOp, lhs, rhs)
    elif tir.is_float(common) and kind is tir.PowOp:
        result = fl.intrinsic("pow", [lhs, rhs], lhs.type)
    elif kind in (tir.MinOp, tir.MaxOp):
        lhs_wins = _compare(fl, "lt" if kind is tir.MinOp else "gt", lhs, rhs, common)
        result = fl.emit(VectorSelectOp(lhs_wins, lhs, rhs)).results[0]
    elif kind in (tir.DivOp, tir.ModOp) and not _safe_divisor(op.rhs):
        result = _guarded_division(fl, kind, lhs, rhs, common)
    elif kind in _SIGNED_INT_BINARY:
        signed, unsigned = _SIGNED_INT_BINARY[kind]
        result = fl.emit((unsigned if _is_unsigned(common) else signed)(lhs, rhs)).results[0]
    else:
        result = fl.emit(_INT_BINARY[kind](lhs, rhs)).results[0]
    fl.values[op.result] = result


_FLOAT_UNARY = {
    tir.FloorOp: "floor",
    tir.CeilOp: "ceil",
    tir.ExpOp: "exp",
    tir.SqrtOp: "sqrt",
    tir.LogOp: "log",
    tir.RoundOp: "round",
    tir.TanhOp: "tanh",
}


def _is_zmm(type_: Attribute) -> bool:
    """A vector of 16 f32 on an AVX-512 target: what the x86 512-bit
    intrinsics take."""
    return (
        get_target().f32_lanes >= 16
        and isinstance(type_, VectorType)
        and type_.get_shape() == (16,)
        and isinstance(type_.element_type, Float32Type)
    )


def _exp_f32(fl: FunctionLowering, x: SSAValue, type_: Attribute) -> SSAValue:
    """e**x in f32 without a libm call, so that vectors stay vectors (LLVM
    scalarizes llvm.exp into expf calls): x = n ln2 + r, a degree-6
    polynomial for e**r (Cephes' expf, all of it Horner steps as fmuladd,
    1 + r (1 + r P(r)) ending it; measured on dense grids of [-104, 89]: max
    relative error 7.3e-8, 0.87 ulp, with FMA and 9.2e-8, 1.13 ulp
    without), times 2**n built in the exponent bits. 2**n is applied as two normal factors 2**(n>>1) and
    2**(n - (n>>1)), so results near overflow stay finite and small ones
    round once into the denormals (exp(-100) = 3.8e-44, exp(-inf) = 0,
    exp(89) = inf, as numpy); with AVX-512 the scaling is one vscalefps
    (16 lanes: by the float n directly), same values. The input clamp keeps
    NaN (exp(NaN) is NaN)."""

    def emit(op: Operation) -> SSAValue:
        return fl.emit(op).results[0]

    def c(value: float) -> SSAValue:
        return fl.constant(value, type_)

    def fmuladd(a: SSAValue, b: SSAValue, addend: SSAValue) -> SSAValue:
        return fl.intrinsic("fmuladd", [a, b, addend], type_)  # one FMA where the target has it

    x = _float_min_max(fl, False, _float_min_max(fl, True, x, c(-104.0)), c(89.0))
    # x log2(e) + 1.5 * 2**23 rounds to the integer n nearest x log2(e) and holds it in its
    # low mantissa bits (a saturating fptosi would be scalarized lane by lane)
    shifted = fmuladd(x, c(1.4426950408889634), c(12582912.0))
    n = emit(llvm.FSubOp(shifted, c(12582912.0)))
    r = fmuladd(n, c(-0.693359375), x)
    r = fmuladd(n, c(2.12194440e-4), r)
    p = c(1.9875691500e-4)
    for coefficient in (
        1.3981999507e-3,
        8.3334519073e-3,
        4.1665795894e-2,
        1.6666665459e-1,
        5.0000001201e-1,
    ):
        p = fmuladd(p, r, c(coefficient))
    y = fmuladd(fmuladd(p, r, c(1.0)), r, c(1.0))  # 1 + r + p r**2 as 2 FMAs
    if _is_zmm(type_):  # vscalefps y * 2**floor(n), n already a float: no conversion
        rounding = fl.constant(4, IntegerType(32))  # the current rounding mode
        mask = fl.constant(-1, IntegerType(16))
        return fl.emit(
            llvm.CallIntrinsicOp(
                "llvm.x86.avx512.mask.scalef.ps.512", [y, n, y, mask, rounding], [type_]
            )
        ).results[0]
    int_type = tir.with_element(type_, IntegerType(32))
    magic = emit(llvm.BitcastOp(shifted, int_type))
    exponent = emit(llvm.SubOp(magic, fl.constant(0x4B400000, int_type)))  # -150..128
    if get_target().f32_lanes >= 16:  # AVX-512: ldexp is one vscalefps, rounding included
        return fl.emit(
            llvm.CallIntrinsicOp(
                f"llvm.ldexp.{_mangle(type_)}.{_mangle(int_type)}", [y, exponent], [type_]
            )
        ).results[0]
    half = emit(llvm.AShrOp(exponent, fl.constant(1, int_type)))

    def power_of_two(n: SSAValue) -> SSAValue:  # n in -75..64: a normal float
        biased = emit(llvm.AddOp(n, fl.constant(127, int_type)))
        return emit(llvm.BitcastOp(emit(llvm.ShlOp(biased, fl.constant(23, int_type))), type_))

    y = emit(llvm.FMulOp(y, power_of_two(half)))
    return emit(llvm.FMulOp(y, power_of_two(emit(llvm.SubOp(exponent, half)))))


def _log_f32(fl: FunctionLowering, x: SSAValue, type_: Attribute) -> SSAValue:
    """ln x in f32 without a libm call (Cephes' logf): x = m 2**e with m in
    [sqrt(1/2), sqrt(2)) split off in the bits (denormals scaled by 2**23
    first), a degree-9 polynomial for ln(m) around 1, plus e ln2 in two parts.
    Measured against float64 on dense grids over all positive floats
    (denormals, [0.5, 2], near 1, huge): max relative error 7.8e-8 (0.83
    ulp), absolute 4.3e-9 on [0.9, 1.1]. log(0) = -inf, log(x < 0) = NaN,
    log(inf) = inf, log(NaN) = NaN, as numpy."""

    def emit(op: Operation) -> SSAValue:
        return fl.emit(op).results[0]

    def c(value: float) -> SSAValue:
        return fl.constant(value, type_)

    int_type = tir.with_element(type_, IntegerType(32))

    def i(value: int) -> SSAValue:
        return fl.constant(value, int_type)

    denormal = emit(VectorFCmpOp(x, c(1.17549435e-38), "olt"))
    scaled = emit(VectorSelectOp(denormal, emit(llvm.FMulOp(x, c(8388608.0))), x))
    bits = emit(llvm.BitcastOp(scaled, int_type))
    exponent = emit(llvm.SubOp(emit(llvm.LShrOp(bits, i(23))), i(126)))
    exponent = emit(llvm.SubOp(exponent, emit(VectorSelectOp(denormal, i(23), i(0)))))
    mantissa_bits = emit(llvm.OrOp(emit(llvm.AndOp(bits, i(0x007FFFFF))), i(0x3F000000)))
    m = emit(llvm.BitcastOp(mantissa_bits, type_))  # in [0.5, 1)
    low = emit(VectorFCmpOp(m, c(0.707106781186547524), "olt"))
    exponent = emit(llvm.SubOp(exponent, emit(VectorSelectOp(low, i(1), i(0)))))
    m = emit(llvm.FSubOp(emit(VectorSelectOp(low, emit(llvm.FAddOp(m, m)), m)), c(1.0)))
    e = emit(llvm.SIToFPOp(exponent, type_))
    z = emit(llvm.FMulOp(m, m))
    p = c(7.0376836292e-2)
    for coefficient in (
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    ):
        p = emit(llvm.FAddOp(emit(llvm.FMulOp(p, m)), c(coefficient)))
    y = emit(llvm.FMulOp(emit(llvm.FMulOp(p, m)), z))
    y = emit(llvm.FAddOp(y, emit(llvm.FMulOp(e, c(-2.12194440e-4)))))
    y = emit(llvm.FSubOp(y, emit(llvm.FMulOp(z, c(0.5)))))
    result = emit(llvm.FAddOp(emit(llvm.FAddOp(m, y)), emit(llvm.FMulOp(e, c(0.693359375)))))
    infinity = float("inf")
    result = emit(VectorSelectOp(emit(VectorFCmpOp(x, c(infinity), "oeq")), x, result))
    result = emit(VectorSelectOp(emit(VectorFCmpOp(x, c(0.0), "oeq")), c(-infinity), result))
    return emit(VectorSelectOp(emit(VectorFCmpOp(x, c(0.0), "ult")), c(float("nan")), result))


def _tanh_f32(fl: FunctionLowering, x: SSAValue, type_: Attribute) -> SSAValue:
    """tanh in f32 without a libm call (Cephes' tanhf): on a = |x| < 0.625 an
    odd polynomial a + a z P(z), z = a**2 (relative accuracy down to the
    denormals), else 1 - 2 / (exp(2a) + 1) through `_exp_f32` (large a,
    inf included, gives exactly 1); the sign is copied back, so
    tanh(-0) = -0 and NaN stays NaN. Measured against float64 on dense grids
    (tiny, near 0, the 0.625 switch, [-10, 10], large): max relative error
    1.4e-7 (1.3 ulp, just below the switch), absolute 7.9e-8."""

    def emit(op: Operation) -> SSAValue:
        return fl.emit(op).results[0]

    def c(value: float) -> SSAValue:
        return fl.constant(value, type_)

    a = fl.intrinsic("fabs", [x], type_)
    z = emit(llvm.FMulOp(a, a))
    p = c(-5.70498872745e-3)
    for coefficient in (2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1):
        p = emit(llvm.FAddOp(emit(llvm.FMulOp(p, z)), c(coefficient)))
    small = emit(llvm.FAddOp(emit(llvm.FMulOp(emit(llvm.FMulOp(p, z)), a)), a))
    e = _exp_f32(fl, emit(llvm.FAddOp(a, a)), type_)
    large = emit(llvm.FSubOp(c(1.0), emit(llvm.FDivOp(c(2.0), emit(llvm.FAddOp(e, c(1.0)))))))
    magnitude = emit(VectorSelectOp(emit(VectorFCmpOp(a, c(0.625), "olt")), small, large))
    return fl.intrinsic("copysign", [magnitude, x], type_)


_F32_EXPANDED = {tir.ExpOp: _exp_f32, tir.LogOp: _log_f32, tir.TanhOp: _tanh_f32}
"""f32 functions expanded inline (LLVM would call libm once per vector lane)."""


def _lower_unary(fl: FunctionLowering, op: tir.UnaryExpression) -> None:
    kind, source = type(op), op.input.type
    if isinstance(tir.element_of(source), BFloat16Type) and kind is not tir.NotOp:
        # bf16 travels as i16 bits: compute in f32, round back
        wide = tir.with_element(source, Float32Type())
        value = _unary_value(fl, kind, fl.convert_value(fl.value(op.input), source, wide), wide)
        fl.values[op.result] = fl.convert_value(value, wide, op.result.type)
        return
    fl.values[op.result] = _unary_value(fl, kind, fl.value(op.input), source)


def _unary_value(fl: FunctionLowering, kind: type, x: SSAValue, source: Attribute) -> SSAValue:
    type_ = convert_type(source)
    if kind in _F32_EXPANDED and tir.element_of(type_) == Float32Type():
        result = _F32_EXPANDED[kind](fl, x, type_)
    elif kind in _FLOAT_UNARY:
        result = fl.intrinsic(_FLOAT_UNARY[kind], [x], type_)
    elif kind is tir.RsqrtOp:
        root = fl.intrinsic("sqrt", [x], type_)
        result = fl.emit(llvm.FDivOp(fl.constant(1.0, type_), root)).results[0]
    elif kind is tir.NotOp:
        result = fl.emit(llvm.XOrOp(x, fl.constant(1, type_))).results[0]
    elif kind is tir.AbsOp and tir.is_float(source):
        result = fl.intrinsic("fabs", [x], type_)
    else:  # integer abs
        negative = fl.emit(llvm.ICmpOp(x, fl.constant(0, type_), _icmp("slt"))).results[0]
        negated = fl.emit(llvm.SubOp(fl.constant(0, type_), x)).results[0]
        result = fl.emit(VectorSelectOp(negative, negated, x)).results[0]
    return result


def _lower_cast(fl: FunctionLowering, op: tir.CastOp) -> None:
    fl.values[op.result] = fl.convert_value(fl.value(op.input), op.input.type, op.result.type)


def _lower_reinterpret(fl: FunctionLowering, op: tir.ReinterpretOp) -> None:
    fl.values[op.result] = fl.emit(
        llvm.BitcastOp(fl.value(op.input), convert_type(op.result.type))
    ).results[0]


def _splat(fl: FunctionLowering, scalar: SSAValue, vector_type: VectorType) -> SSAValue:
    lanes = vector_type.get_shape()[0]
    undefined = fl.emit(llvm.UndefOp(vector_type)).results[0]
    first = fl.emit(llvm.InsertElementOp(undefined, scalar, fl.constant(0, i32))).results[0]
    mask = DenseArrayBase.from_list(i32, [0] * lanes)
    return fl.emit(llvm.ShuffleVectorOp(first, undefined, mask, vector_type)).results[0]


def _lower_broadcast(fl: FunctionLowering, op: tir.BroadcastOp) -> None:
    fl.values[op.result] = _splat(fl, fl.value(op.input), convert_type(op.result.type))


def _lower_isnan(fl: FunctionLowering, op: tir.IsnanOp) -> None:
    x = fl.value(op.input)
    fl.values[op.result] = fl.emit(VectorFCmpOp(x, x, "uno")).results[0]


def _clamp(fl: FunctionLowering, x: SSAValue, source: Attribute, low: int, high: int) -> SSAValue:
    type_ = convert_type(source)
    for bound, relation in ((low, "lt"), (high, "gt")):
        limit = fl.constant(bound, type_)
        outside = _compare(fl, relation, x, limit, source)
        x = fl.emit(VectorSelectOp(outside, limit, x)).results[0]
    return x


def _lower_saturated_cast(fl: FunctionLowering, op: tir.SaturatedCastOp) -> None:
    source = op.input.type
    if tir.is_float(source):  # fptosi/fptoui.sat: clamped to the range, NaN -> 0
        value = fl.value(op.input)
        fl.values[op.result] = fl.float_to_int(value, convert_type(source), op.result.type)
        return
    low, high = (0, 255) if _is_unsigned(op.result.type) else (-128, 127)
    clamped = _clamp(fl, fl.value(op.input), source, low, high)
    fl.values[op.result] = fl.emit(llvm.TruncOp(clamped, convert_type(op.result.type))).results[0]


def _lower_round_and_cast(fl: FunctionLowering, op: tir.RoundAndCastOp) -> None:
    type_ = convert_type(op.input.type)
    rounded = fl.emit(
        llvm.CallIntrinsicOp(f"llvm.round.{_mangle(type_)}", [fl.value(op.input)], [type_])
    ).results[0]
    fl.values[op.result] = fl.float_to_int(rounded, type_, op.result.type)


_REDUCE_MAX_MIN = {
    tir.ReduceMaxOp: ("fmaximum", "smax", "umax"),
    tir.ReduceMinOp: ("fminimum", "smin", "umin"),
}


def _lower_reduce(fl: FunctionLowering, op: tir.VectorReduceExpression) -> None:
    vector, element = fl.value(op.input), convert_type(op.result.type)
    if type(op) in _REDUCE_MAX_MIN:  # fmaximum/fminimum: NaN-propagating, like numpy
        float_name, signed, unsigned = _REDUCE_MAX_MIN[type(op)]
        unsigned_input = _is_unsigned(op.input.type)  # `element` is signless, as LLVM's
        kind = float_name if tir.is_float(element) else unsigned if unsigned_input else signed
        name = f"llvm.vector.reduce.{kind}.{_mangle(convert_type(op.input.type))}"
        fl.values[op.result] = fl.emit(llvm.CallIntrinsicOp(name, [vector], [element])).results[0]
        return
    is_add = isinstance(op, tir.ReduceAddOp)
    if tir.is_float(op.result.type):
        start = fl.constant(0.0 if is_add else 1.0, element)
        reduce = llvm.VectorReduceFAddOp if is_add else llvm.VectorReduceFMulOp
        fl.values[op.result] = fl.emit(reduce(start, vector)).results[0]
        return
    name = f"llvm.vector.reduce.{'add' if is_add else 'mul'}.{_mangle(convert_type(op.input.type))}"
    fl.values[op.result] = fl.emit(llvm.CallIntrinsicOp(name, [vector], [element])).results[0]


def _lower_select(fl: FunctionLowering, op: tir.SelectOp) -> None:
    fl.values[op.result] = fl.emit(
        VectorSelectOp(fl.value(op.cond), fl.value(op.true_value), fl.value(op.false_value))
    ).results[0]


def _lower_fmadd(fl: FunctionLowering, op: tir.FmaddOp) -> None:
    fl.values[op.result] = fl.emit(
        llvm.FMAOp(fl.value(op.a), fl.value(op.b), fl.value(op.c))
    ).results[0]


def _shuffle_mask(op: tir.VectorPairExpression) -> list[int]:
    """Element indices into concat(a, b) for the x86 shuffles. They move
    units of `elem_bits` (several elements each when wider than the element
    type), independently in each 128-bit lane, like unpcklps/shufps/vperm2f128."""
    lanes = op.result.type.get_shape()[0]
    element_bits = tir.bit_width(tir.element_of(op.result.type))
    unit_bits = op.elem_bits.value.data if hasattr(op, "elem_bits") else 128
    if unit_bits <= 0 or unit_bits % element_bits or 128 % unit_bits:
        raise _fail(
            op,
            f"elem_bits = {unit_bits} must be a positive multiple of the {element_bits}-bit element and divide 128",
        )
    per_unit = unit_bits // element_bits
    units = lanes // per_unit
    per_128 = 128 // unit_bits
    unit_mask = []
    for unit in range(units):
        group, position = divmod(unit, per_128)
        base = group * per_128
        if isinstance(op, tir.UnpackLowOp | tir.UnpackHighOp):
            half = 0 if isinstance(op, tir.UnpackLowOp) else per_128 // 2
            unit_mask.append(base + half + position // 2 + (units if position % 2 else 0))
        elif isinstance(op, tir.ShuffleOp):
            if per_128 != 4:
                raise _fail(op, "shuffle selects 32-bit units (elem_bits = 32), as shufps does")
            selector = (op.imm.value.data >> (2 * position)) & 3
            unit_mask.append(base + selector + (units if position >= 2 else 0))
        else:  # permute: each 128-bit half of the result is a.lo, a.hi, b.lo or b.hi
            selector = (op.imm.value.data >> (4 * (group % 2))) & 3
            unit_mask.append((selector % 2 + (group // 2) * 2) + (units if selector >= 2 else 0))
    return [unit * per_unit + offset for unit in unit_mask for offset in range(per_unit)]


def _lower_vector_pair(fl: FunctionLowering, op: tir.VectorPairExpression) -> None:
    mask = DenseArrayBase.from_list(i32, _shuffle_mask(op))
    shuffle = llvm.ShuffleVectorOp(
        fl.value(op.a), fl.value(op.b), mask, convert_type(op.result.type)
    )
    fl.values[op.result] = fl.emit(shuffle).results[0]


def _lower_permutex2var(fl: FunctionLowering, op: tir.Permutex2varOp) -> None:
    """result[j] = concat(a, b)[idx[j] mod 2n], through a stack buffer (the
    llvm dialect has no extractelement)."""
    vector_type = convert_type(op.a.type)
    lanes = vector_type.get_shape()[0]
    element = vector_type.element_type
    table = fl.alloca(element, 2 * lanes)
    fl.emit(llvm.StoreOp(fl.value(op.a), table))
    upper = fl.emit(llvm.GEPOp(table, [lanes], element)).results[0]
    fl.emit(llvm.StoreOp(fl.value(op.b), upper))
    index_type = convert_type(op.idx.type)
    indices = fl.alloca(index_type.element_type, lanes)
    fl.emit(llvm.StoreOp(fl.value(op.idx), indices))
    result = fl.emit(llvm.UndefOp(vector_type)).results[0]
    for lane in range(lanes):
        slot = fl.emit(llvm.GEPOp(indices, [lane], index_type.element_type)).results[0]
        index = fl.emit(llvm.LoadOp(slot, index_type.element_type)).results[0]
        wrapped = fl.emit(
            llvm.AndOp(index, fl.constant(2 * lanes - 1, index_type.element_type))
        ).results[0]
        wide = fl.convert_value(wrapped, tir.element_of(op.idx.type), IndexType())
        source = fl.emit(
            llvm.GEPOp(table, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[wide])
        ).results[0]
        value = fl.emit(llvm.LoadOp(source, element)).results[0]
        result = fl.emit(llvm.InsertElementOp(result, value, fl.constant(lane, i32))).results[0]
    fl.values[op.result] = result


def _lower_read(fl: FunctionLowering, op: tir.ReadOp) -> None:
    fl.values[op.result] = fl.emit(
        llvm.LoadOp(fl.value(op.var), convert_type(op.result.type))
    ).results[0]


def _lower_load(fl: FunctionLowering, op: tir.LoadOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    load = llvm.LoadOp(
        address, convert_type(op.result.type), alignment=_byte_size(op.tensor.type.element_type)
    )
    fl.values[op.result] = fl.emit(load).results[0]


def _lower_tensor_ptr(fl: FunctionLowering, op: tir.TensorPtrOp) -> None:
    fl.values[op.result] = fl.element_address(op.tensor, op.indices)


def _lower_addr_of(fl: FunctionLowering, op: tir.AddrOfOp) -> None:
    fl.values[op.result] = fl.value(op.tensor)


def _lower_global_ref(fl: FunctionLowering, op: tir.GlobalRefOp) -> None:
    fl.values[op.result] = fl.emit(llvm.AddressOfOp(op.global_name, _ptr)).result


def _lower_func_addr(fl: FunctionLowering, op: tir.FuncAddrOp) -> None:
    fl.values[op.result] = fl.emit(llvm.AddressOfOp(op.callee, _ptr)).result


def _lower_call(fl: FunctionLowering, op: tir.CallOp) -> None:
    callee = op.callee.root_reference.data
    if callee == PARALLEL_CALL:
        _lower_parallel_call(fl, op)
        return
    result = None if isinstance(op.result.type, NoneType) else convert_type(op.result.type)
    call = fl.emit(llvm.CallOp(callee, *[fl.value(a) for a in op.args], return_type=result))
    if result is not None:
        fl.values[op.result] = call.returned


def _lower_call_indirect(fl: FunctionLowering, op: tir.CallIndirectOp) -> None:
    prototype = SymbolTable.lookup_symbol(op, op.prototype)
    inputs = [convert_type(t) for t in prototype.function_type.inputs.data]
    result = None if isinstance(op.result.type, NoneType) else convert_type(op.result.type)
    call = llvm.CallOp(
        None,
        fl.value(op.target),
        *[fl.value(a) for a in op.args],
        return_type=result,
        var_callee_type=llvm.LLVMFunctionType(inputs, result),
    )
    fl.emit(call)
    if result is not None:
        fl.values[op.result] = call.returned


CAPTURE_SLOT_BYTES = 64
"""Each capture of a parallel body gets a 64-byte slot (room for a 512-bit
vector), addressed by a GEP over the capture's own type."""


def _capture_slot(packed: SSAValue, position: int, type_: Attribute) -> llvm.GEPOp:
    index = position * CAPTURE_SLOT_BYTES // _llvm_byte_size(type_)
    return llvm.GEPOp(packed, [index], type_)


def _llvm_byte_size(type_: Attribute) -> int:
    if isinstance(type_, llvm.LLVMPointerType):
        return 8
    if isinstance(type_, VectorType):
        return type_.get_shape()[0] * _llvm_byte_size(type_.element_type)
    return max(1, tir.bit_width(type_) // 8)


def _lower_parallel_call(fl: FunctionLowering, op: tir.CallOp) -> None:
    """sc_parallel_call_cpu(body, start, end, step, captures...): the captures
    go into stack slots; a generated wrapper `body(i, slots*)` unpacks them."""
    body_address, start, end, step, *captures = op.args
    if not isinstance(body_address.owner, tir.FuncAddrOp):
        raise _fail(op, "needs the body as a tir.func_addr of a function of this module")
    body_name = body_address.owner.callee.root_reference.data
    capture_types = [convert_type(c.type) for c in captures]
    wrapper = fl.module.parallel_wrapper(body_name, capture_types)
    packed = fl.alloca(IntegerType(8), CAPTURE_SLOT_BYTES * max(1, len(captures)))
    for position, (capture, type_) in enumerate(zip(captures, capture_types, strict=True)):
        slot = fl.emit(_capture_slot(packed, position, type_)).results[0]
        fl.emit(llvm.StoreOp(fl.value(capture), slot))
    wrapper_address = fl.emit(llvm.AddressOfOp(wrapper, _ptr)).result
    bounds = [fl.convert_value(fl.value(v), v.type, IndexType()) for v in (start, end, step)]
    packed_bytes = fl.constant(CAPTURE_SLOT_BYTES * len(captures), i64)
    fl.call(PARALLEL_CALL, [wrapper_address, *bounds, packed, packed_bytes])


PATTERNS: dict[type[Operation], Callable[[FunctionLowering, Operation], None]] = {
    tir.DefineVarOp: _lower_define_var,
    tir.DefineTensorOp: _lower_define_tensor,
    tir.AssignOp: _lower_assign,
    tir.StoreOp: _lower_store,
    tir.PrefetchOp: _lower_prefetch,
    tir.EvaluateOp: _lower_evaluate,
    tir.StmtsOp: _lower_stmts,
    tir.IfOp: _lower_if,
    tir.ForOp: _lower_for,
    tir.ReturnOp: _lower_return,
    tir.BrgemmOp: _lower_brgemm,
    tir.ListBrgemmOp: _lower_list_brgemm,
    tir.BrgemmTileOp: _lower_brgemm_tile,
    tir.ConstOp: _lower_const,
    tir.CastOp: _lower_cast,
    tir.ReinterpretOp: _lower_reinterpret,
    tir.BroadcastOp: _lower_broadcast,
    tir.IsnanOp: _lower_isnan,
    tir.SaturatedCastOp: _lower_saturated_cast,
    tir.RoundAndCastOp: _lower_round_and_cast,
    tir.SelectOp: _lower_select,
    tir.FmaddOp: _lower_fmadd,
    tir.Permutex2varOp: _lower_permutex2var,
    tir.ReadOp: _lower_read,
    tir.LoadOp: _lower_load,
    tir.TensorPtrOp: _lower_tensor_ptr,
    tir.AddrOfOp: _lower_addr_of,
    tir.GlobalRefOp: _lower_global_ref,
    tir.FuncAddrOp: _lower_func_addr,
    tir.CallOp: _lower_call,
    tir.CallIndirectOp: _lower_call_indirect,
    **{op: _lower_binary for op in tir.TIR_OPS if issubclass(op, tir.BinaryExpression)},
    **{op: _lower_unary for op in tir.TIR_OPS if issubclass(op, tir.UnaryExpression)},
    **{op: _lower_reduce for op in tir.TIR_OPS if issubclass(op, tir.VectorReduceExpression)},
    **{op: _lower_vector_pair for op in tir.TIR_OPS if issubclass(op, tir.VectorPairExpression)},
}


# --- module lowering -------------------------------------------------------------------


@dataclass
class ModuleLowering:
    """Converts a module's tir functions and globals, collecting the extra
    llvm functions (parallel wrappers, runtime declarations) they need."""

    module: ModuleOp
    extra: list[Operation] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)
    wrappers: dict[str, str] = field(default_factory=dict)

    def require_runtime(self, name: str) -> None:
        """Declare runtime function `name` unless the module already does."""
        if name in self.declared:
            return
        self.declared.add(name)
        symbol = RUNTIME_SYMBOLS[name]
        inputs = [convert_type(t) for t in symbol.llvm_params]
        result = None if symbol.result is None else convert_type(symbol.result)
        self.extra.append(
            llvm.FuncOp(name, llvm.LLVMFunctionType(inputs, result), llvm.LinkageAttr("external"))
        )

    def require_microkernel(self, kernel: Microkernel) -> None:
        """Declare generated microkernel `kernel`; the JIT defines it."""
        if kernel.name in self.declared:
            return
        self.declared.add(kernel.name)
        prefetch = [_ptr] if kernel.prefetch else []
        signature = llvm.LLVMFunctionType([_ptr, _ptr, _ptr, i64, i1, *prefetch])
        self.extra.append(llvm.FuncOp(kernel.name, signature, llvm.LinkageAttr("external")))

    def parallel_wrapper(self, body: str, capture_types: list[Attribute]) -> str:
        """`body__parallel(i64 i, ptr captures)`, calling `body(i, captures...)`."""
        if body in self.wrappers:
            return self.wrappers[body]
        name = f"{body}__parallel"
        block = Block(arg_types=[i64, _ptr])
        index, packed = block.args
        arguments = [index]
        for position, type_ in enumerate(capture_types):
            slot = _capture_slot(packed, position, type_)
            load = llvm.LoadOp(slot.results[0], type_)
            block.add_ops([slot, load])
            arguments.append(load.results[0])
        block.add_ops([llvm.CallOp(body, *arguments), llvm.ReturnOp()])
        self.extra.append(
            llvm.FuncOp(
                name,
                llvm.LLVMFunctionType([i64, _ptr]),
                llvm.LinkageAttr("internal"),
                body=Region(block),
            )
        )
        self.wrappers[body] = name
        return name

    def convert_global(self, op: tir.GlobalOp) -> llvm.GlobalOp:
        type_ = op.type
        if isinstance(type_, tir.TirTensorType):
            element = convert_type(type_.element_type)
            global_type = llvm.LLVMArrayType(type_.element_count(), element)
            flat = TensorType(element, [type_.element_count()])
            initial = op.initial_value
            if (
                isinstance(initial, DenseIntOrFPElementsAttr)
                and initial.get_element_type() == element
                and len(initial) == type_.element_count()
            ):  # the same bytes, seen flat: no per-element Python work for big tensors
                value = DenseIntOrFPElementsAttr(flat, initial.data)
                return llvm.GlobalOp(
                    global_type, op.sym_name, "external", value=value, alignment=64
                )
            if op.initial_value is not None:
                values = _llvm_values(op.initial_value.get_values(), type_.element_type)
            else:
                values = [0.0 if tir.is_float(element) else 0] * type_.element_count()
            value = DenseIntOrFPElementsAttr.from_list(
                TensorType(element, [type_.element_count()]), values
            )
        else:
            global_type = convert_type(type_)
            initial = op.initial_value
            if initial is None:
                value = (
                    FloatAttr(0.0, global_type)
                    if tir.is_float(global_type)
                    else IntegerAttr(0, global_type)
                )
            else:
                value = _llvm_scalar(initial, type_)
        return llvm.GlobalOp(global_type, op.sym_name, "external", value=value, alignment=64)

    def convert(self) -> None:
        converted: list[Operation] = []
        for op in self.module.body.block.ops:
            if isinstance(op, tir.FuncOp) and op.is_declaration:
                # Runtime functions are declared with their native signature.
                self.check_declaration(op)
                self.require_runtime(op.sym_name.data)
            elif isinstance(op, tir.FuncOp):
                converted.append(FunctionLowering(self, op).build())
            elif isinstance(op, tir.GlobalOp):
                converted.append(self.convert_global(op))
            elif op.dialect_name() in LEGAL_DIALECTS:
                converted.append(op.clone())
            else:
                raise _fail(
                    op,
                    f"cannot be converted to the llvm dialect (legal dialects: {', '.join(LEGAL_DIALECTS)})",
                )
        block = self.module.body.block
        for op in list(block.ops):
            op.detach()
            op.erase(safe_erase=False)
        block.add_ops([*converted, *self.extra])

    def check_declaration(self, op: tir.FuncOp) -> None:
        symbol = RUNTIME_SYMBOLS.get(op.sym_name.data)
        if symbol is None:
            known = ", ".join(sorted(RUNTIME_SYMBOLS))
            raise _fail(
                op,
                f"declares @{op.sym_name.data}, which is neither defined in this module nor a runtime function ({known})",
            )
        if not symbol.matches(op):
            raise _fail(
                op,
                f"declares @{symbol.name} with a signature different from the runtime's {symbol.declaration().function_type}",
            )


@dataclass(frozen=True)
class ConvertTirToLlvmPass(ModulePass):
    """Convert Tensor IR (after tir-outline-parallel) to the llvm dialect."""

    name = "convert-tir-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ModuleLowering(op).convert()
