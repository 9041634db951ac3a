"""Vector intrinsics: broadcasts, lane reductions, the x86-style shuffles
(unpack, shuffle, permute) as llvm.shufflevector, and permutex2var."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    VectorType,
    i32,
)
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering
from graphcompiler.lowering.tir_to_llvm.types import _fail, _is_unsigned, _mangle, convert_type


def _splat(fl: FunctionLowering, scalar: SSAValue, vector_type: VectorType) -> SSAValue:
    lanes = vector_type.get_shape()[0]
    undefined = fl.emit_value(llvm.UndefOp(vector_type))
    first = fl.emit_value(llvm.InsertElementOp(undefined, scalar, fl.constant(0, i32)))
    mask = DenseArrayBase.from_list(i32, [0] * lanes)
    return fl.emit_value(llvm.ShuffleVectorOp(first, undefined, mask, vector_type))


def _lower_broadcast(fl: FunctionLowering, op: tir.BroadcastOp) -> None:
    fl.values[op.result] = _splat(fl, fl.value(op.input), convert_type(op.result.type))


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
        fl.values[op.result] = fl.emit_value(llvm.CallIntrinsicOp(name, [vector], [element]))
        return
    is_add = isinstance(op, tir.ReduceAddOp)
    if tir.is_float(op.result.type):
        start = fl.constant(0.0 if is_add else 1.0, element)
        reduce = llvm.VectorReduceFAddOp if is_add else llvm.VectorReduceFMulOp
        fl.values[op.result] = fl.emit_value(reduce(start, vector))
        return
    name = f"llvm.vector.reduce.{'add' if is_add else 'mul'}.{_mangle(convert_type(op.input.type))}"
    fl.values[op.result] = fl.emit_value(llvm.CallIntrinsicOp(name, [vector], [element]))


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
    fl.values[op.result] = fl.emit_value(shuffle)


def _lower_permutex2var(fl: FunctionLowering, op: tir.Permutex2varOp) -> None:
    """result[j] = concat(a, b)[idx[j] mod 2n]: with constant indices a
    shufflevector (LLVM picks the target's permutes: vpermt2ps on AVX-512,
    blends and lane permutes on AVX2), else through a stack buffer (the
    llvm dialect has no extractelement)."""
    vector_type = convert_type(op.a.type)
    lanes = vector_type.get_shape()[0]
    element = vector_type.element_type
    indices = op.idx.owner
    if isinstance(indices, tir.ConstOp) and isinstance(indices.value, DenseIntOrFPElementsAttr):
        values = [int(v) % (2 * lanes) for v in indices.value.get_values()]
        mask = DenseArrayBase.from_list(i32, values * (lanes if len(values) == 1 else 1))
        shuffle = llvm.ShuffleVectorOp(fl.value(op.a), fl.value(op.b), mask, vector_type)
        fl.values[op.result] = fl.emit_value(shuffle)
        return
    table = fl.alloca(element, 2 * lanes)
    fl.emit(llvm.StoreOp(fl.value(op.a), table))
    upper = fl.emit_value(llvm.GEPOp(table, [lanes], element))
    fl.emit(llvm.StoreOp(fl.value(op.b), upper))
    index_type = convert_type(op.idx.type)
    indices = fl.alloca(index_type.element_type, lanes)
    fl.emit(llvm.StoreOp(fl.value(op.idx), indices))
    result = fl.emit_value(llvm.UndefOp(vector_type))
    for lane in range(lanes):
        slot = fl.emit_value(llvm.GEPOp(indices, [lane], index_type.element_type))
        index = fl.emit_value(llvm.LoadOp(slot, index_type.element_type))
        wrapped = fl.emit_value(
            llvm.AndOp(index, fl.constant(2 * lanes - 1, index_type.element_type))
        )
        wide = fl.convert_value(wrapped, tir.element_of(op.idx.type), IndexType())
        source = fl.emit_value(
            llvm.GEPOp(table, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[wide])
        )
        value = fl.emit_value(llvm.LoadOp(source, element))
        result = fl.emit_value(llvm.InsertElementOp(result, value, fl.constant(lane, i32)))
    fl.values[op.result] = result


PATTERNS = {
    tir.BroadcastOp: _lower_broadcast,
    tir.Permutex2varOp: _lower_permutex2var,
    **{op: _lower_reduce for op in tir.TIR_OPS if issubclass(op, tir.VectorReduceExpression)},
    **{op: _lower_vector_pair for op in tir.TIR_OPS if issubclass(op, tir.VectorPairExpression)},
}
