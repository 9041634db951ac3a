"""The Tensor IR dialect `tir`: the C-like Tensor IR of the oneDNN Graph Compiler design.

How the design's constructs map to ops (everything is `tir`, so a module reads
as one language):

| design construct                      | here                                            |
|---------------------------------------|-------------------------------------------------|
| module functions / declarations       | `tir.func @f(%A: !tir.tensor<100xf32>) -> f32 {...}`, body-less = declaration |
| global var / tensor (+ initial value) | `tir.global @g : f32 = 1.0 : f32`, read through `tir.global_ref` |
| stmts block                           | `tir.stmts { ... }` (locals defined inside are scoped to it) |
| define var / tensor                   | `%v = tir.define_var %init : !tir.var<f32>`, `%A = tir.define_tensor : !tir.tensor<..>` |
| assign                                | `tir.assign %v = %x : !tir.var<f32>`             |
| store `A[i, j @ 8] = v`               | `tir.store %v, %A[%i, %j lanes 8] : !tir.tensor<..>` |
| evaluate{expr}                        | `tir.evaluate %x : type`                         |
| if / else, for, parallel for, return  | `tir.if`, `tir.for %i = %a to %b step %s [parallel]`, `tir.return` |
| constants (scalar, SIMD)              | `tir.const 1.0 : f32`, `tir.const dense<1.0> : vector<8xf32>` |
| cast, add sub mul div mod, compares   | `tir.cast`, `tir.add` ... `tir.mod`, `tir.gt` ... `tir.ne` |
| and or not, select, func_addr         | `tir.and`, `tir.or`, `tir.not`, `tir.select`, `tir.func_addr` |
| call, indirect call via prototype     | `tir.call @f(...)`, `tir.call_indirect %p(...) {prototype = @f}` |
| tensor load `A[i, j @ 8]`, var read   | `tir.load %A[%i, %j lanes 8]`, `tir.read %v`      |
| `&A[i, j]` (tensorptr)                | `tir.tensor_ptr %A[%i, %j] : ... -> !tir.tensor<..>` |
| intrinsics                            | one op each: `tir.min`, `tir.fmadd`, `tir.brgemm`, ... |

Mutable vars are memory cells (`!tir.var<T>`), so SSA values stay immutable.
Expressions are ops with one result; statements have none (definitions return
the handle they define). A call is an expression: when it is made for its
effect its result (`none` for void functions) must be consumed by
`tir.evaluate`, as in the design. Mixed scalar operands of binary ops are
auto-cast to a common type (int -> float, narrow -> wide); vectors must agree
in lanes. Integers are signless and signed unless written `ui8`, `ui32`...
"""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, DenseIntOrFPElementsAttr, IntegerAttr, NoneType
from xdsl.ir import Dialect

from graphcompiler.dialects.tir.blob import BLOB_MIN_BYTES, BlobAttr, ConstantBlob, aligned_zeros
from graphcompiler.dialects.tir.brgemm import (
    MAX_TILE_ACCUMULATORS,
    BrgemmBase,
    BrgemmOp,
    BrgemmSizes,
    BrgemmTileOp,
    BrgemmTileSizes,
    ListBrgemmOp,
)
from graphcompiler.dialects.tir.calls import CallIndirectOp, CallOp, FuncAddrOp
from graphcompiler.dialects.tir.expressions import (
    AddOp,
    AndOp,
    BinaryExpression,
    ComparisonExpression,
    ConstOp,
    DivOp,
    EqOp,
    ExpressionOp,
    FloatBinaryExpression,
    FModOp,
    GeOp,
    GtOp,
    IntAndOp,
    IntegerBinaryExpression,
    IntOrOp,
    IntXorOp,
    LeOp,
    LogicExpression,
    LtOp,
    MaxOp,
    MinOp,
    ModOp,
    MulOp,
    NeOp,
    OrOp,
    PowOp,
    ShlOp,
    ShrOp,
    SubOp,
)
from graphcompiler.dialects.tir.intrinsics import (
    BroadcastOp,
    CastOp,
    ConversionExpression,
    FmaddOp,
    IsnanOp,
    PermuteOp,
    Permutex2varOp,
    ReduceAddOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceMulOp,
    ReinterpretOp,
    RoundAndCastOp,
    SaturatedCastOp,
    SelectOp,
    ShuffleOp,
    UnpackHighOp,
    UnpackLowOp,
    VectorPairExpression,
    VectorReduceExpression,
)
from graphcompiler.dialects.tir.memory import (
    AddrOfOp,
    LoadOp,
    PrefetchOp,
    ReadOp,
    StoreOp,
    TensorPtrOp,
)
from graphcompiler.dialects.tir.statements import (
    AssignOp,
    DefineTensorOp,
    DefineVarOp,
    EvaluateOp,
    ForOp,
    FuncOp,
    GlobalOp,
    GlobalRefOp,
    IfOp,
    ReturnOp,
    StatementOp,
    StmtsOp,
)
from graphcompiler.dialects.tir.types import (
    FLOAT_TYPES,
    MAX_LANES,
    PtrType,
    TirTensorType,
    VarType,
    bit_width,
    byte_size,
    common_type,
    element_of,
    is_bool,
    is_float,
    is_integer,
    is_scalar,
    is_value_type,
    lanes_of,
    tensor_bytes,
    with_element,
)
from graphcompiler.dialects.tir.unary import (
    AbsOp,
    CeilOp,
    CosOp,
    ExpOp,
    FloatUnaryExpression,
    FloorOp,
    LogOp,
    NotOp,
    RoundEvenOp,
    RoundOp,
    RsqrtOp,
    SinOp,
    SqrtOp,
    TanhOp,
    UnaryExpression,
)
from graphcompiler.dialects.tir.verify import parse_access, print_access

TIR_OPS = [
    FuncOp, GlobalOp, GlobalRefOp, StmtsOp, DefineVarOp, DefineTensorOp, AssignOp,
    StoreOp, PrefetchOp, EvaluateOp, IfOp, ForOp, ReturnOp, ConstOp,
    AddOp, SubOp, MulOp, DivOp, ModOp, FModOp, MinOp, MaxOp, IntAndOp, IntOrOp, IntXorOp, ShlOp, ShrOp,
    GtOp, LtOp, GeOp, LeOp, EqOp, NeOp, AndOp, OrOp, NotOp,
    AbsOp, RoundOp, RoundEvenOp, FloorOp, CeilOp, ExpOp, SqrtOp, RsqrtOp, LogOp, TanhOp,
    SinOp, CosOp, PowOp,
    CastOp, ReinterpretOp, BroadcastOp, IsnanOp, SaturatedCastOp, RoundAndCastOp,
    ReduceAddOp, ReduceMulOp, ReduceMaxOp, ReduceMinOp, SelectOp, FmaddOp,
    UnpackLowOp, UnpackHighOp, ShuffleOp, PermuteOp, Permutex2varOp,
    ReadOp, LoadOp, TensorPtrOp, AddrOfOp, FuncAddrOp, CallOp, CallIndirectOp,
    BrgemmOp, ListBrgemmOp, BrgemmTileOp,
]  # fmt: skip

Tir = Dialect("tir", TIR_OPS, [BlobAttr, PtrType, TirTensorType, VarType])

# `tir.X`: the ops, types and helpers of the modules above, and the xDSL
# attributes that callers build tir ops with.
__all__ = [
    "AbsOp", "AddOp", "AddrOfOp", "AndOp", "AssignOp", "BLOB_MIN_BYTES", "BinaryExpression", "BlobAttr",
    "BoolAttr",
    "BrgemmBase", "BrgemmOp", "BrgemmSizes", "BrgemmTileOp", "BrgemmTileSizes", "BroadcastOp",
    "CallIndirectOp", "CallOp", "CastOp", "CeilOp", "ComparisonExpression", "ConstOp", "ConstantBlob", "CosOp",
    "ConversionExpression", "DefineTensorOp", "DefineVarOp", "DenseIntOrFPElementsAttr", "DivOp",
    "EqOp", "EvaluateOp", "ExpOp", "ExpressionOp", "FLOAT_TYPES", "FModOp", "FloatBinaryExpression",
    "FloatUnaryExpression", "FloorOp", "FmaddOp", "ForOp", "FuncAddrOp", "FuncOp", "GeOp",
    "GlobalOp", "GlobalRefOp", "GtOp", "IfOp", "IntAndOp", "IntOrOp", "IntXorOp", "IntegerAttr",
    "IntegerBinaryExpression", "IsnanOp", "LeOp", "ListBrgemmOp", "LoadOp", "LogOp",
    "LogicExpression", "LtOp", "MAX_LANES", "MAX_TILE_ACCUMULATORS", "MaxOp", "MinOp", "ModOp",
    "MulOp", "NeOp", "NoneType", "NotOp", "OrOp", "PermuteOp", "Permutex2varOp", "PowOp",
    "PrefetchOp", "PtrType", "ReadOp", "ReduceAddOp", "ReduceMaxOp", "ReduceMinOp", "ReduceMulOp",
    "ReinterpretOp", "ReturnOp", "RoundAndCastOp", "RoundEvenOp", "RoundOp", "RsqrtOp",
    "SaturatedCastOp", "SinOp",
    "SelectOp", "ShlOp", "ShrOp", "ShuffleOp", "SqrtOp", "StatementOp", "StmtsOp", "StoreOp",
    "SubOp", "TIR_OPS", "TanhOp", "TensorPtrOp", "Tir", "TirTensorType", "UnaryExpression",
    "UnpackHighOp", "UnpackLowOp", "VarType", "VectorPairExpression", "VectorReduceExpression",
    "bit_width", "byte_size", "common_type", "element_of", "is_bool", "is_float", "is_integer",
    "aligned_zeros", "is_scalar", "is_value_type", "lanes_of", "parse_access", "print_access", "tensor_bytes", "with_element",
]  # fmt: skip
