"""graph-block-layout: convolutions and the element-wise ops around them
run on channel-blocked tensors ([N, C / b, H, W, b], b = the target's f32
lanes), with reorders only where the blocked form stops.

A convolution network spends its time in convolutions, which want b
channels of a pixel in one vector (dialects/graph/layout.py). Reordering
every convolution's input and output would cost more memory traffic than
the layout saves, so the blocked form flows from convolution to
convolution, as oneDNN's NCHWc graphs do (TVM's AlterOpLayout), in one walk
in block order:
- where every convolution of the function qualifies (else none is
  blocked: islands of blocked layers would pay a reorder at each end), an
  f32 conv2d with constant weights, at least b channels in and out, and
  one group, depthwise or groups of whole blocks (or a u8 x s8 one with
  one group, any channels: graph-integer-matmul's), becomes from_blocked(blocked_conv2d(to_blocked(input)));
  channels that b does not divide leave padding lanes in the last block
  (dialects/graph/layout.py), which no op reads; a convolution from fewer
  channels than a block (an RGB stem) reads its plain input (narrow_input);
- an element-wise op one of whose operands is a from_blocked of the op's
  shape runs on the blocked tensors instead, its result reordered back
  after it: its other operands are blocked too (a per-channel [C, 1, 1]
  operand, e.g. a bias, becomes [C / b, 1, 1, b]; one broadcast along
  the channels keeps a block of 1); constant ones are reordered here, at
  compile time;
- a reduction over every spatial dim of a from_blocked value (a global
  pool, squeeze-and-excitation's mean) runs on the blocked tensor, each
  lane a channel, and reorders back only its one pixel per channel;
- so does a max or average pool of a from_blocked value, into a blocked
  result;
- to_blocked(from_blocked(x)) is x (its padding lanes may differ from
  the zeros to_blocked writes: nothing reads them), and the reorders left
  without users are dropped.
What remains are reorders at the graph's inputs and outputs and before
ops without a blocked form (other reductions, reshapes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import graph
from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity
from graphcompiler.ir.element_types import dense_elements
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass
from graphcompiler.passes.graph.constant_fold import fold
from graphcompiler.runtime.tuning import forced_conv_path
from graphcompiler.target.description import get_target

BLOCKABLE_OPS = (
    *(op for op in graph.ELEMENTWISE_OPS if op is not graph.BroadcastToOp),
    graph.LookupOp,
)
"""Element-wise ops that run on blocked tensors as they are (broadcast_to's
result shape is its own; a lookup reads a table at each element)."""
PIXEL_REDUCTIONS = (
    graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp, graph.ReduceProdOp
)  # fmt: skip
"""Reductions that run on blocked tensors when they reduce the pixels only."""


def takes_byte_quads(op: graph.Conv2dOp, block: int) -> bool:
    """A u8 x s8 convolution (graph-integer-matmul's), one group and
    constant weights, that blocks of whole byte quads hold: the tiles
    multiply four channels' bytes at a time (conv_blocked.py)."""
    elements = [str(v.type.element_type) for v in (op.input, op.weight, op.result)]
    return (
        elements == ["ui8", "i8", "i32"]
        and isinstance(op.weight.owner, graph.ConstantOp)
        and op.group_count == 1
        and block % 4 == 0
    )


def takes_bf16_pairs(op: graph.Conv2dOp, block: int) -> bool:
    """A widening bf16 convolution (graph-bf16-fpmath's), one group and
    constant weights, in blocks of 16 channels: the tiles multiply pairs of
    channels (conv_amx.py; AMX tiles where the target has them)."""
    elements = [str(v.type.element_type) for v in (op.input, op.weight, op.result)]
    return (
        elements == ["bf16", "bf16", "f32"]
        and isinstance(op.weight.owner, graph.ConstantOp)
        and op.group_count == 1
        and block == 16
    )


def wide_enough(op: graph.Conv2dOp, block: int) -> bool:
    """At least a block of channels in and out. Narrower convolutions stay
    plain (an RGB stem, a one-channel head): padded to a block, their
    tensors and FMAs would be mostly padding. A byte-quad convolution is
    always blocked: plain, it would run a direct loop nest, and its tiles
    read only the words that hold channels (a stem's 3 channels are one
    word a pixel)."""
    c, o = op.input.type.get_shape()[1], op.weight.type.get_shape()[0]
    return (c >= block and o >= block) or takes_byte_quads(op, block)


def convertible(op: graph.Conv2dOp, block: int) -> bool:
    """f32, constant weights, wide enough, and one group, depthwise, or
    groups of whole blocks in and out (RegNet's 64-channel groups:
    plain, its grouped layers ran 1.3x onnxruntime's time and kept the
    whole network plain); or byte quads or bf16 pairs (takes_byte_quads,
    takes_bf16_pairs). The channels of one group need not fill whole
    blocks (MobileNet-v2's 24, EfficientNet's 40 with 16-channel blocks):
    the padding lanes cost a quarter more memory on those layers, a plain
    island would cost reorders."""
    c, o = op.input.type.get_shape()[1], op.weight.type.get_shape()[0]
    groups = op.group_count
    whole_group_blocks = c % (groups * block) == 0 and o % (groups * block) == 0
    f32_layer = (
        all(v.type.element_type == Float32Type() for v in (op.input, op.weight, op.result))
        and isinstance(op.weight.owner, graph.ConstantOp)
        and (groups == 1 or groups == c == o or whole_group_blocks)
    )
    tiles = takes_byte_quads(op, block) or takes_bf16_pairs(op, block)
    return (f32_layer or tiles) and wide_enough(op, block)


def narrow_input(op: graph.Conv2dOp, block: int) -> bool:
    """An f32 convolution of one group and constant weights from fewer
    channels than a block into at least a block (an RGB stem): it reads
    its plain input and writes the blocked form (graph.blocked_conv2d's
    plain input), so the network after it starts blocked: ResNet's stem
    ran 1.3x onnxruntime's time plain, and its max pool and a reorder
    after it another 0.3 ms."""
    c, o = op.input.type.get_shape()[1], op.weight.type.get_shape()[0]
    return (
        all(v.type.element_type == Float32Type() for v in (op.input, op.weight, op.result))
        and isinstance(op.weight.owner, graph.ConstantOp)
        and op.group_count == 1
        and c < block <= o
        and not isinstance(op.input.owner, graph.FromBlockedOp)
    )


def blocks_whole_network(function: func.FuncOp, block: int) -> bool:
    """Whether every convolution of `function` wide enough to block can
    be. Where some cannot (groups of part blocks, or weights given at run
    time), the blocked form would be cut into islands with reorders
    between them, each moving a whole tensor through memory (as much as an
    element-wise op): such networks ran 10-20% slower blocked than plain."""
    return all(
        convertible(op, block)
        for op in function.body.block.ops
        if isinstance(op, graph.Conv2dOp) and wide_enough(op, block)
    )


class _Layout:
    """One function's walk: the reorders it made, shared by every user."""

    def __init__(self, block: int):
        self.block = block
        self.blocked: dict[SSAValue, SSAValue] = {}
        self.counts = {"blocked-convolutions": 0, "blocked-ops": 0}

    def _insert(self, op: Operation, before: Operation) -> SSAValue:
        """`op` before `before`, evaluated now when its operands are constants."""
        if all(isinstance(o.owner, graph.ConstantOp) for o in op.operands):
            result = op.results[0].type
            value = dense_elements(fold(op), result.element_type, shape=result.get_shape())
            op.drop_all_references()  # never inserted: its operands lose a use
            op = graph.ConstantOp.build_from([], value=value)
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    def to_blocked(self, value: SSAValue, before: Operation) -> SSAValue:
        """`value` [N, C, ...] as [N, C / b, ..., b]: the input of a
        from_blocked, or one reorder per value."""
        owner = value.owner
        if (
            isinstance(owner, graph.FromBlockedOp)
            and owner.input.type.get_shape()[-1] == self.block
        ):
            return owner.input
        if value not in self.blocked:
            reorder = graph.ToBlockedOp.build_from([value], block=self.block)
            self.blocked[value] = self._insert(reorder, before)
        return self.blocked[value]

    def convert_conv(self, op: graph.Conv2dOp) -> None:
        blocked_input = self.to_blocked(op.input, op)
        n, o, oh, ow = op.result.type.get_shape()
        blocked_type = TensorType(
            op.result.type.element_type, [n, -(-o // self.block), oh, ow, self.block]
        )
        conv = graph.BlockedConv2dOp.build_from(
            [blocked_input, op.weight], blocked_type, **op.properties
        )
        Rewriter.insert_op(conv, InsertPoint.before(op))
        back = graph.FromBlockedOp.build_from([conv.result], op.result.type)
        Rewriter.replace_op(op, back)
        self.counts["blocked-convolutions"] += 1

    def convert_narrow_input_conv(self, op: graph.Conv2dOp) -> None:
        """from_blocked(blocked_conv2d(input)) of the plain input (narrow_input)."""
        n, o, oh, ow = op.result.type.get_shape()
        blocked_type = TensorType(
            op.result.type.element_type, [n, -(-o // self.block), oh, ow, self.block]
        )
        conv = graph.BlockedConv2dOp.build_from(
            [op.input, op.weight], blocked_type, **op.properties
        )
        Rewriter.insert_op(conv, InsertPoint.before(op))
        Rewriter.replace_op(op, graph.FromBlockedOp.build_from([conv.result], op.result.type))
        self.counts["blocked-convolutions"] += 1

    def _operand(self, value: SSAValue, shape: list[int], before: Operation) -> SSAValue | None:
        """An operand broadcast to the plain `shape`, in the blocked form, or
        None where it cannot be (it broadcasts along the channels' blocks)."""
        dims = list(value.type.get_shape())
        if not dims:
            return value  # a scalar broadcasts in any layout
        aligned = [1] * (len(shape) - len(dims)) + dims
        if aligned[1] not in (1, shape[1]):
            return None
        if aligned != dims:
            reshape = graph.ReshapeOp.build_from(
                [value], TensorType(value.type.element_type, aligned)
            )
            value = self._insert(reshape, before)
        if aligned[1] == shape[1]:
            return self.to_blocked(value, before)
        blocked_shape = [aligned[0], 1, *aligned[2:], 1]
        reshape = graph.ReshapeOp.build_from(
            [value], TensorType(value.type.element_type, blocked_shape)
        )
        return self._insert(reshape, before)

    def sink_reorder(self, op: Operation) -> None:
        """Run element-wise `op` on the blocked tensors when one of its
        operands is a from_blocked of its shape."""
        shape = list(op.results[0].type.get_shape())
        if not any(
            isinstance(o.owner, graph.FromBlockedOp)
            and list(o.type.get_shape()) == shape
            and o.owner.input.type.get_shape()[-1] == self.block
            for o in op.operands
        ):
            return
        operands = [self._operand(o, shape, op) for o in op.operands]
        if any(o is None for o in operands):
            return
        result_type = TensorType(
            op.results[0].type.element_type, graph.blocked_shape(shape, self.block)
        )
        free_result = isinstance(op, graph.CastOp)
        blocked = type(op).build_from(
            operands, result_type if free_result else None, **op.properties
        )
        Rewriter.insert_op(blocked, InsertPoint.before(op))
        back = graph.FromBlockedOp.build_from([blocked.results[0]], op.results[0].type)
        Rewriter.replace_op(op, back)
        self.counts["blocked-ops"] += 1

    def sink_into_reduction(self, op: graph.ReduceOp) -> None:
        """Reduce the blocked tensor when `op` reduces every spatial dim of
        a from_blocked value: [N, C / b, *spatial, b] -> [N, C / b, (1, ...,) b]."""
        owner = op.input.owner
        rank = len(op.input.type.get_shape())
        if not (
            isinstance(owner, graph.FromBlockedOp)
            and owner.input.type.get_shape()[-1] == self.block
            and rank >= 3
            and op.reduced_axes(rank) == list(range(2, rank))
        ):
            return
        spatial = list(range(2, rank))
        blocked = type(op).build_from([owner.input], axes=spatial, keep_dims=op.keeps_reduced_dims)
        Rewriter.insert_op(blocked, InsertPoint.before(op))
        back = graph.FromBlockedOp.build_from([blocked.results[0]], op.results[0].type)
        Rewriter.replace_op(op, back)
        self.counts["blocked-ops"] += 1

    def sink_into_pool(self, op: graph.PoolOp) -> None:
        """Pool the blocked tensor when `op` pools a from_blocked value:
        each lane is a channel, pooled on its own."""
        owner = op.input.owner
        if not (
            isinstance(owner, graph.FromBlockedOp)
            and owner.input.type.get_shape()[-1] == self.block
        ):
            return
        blocked = type(op).build_from([owner.input], **op.properties)
        Rewriter.insert_op(blocked, InsertPoint.before(op))
        back = graph.FromBlockedOp.build_from([blocked.results[0]], op.results[0].type)
        Rewriter.replace_op(op, back)
        self.counts["blocked-ops"] += 1


def _drop_unused_reorders(function: func.FuncOp) -> None:
    """Reorders, reshapes and constants this pass made that nothing reads."""
    for op in reversed(list(function.body.block.ops)):
        kinds = graph.FromBlockedOp | graph.ToBlockedOp | graph.ReshapeOp | graph.ConstantOp
        if isinstance(op, kinds) and not op.results[0].uses:
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class GraphBlockLayoutPass(FunctionPass):
    """Convolutions and their element-wise neighbours on channel-blocked tensors."""

    name = "graph-block-layout"
    target: str = pass_option(
        "", "host, avx512, avx2 or generic (default: GC_TARGET, else the host): b = its f32 lanes"
    )
    block: int = pass_option(0, "channels per block (0: the target's f32 lanes)")
    STATISTICS = {
        "blocked-convolutions": "conv2d ops made blocked_conv2d",
        "blocked-ops": "element-wise ops, pools and pixel reductions moved onto blocked tensors",
    }

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        try:
            block = self.block or get_target(self.target).f32_lanes
        except ValueError as error:
            raise DiagnosticError(Diagnostic(Severity.ERROR, str(error))) from None
        if block <= 0:
            raise DiagnosticError(Diagnostic(Severity.ERROR, f"block {block} must be positive"))
        layout = _Layout(block)
        if forced_conv_path.get() is not None or not blocks_whole_network(function, block):
            return layout.counts  # tuning measures a plain path
        for op in list(function.body.block.ops):
            if isinstance(op, graph.Conv2dOp) and convertible(op, block):
                layout.convert_conv(op)
            elif isinstance(op, graph.Conv2dOp) and narrow_input(op, block):
                layout.convert_narrow_input_conv(op)
            elif isinstance(op, BLOCKABLE_OPS):
                layout.sink_reorder(op)
            elif isinstance(op, PIXEL_REDUCTIONS):
                layout.sink_into_reduction(op)
            elif isinstance(op, graph.PoolOp):
                layout.sink_into_pool(op)
        _drop_unused_reorders(function)
        return layout.counts
