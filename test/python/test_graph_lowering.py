"""Every graph op, lowered to Tensor IR, JIT-compiled and run, against the
reference interpreter: shapes with 1, 7, 33 and 129, broadcasting, 1 and 2
threads. Ops of a family share one graph (one compilation) with one output
per op. Tolerance: f32 rtol 1e-4 with atol 1e-5 (for results near zero, e.g.
tanh and erf around 0); f16/bf16 results compare at their own precision.
"""

import numpy as np
import pytest

import graphcompiler
from graphcompiler.dialects.graph.builders import GraphBuilder, tensor_type
from graphcompiler.interpreters import reference
from graphcompiler.target import description as targets

rng = np.random.default_rng(129)
RTOL, ATOL = 1e-4, 1e-5


def random_array(type_, positive=False):
    return reference.random_input(type_, rng, 0.1 if positive else -2.0, 2.0)


def check(builder, inputs=None, positive=(), rtol=RTOL, atol=ATOL, threads=(1, 2)):
    """Compile the builder's graph, run it with each thread count, compare
    every output with the reference interpreter."""
    module = builder.module()
    function = builder.function()
    if inputs is None:
        inputs = [
            random_array(a.type, i in positive) for i, a in enumerate(function.body.block.args)
        ]
    expected = reference.run(module, *inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    compiled = graphcompiler.compile(module)
    for count in threads:
        compiled.set_num_threads(count)
        actual = compiled(*inputs)
        actual = actual if isinstance(actual, tuple) else (actual,)
        for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
            owner = function.body.block.last_op.operands[index].owner
            op_name = getattr(owner, "name", f"output #{index}")
            assert got.shape == want.shape, op_name
            if want.dtype.kind in "biu":
                np.testing.assert_array_equal(got, want, err_msg=f"{op_name} ({count} threads)")
            else:
                np.testing.assert_allclose(
                    got, want, rtol=rtol, atol=atol, err_msg=f"{op_name} ({count} threads)"
                )
    return compiled


UNARY_FLOAT = ["relu", "sigmoid", "tanh", "exp", "abs", "neg", "erf", "reciprocal", "square"]
UNARY_POSITIVE = ["log", "sqrt", "rsqrt"]
SHAPES = [[1], [7], [33, 7], [129, 129], [2, 7, 33]]


@pytest.mark.parametrize("shape", SHAPES)
def test_unary_ops(shape):
    b = GraphBuilder()
    x, p = b.make_input(shape), b.make_input(shape)
    ops = [b.make(name, [x]) for name in UNARY_FLOAT]
    ops += [b.make(name, [p]) for name in UNARY_POSITIVE]
    ops += [
        b.make("gelu", [x]),
        b.make("gelu", [x], approximate="tanh"),
        b.make("leaky_relu", [x], alpha=0.2),
        b.make("clamp", [x], min=-0.5, max=0.75),
        b.make("cast", [x], tensor_type(shape, "i32")),
        b.make("cast", [x], tensor_type(shape, "f16")),
        b.make("cast", [x], tensor_type(shape, "i1")),
    ]
    b.make_output([op.result for op in ops])
    check(b, positive=(1,), atol=1e-3 if shape == [1] else ATOL)  # f16 cast: 1e-3 absolute


def test_unary_integer_ops():
    b = GraphBuilder()
    x = b.make_input([7, 33], "i32")
    ops = [b.make(name, [x]) for name in ("relu", "abs", "neg", "square")]
    ops += [
        b.make("clamp", [x], min=-2.5, max=3.5),
        b.make("cast", [x], tensor_type([7, 33], "f32")),
    ]
    b.make_output([op.result for op in ops])
    check(b)


BROADCASTS = [
    ([129, 129], [129]),
    ([7, 1], [1, 33]),
    ([33], [1]),
    ([1], [7, 1, 33]),
    ([7, 33], [7, 33]),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape", BROADCASTS)
def test_binary_ops_broadcast(lhs_shape, rhs_shape):
    b = GraphBuilder()
    lhs, rhs = b.make_input(lhs_shape), b.make_input(rhs_shape)
    ops = [
        b.make(name, [lhs, rhs])
        for name in ("add", "sub", "mul", "div", "maximum", "minimum", "greater", "less", "equal")
    ]
    ops.append(b.make("pow", [b.make("abs", [lhs]).result, rhs]))
    ops.append(b.make("select", [ops[6].result, lhs, rhs]))
    b.make_output([op.result for op in ops])
    inputs = [random_array(a.type) for a in b.block.args]
    inputs[1][...] = np.where(np.abs(inputs[1]) < 0.1, 0.5, inputs[1])  # no division by ~0
    check(b, inputs, rtol=2e-4)  # pow of small bases amplifies rounding


def test_integer_binary_ops_including_division_by_zero():
    b = GraphBuilder()
    lhs, rhs = b.make_input([7, 33], "i32"), b.make_input([33], "i32")
    ops = [b.make(name, [lhs, rhs]) for name in ("add", "sub", "mul", "div", "maximum", "greater")]
    b.make_output([op.result for op in ops])
    inputs = [random_array(a.type) for a in b.block.args]
    inputs[1][0] = 0
    check(b, inputs)


@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_a, transpose_b",
    [
        ([7, 33], [33, 129], False, False),
        ([129, 129], [129, 129], False, False),
        ([1, 1], [1, 7], False, False),
        ([2, 1, 7, 33], [3, 33, 5], False, False),
        ([33, 7], [129, 33], True, True),
        ([7, 33], [5, 33], False, True),
    ],
)
def test_matmul(a_shape, b_shape, transpose_a, transpose_b):
    b = GraphBuilder()
    a, w = b.make_input(a_shape), b.make_input(b_shape)
    b.make_output(b.make("matmul", [a, w], transpose_a=transpose_a, transpose_b=transpose_b).result)
    compiled = check(b)
    assert "tir.brgemm_tile" in compiled.tir  # every f32 variant: packed panels + microkernel


def test_integer_matmul():
    b = GraphBuilder()
    a, w = b.make_input([7, 33], "i32"), b.make_input([33, 5], "i32")
    b.make_output(b.make("matmul", [a, w]).result)
    check(b)


@pytest.mark.parametrize(
    "axes, keep_dims", [([2], False), ([0, 2], True), ([], False), ([-2], True)]
)
def test_reductions(axes, keep_dims):
    b = GraphBuilder()
    x = b.make_input([7, 33, 129])
    p = b.make_input([7, 1, 5])
    ops = [
        b.make(name, [x], axes=axes, keep_dims=keep_dims)
        for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min")
    ]
    product_axes = [a for a in axes if a % 3 != 1] if axes else [0, 2]
    ops.append(b.make("reduce_prod", [p], axes=product_axes, keep_dims=keep_dims))
    b.make_output([op.result for op in ops])
    check(b, rtol=1e-4, atol=1e-4)  # sums of 129 values


def test_normalizations():
    b = GraphBuilder()
    x = b.make_input([7, 33, 129])
    large = b.make_input([33, 129])
    gamma, beta = b.make_input([33, 129]), b.make_input([33, 129])
    channels = [b.make_input([33]) for _ in range(4)]
    ops = [
        b.make("softmax", [x], axis=-1),
        b.make("softmax", [x], axis=0),
        b.make("log_softmax", [x], axis=1),
        b.make("softmax", [large], axis=1),
        b.make("layer_norm", [x, gamma, beta], axis=1),
        b.make("batch_norm", [x, *channels], epsilon=1e-3),
    ]
    b.make_output([op.result for op in ops])
    inputs = [random_array(a.type, i == 8) for i, a in enumerate(b.block.args)]
    inputs[1] = inputs[1] * 40 + 100  # softmax must subtract the maximum
    check(b, inputs, atol=1e-5)


def test_data_movement():
    b = GraphBuilder()
    x = b.make_input([7, 33, 129])
    y = b.make_input([7, 1, 129])
    ops = [
        b.make("transpose", [x], perm=[2, 0, 1]),
        b.make("transpose", [x], perm=[1, 0, 2]),
        b.make("reshape", [x], tensor_type([231, 129])),
        b.make("broadcast_to", [y], tensor_type([3, 7, 33, 129])),
        b.make("concat", [x, y, x], axis=1),
        b.make("concat", [x, x], axis=2),
        b.make("slice", [x], starts=[1, -20, 0], ends=[7, 100, 129], steps=[2, 3, 1]),
        b.make("slice", [x], starts=[0, 0, 5], ends=[7, 33, 129], steps=[1, 1, 7]),
    ]
    b.make_output([op.result for op in ops])
    check(b)


@pytest.mark.parametrize("target", ["avx512", "avx2"])
@pytest.mark.parametrize(
    "shape, perm, tiles",
    [
        ([2, 256, 64], [0, 2, 1], True),  # the last two dims swapped
        ([37, 53], [1, 0], True),  # edges past the whole tiles on both dims
        ([2, 3, 33, 18], [3, 1, 0, 2], True),  # the innermost dim moved outermost
        ([3, 17, 40, 5], [0, 3, 2, 1], False),  # 5 rows: no whole tile
        ([1, 19, 12, 64], [0, 2, 1, 3], False),  # the innermost dim stays: vector rows
    ],
)
def test_transposes_by_register_tiles(monkeypatch, target, shape, perm, tiles):
    """A transpose moving the innermost dim runs b x b tiles transposed in
    registers, then its edges element by element: an exact copy (NaN, inf
    and -0.0 too), 1 and 2 threads alike."""
    if not targets.supported(target):
        pytest.skip(f"the host cannot run {target} code")
    monkeypatch.setenv("GC_TARGET", target)
    b = GraphBuilder()
    b.make_output(b.make("transpose", [b.make_input(shape)], perm=perm).result)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:3] = [np.nan, np.inf, -0.0]
    compiled = graphcompiler.compile(b.module(), cache=False)
    assert ("tir.permutex2var" in compiled.tir) == tiles
    for threads in (1, 2):
        compiled.set_num_threads(threads)
        np.testing.assert_array_equal(compiled(x), np.transpose(x, perm))
        assert np.signbit(compiled(x).reshape(-1)).sum() == np.signbit(x).sum()


@pytest.mark.parametrize("target", ["avx512", "avx2"])
@pytest.mark.parametrize(
    "dtype, element",
    [(np.uint8, "ui8"), (np.int8, "i8"), (np.int16, "i16"), (np.int32, "i32"),
     (np.int64, "i64"), (np.float16, "f16")],
)  # fmt: skip
def test_transposes_of_any_element_type_by_register_tiles(monkeypatch, target, dtype, element):
    """Bytes (a QDQ model's keys), other integers and halves take the same
    b x b register tiles as f32, b elements a vector, and the same edges."""
    if not targets.supported(target):
        pytest.skip(f"the host cannot run {target} code")
    monkeypatch.setenv("GC_TARGET", target)
    b = GraphBuilder()
    b.make_output(b.make("transpose", [b.make_input([2, 37, 53], element)], perm=[0, 2, 1]).result)
    x = rng.integers(-100, 100, (2, 37, 53)).astype(dtype)
    compiled = graphcompiler.compile(b.module(), cache=False)
    assert "tir.permutex2var" in compiled.tir
    np.testing.assert_array_equal(compiled(x), np.transpose(x, [0, 2, 1]))


def test_constants_and_odd_returns():
    """A constant operand, an output that is an input, and a value returned twice."""
    b = GraphBuilder()
    x = b.make_input([7, 33])
    constant = b.make("constant", [], value=rng.standard_normal((33,)).astype(np.float32))
    total = b.make("add", [x, constant.result])
    b.make_output([total.result, x, total.result, constant.result])
    check(b)


@pytest.mark.parametrize(
    "strides, padding, dilations, groups",
    [([1, 1], [0, 0, 0, 0], [1, 1], 1), ([2, 1], [1, 2, 0, 1], [1, 2], 2)],
)
def test_convolution_and_pooling(strides, padding, dilations, groups):
    b = GraphBuilder()
    x = b.make_input([2, 4, 9, 7])
    w = b.make_input([6, 4 // groups, 3, 2])
    ops = [
        b.make(
            "conv2d", [x, w], strides=strides, padding=padding, dilations=dilations, groups=groups
        ),
        b.make("max_pool2d", [x], kernel=[3, 2], strides=strides, padding=padding),
        b.make("avg_pool2d", [x], kernel=[3, 2], strides=strides, padding=padding),
    ]
    b.make_output([op.result for op in ops])
    check(b)


def test_low_precision_elementwise():
    for dtype in ("f16", "bf16"):
        b = GraphBuilder()
        x, y = b.make_input([7, 33], dtype), b.make_input([33], dtype)
        b.make_output([b.make("add", [x, y]).result, b.make("relu", [x]).result])
        check(b, rtol=1e-2 if dtype == "bf16" else 1e-3, atol=1e-2)


def _to_blocked(array, plain, layout):
    """numpy version of a blocked format, for feeding the compiled graph."""
    from xdsl.dialects.builtin import StringAttr

    from graphcompiler.dialects.graph.ops import FormatAttr

    fmt = FormatAttr(StringAttr(plain), StringAttr(layout))
    (rows, cols), (block_rows,), (block_cols,) = array.shape, fmt.blocks()[0], fmt.blocks()[1]
    return array.reshape(rows // block_rows, block_rows, cols // block_cols, block_cols).transpose(
        0, 2, 1, 3
    ).copy(), fmt


def test_blocked_format_elementwise():
    """A blocked input (AB8a8b) is read through index arithmetic."""
    plain = rng.standard_normal((16, 24)).astype(np.float32)
    blocked, fmt = _to_blocked(plain, "AB", "AB8a8b")
    b = GraphBuilder()
    x = b.make_input([16, 24], "f32", fmt)
    y = b.make_input([24])
    b.make_output(b.make("add", [x, y]).result)
    bias = rng.standard_normal(24).astype(np.float32)
    compiled = graphcompiler.compile(b.module())
    np.testing.assert_allclose(compiled(blocked, bias), plain + bias, rtol=RTOL)
    assert "tir.div" in compiled.tir and "tir.mod" in compiled.tir


def test_reshapes_are_views_unless_returned():
    """A reshape of an input or an intermediate is a view of its buffer (no
    kernel); the intermediate stays live while the view is read, even after
    other tensors are placed; a returned reshape is copied to the output."""
    text = """
func.func @main(%x: tensor<64x48xf32>) -> (tensor<48x64xf32>, tensor<3072xf32>) {
  %v = graph.reshape %x : tensor<64x48xf32> -> tensor<48x64xf32>
  %a = graph.exp %x : tensor<64x48xf32>
  %av = graph.reshape %a : tensor<64x48xf32> -> tensor<48x64xf32>
  %b = graph.tanh %v : tensor<48x64xf32>
  %c = graph.add %av, %b : (tensor<48x64xf32>, tensor<48x64xf32>) -> tensor<48x64xf32>
  %d = graph.mul %c, %av : (tensor<48x64xf32>, tensor<48x64xf32>) -> tensor<48x64xf32>
  %r = graph.reshape %a : tensor<64x48xf32> -> tensor<3072xf32>
  func.return %d, %r : tensor<48x64xf32>, tensor<3072xf32>
}
"""
    compiled = graphcompiler.compile(text, pipeline=None)
    kernels = compiled.tir[compiled.tir.index("tir.func @main") :]
    assert kernels.count("tir.call @copy") + kernels.count("tir.call @reshape") == 1
    x = np.random.default_rng(0).standard_normal((64, 48), np.float32)
    d, r = compiled(x)
    np.testing.assert_allclose(d, reference.run(text, x)[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r, np.exp(x).reshape(-1), rtol=1e-6)


def test_a_returned_reshape_of_a_value_only_it_reads_is_computed_in_place():
    """A depth-to-space (transpose, then a returned reshape): the transpose
    writes into the out-param seen in its own shape, nothing is copied;
    chained reshapes too. A reshape of an input, or of a value also read
    elsewhere, is still copied."""
    text = """
func.func @main(%x: tensor<2x3x4x5xf32>) -> (tensor<4x30xf32>, tensor<120xf32>, tensor<6x20xf32>, tensor<2x3x4x5xf32>) {
  %t = graph.transpose %x {perm = array<i64: 2, 0, 1, 3>} : tensor<2x3x4x5xf32> -> tensor<4x2x3x5xf32>
  %r = graph.reshape %t : tensor<4x2x3x5xf32> -> tensor<4x6x5xf32>
  %s = graph.reshape %r : tensor<4x6x5xf32> -> tensor<4x30xf32>
  %e = graph.exp %x : tensor<2x3x4x5xf32>
  %f = graph.reshape %e : tensor<2x3x4x5xf32> -> tensor<120xf32>
  %v = graph.reshape %x : tensor<2x3x4x5xf32> -> tensor<6x20xf32>
  func.return %s, %f, %v, %e : tensor<4x30xf32>, tensor<120xf32>, tensor<6x20xf32>, tensor<2x3x4x5xf32>
}
"""
    compiled = graphcompiler.compile(text, pipeline=None)
    entry = compiled.tir[compiled.tir.index("tir.func @main") :]
    entry = entry[: entry.index("tir.return")]
    assert entry.count("tir.call @copy") + entry.count("tir.call @reshape") == 2  # %f and %v
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5), np.float32)
    for got, want in zip(compiled(x), reference.run(text, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("n", [255, 256, 1000])
@pytest.mark.parametrize("splat", [True, False])
def test_boolean_constants_kept_outside_the_code_read_as_true(n, splat):
    """xDSL stores an i1 `true` as the byte 0xFF; from 256 bytes on a
    constant leaves the LLVM IR as external data, where the code reads
    each byte as an i1 (0 or 1). Masks combined from such a constant were
    wrong in 7 of 16 lanes (BERT at 256 tokens) until its bytes were
    written as 0 and 1."""
    values = np.ones(n, bool) if splat else np.arange(n) % 3 != 1
    literal = "true" if splat else "[" + ", ".join(str(v).lower() for v in values) + "]"
    text = f"""func.func @main(%b: tensor<1x{n}xi1>) -> tensor<{n}x{n}xf32> {{
  %c = graph.constant dense<{literal}> : tensor<{n}xi1>
  %column = graph.reshape %c : tensor<{n}xi1> -> tensor<{n}x1xi1>
  %a = graph.logical_and %column, %b : (tensor<{n}x1xi1>, tensor<1x{n}xi1>) -> tensor<{n}x{n}xi1>
  %z = graph.constant dense<0.0> : tensor<1xf32>
  %m = graph.constant dense<-1.0> : tensor<1xf32>
  %y = graph.select %a, %z, %m : (tensor<{n}x{n}xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<{n}x{n}xf32>
  func.return %y : tensor<{n}x{n}xf32>
}}"""
    b = np.ones((1, n), bool)
    b[0, ::5] = False
    got = graphcompiler.compile(text, cache=False)(b)
    np.testing.assert_array_equal(got, np.where(values[:, None] & b, 0.0, -1.0))
