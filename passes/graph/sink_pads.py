"""graph-sink-pads: a constant pad moves below the element-wise ops that
consume it, down to the convolution it pads, which then takes it as its own
padding (canonicalize's PadIntoConvolution), instead of a copy of the
padded tensor (and, in a channel-blocked network, reorders around it):

    %p = graph.pad %x {value = c}
    %y = f(%p, scalars)
 -> %y0 = f(%x, scalars)
    %y = graph.pad %y0 {value = f(c, scalars)}

f(c) is evaluated as the reference interpreter does (the padded border
holds exactly what f would have made of c). Quantized models need it: an
exporter's explicit Pad (TensorFlow's "same" padding, MobileNet-v2's and
EfficientNet's strided depthwise layers) sits before a quantize ->
dequantize pair, which kept it from the convolution. Only ops whose other
operands are one-element constants take the pad; a pad with other users
stays where it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph
from graphcompiler.interpreters import reference
from graphcompiler.passes.function_pass import FunctionPass


def _scalar_constant(value: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, graph.ConstantOp) and all(d == 1 for d in value.type.get_shape())


def _padded_operand(op: Operation) -> graph.PadOp | None:
    """The constant pad `op` reads beside one-element constants, if it is
    the pad's only user and the pad has op's shape."""
    pads = [o.owner for o in op.operands if isinstance(o.owner, graph.PadOp)]
    if len(pads) != 1 or not isinstance(op, graph.ELEMENTWISE_OPS):
        return None
    pad = pads[0]
    if pad.pad_mode != "constant" or len(list(pad.result.uses)) != 1:
        return None
    if pad.result.type.get_shape() != op.results[0].type.get_shape():
        return None
    others = [o for o in op.operands if o is not pad.result]
    return pad if all(_scalar_constant(o) for o in others) else None


def _border_value(op: Operation, pad: graph.PadOp) -> float:
    """What `op` makes of the pad's fill value (with its scalar operands)."""
    fill = reference.to_tensor(pad.fill_value, TensorType(pad.result.type.element_type, []))
    arrays = [
        fill if operand is pad.result else reference._constant(operand.owner)
        for operand in op.operands
    ]
    return float(reference.evaluate(op, arrays).flat[0])


def sink(op: Operation) -> bool:
    """Move the pad `op` reads below it (the module doc); whether it did."""
    pad = _padded_operand(op)
    if pad is None:
        return False
    result = op.results[0]
    inner_type = TensorType(result.type.element_type, pad.input.type.get_shape())
    try:
        value = _border_value(op, pad)
        operands = [pad.input if o is pad.result else o for o in op.operands]
        inner = type(op).build_from(operands, inner_type, **op.properties)
        moved = graph.PadOp.build_from(
            [inner.results[0]], result.type, pads=pad.pads, mode=pad.mode,
            value=graph.property_attribute("value", value),
        )  # fmt: skip
        inner.verify()
        moved.verify()
    except (ValueError, OverflowError, VerifyException):
        return False
    moved.result.name_hint = result.name_hint
    Rewriter.insert_op([inner, moved], InsertPoint.before(op))
    result.replace_all_uses_with(moved.result)
    Rewriter.erase_op(op)
    Rewriter.erase_op(pad)
    return True


@dataclass(frozen=True)
class GraphSinkPadsPass(FunctionPass):
    """Constant pads below the element-wise ops they feed (module doc)."""

    name = "graph-sink-pads"
    STATISTICS = {"sunk-pads": "element-wise ops a pad moved below"}

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        return {"sunk-pads": sum(sink(op) for op in list(function.body.block.ops))}
