"""Fusion: the ops `graph-fuse` groups around an anchor, and `graph.fused`
with its terminator `graph.yield`."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, region_def, traits_def, var_operand_def, var_result_def
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

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
from graphcompiler.dialects.graph.base import DefinedAttributesOnly, GraphOp
from graphcompiler.dialects.graph.bitwise import BITWISE_OPS
from graphcompiler.dialects.graph.conv_pool import Conv2dOp
from graphcompiler.dialects.graph.elementwise import (
    AbsOp,
    AddOp,
    CastOp,
    CeilOp,
    ClampOp,
    CosOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GreaterEqualOp,
    GreaterOp,
    LessEqualOp,
    LessOp,
    LogicalAndOp,
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
)
from graphcompiler.dialects.graph.layout import BlockedConv2dOp
from graphcompiler.dialects.graph.matmul import MatmulOp
from graphcompiler.dialects.graph.normalization import LayerNormOp
from graphcompiler.dialects.graph.reductions import LogSoftmaxOp, SoftmaxOp
from graphcompiler.dialects.graph.shape import BroadcastToOp

ELEMENTWISE_OPS: tuple[type[GraphOp], ...] = (
    ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, NegOp, ErfOp,
    ReciprocalOp, SquareOp, GeluOp, LeakyReluOp, ClampOp, CastOp,
    EluOp, SeluOp, SoftplusOp, HardSigmoidOp, HardSwishOp, PreluOp, LogicalNotOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, GreaterOp, LessOp, EqualOp,
    GreaterEqualOp, LessEqualOp, NotEqualOp, LogicalAndOp, LogicalOrOp, LogicalXorOp,
    SelectOp, BroadcastToOp, SinOp, CosOp, SignOp, RoundOp, FloorOp, CeilOp, ModOp,
    *BITWISE_OPS,
)  # fmt: skip
"""Ops computing each output element from the same element of their
(broadcast) operands: the ones graph-fuse groups."""

ROW_ANCHORS = (SoftmaxOp, LogSoftmaxOp, LayerNormOp)
"""Anchors over the innermost axis: element-wise producers of their first
operand run before them in the group (on each load), consumers after."""

FUSION_ANCHORS = (MatmulOp, Conv2dOp, BlockedConv2dOp, *ROW_ANCHORS)
"""Ops a fused group is built around, their result feeding element-wise ops
after them (matmul and conv2d come first in the region)."""


@irdl_op_definition
class YieldOp(DefinedAttributesOnly):
    """The results of a graph.fused region.

    Example:

        graph.yield %y : tensor<4x8xf32>
    """

    name = "graph.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "$values attr-dict `:` type($values)"


@irdl_op_definition
class FusedOp(DefinedAttributesOnly):
    """A group of ops computed in one loop nest (graph-fuse): the region's
    block arguments are the inputs, `graph.yield` gives the results. The
    region holds element-wise ops, optionally after one anchor (matmul or
    conv2d) whose result they consume; intermediates never touch memory.

    Example:

        %y = graph.fused %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
        ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
          %0 = graph.add %a, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
          %1 = graph.relu %0 : tensor<4x8xf32>
          graph.yield %1 : tensor<4x8xf32>
        }
    """

    name = "graph.fused"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $outputs) $body"

    @property
    def anchor(self) -> GraphOp | None:
        return next((op for op in self.body.block.ops if isinstance(op, FUSION_ANCHORS)), None)

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException("needs at least one result (a group of dead ops is not fused)")
        block = self.body.block
        if tuple(a.type for a in block.args) != tuple(i.type for i in self.inputs):
            raise VerifyException("the region's arguments must have the types of the inputs")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or tuple(v.type for v in terminator.values) != tuple(
            r.type for r in self.outputs
        ):
            raise VerifyException("the region must end with a graph.yield of the result types")
        anchor = self.anchor
        defined = set(block.args)
        for position, op in enumerate(block.ops):
            outside = next((v for v in op.operands if v not in defined), None)
            if outside is not None:
                raise VerifyException(
                    f"'{op.name}' reads a value defined outside the region: a fused op's "
                    "ops read only its block arguments and one another's results"
                )
            defined.update(op.results)
            if op is terminator:
                continue
            allowed = isinstance(op, ELEMENTWISE_OPS) or (
                op is anchor and (position == 0 or isinstance(op, ROW_ANCHORS))
            )
            if not allowed:
                raise VerifyException(
                    f"'{op.name}' cannot be fused (element-wise ops around one anchor: a "
                    "leading matmul or conv2d, or a softmax, log_softmax or layer_norm)"
                )
        if isinstance(anchor, ROW_ANCHORS):
            self._verify_row_anchor(anchor)

    def _verify_row_anchor(self, anchor: SoftmaxOp | LogSoftmaxOp | LayerNormOp) -> None:
        """The lowering evaluates the ops before a row anchor on each load of
        its normalized operand, so they may feed nothing else."""
        rank = len(anchor.operands[0].type.get_shape())
        if anchor.normalized_axis(rank) != rank - 1:
            raise VerifyException(f"a fused '{anchor.name}' must normalize the innermost axis")
        before = set()
        for op in self.body.block.ops:
            if op is anchor:
                break
            before.add(op)
        for op in before:
            for use in op.results[0].uses:
                if use.operation not in before and not (use.operation is anchor and use.index == 0):
                    raise VerifyException(
                        f"'{op.name}' before the anchor may only feed the anchor's first operand"
                    )
