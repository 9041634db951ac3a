"""Random valid graphs, and the differential check each one must pass.

`generate(seed)` builds a graph (with the arrays to feed it) from every op
family: element-wise (float and integer), comparisons, select, casts,
batched/transposed matmuls, multi-axis reductions, softmax, layer and batch
norm, conv2d, pooling, concat, slice, broadcast_to, reshape (to and from
rank 0), transpose; dims 1/3/17/65/127 among others; NaN and inf inputs.

Each value carries a tolerance (relative to the output's magnitude) grown by
each op's error: data movement, max/min, relu and comparisons are exact, so
comparisons and integer casts are only applied to exact values (a rounding
difference must not flip a boolean). `check_graph` (run in a worker, see
pool.py) compiles once, runs with 1 and 2 threads (bitwise identical) and
compares with `graphcompiler.interpreters.reference.run`: NaN and inf where the
reference has them, finite values within tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import SSAValue

from graphcompiler.dialects.graph.builders import GraphBuilder, tensor_type
from graphcompiler.test.fuzz.oracle import (
    DIAGNOSTIC,
    MISMATCH,
    REJECTED,
    SUCCESS,
    Outcome,
    classify,
)

SIZES = [1, 1, 2, 3, 4, 5, 8, 16, 17, 65, 127]
MAX_ELEMENTS = 8192
EXACT = 0.0
ARITHMETIC = 1e-6  # one rounding (add, mul, ... may be contracted into fma)
TRANSCENDENTAL = 1e-5  # exp, tanh, erf, ... within a few ulp
ACCUMULATING = 1e-4  # sums in another order: matmul, conv, reductions, norms


@dataclass
class Node:
    value: SSAValue
    tol: float  # 0: bit-exact with the reference

    @property
    def shape(self) -> list[int]:
        return list(self.value.type.get_shape())

    @property
    def dtype(self) -> str:
        return str(self.value.type.element_type)


@dataclass
class RandomGraph:
    seed: int
    rng: np.random.Generator
    builder: GraphBuilder = field(default_factory=GraphBuilder)
    nodes: list[Node] = field(default_factory=list)
    arrays: list[np.ndarray] = field(default_factory=list)
    outputs: list[Node] = field(default_factory=list)
    tolerances: dict[SSAValue, float] = field(default_factory=dict)
    special: bool = False  # some inputs hold NaN and +-inf

    def dim(self) -> int:
        return int(self.rng.choice(SIZES))

    def input(self, shape: list[int], dtype: str = "f32") -> Node:
        if dtype == "f32":
            array = self.rng.uniform(-1, 1, shape).astype(np.float32)
            if self.special and array.size:
                mask = self.rng.random(array.shape) < 0.1
                array[mask] = self.rng.choice([np.nan, np.inf, -np.inf], int(mask.sum()))
        else:
            array = self.rng.integers(-9, 10, shape).astype(np.int32)
        self.arrays.append(np.asarray(array))
        node = Node(self.builder.make_input(shape, dtype), EXACT)
        self.nodes.append(node)
        return node

    def constant(self, shape: list[int], low: float = -1, high: float = 1) -> Node:
        value = self.rng.uniform(low, high, shape).astype(np.float32)
        op = self.builder.make("constant", [], tensor_type(shape), value=value)
        return Node(op.results[0], EXACT)

    def make(self, name: str, inputs: list[Node], error: float, result_type=None, **params) -> Node:
        """`graph.<name>`; its tolerance: the op's own error plus twice the
        worst input's (error grows through a chain)."""
        value = self.builder.make(name, [n.value for n in inputs], result_type, **params).results[0]
        tol = min(error + 2 * max((n.tol for n in inputs), default=0.0), 1e-2)
        node = Node(value, tol)
        self.nodes.append(node)
        self.tolerances[value] = tol
        return node

    def pick(self, accept: Callable[[Node], bool] = lambda node: True) -> Node | None:
        """A value `accept`s, most often the latest (long chains fuse)."""
        candidates = [n for n in self.nodes if accept(n)]
        if not candidates:
            return None
        if self.rng.random() < 0.5:
            return candidates[-1]
        return candidates[int(self.rng.integers(len(candidates)))]

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def partner(self, node: Node, exact: bool = False) -> Node:
        """A second operand that broadcasts with `node`: an existing value of
        its shape, a fresh input, a constant, its last dims, or a rank 0 one."""
        shape = node.shape
        same = self.pick(
            lambda n: n.shape == shape and n.dtype == node.dtype and (not exact or n.tol == 0)
        )
        kind = self.choice(["same", "input", "constant", "row", "scalar"])
        if node.dtype != "f32":
            return same if kind == "same" and same else self.input(shape, node.dtype)
        if kind == "same" and same is not None:
            return same
        if kind == "constant":
            return self.constant(shape)
        if kind == "row" and shape:
            return self.input(shape[-1:])
        if kind == "scalar":
            return self.constant([])
        return self.input(shape)


def _floats(node: Node) -> bool:
    return node.dtype == "f32"


# --- op families: each returns None when it does not apply to the graph ----------

UNARY_EXACT = ["relu", "neg", "abs"]
UNARY_TRANSCENDENTAL = ["sigmoid", "tanh", "erf", "gelu", "sin", "cos"]
UNARY_ON_EXACT = ["sqrt", "rsqrt", "log", "reciprocal"]  # blow up rounding errors near 0
ROUNDING = ["floor", "ceil", "round", "sign"]  # exact; from rounded inputs, a step may flip


def unary(g: RandomGraph) -> Node | None:
    x = g.pick(_floats)
    name = g.choice(
        UNARY_EXACT
        + UNARY_TRANSCENDENTAL
        + UNARY_ON_EXACT
        + ROUNDING
        + ["exp", "square", "leaky_relu", "clamp"]
    )
    if name in UNARY_EXACT:
        return g.make(name, [x], EXACT)
    if name in ROUNDING:
        return g.make(name, [g.pick(lambda n: _floats(n) and n.tol == 0)], EXACT)
    if name == "clamp":
        return g.make(name, [x], EXACT, min=-0.5, max=float(g.choice([0.25, 0.5, 2.0])))
    if name in ("square", "leaky_relu"):
        return g.make(name, [x], ARITHMETIC)
    if name == "exp":  # a bounded argument keeps exp (and its error) finite
        x = g.make("tanh", [x], TRANSCENDENTAL) if x.tol else x
        return g.make("exp", [x], TRANSCENDENTAL)
    if name == "gelu":
        return g.make(name, [x], TRANSCENDENTAL, approximate=g.choice(["none", "tanh"]))
    if name in UNARY_ON_EXACT:
        x = g.pick(lambda n: _floats(n) and n.tol == 0)
        return g.make(name, [x], TRANSCENDENTAL)
    return g.make(name, [x], TRANSCENDENTAL)


def binary(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: n.dtype in ("f32", "i32"))
    if x.dtype == "i32":
        name = g.choice(["add", "sub", "mul", "maximum", "minimum"])
        return g.make(name, [x, g.partner(x)], EXACT)
    name = g.choice(["add", "sub", "mul", "maximum", "minimum", "div", "pow"])
    if name in ("div", "pow"):
        x = g.pick(lambda n: _floats(n) and n.tol == 0)
        return g.make(name, [x, g.partner(x, exact=True)], TRANSCENDENTAL)
    error = EXACT if name in ("maximum", "minimum") else ARITHMETIC
    operands = [x, g.partner(x)]
    return g.make(name, operands[:: g.choice([1, -1])], error)


def compare_select(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: n.tol == 0 and n.dtype in ("f32", "i32"))
    if x is None:
        return None
    condition = g.make(g.choice(["greater", "less", "equal"]), [x, g.partner(x, exact=True)], EXACT)
    if x.dtype != "f32" or g.rng.random() < 0.3:
        return condition
    other = g.pick(lambda n: _floats(n) and n.shape == x.shape)
    return g.make("select", [condition, x, other], EXACT)


def cast(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: n.tol == 0)
    target = {"f32": g.choice(["i32", "f16", "bf16"]), "i32": "f32", "i1": g.choice(["f32", "i32"])}
    to = target.get(x.dtype, "f32")
    node = g.make("cast", [x], EXACT, tensor_type(x.shape, to))
    if to in ("f16", "bf16"):  # back, so later float ops see f32
        node = g.make("cast", [node], EXACT, tensor_type(x.shape, "f32"))
    return node


def matmul(g: RandomGraph) -> Node | None:
    a = g.pick(lambda n: _floats(n) and len(n.shape) >= 2)
    if a is None:
        a = g.input([g.dim(), g.dim()])
    transpose_a, transpose_b = bool(g.rng.random() < 0.3), bool(g.rng.random() < 0.3)
    m, k = a.shape[-2:][:: -1 if transpose_a else 1]
    n = g.dim()
    batch = a.shape[:-2]
    if batch and g.rng.random() < 0.2:  # one B for every A matrix (a linear layer)
        batch = []
    elif batch and g.rng.random() < 0.5:
        batch = [1 if g.rng.random() < 0.5 else d for d in batch]
    elif g.rng.random() < 0.3:
        batch = [g.choice([1, 2, 3])]
    b_shape = [*batch, *([n, k] if transpose_b else [k, n])]
    if math.prod(b_shape) > MAX_ELEMENTS or m * n * math.prod(batch or [1]) * 2 > MAX_ELEMENTS * 4:
        return None
    b = g.constant(b_shape) if g.rng.random() < 0.5 else g.input(b_shape)
    return g.make("matmul", [a, b], ACCUMULATING, transpose_a=transpose_a, transpose_b=transpose_b)


def reduce(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: n.dtype in ("f32", "i32") and len(n.shape) >= 1)
    if x is None:
        return None
    rank = len(x.shape)
    count = int(g.rng.integers(0, rank + 1))
    axes = sorted(int(a) for a in g.rng.choice(rank, count, replace=False))
    axes = [a - rank if g.rng.random() < 0.3 else a for a in axes]
    names = ["reduce_sum", "reduce_max", "reduce_min"] + (
        ["reduce_mean", "reduce_prod"] if x.dtype == "f32" else []
    )
    name = g.choice(names)
    error = EXACT if name in ("reduce_max", "reduce_min") or x.dtype != "f32" else ACCUMULATING
    return g.make(name, [x], error, axes=axes, keep_dims=bool(g.rng.random() < 0.5))


def softmax(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: _floats(n) and n.shape)
    if x is None:
        return None
    axis = int(g.rng.integers(-len(x.shape), len(x.shape)))
    return g.make(g.choice(["softmax", "log_softmax"]), [x], ACCUMULATING, axis=axis)


def norm(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: _floats(n) and len(n.shape) >= 2)
    if x is None:
        return None
    if g.rng.random() < 0.5:
        axis = int(g.rng.integers(1, len(x.shape)))
        gamma, beta = g.constant(x.shape[axis:], 0.5, 1.5), g.constant(x.shape[axis:])
        # a small variance multiplies the input's error by up to 1/sqrt(epsilon)
        return g.make(
            "layer_norm", [x, gamma, beta], ACCUMULATING + 30 * x.tol, axis=axis, epsilon=1e-3
        )
    channels = [x.shape[1]]
    parameters = [
        g.constant(channels, 0.5, 1.5),
        g.constant(channels),
        g.constant(channels),
        g.constant(channels, 0.5, 1.5),
    ]
    return g.make("batch_norm", [x, *parameters], ACCUMULATING)


NARROW_ATTENTION_ERROR = {"f16": 2e-3, "bf16": 8e-3}  # a 16-bit result's rounding, up to 2 ulp


def attention(g: RandomGraph) -> Node | None:
    """The fused attention of new inputs: grouped key/value heads, an
    additive mask of any broadcast rank, q, k and v in f16 or bf16 (cast
    there and the result back) a third of the time each."""
    batch, kv_heads, groups = g.choice([1, 2]), g.choice([1, 2]), g.choice([1, 2, 3])
    sq, sk = g.choice([1, 5, 17, 40]), g.choice([1, 7, 40, 130])
    d, dv = g.choice([4, 8, 16]), g.choice([4, 8, 16])
    heads = kv_heads * groups
    if batch * heads * sq * sk > MAX_ELEMENTS:
        return None
    operands = [g.input([batch, heads, sq, d]), g.input([batch, kv_heads, sk, d]),
                g.input([batch, kv_heads, sk, dv])]  # fmt: skip
    if g.rng.random() < 0.5:
        operands.append(g.input(g.choice([[batch, heads, sq, sk], [batch, 1, 1, sk], [sq, sk]])))
    element = g.choice(["f32", "f16", "bf16"])
    if element == "f32":
        return g.make("attention", operands, ACCUMULATING, scale=float(g.choice([0.125, 0.5, 1.0])))
    narrow = [g.make("cast", [x], EXACT, tensor_type(x.shape, element)) for x in operands]
    out = g.make("attention", narrow, ACCUMULATING + NARROW_ATTENTION_ERROR[element], scale=0.5)
    return g.make("cast", [out], EXACT, tensor_type(out.shape, "f32"))


def _image(g: RandomGraph) -> Node:
    x = g.pick(lambda n: _floats(n) and len(n.shape) == 4 and n.shape[2] >= 3 and n.shape[3] >= 3)
    if x is None or g.rng.random() < 0.3:
        x = g.input(
            [g.choice([1, 2]), g.choice([1, 2, 3, 4]), g.choice([3, 5, 8, 17]), g.choice([3, 4, 9])]
        )
    return x


def conv(g: RandomGraph) -> Node | None:
    x = _image(g)
    n, c, h, w = x.shape
    groups = g.choice([d for d in (1, 2, c) if c % d == 0])
    out = groups * g.choice([1, 2, 3])
    kh, kw = g.choice([1, 2, 3]), g.choice([1, 3])
    weight = g.constant([out, c // groups, kh, kw])
    padding = [int(v) for v in g.rng.integers(0, 2, 4)]
    strides = [g.choice([1, 2]), g.choice([1, 2])]
    dilations = [g.choice([1, 1, 2]), 1]
    if (
        h + padding[0] + padding[2] < dilations[0] * (kh - 1) + 1
        or w + padding[1] + padding[3] < kw
    ):
        return None
    return g.make("conv2d", [x, weight], ACCUMULATING, strides=strides, padding=padding,
                  dilations=dilations, groups=groups)  # fmt: skip


def pool(g: RandomGraph) -> Node | None:
    x = _image(g)
    kernel = [g.choice([1, 2, 3]), g.choice([1, 2, 3])]
    padding = [int(v) for v in g.rng.integers(0, 2, 4)] if min(kernel) > 1 else [0, 0, 0, 0]
    strides = [g.choice([1, 2]), g.choice([1, 2])]
    name = g.choice(["max_pool2d", "avg_pool2d"])
    error = EXACT if name == "max_pool2d" else ACCUMULATING
    return g.make(name, [x], error, kernel=kernel, strides=strides, padding=padding)


def concat(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: n.shape and n.dtype in ("f32", "i32"))
    if x is None:
        return None
    axis = int(g.rng.integers(len(x.shape)))
    other_shape = list(x.shape)
    other_shape[axis] = g.dim()
    parts = [x, g.input(other_shape, x.dtype)] + ([x] if g.rng.random() < 0.3 else [])
    return g.make("concat", parts, EXACT, axis=axis - len(x.shape) * int(g.rng.random() < 0.3))


def slice_(g: RandomGraph) -> Node | None:
    x = g.pick(lambda n: bool(n.shape))
    if x is None:
        return None
    starts, ends, steps = [], [], []
    for d in x.shape:
        start = int(g.rng.integers(-d, d))
        starts.append(start)
        ends.append(int(g.choice([d, d + 5, -1, start % d + 1])))
        steps.append(int(g.choice([1, 1, 2, 3])))
    if any(
        len(range(*slice(s, e, st).indices(d))) == 0
        for s, e, st, d in zip(starts, ends, steps, x.shape, strict=True)
    ):
        return None
    return g.make("slice", [x], EXACT, starts=starts, ends=ends, steps=steps)


def reshape_like(g: RandomGraph) -> Node | None:
    x = g.pick()
    shape = x.shape
    size = math.prod(shape)
    kind = g.choice(["reshape", "transpose", "broadcast_to"])
    if kind == "transpose" and len(shape) >= 2:
        perm = [int(p) for p in g.rng.permutation(len(shape))]
        return g.make("transpose", [x], EXACT, perm=perm)
    if kind == "broadcast_to" and size * 3 <= MAX_ELEMENTS:
        target = [g.choice([2, 3]), *[d if d != 1 or g.rng.random() < 0.5 else 3 for d in shape]]
        return g.make("broadcast_to", [x], EXACT, tensor_type(target, x.dtype))
    if size == 1:
        target = g.choice([[], [1], [1, 1]])
    else:
        divisors = [d for d in range(1, size + 1) if size % d == 0]
        inner = g.choice(divisors)
        target = g.choice([[size // inner, inner], [size], [1, size // inner, inner]])
    return g.make("reshape", [x], EXACT, tensor_type(target, x.dtype))


FAMILIES = [unary, unary, binary, binary, compare_select, cast, matmul, reduce, softmax, norm,
            conv, pool, concat, slice_, reshape_like, reshape_like, attention]  # fmt: skip


def _first_input(g: RandomGraph) -> None:
    rank = g.choice([0, 1, 2, 2, 2, 3, 4])
    shape = [g.dim() for _ in range(rank)]
    while math.prod(shape) > MAX_ELEMENTS:
        shape[shape.index(max(shape))] = 3
    g.input(shape, "i32" if g.rng.random() < 0.1 else "f32")


def generate(seed: int, max_ops: int = 8) -> RandomGraph:
    """A random valid graph; the same one for the same seed."""
    g = RandomGraph(seed, np.random.default_rng(seed))
    g.special = bool(g.rng.random() < 0.25)
    _first_input(g)
    for _ in range(int(g.rng.integers(1, max_ops + 1))):
        for _attempt in range(10):
            family = g.choice(FAMILIES)
            count = len(g.nodes)
            try:
                node = family(g)
            except (ValueError, TypeError, AttributeError):
                node = None  # the family's choices did not fit this value; try another
            if node is not None and math.prod(node.shape) <= MAX_ELEMENTS:
                break
            del g.nodes[count:]
    # Every unused result is an output, so that nothing is dead code.
    g.outputs = [
        Node(op.results[0], g.tolerances[op.results[0]])
        for op in g.builder.block.ops
        if op.name != "graph.constant" and not op.results[0].uses
    ] or [g.nodes[-1]]
    g.builder.make_output([n.value for n in g.outputs])
    return g


# --- the differential check ----------------------------------------------------------


@dataclass(frozen=True)
class GraphCase:
    """What a worker needs to check graph `seed`."""

    seed: int
    text: str
    arrays: list[np.ndarray]
    tolerances: list[float]  # per output
    pipeline: str | None  # None: the default; else one graph pass alone, then lowering


def case(seed: int) -> GraphCase:
    from graphcompiler.driver.registration import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE

    g = generate(seed)
    pipeline = None
    if seed % 4 == 3:  # each graph pass alone must keep the results too
        graph_pass = GRAPH_PASSES[(seed // 4) % len(GRAPH_PASSES)]
        pipeline = f"builtin.module({graph_pass},{TIR_STAGE},{LLVM_STAGE})"
    return GraphCase(seed, str(g.builder.module()), g.arrays, [n.tol for n in g.outputs], pipeline)


def compare(got: np.ndarray, want: np.ndarray, tol: float) -> str | None:
    """Why `got` is not `want` (None if it is): NaN where the reference has
    NaN, the same infinities, finite values within `tol` of the magnitude."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.kind != "f":
        bad = got != want
        return (
            f"{int(bad.sum())} elements differ, first at {np.argwhere(bad)[0].tolist()}"
            if bad.any()
            else None
        )
    with np.errstate(invalid="ignore"):
        return _compare_floats(got.astype(np.float64), want.astype(np.float64), tol)


def _compare_floats(got: np.ndarray, want: np.ndarray, tol: float) -> str | None:
    nan = np.isnan(want)
    if (np.isnan(got) != nan).any():
        index = np.argwhere(np.isnan(got) != nan)[0].tolist()
        return f"NaN positions differ: at {index} got {got[tuple(index)]:.9g}, expected {want[tuple(index)]:.9g}"
    finite = np.isfinite(want)
    if (got[~finite & ~nan] != want[~finite & ~nan]).any():
        index = np.argwhere((got != want) & ~finite & ~nan)[0].tolist()
        return f"infinities differ: at {index} got {got[tuple(index)]:.9g}, expected {want[tuple(index)]:.9g}"
    scale = float(np.abs(want[finite]).max(initial=0.0)) + 1.0
    error = np.where(finite, np.abs(got - want), 0.0)
    bound = tol * (np.abs(want) + scale) + 1e-7 * scale
    if (error > bound).any():
        index = np.argwhere(error > bound)[0].tolist()
        return (f"at {index} got {got[tuple(index)]:.9g}, expected {want[tuple(index)]:.9g} "
                f"(tolerance {tol:g} relative to {scale:g})")  # fmt: skip
    return None


def check_graph(
    payload: GraphCase, on_stage: Callable[[str], None] = lambda stage: None
) -> Outcome:
    """Compile, run with 1 and 2 threads, and compare with the reference."""
    import graphcompiler
    from graphcompiler.interpreters import reference

    text, arrays, tolerances = payload.text, payload.arrays, payload.tolerances
    stage = "compile"
    try:
        with np.errstate(all="ignore"):
            on_stage(stage)
            compiled = graphcompiler.compile(text, pipeline=payload.pipeline, num_threads=1)
            stage = "run"
            on_stage(stage)
            one = compiled(*[a.copy() for a in arrays])
            compiled.set_num_threads(2)
            two = compiled(*[a.copy() for a in arrays])
            stage = "reference"
            on_stage(stage)
            want = reference.run(text, *arrays)
    except Exception as error:  # every failure of a valid graph is a finding
        outcome = classify(error, stage)
        if outcome.kind == DIAGNOSTIC:
            return Outcome(REJECTED, stage, outcome.message)
        return outcome
    one, two, want = (r if isinstance(r, tuple) else (r,) for r in (one, two, want))
    for index, (a, b) in enumerate(zip(one, two, strict=True)):
        if a.tobytes() != b.tobytes():
            return Outcome(MISMATCH, "threads", f"output #{index}: 1 and 2 threads differ")
    for index, (got, expected, tol) in enumerate(zip(one, want, tolerances, strict=True)):
        problem = compare(np.asarray(got), np.asarray(expected), tol)
        if problem:
            return Outcome(MISMATCH, "compare", f"output #{index}: {problem}")
    return Outcome(SUCCESS, "compare")
