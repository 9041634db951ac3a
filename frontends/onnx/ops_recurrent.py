"""Converters of ONNX's recurrent layers, RNN, GRU and LSTM (registered in
`ops.CONVERTERS`), as a graph.loop over one step function per direction.

The input's projection for every step is one matmul in the main graph,
X [S * B, I] x Wᵀ plus both biases; the step function (outline.py) takes
the states and one step's projection and computes a small matmul of the
hidden state by Rᵀ and the gates' element-wise ops (graph-fuse makes them
a kernel or two). The step is compiled once however long the sequence.
A reverse direction is a reverse loop; bidirectional runs both and stacks
them.

sequence_lens (B) masks step t of batch b where t >= its length (a mask
sequence [S, B, 1] the loop walks with the projection): the state is kept
and the output is 0. Kept states make the reverse
direction right too: its walk from the end leaves the initial state
untouched until the batch's last valid step. Gate pre-activations are
clamped to [-clip, clip] when `clip` is given. `activations` (with their
alpha and beta) are ONNX's list: Sigmoid, Tanh, Relu, HardSigmoid,
LeakyRelu, ThresholdedRelu, ScaledTanh, Affine, Elu, Softsign, Softplus.
`layout` 1 takes and gives batch-major tensors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, cast, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis
from graphcompiler.frontends.onnx.outline import loop_over

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTIVATIONS = {
    "RNN": ["Tanh"],
    "GRU": ["Sigmoid", "Tanh"],
    "LSTM": ["Sigmoid", "Tanh", "Tanh"],
}
PARAMETERS = {  # name: (how many of activation_alpha/beta it reads, default alpha, default beta)
    "Sigmoid": (0, None, None), "Tanh": (0, None, None), "Relu": (0, None, None),
    "Softsign": (0, None, None), "Softplus": (0, None, None),
    "LeakyRelu": (1, 0.01, None), "ThresholdedRelu": (1, 1.0, None), "Elu": (1, 1.0, None),
    "HardSigmoid": (2, 0.2, 0.5), "ScaledTanh": (2, 1.0, 1.0), "Affine": (2, 1.0, 0.0),
}  # fmt: skip

Activation = Callable[[SSAValue], SSAValue]


def _activations(node: Node, count: int) -> list[Activation]:
    """The `count` activation functions, from the attribute or the defaults."""
    names = node.attr("activations")
    names = [n.decode() if isinstance(n, bytes) else n for n in names] if names else None
    names = names or DEFAULT_ACTIVATIONS[node.op_type] * (
        count // len(DEFAULT_ACTIVATIONS[node.op_type])
    )
    if len(names) != count:
        raise node.error(f"activations lists {len(names)} functions, {count} expected")
    alphas = list(node.attr("activation_alpha", []) or [])
    betas = list(node.attr("activation_beta", []) or [])
    functions = []
    for name in names:
        if name not in PARAMETERS:
            raise node.error(f"activation '{name}' is not supported")
        used, alpha, beta = PARAMETERS[name]
        if used >= 1 and alphas:
            alpha = float(alphas.pop(0))
        if used >= 2 and betas:
            beta = float(betas.pop(0))
        functions.append(_activation(node, name, alpha, beta))
    return functions


def _activation(node: Node, name: str, alpha, beta) -> Activation:
    def scaled(x: SSAValue, factor: float) -> SSAValue:
        return node.make("mul", [x, node.scalar(factor, x)])

    def call(x: SSAValue) -> SSAValue:
        if name in ("Sigmoid", "Tanh", "Relu", "Softplus"):
            return node.make(name.lower(), [x])
        if name == "LeakyRelu":
            return node.make("leaky_relu", [x], alpha=alpha)
        if name == "Elu":
            return node.make("elu", [x], alpha=alpha)
        if name == "HardSigmoid":
            return node.make("hard_sigmoid", [x], alpha=alpha, beta=beta)
        if name == "ThresholdedRelu":
            above = node.make("greater", [x, node.scalar(alpha, x)])
            return node.make("select", [above, x, node.scalar(0.0, x)])
        if name == "ScaledTanh":
            return scaled(node.make("tanh", [scaled(x, beta)]), alpha)
        if name == "Affine":
            return node.make("add", [scaled(x, alpha), node.scalar(beta, x)])
        magnitude = node.make("add", [node.make("abs", [x]), node.scalar(1.0, x)])  # Softsign
        return node.make("div", [x, magnitude])

    return call


class _Layer:
    """One recurrent node's operands, per direction, in [S, B, ...] layout."""

    def __init__(self, node: Node):
        self.node, self.kind = node, node.op_type
        self.gates = GATES[self.kind]
        self.batch_major = bool(node.require_attr("layout", [0, 1], 0))
        x = _float_input(node)
        if len(x.type.get_shape()) != 3:
            raise node.error("X must be [sequence, batch, input] (or batch-major with layout 1)")
        self.x = self._time_major(x)
        self.steps, self.batch, self.features = self.x.type.get_shape()
        self.hidden = int(node.attr("hidden_size", 0)) or node.value(2).type.get_shape()[-1]
        direction = node.require_attr(
            "direction", ["forward", "reverse", "bidirectional"], "forward"
        )
        self.directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
        functions = _activations(node, len(DEFAULT_ACTIVATIONS[self.kind]) * len(self.directions))
        share = len(functions) // len(self.directions)
        self.functions = [
            functions[i * share : (i + 1) * share] for i in range(len(self.directions))
        ]
        clip = node.attr("clip")
        self.clip = None if clip is None else float(clip)
        self.input_forget = self.kind == "LSTM" and bool(node.attr("input_forget", 0))
        self.linear_before_reset = (
            bool(node.attr("linear_before_reset", 0)) if self.kind == "GRU" else False
        )
        self.lengths = None
        if node.has_input(4):
            lengths = cast(node, node.value(4), x.type.element_type)
            self.lengths = reshape(node, lengths, [self.batch, 1])

    def _time_major(self, value: SSAValue) -> SSAValue:
        """[B, S, ...] -> [S, B, ...] when batch-major (also initial states' [B, D, H])."""
        if not self.batch_major:
            return value
        return self.node.make("transpose", [value], perm=[1, 0, 2])

    def weight(self, index: int, direction: int) -> SSAValue:
        """W or R of `direction`, transposed: [in, gates * hidden]."""
        w = reshape(self.node, _slice_axis(self.node, self.node.value(index), 0, direction, 1),
                    self.node.value(index).type.get_shape()[1:])  # fmt: skip
        return self.node.make("transpose", [w], perm=[1, 0])

    def bias(self, direction: int) -> tuple[SSAValue | None, SSAValue | None]:
        """(Wb, Rb) of `direction`, [gates * hidden] each; None without B."""
        if not self.node.has_input(3):
            return None, None
        b = self.node.value(3)
        width = self.gates * self.hidden
        row = reshape(self.node, _slice_axis(self.node, b, 0, direction, 1), [2 * width])
        return _slice_axis(self.node, row, 0, 0, width), _slice_axis(
            self.node, row, 0, width, width
        )

    def initial(self, index: int, direction: int) -> SSAValue:
        """initial_h (5) or initial_c (6) of `direction` [B, H], zeros if omitted."""
        node = self.node
        if not node.has_input(index):
            zeros = np.zeros((self.batch, self.hidden))
            return node.importer.constant_value(zeros, self.x.type.element_type, node.label)
        states = self._time_major(node.value(index))
        return reshape(node, _slice_axis(node, states, 0, direction, 1), [self.batch, self.hidden])

    def gate(self, values: SSAValue, index: int) -> SSAValue:
        """Gate `index`'s columns of [B, gates * H]."""
        return _slice_axis(self.node, values, 1, index * self.hidden, self.hidden)

    def clipped(self, x: SSAValue) -> SSAValue:
        if self.clip is None:
            return x
        low = self.node.make("maximum", [x, self.node.scalar(-self.clip, x)])
        return self.node.make("minimum", [low, self.node.scalar(self.clip, x)])


def _run(layer: _Layer, direction: int) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    """(Y [S, B, H], final h, final c) of one direction."""
    node, hidden = layer.node, layer.hidden
    w, r = layer.weight(1, direction), layer.weight(2, direction)
    w_bias, r_bias = layer.bias(direction)
    r_h = None
    if layer.kind == "GRU" and not layer.linear_before_reset:  # (r * H) x Rhᵀ: apart
        r, r_h = _slice_axis(node, r, 1, 0, 2 * hidden), _slice_axis(node, r, 1, 2 * hidden, hidden)
    flat = reshape(node, layer.x, [layer.steps * layer.batch, layer.features])
    projected = node.make("matmul", [flat, w])
    for term in (w_bias, None if layer.linear_before_reset else r_bias):
        if term is not None:
            projected = node.make("add", [projected, term])
    if layer.linear_before_reset and r_bias is not None:  # all but the h gate's Rb go here
        zero = node.importer.constant_value(np.zeros(hidden), layer.x.type.element_type, node.label)
        head = _slice_axis(node, r_bias, 0, 0, 2 * hidden)
        projected = node.make("add", [projected, node.make("concat", [head, zero], axis=0)])
    projected = reshape(node, projected, [layer.steps, layer.batch, layer.gates * hidden])
    h, c = (
        layer.initial(5, direction),
        layer.initial(6, direction) if layer.kind == "LSTM" else None,
    )
    peepholes = node.value(7) if layer.kind == "LSTM" and node.has_input(7) else None
    functions = layer.functions[direction]
    states = [h] if c is None else [h, c]
    sequences = [projected]
    if layer.lengths is not None:  # past a batch's length: state kept, output 0
        steps = np.arange(layer.steps).reshape(layer.steps, 1, 1)
        first = node.importer.constant_value(steps, layer.x.type.element_type, node.label)
        sequences.append(node.make("less", [first, layer.lengths]))  # [S, B, 1]

    def step(arguments: list[SSAValue]) -> list[SSAValue]:
        h, c = arguments[0], arguments[1] if len(states) == 2 else None
        from_x = arguments[len(states)]
        from_h = node.make("matmul", [h, r])
        if layer.kind == "RNN":
            new_h, new_c = functions[0](layer.clipped(node.make("add", [from_x, from_h]))), None
        elif layer.kind == "GRU":
            new_h, new_c = _gru_step(layer, functions, from_x, from_h, h, r_h, r_bias), None
        else:
            new_h, new_c = _lstm_step(layer, functions, from_x, from_h, c, peepholes, direction)
        output = new_h
        if layer.lengths is not None:
            valid = arguments[len(states) + 1]
            output = node.make("select", [valid, new_h, node.scalar(0.0, new_h)])
            new_h = node.make("select", [valid, new_h, h])
            new_c = None if new_c is None else node.make("select", [valid, new_c, c])
        return [new_h, *([] if new_c is None else [new_c]), output]

    reverse = layer.directions[direction] == "reverse"
    final = loop_over(node, states, sequences, step, reverse=reverse)
    return final[-1], final[0], final[1] if len(states) == 2 else None


def _gru_step(layer, functions, from_x, from_h, h, r_h, r_bias) -> SSAValue:
    """z, r, h~ from the gates (order z, r, h); H = (1 - z) h~ + z H. Without
    linear_before_reset, h~ takes (r * H) x Rhᵀ (`r_h`), so `from_h` holds
    only the z and r gates' products."""
    node = layer.node
    f, g = functions
    z = f(layer.clipped(node.make("add", [layer.gate(from_x, 0), layer.gate(from_h, 0)])))
    reset = f(layer.clipped(node.make("add", [layer.gate(from_x, 1), layer.gate(from_h, 1)])))
    if layer.linear_before_reset:
        recurrent = layer.gate(from_h, 2)
        if r_bias is not None:
            h_bias = _slice_axis(node, r_bias, 0, 2 * layer.hidden, layer.hidden)
            recurrent = node.make("add", [recurrent, h_bias])
        gated = node.make("mul", [reset, recurrent])
    else:
        gated = node.make("matmul", [node.make("mul", [reset, h]), r_h])
    candidate = g(layer.clipped(node.make("add", [layer.gate(from_x, 2), gated])))
    keep = node.make("sub", [node.scalar(1.0, z), z])
    return node.make("add", [node.make("mul", [keep, candidate]), node.make("mul", [z, h])])


def _lstm_step(layer, functions, from_x, from_h, c, peepholes, direction):
    """Gates i, o, f, c; peepholes P = [Pi, Po, Pf] of `direction` on C
    (i and f on the old cell, o on the new); input_forget: f = 1 - i, as
    onnxruntime computes it."""
    node = layer.node
    f, g, h_of = functions
    total = node.make("add", [from_x, from_h])
    peephole = [None, None, None]
    if peepholes is not None:
        row = reshape(node, _slice_axis(node, peepholes, 0, direction, 1), [3 * layer.hidden])
        peephole = [_slice_axis(node, row, 0, k * layer.hidden, layer.hidden) for k in range(3)]

    def gate(index: int, cell: SSAValue | None, p: SSAValue | None, function) -> SSAValue:
        value = layer.gate(total, index)
        if p is not None:
            value = node.make("add", [value, node.make("mul", [p, cell])])
        return function(layer.clipped(value))

    i = gate(0, c, peephole[0], f)
    if layer.input_forget:  # coupled gates: what enters is what the cell forgets
        forget = node.make("sub", [node.scalar(1.0, i), i])
    else:
        forget = gate(2, c, peephole[2], f)
    candidate = gate(3, None, None, g)
    new_c = node.make("add", [node.make("mul", [forget, c]), node.make("mul", [i, candidate])])
    o = gate(1, new_c, peephole[1], f)
    return node.make("mul", [o, h_of(new_c)]), new_c


@converter("RNN", "GRU", "LSTM")
def _recurrent(node: Node) -> list:
    """Outputs Y [S, D, B, H], Y_h [D, B, H] (and LSTM's Y_c), batch-major
    with layout 1: [B, S, D, H], [B, D, H]."""
    layer = _Layer(node)
    runs = [_run(layer, d) for d in range(len(layer.directions))]
    count = len(runs)

    def stacked(values: list[SSAValue], axis: int) -> SSAValue:
        shaped = [
            reshape(node, v, [*v.type.get_shape()[:axis], 1, *v.type.get_shape()[axis:]])
            for v in values
        ]
        return shaped[0] if count == 1 else node.make("concat", shaped, axis=axis)

    y = stacked([run[0] for run in runs], 1)  # [S, D, B, H]
    finals = [stacked([run[k] for run in runs], 0) for k in (1, 2) if runs[0][k] is not None]
    if layer.batch_major:
        y = node.make("transpose", [y], perm=[2, 0, 1, 3])
        finals = [node.make("transpose", [v], perm=[1, 0, 2]) for v in finals]
    return [y, *finals]
