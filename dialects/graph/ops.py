"""The `graph` dialect: the `Graph` object assembled from the op modules,
and every public name of those modules (`graph.X`; the dialect's
introduction is the package's docstring).

base.py holds the element types, `#graph.format`, the property and shape
helpers and the op bases; elementwise.py, matmul.py, reductions.py,
normalization.py, shape.py, indexing.py, scan.py, constant.py and
conv_pool.py the op families; fused.py `graph.fused`, `graph.yield` and the sets of ops
`graph-fuse` groups.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from graphcompiler.dialects.graph.activations import (
    EluOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    LeakyReluOp,
    PreluOp,
    SeluOp,
    SoftplusOp,
)
from graphcompiler.dialects.graph.base import (
    FLOAT_TYPES,
    INTEGER_WIDTHS,
    DefinedAttributesOnly,
    FormatAttr,
    GraphCanonicalization,
    GraphOp,
    HasAxis,
    HasEpsilon,
    bool_value,
    broadcast_shapes,
    f32_attr,
    float_value,
    i64_array,
    int_list,
    int_value,
    is_element_type,
    is_float,
    is_storage_only,
    normalize_axis,
    parse_layout,
    property_attribute,
)
from graphcompiler.dialects.graph.bitwise import (
    BitcastOp,
    BitwiseAndOp,
    BitwiseNotOp,
    BitwiseOrOp,
    BitwiseXorOp,
    IntegerBinaryOp,
    ShiftLeftOp,
    ShiftRightOp,
)
from graphcompiler.dialects.graph.constant import ConstantOp
from graphcompiler.dialects.graph.conv_pool import (
    AvgPool2dOp,
    Conv2dOp,
    ConvolutionOp,
    FloatPoolOp,
    HasWindow,
    MaxPool2dOp,
    PoolOp,
    window_output_shape,
)
from graphcompiler.dialects.graph.elementwise import (
    AbsOp,
    AddOp,
    BinaryOp,
    CastOp,
    CeilOp,
    ClampOp,
    ComparisonOp,
    CosOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloatBinaryOp,
    FloatUnaryOp,
    FloorOp,
    GreaterEqualOp,
    GreaterOp,
    LessEqualOp,
    LessOp,
    LogicalAndOp,
    LogicalBinaryOp,
    LogicalNotOp,
    LogicalOrOp,
    LogicalXorOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    ModOp,
    MulOp,
    NegOp,
    NotEqualOp,
    PowOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    RsqrtOp,
    SelectOp,
    SigmoidOp,
    SignOp,
    SinOp,
    SqrtOp,
    SquareOp,
    SubOp,
    TanhOp,
    UnaryOp,
)
from graphcompiler.dialects.graph.fused import (
    ELEMENTWISE_OPS,
    FUSION_ANCHORS,
    ROW_ANCHORS,
    FusedOp,
    YieldOp,
)
from graphcompiler.dialects.graph.indexing import (
    SCATTER_REDUCTIONS,
    TABLE_ENTRIES,
    GatherElementsOp,
    GatherNDOp,
    HasReduction,
    LookupOp,
    ScatterElementsOp,
    ScatterNDOp,
)
from graphcompiler.dialects.graph.layout import (
    BlockedConv2dOp,
    FromBlockedOp,
    ToBlockedOp,
    blocked_shape,
    plain_shape,
)
from graphcompiler.dialects.graph.loop import LoopOp
from graphcompiler.dialects.graph.matmul import MatmulOp
from graphcompiler.dialects.graph.normalization import (
    AttentionOp,
    BatchNormOp,
    InstanceNormOp,
    LayerNormOp,
    RmsNormOp,
)
from graphcompiler.dialects.graph.reductions import (
    ArgMaxOp,
    ArgMinOp,
    ArgReduceOp,
    FloatReduceOp,
    LogSoftmaxOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    SoftmaxBase,
    SoftmaxOp,
    reduced_axes,
)
from graphcompiler.dialects.graph.scan import CumProdOp, CumSumOp, RunningOp, TopKIndicesOp
from graphcompiler.dialects.graph.shape import (
    PAD_MODES,
    BroadcastToOp,
    ConcatOp,
    GatherOp,
    PadOp,
    ReshapeOp,
    ResultShapedOp,
    SliceOp,
    TransposeOp,
    pad_amounts,
    slice_ranges,
)

GRAPH_OPS: tuple[type[GraphOp], ...] = (
    ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, NegOp, ErfOp,
    ReciprocalOp, SquareOp, GeluOp, LeakyReluOp, ClampOp, CastOp,
    EluOp, SeluOp, SoftplusOp, HardSigmoidOp, HardSwishOp, PreluOp, LogicalNotOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, GreaterOp, LessOp, EqualOp,
    GreaterEqualOp, LessEqualOp, NotEqualOp, LogicalAndOp, LogicalOrOp, LogicalXorOp,
    SelectOp, MatmulOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, InstanceNormOp, BatchNormOp, AttentionOp,
    TransposeOp, ReshapeOp, BroadcastToOp, ConcatOp, SliceOp, GatherOp, PadOp, ConstantOp,
    GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp, LookupOp,
    Conv2dOp, MaxPool2dOp, AvgPool2dOp, ToBlockedOp, FromBlockedOp, BlockedConv2dOp,
    SinOp, CosOp, SignOp, RoundOp, FloorOp, CeilOp, ModOp,
    ArgMaxOp, ArgMinOp, CumSumOp, CumProdOp, TopKIndicesOp,
    BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseNotOp, ShiftLeftOp, ShiftRightOp, BitcastOp,
)  # fmt: skip

OPS_BY_NAME: dict[str, type[GraphOp]] = {op.name.removeprefix("graph."): op for op in GRAPH_OPS}

Graph = Dialect("graph", [*GRAPH_OPS, FusedOp, YieldOp, LoopOp], [FormatAttr])

# `graph.X`: the ops, attribute and helpers of the modules above.
__all__ = [
    "AbsOp", "AddOp", "ArgMaxOp", "ArgMinOp", "ArgReduceOp", "AttentionOp", "AvgPool2dOp", "BatchNormOp", "BinaryOp", "BitcastOp", "BitwiseAndOp", "BitwiseNotOp", "BitwiseOrOp", "BitwiseXorOp", "BlockedConv2dOp", "BroadcastToOp",
    "CastOp", "CeilOp", "ClampOp", "ComparisonOp", "ConcatOp", "ConstantOp", "Conv2dOp", "ConvolutionOp",
    "CosOp", "CumProdOp", "CumSumOp",
    "DefinedAttributesOnly", "DivOp", "ELEMENTWISE_OPS", "EluOp", "EqualOp", "ErfOp", "ExpOp",
    "FLOAT_TYPES", "FUSION_ANCHORS", "FloatBinaryOp", "FloatPoolOp", "FloatReduceOp",
    "FloatUnaryOp", "FloorOp", "FormatAttr", "FromBlockedOp", "FusedOp", "GRAPH_OPS", "GatherElementsOp", "GatherNDOp",
    "GatherOp", "GeluOp", "Graph",
    "GraphCanonicalization", "GraphOp", "GreaterEqualOp", "GreaterOp", "HardSigmoidOp",
    "HasAxis", "HasEpsilon", "HasReduction", "HasWindow",
    "HardSwishOp", "INTEGER_WIDTHS", "IntegerBinaryOp", "InstanceNormOp", "LayerNormOp", "LeakyReluOp",
    "LessEqualOp", "LessOp", "LookupOp", "LoopOp", "TABLE_ENTRIES", "LogOp", "LogSoftmaxOp", "LogicalAndOp", "LogicalBinaryOp",
    "LogicalNotOp", "LogicalOrOp", "LogicalXorOp", "MatmulOp", "MaxPool2dOp", "MaximumOp",
    "MinimumOp", "ModOp", "MulOp", "NegOp", "NotEqualOp", "OPS_BY_NAME", "PAD_MODES", "PadOp", "PoolOp",
    "PowOp", "PreluOp", "ROW_ANCHORS", "ReciprocalOp", "ReduceMaxOp", "ReduceMeanOp",
    "ReduceMinOp", "ReduceOp", "ReduceProdOp", "ReduceSumOp", "ReluOp", "ReshapeOp", "RoundOp", "RunningOp", "ShiftLeftOp", "ShiftRightOp",
    "ResultShapedOp", "RmsNormOp", "RsqrtOp", "SCATTER_REDUCTIONS", "ScatterElementsOp",
    "ScatterNDOp", "SelectOp", "SeluOp", "SigmoidOp", "SignOp", "SinOp", "SliceOp",
    "SoftmaxBase", "SoftmaxOp", "SoftplusOp", "SqrtOp", "SquareOp", "SubOp", "TanhOp",
    "ToBlockedOp", "TopKIndicesOp", "TransposeOp", "UnaryOp", "YieldOp", "bool_value", "broadcast_shapes", "f32_attr",
    "float_value", "i64_array", "int_list", "int_value", "is_element_type", "is_float", "is_storage_only",
    "normalize_axis", "pad_amounts", "parse_layout", "property_attribute", "reduced_axes", "slice_ranges",
    "window_output_shape", "blocked_shape", "plain_shape",
]  # fmt: skip
