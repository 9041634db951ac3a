"""Converters of ai.onnx.preview.training's optimizer steps (registered in
`ops.CONVERTERS`): Adagrad, Momentum and Adam, element-wise in graph ops.

Each takes the learning rate R and the step count T (scalars, known or
not), then n tensors to update, their n gradients and their n (or 2n for
Adam) accumulators, and gives the updated tensors, then the updated
accumulators, by onnx's formulas (its reference evaluator's). A
condition on T (the first step) is a select at run time.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import cast, converter

TRAINING = "ai.onnx.preview.training"


class _Step:
    """Arithmetic on one tensor's update, in its element type."""

    def __init__(self, node: Node, x: SSAValue):
        self.node, self.like = node, x

    def __call__(self, op: str, *operands: SSAValue | float) -> SSAValue:
        values = [self.node.scalar(o, self.like) if isinstance(o, float) else o for o in operands]
        return self.node.make(op, values)

    def first_step(self, t: SSAValue) -> SSAValue:
        """T == 0 (at most 0), as the element type's rank-0 boolean."""
        return self.node.make("less_equal", [t, self.node.scalar(0.0, t)])


def _groups(node: Node, accumulators: int) -> tuple[SSAValue, SSAValue, list[list[SSAValue]]]:
    """R and T (in the tensors' element type) and, per updated tensor, [x,
    g, accumulator...]; the inputs after R and T come as n tensors, n
    gradients and `accumulators` times n accumulators."""
    given = node.num_inputs - 2
    if given <= 0 or given % (2 + accumulators):
        raise node.error(
            f"after R and T it takes n tensors, n gradients and {accumulators} x n "
            f"accumulators, got {given} inputs"
        )
    n = given // (2 + accumulators)
    values = [node.value(2 + i) for i in range(given)]
    element = values[0].type.element_type
    r, t = (cast(node, node.value(i), element) for i in (0, 1))
    for value in (r, t):
        if value.type.get_shape():
            raise node.error(f"R and T must be scalars, got shape {list(value.type.get_shape())}")
    return r, t, [values[i::n] for i in range(n)]


def _required(node: Node, name: str) -> float:
    value = node.attr(name)
    if value is None:
        raise node.error(f"attribute '{name}' is required")
    return float(value)


def _regularized(step: _Step, x: SSAValue, g: SSAValue, coefficient: float) -> SSAValue:
    return step("add", step("mul", x, coefficient), g) if coefficient else g


@converter("Adagrad", domain=TRAINING)
def _adagrad(node: Node) -> list:
    r, t, groups = _groups(node, 1)
    decay = float(node.attr("decay_factor", 0.0))
    epsilon = float(node.attr("epsilon", 1e-6))
    norm = float(node.attr("norm_coefficient", 0.0))
    xs, hs = [], []
    for x, g, h in groups:
        step = _Step(node, x)
        rate = step("div", r, step("add", step("mul", t, decay), 1.0))
        g = _regularized(step, x, g, norm)
        h_new = step("add", h, step("mul", g, g))
        scale = step("add", step("sqrt", h_new), epsilon)
        xs.append(step("sub", x, step("div", step("mul", rate, g), scale)))
        hs.append(h_new)
    return [*xs, *hs]


@converter("Momentum", domain=TRAINING)
def _momentum(node: Node) -> list:
    r, t, groups = _groups(node, 1)
    alpha, beta, norm = (_required(node, name) for name in ("alpha", "beta", "norm_coefficient"))
    nesterov = node.require_attr("mode", ("standard", "nesterov"), None) == "nesterov"
    xs, vs = [], []
    for x, g, v in groups:
        step = _Step(node, x)
        g = _regularized(step, x, g, norm)
        beta_now = node.make(
            "select", [step.first_step(t), node.scalar(1.0, t), node.scalar(beta, t)]
        )
        v_new = step("add", step("mul", v, alpha), step("mul", g, beta_now))
        direction = step("add", g, step("mul", v_new, alpha)) if nesterov else v_new
        xs.append(step("sub", x, step("mul", r, direction)))
        vs.append(v_new)
    return [*xs, *vs]


@converter("Adam", domain=TRAINING)
def _adam(node: Node) -> list:
    r, t, groups = _groups(node, 2)
    alpha, beta = float(node.attr("alpha", 0.9)), float(node.attr("beta", 0.999))
    epsilon = float(node.attr("epsilon", 1e-6))
    norm = float(node.attr("norm_coefficient", 0.0))
    post = float(node.attr("norm_coefficient_post", 0.0))
    xs, vs, hs = [], [], []
    for x, g, v, h in groups:
        step = _Step(node, x)
        g = _regularized(step, x, g, norm)
        v_new = step("add", step("mul", v, alpha), step("mul", g, 1.0 - alpha))
        h_new = step("add", step("mul", h, beta), step("mul", step("mul", g, g), 1.0 - beta))
        scale = step("add", step("sqrt", h_new), epsilon)
        corrected = step(  # bias correction from the first step on
            "div",
            step("mul", r, step("sqrt", step("sub", 1.0, step("pow", node.scalar(beta, t), t)))),
            step("sub", 1.0, step("pow", node.scalar(alpha, t), t)),
        )
        rate = node.make("select", [step.first_step(t), r, corrected])
        x_new = step("sub", x, step("mul", rate, step("div", v_new, scale)))
        xs.append(step("mul", x_new, 1.0 - post) if post else x_new)
        vs.append(v_new)
        hs.append(h_new)
    return [*xs, *vs, *hs]
