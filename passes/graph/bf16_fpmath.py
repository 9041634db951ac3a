"""graph-bf16-fpmath: the layers of an f32 model computed on bf16 operands
with f32 sums, what oneDNN calls the bf16 fpmath mode (and
`compile(precision="bf16")` / `gc-run --precision bf16` ask for):

    %y = graph.matmul %x, %w : (f32, f32) -> f32          (%w constant)
 -> %y = graph.matmul (cast %x -> bf16), (cast %w -> bf16) : (bf16, bf16) -> f32

and, with `convolutions=true`, the same for graph.conv2d. A layer is a
matmul (or convolution) whose weight (B, the filter) is a constant
expression: folding then stores the
weight in bf16, the activation is rounded by a cast the fusion pass puts in
its producer's loop, and each product of two bf16 values is exact in f32,
so the only error is the operands' rounding (8 significant bits: a relative
error of about 2^-9 per operand, which sums over K mostly cancel).
Products of two activations (attention's scores and context) and every
normalization, softmax and reduction stay f32, as in oneDNN: rounding both
operands of a product computed at run time loses more and saves nothing
when neither side is stored.

On a target with AMX-BF16 the widening matmul runs on AMX tiles, with
AVX512-BF16 on `vdpbf16ps` microkernels (bf16 pairs); elsewhere on the
f32 kernels, which convert the operands as they pack them. Convolutions
are left in f32 unless asked for (`convolutions=true`, which the driver
gives where the target has AMX-BF16): then those of one group and a block
of input channels or more run channel-blocked on bf16 pairs
(conv_amx.py), on AMX tiles there; on vector FMAs, pairs gain nothing
over f32.

Runs before the other graph passes, so that constant folding makes the
weights' bf16 constants and matmul merging sees the activation casts.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float32Type, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import graph
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass

f32, bf16 = Float32Type(), BFloat16Type()


def _depends_on_arguments(value: SSAValue, known: dict[SSAValue, bool]) -> bool:
    """Whether `value` is computed from a function argument (else it is a
    constant expression: a weight, maybe transposed or reshaped)."""
    pending = [value]
    while pending:
        current = pending[-1]
        if current in known:
            pending.pop()
            continue
        if isinstance(current, BlockArgument):
            known[current] = True
            pending.pop()
            continue
        operands = list(current.owner.operands)
        unknown = [o for o in operands if o not in known]
        if unknown:
            pending += unknown
            continue
        known[current] = any(known[o] for o in operands)
        pending.pop()
    return known[value]


MIN_CONV_CHANNELS = 16
"""Input channels from which a convolution runs on bf16 pairs: a block."""


def _tiled_conv(op: Operation) -> bool:
    """A convolution that the tiles take on bf16 pairs (one group, a block
    of input channels or more, conv_amx.py). Depthwise, grouped and narrow
    ones (an RGB stem) stay f32: on bf16 they would leave the blocked
    layout, or fill a tile row with a few channels."""
    return (
        isinstance(op, graph.Conv2dOp)
        and op.group_count == 1
        and op.input.type.get_shape()[1] >= MIN_CONV_CHANNELS
    )


def _blocks_whole_network(function: func.FuncOp) -> bool:
    """Whether no convolution is grouped but for depthwise ones: a grouped
    one (ResNeXt's) keeps the whole network plain (graph-block-layout),
    where bf16 convolutions run on the f32 kernels, slower than f32."""
    return all(
        op.group_count == 1 or op.group_count == op.input.type.get_shape()[1]
        for op in function.body.block.ops
        if isinstance(op, graph.Conv2dOp)
    )


@dataclass(frozen=True)
class GraphBf16FpmathPass(FunctionPass):
    """Matmuls (and convolutions) with constant weights on bf16 operands (module doc)."""

    name = "graph-bf16-fpmath"
    convolutions: bool = pass_option(False, "one-group convolutions too (on AMX-BF16 tiles)")
    STATISTICS = {"bf16-layers": "matmuls and convolutions given bf16 operands"}

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        known: dict[SSAValue, bool] = {}
        casts: dict[SSAValue, SSAValue] = {}  # one cast per value, shared by its layers

        def rounded(value: SSAValue) -> SSAValue:
            if value not in casts:
                cast = graph.CastOp.build_from([value], TensorType(bf16, value.type.get_shape()))
                where = (
                    InsertPoint.after(value.owner)
                    if isinstance(value.owner, Operation)
                    else InsertPoint.at_start(function.body.block)
                )
                Rewriter.insert_op(cast, where)
                casts[value] = cast.result
            return casts[value]

        count = 0
        convolutions = self.convolutions and _blocks_whole_network(function)
        for op in list(function.body.block.ops):
            layer = isinstance(op, graph.MatmulOp) or (convolutions and _tiled_conv(op))
            if not layer or op.result.type.element_type != f32:
                continue
            activation, weight = op.operands
            if activation.type.element_type != f32 or _depends_on_arguments(weight, known):
                continue
            operands = [rounded(activation), rounded(weight)]
            layer = type(op).create(
                operands=operands,
                result_types=[op.result.type],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            Rewriter.replace_op(op, layer)
            count += 1
        return {"bf16-layers": count}
