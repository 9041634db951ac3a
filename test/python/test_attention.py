"""graph.attention: the rewrite from matmul -> scale -> [+ mask] -> softmax ->
matmul, and its fused kernel (online softmax over key blocks) against the
reference interpreter and against the unfused graph: odd sizes, several key
blocks with a tail, masks broadcasting from any rank, pre-transposed keys,
fully masked rows (NaN like softmax), -inf masks in some blocks only, +inf
and NaN scores, exporters' head split and merge read and written in place,
every target the host runs, 1 and 2 threads bitwise equal.
"""

from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.lowering.graph_to_tir.attention import keys_per_block
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
rng = np.random.default_rng(5)
EXAMPLE = Path(__file__).parents[2] / "examples" / "attention.mlir"


def _t(shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def _unfused_text(q, k, v, mask=None, scale=0.125, key_transposed=False):
    """The attention a user writes: the rewrite rule turns it into graph.attention."""
    *batch, sq, _ = q
    sk, dv = v[-2:]
    scores, out = [*batch, sq, sk], [*batch, sq, dv]
    args = [f"%q: {_t(q)}", f"%k: {_t(k)}", f"%v: {_t(v)}"] + ([f"%m: {_t(mask)}"] if mask else [])
    flag = "" if key_transposed else " {transpose_b = true}"
    lines = [
        f"  %s = graph.matmul %q, %k{flag} : ({_t(q)}, {_t(k)}) -> {_t(scores)}",
        f"  %c = graph.constant dense<{scale}> : tensor<1xf32>",
        f"  %x = graph.mul %s, %c : ({_t(scores)}, tensor<1xf32>) -> {_t(scores)}",
    ]
    last = "%x"
    if mask:
        lines.append(f"  %y = graph.add %x, %m : ({_t(scores)}, {_t(mask)}) -> {_t(scores)}")
        last = "%y"
    lines += [
        f"  %p = graph.softmax {last} {{axis = -1 : i64}} : {_t(scores)}",
        f"  %o = graph.matmul %p, %v : ({_t(scores)}, {_t(v)}) -> {_t(out)}",
        f"  func.return %o : {_t(out)}",
    ]
    return f"func.func @main({', '.join(args)}) -> {_t(out)} {{\n" + "\n".join(lines) + "\n}"


def _check(text, inputs, atol=2e-6):
    compiled = graphcompiler.compile(text)
    assert "graph.attention" in str(compiled.graph)
    assert "brgemm_tile" in compiled.tir
    compiled.set_num_threads(1)
    got = compiled(*inputs)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(got, compiled(*inputs))
    expected = reference.run(text, *inputs)  # the unfused ops, op by op
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=0, atol=atol)
    return got


CASES = [
    # q, k, v, mask
    ([5, 8], [7, 8], [7, 8], None),
    ([1, 2, 33, 16], [1, 2, 70, 16], [1, 2, 70, 24], None),
    ([2, 9, 24], [2, 300, 24], [2, 300, 5], [2, 1, 300]),  # several key blocks and a tail
    ([3, 17, 8], [1, 65, 8], [3, 65, 8], [17, 65]),  # key broadcast over the batch
    ([2, 4, 50, 32], [2, 4, 50, 32], [2, 4, 50, 32], [50]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("q, k, v, mask", CASES)
def test_attention_matches_the_unfused_ops(monkeypatch, target, q, k, v, mask):
    monkeypatch.setenv("GC_TARGET", target)
    shapes = [q, k, v] + ([mask] if mask else [])
    inputs = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    _check(_unfused_text(q, k, v, mask), inputs)


def test_pre_transposed_keys():
    q, kt, v = [2, 12, 16], [2, 16, 40], [2, 40, 16]
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (q, kt, v)]
    _check(_unfused_text(q, kt, v, key_transposed=True), inputs)


def _repeat_heads(source: str, name: str, shape: list[int], groups: int):
    """Llama's repeat_kv as exported: [b, h, S, D] -> [b, h, 1, S, D] ->
    expand [b, h, g, S, D] -> [b, h * g, S, D]; its lines, result and shape."""
    n, h, rows, columns = shape
    one, many = [n, h, 1, rows, columns], [n, h, groups, rows, columns]
    out = [n, h * groups, rows, columns]
    return (
        [
            f"  %{name}1 = graph.reshape {source} : {_t(shape)} -> {_t(one)}",
            f"  %{name}2 = graph.broadcast_to %{name}1 : {_t(one)} -> {_t(many)}",
            f"  %{name}3 = graph.reshape %{name}2 : {_t(many)} -> {_t(out)}",
        ],
        f"%{name}3",
        out,
    )


def _head_split_text(b, sq, sk, heads, d, dv, split, kv_heads, key_form, mask, groups=1):
    """Attention as exporters write it: the projections [b, S, h, D] (in
    `split`) transposed to [b, h, S, D] (kᵀ by perm 0, 2, 3, 1 when
    `key_form` is "kt"), the result merged back to [b, Sq, h, Dv]; the other
    operands given as [b, h, S, D]. With `groups` > 1 the query has
    kv_heads * groups heads, and k and v are repeated to as many."""
    if groups > 1:
        heads = kv_heads * groups
    shapes = {"q": [b, heads, sq, d], "k": [b, kv_heads, sk, d], "v": [b, kv_heads, sk, dv]}
    args, lines, names = [], [], {}
    for name, (n, h, s_, f) in shapes.items():
        if name not in split:
            args.append(f"%{name}: {_t([n, h, s_, f])}")
            names[name] = f"%{name}"
            continue
        args.append(f"%{name}: {_t([n, s_, h, f])}")
        perm, out = ("0, 2, 3, 1", [n, h, f, s_]) if (name, key_form) == ("k", "kt") else (
            "0, 2, 1, 3", [n, h, s_, f])  # fmt: skip
        lines.append(
            f"  %{name}h = graph.transpose %{name} {{perm = array<i64: {perm}>}} : "
            f"{_t([n, s_, h, f])} -> {_t(out)}"
        )
        names[name] = f"%{name}h"
    inputs = [
        rng.uniform(-2, 2, [n, s_, h, f] if name in split else [n, h, s_, f]).astype(np.float32)
        for name, (n, h, s_, f) in shapes.items()
    ]
    operand_shapes = dict(shapes)
    if "k" in split and key_form == "kt":
        operand_shapes["k"] = [b, kv_heads, d, sk]
    if groups > 1:
        for name in ("k", "v"):
            repeat, names[name], operand_shapes[name] = _repeat_heads(
                names[name], name, operand_shapes[name], groups
            )
            lines += repeat
    k_type, v_type = _t(operand_shapes["k"]), _t(operand_shapes["v"])
    flag = "" if ("k" in split and key_form == "kt") else " {transpose_b = true}"
    scores, out = [b, heads, sq, sk], [b, heads, sq, dv]
    lines.append(f"  %s = graph.matmul {names['q']}, {names['k']}{flag} : "
                 f"({_t(shapes['q'])}, {k_type}) -> {_t(scores)}")  # fmt: skip
    last = "%s"
    if mask:
        args.append(f"%m: {_t(mask)}")
        lines.append(f"  %y = graph.add %s, %m : ({_t(scores)}, {_t(mask)}) -> {_t(scores)}")
        last = "%y"
    merged = [b, sq, heads, dv]
    lines += [
        f"  %p = graph.softmax {last} {{axis = -1 : i64}} : {_t(scores)}",
        f"  %o = graph.matmul %p, {names['v']} : ({_t(scores)}, {v_type}) -> {_t(out)}",
        f"  %r = graph.transpose %o {{perm = array<i64: 0, 2, 1, 3>}} : {_t(out)} -> {_t(merged)}",
        f"  func.return %r : {_t(merged)}",
    ]
    text = f"func.func @main({', '.join(args)}) -> {_t(merged)} {{\n" + "\n".join(lines) + "\n}"
    return text, inputs + ([np.where(rng.random(mask) < 0.2, -np.inf, 0).astype(np.float32)]
                           if mask else [])  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "split, kv_heads, key_form, mask, groups",
    [
        ("qkv", 3, "kt", None, 1),  # BERT, ViT, GPT-2: every operand and the result in place
        ("qkv", 3, "k", [2, 1, 1, 40], 1),  # k by rows, a padding mask
        ("v", 3, "kt", [37, 40], 1),  # q, k rotated after their split; v only
        ("kv", 1, "kt", None, 1),  # one key/value head shared by every query head
        ("v", 2, "k", [37, 40], 3),  # Llama: grouped heads, repeated for the matmuls
        ("qkv", 2, "k", [2, 1, 1, 40], 2),  # grouped and sequence-major
        ("q", 1, "k", None, 3),  # one head, repeated: plain broadcasting
    ],
)
def test_head_split_and_merge_read_in_place(
    monkeypatch, target, split, kv_heads, key_form, mask, groups
):
    """The rule reads exporters' head-split transposes as sequence-major
    operands, and their repeat_kv as grouped heads, and writes the merge
    so: no transpose or broadcast copy is left, the strided rows (H * D
    apart) and shared heads give the unfused ops' results, 1 and 2 threads
    alike."""
    monkeypatch.setenv("GC_TARGET", target)
    text, inputs = _head_split_text(2, 37, 40, 3, 16, 24, split, kv_heads, key_form, mask, groups)
    compiled = graphcompiler.compile(text)
    graph_text = str(compiled.graph)
    assert "graph.transpose" not in graph_text and "graph.broadcast_to" not in graph_text
    assert '"result"' in graph_text
    compiled.set_num_threads(1)
    got = compiled(*inputs)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(got, compiled(*inputs))
    expected = reference.run(text, *inputs)  # unscaled scores: up to 64, exp is sharp
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_sequence_major_attention_in_the_reference_interpreter():
    """The interpreter's graph.attention reads [..., S, H, D] operands too
    (what the folded graph is checked against elsewhere)."""
    t_seq, t_heads = "tensor<1x5x2x8xf32>", "tensor<1x2x5x8xf32>"
    text = (
        f"func.func @main(%q: {t_seq}, %k: {t_heads}, %v: {t_seq}) -> {t_seq} {{\n"
        f'  %o = graph.attention %q, %k, %v {{sequence_major = ["query", "value", "result"]}} : '
        f"({t_seq}, {t_heads}, {t_seq}) -> {t_seq}\n  func.return %o : {t_seq}\n}}"
    )
    q, k, v = (
        rng.uniform(-1, 1, s).astype(np.float32) for s in ([1, 5, 2, 8], [1, 2, 5, 8], [1, 5, 2, 8])
    )
    heads = lambda x: np.swapaxes(x, 1, 2)  # noqa: E731
    s = heads(q) @ np.swapaxes(k, -1, -2)
    p = np.exp(s - s.max(-1, keepdims=True))
    expected = heads((p / p.sum(-1, keepdims=True)) @ heads(v))
    np.testing.assert_allclose(reference.run(text, q, k, v), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(graphcompiler.compile(text)(q, k, v), expected, atol=2e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_grouped_heads_in_the_interpreter_and_the_kernel(monkeypatch, target):
    """Query heads 2i..2i+2 read key head i and value head i (grouped-query
    attention, as ONNX's Attention defines it), here with a key transposed
    and a value sequence-major; heads that do not divide are an error."""
    monkeypatch.setenv("GC_TARGET", target)
    q_t, k_t, v_t, o_t = (_t(s) for s in ([2, 6, 9, 8], [2, 3, 8, 11], [2, 11, 3, 4], [2, 6, 9, 4]))
    text = (
        f"func.func @main(%q: {q_t}, %k: {k_t}, %v: {v_t}) -> {o_t} {{\n"
        f'  %o = graph.attention %q, %k, %v {{key_transposed = true, sequence_major = ["value"]}}'
        f" : ({q_t}, {k_t}, {v_t}) -> {o_t}\n  func.return %o : {o_t}\n}}"
    )
    q, k, v = (
        rng.uniform(-1, 1, s).astype(np.float32)
        for s in ([2, 6, 9, 8], [2, 3, 8, 11], [2, 11, 3, 4])
    )
    s = q @ np.repeat(k, 2, axis=1)
    p = np.exp(s - s.max(-1, keepdims=True))
    expected = (p / p.sum(-1, keepdims=True)) @ np.repeat(np.swapaxes(v, 1, 2), 2, axis=1)
    np.testing.assert_allclose(reference.run(text, q, k, v), expected, rtol=1e-6, atol=1e-7)
    compiled = graphcompiler.compile(text)
    compiled.set_num_threads(1)
    got = compiled(q, k, v)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(got, compiled(q, k, v))
    np.testing.assert_allclose(got, expected, atol=2e-6)
    with pytest.raises(Exception, match="does not broadcast"):
        graphcompiler.compile(text.replace("2x6x9x8", "2x4x9x8").replace("2x6x9x4", "2x4x9x4"))


def _attention_text(shapes, major, scale: float, element: str = "f32") -> str:
    """@main(q, k, v[, m]) -> graph.attention of them, `major` its
    sequence-major roles: the result is stored as the query is, its heads
    and sequence swapped where only one of the two is sequence-major."""
    typed = [_t(shape).replace("xf32>", f"x{element}>") for shape in shapes]
    q_shape, v_shape = shapes[0], shapes[2]
    result = [*q_shape[:-1], v_shape[-1]]
    if ("result" in major) != ("query" in major):
        result = [result[0], result[2], result[1], result[3]]
    out = _t(result).replace("xf32>", f"x{element}>")
    names = ["%q", "%k", "%v", "%m"][: len(shapes)]
    roles = ", ".join(f'"{r}"' for r in major)
    arguments = ", ".join(f"{n}: {t}" for n, t in zip(names, typed, strict=True))
    return (
        f"func.func @main({arguments}) -> {out} {{\n  %o = graph.attention {', '.join(names)} "
        f"{{scale = {scale} : f32, sequence_major = [{roles}]}} : ({', '.join(typed)}) -> {out}\n"
        f"  func.return %o : {out}\n}}"
    )


DECODE_STEPS = [
    # query, key, value, mask, sequence-major roles
    ([2, 8, 1, 16], [2, 2, 37, 16], [2, 2, 37, 16], [2, 1, 1, 37], []),
    ([1, 1, 6, 8], [1, 3, 40, 8], [1, 40, 3, 8], [1, 6, 1, 40], ["query", "value", "result"]),
    ([3, 4, 1, 8], [3, 1, 33, 8], [3, 1, 33, 8], None, []),  # multi-query: one shared head
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("q_shape, k_shape, v_shape, mask_shape, major", DECODE_STEPS)
def test_decode_step_reads_each_group_once(monkeypatch, target, q_shape, k_shape, v_shape,
                                           mask_shape, major):  # fmt: skip
    """One query of grouped heads: graph-rewrite-rules turns each group's
    heads into queries of its one key/value head (views, no copy); the
    result is the grouped attention's, with per-head and shared masks,
    sequence-major operands and a multi-query key."""
    monkeypatch.setenv("GC_TARGET", target)
    shapes = [q_shape, k_shape, v_shape, *([mask_shape] if mask_shape else [])]
    text = _attention_text(shapes, major, 0.3)
    inputs = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]
    q, k, v = (np.swapaxes(x, 1, 2) if role in major else x
               for x, role in zip(inputs, ("query", "key", "value"), strict=False))  # fmt: skip
    groups = q.shape[1] // k.shape[1]
    scores = q @ np.swapaxes(np.repeat(k, groups, axis=1), -1, -2) * 0.3
    if mask_shape:
        scores = scores + inputs[3]
    p = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (p / p.sum(-1, keepdims=True)) @ np.repeat(v, groups, axis=1)
    if "result" in major:
        expected = np.swapaxes(expected, 1, 2)
    compiled = graphcompiler.compile(text)
    assert str(compiled.graph).count("graph.attention") == 1
    assert f"x{groups}x{q.shape[-1]}xf32>" in str(compiled.graph)  # the heads as queries
    compiled.set_num_threads(1)
    got = compiled(*inputs)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(got, compiled(*inputs))
    np.testing.assert_allclose(got, expected, atol=2e-6)


def test_masked_rows_and_special_scores():
    q, k, v, mask = [1, 6, 8], [1, 200, 8], [1, 200, 8], [6, 200]
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (q, k, v, mask)]
    m = inputs[3]
    m[0, :] = -np.inf  # fully masked: NaN, as softmax gives
    m[1, :150] = -np.inf  # masked in the first key blocks only: finite
    m[2, 7] = np.inf  # +inf score: NaN
    m[3, 190] = np.nan  # NaN score: NaN
    m[4, ::2] = -np.inf
    got = _check(_unfused_text(q, k, v, mask), inputs)
    assert np.isnan(got[0, 0]).all() and np.isfinite(got[0, 1]).all()
    assert np.isnan(got[0, 2]).all() and np.isnan(got[0, 3]).all()


def _exported_sdpa_text(q, k, v, mask, factor=0.5):
    """Attention as torch's scaled_dot_product_attention exports it: q and kᵀ
    each times sqrt(scale), the mask added, NaN probabilities set to 0."""
    *batch, sq, d = q
    sk, dv = v[-2:]
    kt = [*k[:-2], d, sk]
    scores, out = [*batch, sq, sk], [*batch, sq, dv]
    scores_i1 = _t(scores).replace("f32", "i1")
    lines = [
        f"  %f = graph.constant dense<{factor}> : tensor<f32>",
        f"  %kt = graph.transpose %k {{perm = array<i64: {', '.join(map(str, [*range(len(k) - 2), len(k) - 1, len(k) - 2]))}>}} : {_t(k)} -> {_t(kt)}",
        f"  %qs = graph.mul %q, %f : ({_t(q)}, tensor<f32>) -> {_t(q)}",
        f"  %ks = graph.mul %kt, %f : ({_t(kt)}, tensor<f32>) -> {_t(kt)}",
        f"  %s = graph.matmul %qs, %ks : ({_t(q)}, {_t(kt)}) -> {_t(scores)}",
        f"  %x = graph.add %s, %m : ({_t(scores)}, {_t(mask)}) -> {_t(scores)}",
        f"  %p = graph.softmax %x {{axis = -1 : i64}} : {_t(scores)}",
        f"  %nan = graph.not_equal %p, %p : ({_t(scores)}, {_t(scores)}) -> {scores_i1}",
        "  %zero = graph.constant dense<0.0> : tensor<1xf32>",
        f"  %p0 = graph.select %nan, %zero, %p : ({scores_i1}, tensor<1xf32>, {_t(scores)}) -> {_t(scores)}",
        f"  %o = graph.matmul %p0, %v : ({_t(scores)}, {_t(v)}) -> {_t(out)}",
        f"  func.return %o : {_t(out)}",
    ]
    args = f"%q: {_t(q)}, %k: {_t(k)}, %v: {_t(v)}, %m: {_t(mask)}"
    return f"func.func @main({args}) -> {_t(out)} {{\n" + "\n".join(lines) + "\n}"


@pytest.mark.parametrize("target", TARGETS)
def test_exported_attention_zeroes_nan_probabilities(monkeypatch, target):
    """torch's exported attention (pre-scaled q and k, NaN probabilities set
    to 0) is one graph.attention: a row with no finite score, or with a NaN
    or +inf one, weighs every value by 0 (0, NaN under an inf value), others
    are the usual softmax; across several key blocks and a tail."""
    monkeypatch.setenv("GC_TARGET", target)
    q, k, v, mask = [2, 7, 16], [2, 150, 16], [2, 150, 8], [2, 7, 150]
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (q, k, v, mask)]
    m, values = inputs[3], inputs[2]
    m[0, 0, :] = -np.inf  # fully masked: 0
    m[0, 1, :140] = -np.inf  # masked in the first key blocks only: finite
    m[0, 2, 7] = np.inf  # +inf score: 0
    m[0, 3, 149] = np.nan  # NaN score: 0
    m[1, 0, :] = -np.inf  # fully masked, and an inf value: NaN in that column
    values[1, 30, 5] = np.inf
    text = _exported_sdpa_text(q, k, v, mask)
    got = _check(text, inputs)
    fused = str(graphcompiler.compile(text).graph)
    assert "zero_nan_probabilities = true" in fused and "graph.softmax" not in fused
    assert (got[0, 0] == 0).all() and (got[0, 2] == 0).all() and (got[0, 3] == 0).all()
    assert (
        np.isfinite(got[0, 1]).all()
        and np.isnan(got[1, 0, 5])
        and (np.delete(got[1, 0], 5) == 0).all()
    )
    # the reference interpreter gives the fused op the same meaning
    np.testing.assert_allclose(reference.run(fused, *inputs), got, rtol=0, atol=2e-6)


@pytest.mark.parametrize(
    "q, k, v",
    [([16, 0], [24, 0], [24, 4]), ([2, 3, 0], [2, 5, 0], [2, 5, 6]), ([16, 4], [0, 4], [0, 4])],
)
def test_empty_head_or_key_dimension(q, k, v):
    """D = 0: every score is 0 and each row the mean of v (was a brgemm over
    k = 0, rejected); Sk = 0: each output an empty sum, 0 (was a division by
    zero in the kernel)."""
    text = _unfused_text(q, k, v)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (q, k, v)]
    compiled = graphcompiler.compile(text)
    assert "graph.attention" in str(compiled.graph)
    np.testing.assert_allclose(compiled(*inputs), reference.run(text, *inputs), rtol=0, atol=2e-6)


def test_the_example_attention_is_fused():
    compiled = graphcompiler.compile(EXAMPLE)
    assert "graph.attention" in str(compiled.graph)
    inputs = [rng.uniform(-1, 1, [32, 64]).astype(np.float32)] + [
        rng.uniform(-0.2, 0.2, [64, 64]).astype(np.float32) for _ in range(4)
    ]
    np.testing.assert_allclose(
        compiled(*inputs), reference.run(EXAMPLE.read_text(), *inputs), atol=1e-5
    )


@pytest.mark.parametrize("target, block_q, dv, sk, keys", [
    ("avx2", 32, 64, 512, 64),  # Sᵀ and the v block: 64 x (32 + 64) floats in 3/4 of 32 KiB
    ("avx512", 64, 64, 512, 64),  # 72 fit in 3/4 of 48 KiB: whole vectors of 16
    ("avx2", 32, 256, 512, 16),  # wide values: fewer keys
    ("avx2", 32, 64, 40, 40),  # short sequences: one block
])  # fmt: skip
def test_key_blocks_fit_in_l1(monkeypatch, target, block_q, dv, sk, keys):
    """The key block comes from the target's L1 and vector lanes, not the host's."""
    monkeypatch.setenv("GC_TARGET", target)
    assert keys_per_block(targets.get_target(), block_q, dv, sk) == keys


NARROW_CASES = [
    # query, key, value, mask, sequence-major roles
    ([1, 2, 16, 8], [1, 2, 24, 8], [1, 2, 24, 4], None, []),
    ([1, 6, 16, 8], [1, 2, 24, 8], [1, 2, 24, 4], [1, 6, 16, 24], []),  # grouped, masked
    ([1, 1, 6, 8], [1, 2, 24, 8], [1, 2, 24, 4], [1, 6, 1, 24], ["query", "result"]),
    ([2, 2, 70, 32], [2, 2, 150, 32], [2, 2, 150, 16], [2, 1, 1, 150], []),  # key blocks + tail
]


@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("q_shape, k_shape, v_shape, mask_shape, major", NARROW_CASES)
def test_narrow_float_attention_matches_the_reference(element, q_shape, k_shape, v_shape,
                                                      mask_shape, major):  # fmt: skip
    """f16 and bf16 q, k, v and mask: the tiles read k and v in f32 (an f32
    microkernel read their bits as floats: NaN; a fuzz finding), computed
    in f32 and rounded once, as the reference does."""
    shapes = [q_shape, k_shape, v_shape, *([mask_shape] if mask_shape else [])]
    text = _attention_text(shapes, major, 0.5, element)
    dtype = np.float16 if element == "f16" else np.float32  # bf16 inputs take f32 values
    inputs = [rng.uniform(-2, 2, shape).astype(dtype) for shape in shapes]
    compiled = graphcompiler.compile(text, cache=False)
    graphcompiler.parse(compiled.tir)  # its tiles verify
    got = np.asarray(compiled(*inputs), np.float32)
    want = np.asarray(reference.run(text, *inputs), np.float32)
    ulp = 2.0**-10 if element == "f16" else 2.0**-7
    np.testing.assert_allclose(got, want, atol=4 * ulp * np.abs(want).max())
