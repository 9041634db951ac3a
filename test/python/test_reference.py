"""The reference interpreter against hand-written numpy, op by op, over odd
shapes (1, 7, 33) and broadcasting. Windows ops are checked against naive loops."""

import math

import numpy as np
import pytest

from graphcompiler.dialects.graph.builders import GraphBuilder, tensor_type
from graphcompiler.interpreters import reference

rng = np.random.default_rng(2026)
DTYPE_NAMES = {
    np.float32: "f32",
    np.float16: "f16",
    np.int32: "i32",
    np.int64: "i64",
    np.int8: "i8",
    np.bool_: "i1",
}


def run_op(op_name, inputs, result_type=None, **params):
    """Build a one-op graph over `inputs` and run it in the reference."""
    builder = GraphBuilder()
    args = [builder.make_input(a.shape, DTYPE_NAMES[a.dtype.type]) for a in inputs]
    op = builder.make(op_name, args, result_type, **params)
    builder.make_output(op.result)
    return reference.run(builder.module(), *inputs)


def uniform(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


SHAPES = [(1,), (7,), (33,), (7, 33), (1, 7, 33)]

erf = np.vectorize(math.erf)

UNARY = {
    "relu": lambda x: np.where(x > 0, x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "exp": np.exp,
    "abs": np.abs,
    "neg": np.negative,
    "erf": erf,
    "square": lambda x: x**2,
    "gelu": lambda x: x * 0.5 * (1 + erf(x / np.sqrt(2))),
}
POSITIVE_UNARY = {
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", [*UNARY, *POSITIVE_UNARY])
def test_unary(name, shape):
    low = 0.1 if name in POSITIVE_UNARY else -2.0
    x = uniform(*shape, low=low)
    expected = {**UNARY, **POSITIVE_UNARY}[name](x.astype(np.float64))
    np.testing.assert_allclose(run_op(name, [x]), expected, rtol=1e-5, atol=1e-6)


def test_parametrized_unary():
    x = uniform(7, 33)
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(run_op("gelu", [x], approximate="tanh"), tanh_gelu, rtol=1e-5)
    np.testing.assert_allclose(
        run_op("leaky_relu", [x], alpha=0.25), np.where(x < 0, 0.25 * x, x), rtol=1e-6
    )
    np.testing.assert_array_equal(
        run_op("clamp", [x], min=-0.5, max=0.75), np.minimum(np.maximum(x, -0.5), 0.75)
    )


def test_cast_truncates_like_c():
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 3.0], dtype=np.float32)
    to_int = run_op("cast", [x], tensor_type([6], "i32"))
    np.testing.assert_array_equal(to_int, [-2, 0, 0, 0, 2, 3])
    assert to_int.dtype == np.int32
    to_bool = run_op("cast", [x], tensor_type([6], "i1"))
    np.testing.assert_array_equal(to_bool, [True, True, False, True, True, True])
    to_half = run_op("cast", [x], tensor_type([6], "f16"))
    assert to_half.dtype == np.float16


def test_bf16_results_are_rounded_to_bf16():
    x = np.array([1.0 + 2**-9, 1.0 + 3 * 2**-9, 3.14159], dtype=np.float32)
    rounded = run_op("cast", [x], tensor_type([3], "bf16"))
    np.testing.assert_array_equal(rounded, [1.0, 1.0 + 2**-7, 3.140625])


BROADCASTS = [
    ((7, 33), (7, 33)),
    ((7, 33), (33,)),
    ((7, 1), (1, 33)),
    ((1,), (7, 1, 33)),
    ((33,), (1,)),
]
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "greater": np.greater,
    "less": np.less,
    "equal": np.equal,
}


@pytest.mark.parametrize("shapes", BROADCASTS)
@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasting(name, shapes):
    a, b = uniform(*shapes[0]), uniform(*shapes[1], low=0.5)
    if name == "equal":
        b = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).copy()
        b.reshape(-1)[::3] += 1
    expected = BINARY[name](a, b)
    result = run_op(name, [a, b])
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_pow_and_integer_division():
    a, b = uniform(7, 33, low=0.1), uniform(33, low=-2, high=2)
    np.testing.assert_allclose(run_op("pow", [a, b]), a.astype(np.float64) ** b, rtol=1e-5)
    numerator = np.array([7, -7, 7, -7, 5], dtype=np.int32)
    denominator = np.array([2, 2, -2, -2, 5], dtype=np.int32)
    np.testing.assert_array_equal(run_op("div", [numerator, denominator]), [3, -3, -3, 3, 1])


def test_select_broadcasts_all_three():
    condition = rng.random((7, 1)) > 0.5
    a, b = uniform(1, 33), uniform(7, 33)
    np.testing.assert_array_equal(run_op("select", [condition, a, b]), np.where(condition, a, b))


@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_a, transpose_b",
    [
        ((7, 33), (33, 1), False, False),
        ((33, 7), (33, 5), True, False),
        ((7, 33), (5, 33), False, True),
        ((2, 1, 7, 33), (3, 33, 4), False, False),
        ((1, 1), (1, 1), True, True),
    ],
)
def test_matmul(a_shape, b_shape, transpose_a, transpose_b):
    a, b = uniform(*a_shape), uniform(*b_shape)
    expected = np.einsum(
        "...ij,...jk->...ik",
        np.swapaxes(a, -1, -2) if transpose_a else a,
        np.swapaxes(b, -1, -2) if transpose_b else b,
    )
    result = run_op("matmul", [a, b], transpose_a=transpose_a, transpose_b=transpose_b)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


REDUCTIONS = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_prod": np.prod,
}


@pytest.mark.parametrize(
    "axes, keep_dims", [([1], False), ([0, 2], True), ([-1], False), ([], False)]
)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(name, axes, keep_dims):
    x = uniform(7, 1, 33, low=0.5, high=1.5)
    axis = tuple(a % 3 for a in axes) if axes else None
    expected = REDUCTIONS[name](x.astype(np.float64), axis=axis, keepdims=keep_dims)
    result = run_op(name, [x], axes=axes, keep_dims=keep_dims)
    np.testing.assert_allclose(result, expected, rtol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_family_is_stable(axis):
    x = uniform(7, 33) * 50 + 1000  # large values overflow a naive exp
    shifted = x.astype(np.float64) - x.max(axis=axis, keepdims=True)
    softmax = np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(run_op("softmax", [x], axis=axis), softmax, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        run_op("log_softmax", [x], axis=axis), np.log(softmax), rtol=1e-4, atol=1e-4
    )


def test_layer_norm_and_batch_norm():
    x, gamma, beta = uniform(2, 7, 33), uniform(7, 33), uniform(7, 33)
    flat = x.reshape(2, -1).astype(np.float64)
    normalized = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    expected = normalized.reshape(x.shape) * gamma + beta
    np.testing.assert_allclose(
        run_op("layer_norm", [x, gamma, beta], axis=1), expected, rtol=1e-4, atol=1e-5
    )

    x = uniform(2, 3, 7, 1)
    scale, bias, mean = uniform(3), uniform(3), uniform(3)
    var = uniform(3, low=0.5)
    expected = np.empty_like(x)
    for c in range(3):
        expected[:, c] = (x[:, c] - mean[c]) / np.sqrt(var[c] + 1e-3) * scale[c] + bias[c]
    result = run_op("batch_norm", [x, scale, bias, mean, var], epsilon=1e-3)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


def test_data_movement():
    x = uniform(2, 7, 33)
    np.testing.assert_array_equal(run_op("transpose", [x], perm=[2, 0, 1]), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(run_op("reshape", [x], tensor_type([14, 33])), x.reshape(14, 33))
    y = uniform(7, 1)
    np.testing.assert_array_equal(
        run_op("broadcast_to", [y], tensor_type([2, 7, 33])), np.broadcast_to(y, (2, 7, 33))
    )
    z = uniform(2, 1, 33)
    np.testing.assert_array_equal(
        run_op("concat", [x, z, x], axis=1), np.concatenate([x, z, x], axis=1)
    )
    np.testing.assert_array_equal(
        run_op("slice", [x], starts=[0, -3, 1], ends=[1, 100, 33], steps=[1, 1, 4]),
        x[0:1, -3:100, 1:33:4],
    )


def test_constant_splat_and_values():
    builder = GraphBuilder()
    splat = builder.make("constant", [], value=np.full((7, 33), 2.5, dtype=np.float32))
    values = builder.make("constant", [], value=np.arange(6, dtype=np.int64).reshape(2, 3))
    builder.make_output([splat.result, values.result])
    first, second = reference.run(builder.module())
    np.testing.assert_array_equal(first, np.full((7, 33), 2.5, dtype=np.float32))
    np.testing.assert_array_equal(second, np.arange(6).reshape(2, 3))


def naive_conv2d(x, w, stride, padding, dilation, groups):
    n, c, h, width = x.shape
    o, i, kh, kw = w.shape
    top, left, bottom, right = padding
    padded = np.zeros((n, c, h + top + bottom, width + left + right), dtype=np.float64)
    padded[:, :, top : top + h, left : left + width] = x
    oh = (h + top + bottom - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (width + left + right - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for b in range(n):
        for oc in range(o):
            g = oc // per_group
            for y in range(oh):
                for xx in range(ow):
                    for ic in range(i):
                        for ky in range(kh):
                            for kx in range(kw):
                                out[b, oc, y, xx] += (
                                    padded[
                                        b,
                                        g * i + ic,
                                        y * stride[0] + ky * dilation[0],
                                        xx * stride[1] + kx * dilation[1],
                                    ]
                                    * w[oc, ic, ky, kx]
                                )
    return out


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [
        ((1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((2, 1), (1, 2, 0, 1), (1, 2), 2),
        ((1, 2), (1, 1, 1, 1), (2, 1), 4),
    ],
)
def test_conv2d(stride, padding, dilation, groups):
    x = uniform(2, 4, 7, 9)
    w = uniform(8, 4 // groups, 3, 2)
    result = run_op(
        "conv2d",
        [x, w],
        strides=list(stride),
        padding=list(padding),
        dilations=list(dilation),
        groups=groups,
    )
    np.testing.assert_allclose(
        result, naive_conv2d(x, w, stride, padding, dilation, groups), rtol=1e-4, atol=1e-5
    )


def naive_pool(x, kernel, stride, padding, reduce):
    top, left, bottom, right = padding
    n, c, h, w = x.shape
    oh = (h + top + bottom - kernel[0]) // stride[0] + 1
    ow = (w + left + right - kernel[1]) // stride[1] + 1
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xx in range(ow):
            y0, x0 = y * stride[0] - top, xx * stride[1] - left
            window = x[:, :, max(y0, 0) : y0 + kernel[0], max(x0, 0) : x0 + kernel[1]]
            out[:, :, y, xx] = reduce(window, axis=(2, 3))
    return out


@pytest.mark.parametrize("name, reduce", [("max_pool2d", np.max), ("avg_pool2d", np.mean)])
@pytest.mark.parametrize("stride, padding", [((1, 1), (0, 0, 0, 0)), ((2, 3), (1, 1, 1, 0))])
def test_pools(name, reduce, stride, padding):
    x = uniform(1, 3, 7, 9, low=-5, high=-1)  # negative: padding must never win a max
    result = run_op(name, [x], kernel=[3, 2], strides=list(stride), padding=list(padding))
    np.testing.assert_allclose(result, naive_pool(x, [3, 2], stride, padding, reduce), rtol=1e-5)


def test_arguments_are_checked():
    builder = GraphBuilder()
    builder.make_output(builder.make("relu", [builder.make_input([2, 3])]).result)
    module = builder.module()
    with pytest.raises(
        ValueError, match=r"argument #0 of @main has shape \[3, 2\], expected \[2, 3\]"
    ):
        reference.run(module, np.zeros((3, 2), np.float32))
    with pytest.raises(
        ValueError, match="argument #0 of @main has dtype float64, expected float32"
    ):
        reference.run(module, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="takes 1 arguments, got 0"):
        reference.run(module)
    with pytest.raises(ValueError, match=r"no function @nope in the module \(functions: main\)"):
        reference.run(module, np.zeros((2, 3), np.float32), entry="nope")


def test_text_input_and_calls():
    text = """
    func.func @double(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = graph.add %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }
    func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = func.call @double(%x) : (tensor<3xf32>) -> tensor<3xf32>
      %1 = graph.neg %0 : tensor<3xf32>
      func.return %0, %1 : tensor<3xf32>, tensor<3xf32>
    }
    """
    doubled, negated = reference.run(text, np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(doubled, [2, 4, 6])
    np.testing.assert_array_equal(negated, [-2, -4, -6])


def test_arith_constants_are_values():
    """MLIR's arith.constant in a graph function: a dense tensor as
    graph.constant's, a scalar as a 0-d array (an unread one no longer
    stopped the interpreter: a fuzz finding)."""
    text = """func.func @main(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<f32>) {
  %0 = "arith.constant"() <{value = dense<[1, 2, 3, 4]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %1 = "arith.constant"() <{value = 2.5 : f32}> : () -> f32
  %2 = graph.add %x, %0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = "arith.constant"() <{value = dense<-0.5> : tensor<f32>}> : () -> tensor<f32>
  func.return %2, %3 : tensor<4xi32>, tensor<f32>
}"""
    added, splat = reference.run(text, np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(added, [1, 3, 5, 7])
    assert splat.shape == () and splat == -0.5 and splat.dtype == np.float32


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        (np.int64, -9, 10),
        (np.int64, -(2**40), 2**40),
        (np.int32, -(2**31), 2**31 - 1),
        (np.int8, -128, 128),
    ],
)
def test_integer_matmul_is_exact_and_wraps(dtype, low, high):
    """Small integers go through f64 BLAS (exact below 2^53: a fuzzed i64
    1024^3 matmul took 7 s in numpy's integer loop); others, and every
    overflow, give numpy's wrapped integer result."""
    a = rng.integers(low, high, (33, 70), dtype=dtype)
    b = rng.integers(low, high, (70, 21), dtype=dtype)
    np.testing.assert_array_equal(run_op("matmul", [a, b]), np.matmul(a, b))
