"""The workloads of issues 11 and 12, each a function building its Graph.

`bound` says which rate a row reports: "compute" rows give GFLOP/s of their
matmuls/convolutions and the % of the measured FMA peak, "memory" rows give
GB/s of their inputs + output and the % of the measured copy bandwidth.
`tolerance` bounds max |got - numpy| / max(1, max |numpy|).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.graph import Graph, Value


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    build: Callable[[], Graph]
    bound: str
    tolerance: float = 1e-4
    default: bool = True
    """False: runs only when --only names it (the test's smoke workload)."""


def matmul(m: int, k: int, n: int, transpose_b: bool = False) -> Callable[[], Graph]:
    def build() -> Graph:
        g = Graph()
        a = g.input("a", [m, k])
        b = g.input("b", [n, k] if transpose_b else [k, n])
        g.set_output(g.matmul(a, b, transpose_b))
        return g

    return build


def batched_matmul(batch: int, m: int, k: int, n: int) -> Graph:
    g = Graph()
    g.set_output(g.matmul(g.input("a", [batch, m, k]), g.input("b", [batch, k, n])))
    return g


def mlp(widths: list[int], batch: int) -> Callable[[], Graph]:
    """Dense layers with bias; relu between layers, none after the last."""

    def build() -> Graph:
        g = Graph()
        x = g.input("x", [batch, widths[0]])
        for layer, (fan_in, fan_out) in enumerate(zip(widths, widths[1:], strict=False)):
            x = g.add(
                g.matmul(x, g.weight(f"w{layer}", [fan_in, fan_out])),
                g.weight(f"b{layer}", [fan_out], fan_in),
            )
            if layer < len(widths) - 2:
                x = g.relu(x)
        g.set_output(x)
        return g

    return build


def elementwise_chain() -> Graph:
    g = Graph()
    x = g.input("x", [4096, 4096])
    y = g.exp(g.relu(g.add(g.mul(x, g.constant(2.0)), g.constant(1.0))))
    g.set_output(g.sub(y, x))
    return g


def small_relu() -> Graph:
    """8 KiB in, 8 KiB out: the time is the call's own (checks, output, dispatch)."""
    g = Graph()
    g.set_output(g.relu(g.input("x", [1, 2048])))
    return g


def softmax() -> Graph:
    g = Graph()
    g.set_output(g.softmax(g.input("x", [4096, 1024])))
    return g


def layer_norm() -> Graph:
    g = Graph()
    x = g.input("x", [4096, 1024])
    g.set_output(g.layer_norm(x, g.weight("gamma", [1024]), g.weight("beta", [1024], 1)))
    return g


def attention(seq: int, heads: int = 8, head_dim: int = 64) -> Callable[[], Graph]:
    """softmax(q kᵀ / sqrt(head_dim)) v on [1, heads, seq, head_dim] tensors."""

    def build() -> Graph:
        g = Graph()
        q, k, v = (g.input(n, [1, heads, seq, head_dim]) for n in "qkv")
        g.set_output(_attend(g, q, k, v, head_dim))
        return g

    return build


def _attend(g: Graph, q: Value, k: Value, v: Value, head_dim: int) -> Value:
    scores = g.mul(g.matmul(q, k, transpose_b=True), g.constant(head_dim**-0.5))
    return g.matmul(g.softmax(scores), v)


def resnet_block() -> Graph:
    """conv3x3-bn-relu-conv3x3-bn, + the input, relu (ResNet-18/34's block)."""
    g = Graph()
    channels = 64
    x = g.input("x", [1, channels, 56, 56])
    h = x
    for index in (1, 2):
        w = g.weight(f"conv{index}", [channels, channels, 3, 3], channels * 9)
        bn = [g.weight(f"bn{index}_{p}", [channels], 1) for p in ("scale", "bias", "mean")]
        var = g.input(f"bn{index}_var", [channels], weight=True, positive=True)
        h = g.batch_norm(g.conv2d(h, w, padding=1), *bn, var)
        if index == 1:
            h = g.relu(h)
    g.set_output(g.relu(g.add(h, x)))
    return g


def _encoder_layer(g: Graph, x: Value, layer: int, heads: int, ffn: int) -> Value:
    """Pre-norm: x + attention(ln(x)), then + ffn(ln(.)) with gelu, as
    examples/transformer.mlir (no biases on the attention projections)."""
    seq, d = x.shape
    head_dim = d // heads

    def norm(value: Value, tag: str) -> Value:
        gamma = g.weight(f"l{layer}_{tag}_gamma", [d], 1)
        return g.layer_norm(value, gamma, g.weight(f"l{layer}_{tag}_beta", [d], 1))

    def heads_first(value: Value) -> Value:
        return g.transpose(g.reshape(value, [seq, heads, head_dim]), [1, 0, 2])

    n1 = norm(x, "ln1")
    q, k, v = (heads_first(g.matmul(n1, g.weight(f"l{layer}_w{p}", [d, d]))) for p in "qkv")
    context = g.reshape(g.transpose(_attend(g, q, k, v, head_dim), [1, 0, 2]), [seq, d])
    h = g.add(x, g.matmul(context, g.weight(f"l{layer}_wo", [d, d])))
    up = g.add(
        g.matmul(norm(h, "ln2"), g.weight(f"l{layer}_w_up", [d, ffn])),
        g.weight(f"l{layer}_b_up", [ffn], d),
    )
    down = g.add(
        g.matmul(g.gelu(up), g.weight(f"l{layer}_w_down", [ffn, d])),
        g.weight(f"l{layer}_b_down", [d], ffn),
    )
    return g.add(h, down)


def encoder(layers: int, seq: int, d: int, heads: int, ffn: int) -> Callable[[], Graph]:
    def build() -> Graph:
        g = Graph()
        x = g.input("x", [seq, d])
        for layer in range(layers):
            x = _encoder_layer(g, x, layer, heads, ffn)
        g.set_output(x)
        return g

    return build


WORKLOADS: list[Workload] = [
    Workload("matmul_1024", "matmul 1024x1024x1024", matmul(1024, 1024, 1024), "compute"),
    Workload("matmul_777x1000x333", "matmul 777x1000x333", matmul(777, 1000, 333), "compute"),
    Workload(
        "matmul_1024_tb", "matmul 1024^3, transpose_b", matmul(1024, 1024, 1024, True), "compute"
    ),
    Workload(
        "bmm_16x256x64x256",
        "batched matmul [16,256,64]x[16,64,256]",
        lambda: batched_matmul(16, 256, 64, 256),
        "compute",
    ),
    Workload(
        "mlp",
        "MLP 128x512->1024->1024->512, bias+relu",
        mlp([512, 1024, 1024, 512], 128),
        "compute",
    ),
    Workload("elementwise", "exp(relu(x*2+1)) - x, 4096x4096", elementwise_chain, "memory", 1e-5),
    Workload("softmax", "softmax over rows, 4096x1024", softmax, "memory", 1e-5),
    Workload("call_overhead", "relu 1x2048: a small graph's call", small_relu, "memory", 1e-5),
    Workload("layer_norm", "layer_norm over rows, 4096x1024", layer_norm, "memory"),
    *(
        Workload(f"attention_s{s}", f"attention 1x8x{s}x64", attention(s), "compute")
        for s in (128, 512, 1024)
    ),
    Workload("resnet_block", "ResNet basic block 1x64x56x56", resnet_block, "compute"),
    Workload(
        "encoder_layer",
        "encoder layer s256 d512 h8 ffn2048",
        encoder(1, 256, 512, 8, 2048),
        "compute",
        1e-3,
    ),
    Workload(
        "encoder_4x",
        "4-layer encoder s128 d768 h12 ffn3072",
        encoder(4, 128, 768, 12, 3072),
        "compute",
        1e-3,
    ),
    Workload(
        "smoke",
        "tiny MLP 8x16->32->16 (the test's)",
        mlp([16, 32, 16], 8),
        "compute",
        default=False,
    ),
]


def select(only: str | None) -> list[Workload]:
    """The default workloads, or those whose name contains one of the
    comma-separated substrings of `only` (non-default ones included)."""
    if not only:
        return [w for w in WORKLOADS if w.default]
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [w for w in WORKLOADS if any(p in w.name for p in patterns)]
    if not chosen:
        names = ", ".join(w.name for w in WORKLOADS)
        raise SystemExit(f"error: --only {only!r} matches no workload (workloads: {names})")
    return chosen
