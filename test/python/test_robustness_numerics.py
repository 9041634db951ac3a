"""Issue 10's lowering/numerics reproducers: compiled code, the reference
interpreter and numpy agree on integer division traps, rank-0 and
zero-size tensors, bf16/f16 constants, NaN propagation, saturating
float -> int casts and erf's accuracy; bad bf16 inputs get a clear message.
"""

import math

import numpy as np
import pytest

import graphcompiler
from graphcompiler.dialects.graph.builders import GraphBuilder, tensor_type
from graphcompiler.driver.program import TirProgram
from graphcompiler.interpreters import reference
from graphcompiler.ir import element_types


def graph_text(inputs: dict[str, str], body: str, outputs: list[str]) -> str:
    """A @main function from argument types, body lines and returned `%name : type`s."""
    arguments = ", ".join(f"%{name}: {type_}" for name, type_ in inputs.items())
    values = ", ".join(o.split(" : ")[0] for o in outputs)
    types = ", ".join(o.split(" : ")[1] for o in outputs)
    return (
        f"func.func @main({arguments}) -> ({types}) {{\n{body}\n"
        f"  func.return {values} : {types}\n}}"
    )


def run_both(text, *inputs):
    """(compiled results, reference results), each a tuple."""
    compiled = graphcompiler.compile(text)(*inputs)
    expected = reference.run(text, *inputs)
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    return as_tuple(compiled), as_tuple(expected)


def assert_same(compiled, expected, **tolerance):
    for got, want in zip(compiled, expected, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, equal_nan=True, **tolerance)


# --- 2. integer division never traps ---------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_division_int_min_by_minus_one(dtype):
    t = f"tensor<8x{np.dtype(dtype).name.replace('int', 'i')}>"
    text = graph_text(
        {"x": t, "y": t}, f"  %0 = graph.div %x, %y : ({t}, {t}) -> {t}", [f"%0 : {t}"]
    )
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    x = np.array([low, low, low, 7, -7, 7, high, low], dtype)
    y = np.array([-1, 2, 0, -2, 2, 0, -1, 1], dtype)
    compiled, expected = run_both(text, x, y)
    want = np.array([low, low // 2, 0, -3, -3, 0, -high, low], dtype)
    np.testing.assert_array_equal(expected[0], want)
    np.testing.assert_array_equal(compiled[0], want)


def test_tir_div_and_mod_by_zero_and_minus_one():
    program = TirProgram(
        """
tir.func @divmod(%x: i32, %y: i32, %out: !tir.tensor<2xi32>) {
  %q = tir.div %x, %y : (i32, i32) -> i32
  %r = tir.mod %x, %y : (i32, i32) -> i32
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  tir.store %q, %out[%c0] : !tir.tensor<2xi32>
  tir.store %r, %out[%c1] : !tir.tensor<2xi32>
  tir.return
}"""
    )
    out = np.zeros(2, np.int32)
    for x, y, want in [(-(2**31), -1, [-(2**31), 0]), (5, 0, [0, 0]), (-7, 2, [-3, -1])]:
        program["divmod"](x, y, out)
        assert out.tolist() == want


# --- 5. rank-0 tensors ---------------------------------------------------------------------


def test_scalar_constant_and_rank0_inputs_outputs():
    text = graph_text(
        {"s": "tensor<f32>", "x": "tensor<3xf32>"},
        "  %c = graph.constant dense<2.5> : tensor<f32>\n"
        "  %0 = graph.mul %x, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
        "  %1 = graph.add %s, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>",
        ["%0 : tensor<3xf32>", "%1 : tensor<f32>"],
    )
    x = np.array([1.0, 2.0, -4.0], np.float32)
    compiled, expected = run_both(text, np.array(1.0, np.float32), x)
    assert_same(compiled, expected)
    assert compiled[1].shape == () and compiled[1] == 3.5
    np.testing.assert_array_equal(compiled[0], x * 2.5)


@pytest.mark.parametrize("element", ["f32", "bf16"])
def test_a_rank0_input_takes_a_numpy_scalar(element):
    """`x.sum()` is a np.float32, not an array: a rank-0 input takes it as
    a 0-d array (a bf16 one rounded); another dtype is the array's error."""
    text = f"""func.func @main(%x: tensor<4x{element}>, %s: tensor<{element}>) -> tensor<4x{element}> {{
  %y = graph.mul %x, %s : (tensor<4x{element}>, tensor<{element}>) -> tensor<4x{element}>
  func.return %y : tensor<4x{element}>
}}"""
    compiled = graphcompiler.compile(text, cache=False)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(compiled(x, np.float32(2.0)), x * 2)
    with pytest.raises(ValueError, match="dtype float64"):
        compiled(x, np.float64(2.0))


def test_reshape_to_and_from_rank0():
    text = graph_text(
        {"x": "tensor<1x1xf32>", "s": "tensor<f32>"},
        "  %0 = graph.reshape %x : tensor<1x1xf32> -> tensor<f32>\n"
        "  %1 = graph.reshape %s : tensor<f32> -> tensor<1x1x1xf32>",
        ["%0 : tensor<f32>", "%1 : tensor<1x1x1xf32>"],
    )
    compiled, expected = run_both(
        text, np.full((1, 1), 3.0, np.float32), np.array(-2.0, np.float32)
    )
    assert_same(compiled, expected)
    assert compiled[0].shape == () and compiled[1].shape == (1, 1, 1)


def rank0_graph(make) -> GraphBuilder:
    b = GraphBuilder()
    b.make_output([op.result for op in make(b)])
    return b


RANK0_OPS = {
    "unary": lambda b: [
        b.make(name, [b.make_input([])])
        for name in ("relu", "sigmoid", "tanh", "exp", "abs", "neg", "erf", "square", "gelu")
    ],
    "binary": lambda b: [
        b.make(name, [x, y])
        for x, y in [(b.make_input([]), b.make_input([]))]
        for name in ("add", "sub", "mul", "div", "maximum", "minimum", "greater", "equal")
    ],
    "broadcast": lambda b: [
        b.make("add", [b.make_input([]), b.make_input([2, 3])]),
        b.make("broadcast_to", [b.make_input([])], tensor_type([2, 3], "f32")),
    ],
    "reductions": lambda b: (
        [
            b.make(name, [x], axes=axes)
            for x in [b.make_input([2, 3])]
            for name in ("reduce_sum", "reduce_max", "reduce_prod")
            for axes in ([], [0, 1])
        ]
        + [b.make("reduce_mean", [b.make_input([])])]
    ),
    "casts and data movement": lambda b: (
        [b.make("cast", [x], tensor_type([], "i32")) for x in [b.make_input([])]]
        + [
            b.make("cast", [b.make_input([])], tensor_type([], "bf16")),
            b.make("transpose", [b.make_input([])], perm=[]),
            b.make("clamp", [b.make_input([])], min=-0.5, max=0.5),
        ]
    ),
    "bf16 and integers": lambda b: [
        b.make("add", [b.make_input([], "bf16"), b.make_input([], "bf16")]),
        b.make("div", [b.make_input([], "i32"), b.make_input([], "i32")]),
    ],
}


@pytest.mark.parametrize("family", RANK0_OPS)
def test_every_op_kind_on_rank0(family):
    b = rank0_graph(RANK0_OPS[family])
    rng = np.random.default_rng(5)
    inputs = []
    for arg in b.block.args:
        dtype = element_types.compute_dtype(arg.type.element_type)
        values = rng.uniform(-2, 2, arg.type.get_shape())
        values = np.asarray(values if dtype.kind == "f" else np.round(values * 4) + 9, dtype)
        inputs.append(element_types.round_to_bf16(values) if "bf16" in str(arg.type) else values)
    module = b.module()
    expected = reference.run(module, *inputs)
    compiled = graphcompiler.compile(module)(*inputs)
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    assert_same(as_tuple(compiled), as_tuple(expected), rtol=1e-5, atol=1e-6)


def test_round_to_bf16_keeps_rank0():
    rounded = element_types.round_to_bf16(np.float32(1.3))
    assert rounded.shape == () and rounded == np.float32(1.296875)
    values = element_types.round_to_bf16(np.array([np.nan, np.inf, 3.4e38], np.float32))
    assert np.isnan(values[0]) and values[1] == np.inf and values[2] == np.inf


def test_constant_fold_rank0_bf16():
    text = graph_text(
        {},
        "  %a = graph.constant dense<1.3> : tensor<bf16>\n"
        "  %b = graph.constant dense<2.0> : tensor<bf16>\n"
        "  %0 = graph.mul %a, %b : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>",
        ["%0 : tensor<bf16>"],
    )
    module = graphcompiler.parse(text)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-constant-fold)")
    assert "graph.mul" not in str(module)
    folded = reference.run(module)
    assert folded.shape == () and folded == np.float32(2.59375)
    assert graphcompiler.compile(module)() == folded


# --- 6. bf16 and f16 constants, globals of every element type ------------------------------


@pytest.mark.parametrize("element", ["bf16", "f16"])
def test_float16_constants_compile(element):
    t = f"tensor<2x{element}>"
    text = graph_text(
        {"x": t},
        f"  %c = graph.constant dense<[1.5, -2.25]> : {t}\n"
        f"  %0 = graph.add %x, %c : ({t}, {t}) -> {t}",
        [f"%0 : {t}"],
    )
    x = np.array([1.0, 2.0], np.float32 if element == "bf16" else np.float16)
    compiled, expected = run_both(text, x)
    assert_same(compiled, expected)
    np.testing.assert_array_equal(compiled[0], np.array([2.5, -0.25], x.dtype))


def test_folded_bf16_constant_compiles():
    text = graph_text(
        {"x": "tensor<4xbf16>"},
        "  %a = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xbf16>\n"
        "  %b = graph.exp %a : tensor<4xbf16>\n"
        "  %0 = graph.add %x, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>",
        ["%0 : tensor<4xbf16>"],
    )
    x = np.zeros(4, np.float32)
    compiled, expected = run_both(text, x)
    assert_same(compiled, expected)


GLOBAL_VALUES = {
    "f16": [1.5, -2.25],
    "bf16": [1.5, -2.25],
    "f32": [1.5, -2.25],
    "f64": [1.5, -2.25],
    "i1": [1, 0],
    "i8": [-5, 7],
    "ui8": [200, 7],
    "i16": [-300, 7],
    "i32": [-70000, 7],
    "i64": [-(2**40), 7],
    "index": [5, 7],
}


@pytest.mark.parametrize("element", GLOBAL_VALUES)
def test_globals_and_constants_of_every_element_type(element):
    values = GLOBAL_VALUES[element]
    program = TirProgram(
        f"""
tir.global @table : !tir.tensor<2x{element}> = dense<[{values[0]}, {values[1]}]> : tensor<2x{element}>
tir.global @scalar : {element} = {values[0]} : {element}
tir.func @store(%out: !tir.tensor<2x{element}>) {{
  %c = tir.const {values[0]} : {element}
  %i = tir.const 1 : index
  tir.store %c, %out[%i] : !tir.tensor<2x{element}>
  tir.return
}}"""
    )
    table, scalar = program.globals["table"], program.globals["scalar"]
    out = np.zeros(2, table.dtype)
    program["store"](out)
    if element == "bf16":  # bits: compare as float32
        table, scalar, out = (
            (a.astype(np.uint32) << 16).view(np.float32) for a in (table, scalar, out)
        )
    assert table.tolist() == [type(table.item(0))(v) for v in values]
    assert scalar.item() == values[0] and out[1] == values[0]


# --- 7. zero-size tensors --------------------------------------------------------------------


def test_zero_size_tensors_compile_and_run():
    text = graph_text(
        {
            "x": "tensor<2x0xf32>",
            "y": "tensor<0x3xf32>",
            "z": "tensor<2x3xf32>",
            "w": "tensor<1x3xf32>",
        },
        "  %0 = graph.relu %x : tensor<2x0xf32>\n"
        "  %1 = graph.add %y, %w : (tensor<0x3xf32>, tensor<1x3xf32>) -> tensor<0x3xf32>\n"
        "  %2 = graph.reshape %x : tensor<2x0xf32> -> tensor<0x7xf32>\n"
        "  %3 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x0xf32> -> tensor<0x2xf32>\n"
        "  %4 = graph.concat %x, %z {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
        "  %5 = graph.matmul %y, %z {transpose_b = true} : (tensor<0x3xf32>, tensor<2x3xf32>) -> tensor<0x2xf32>\n"
        "  %6 = graph.cast %x : tensor<2x0xf32> -> tensor<2x0xi32>",
        [
            "%0 : tensor<2x0xf32>",
            "%1 : tensor<0x3xf32>",
            "%2 : tensor<0x7xf32>",
            "%3 : tensor<0x2xf32>",
            "%4 : tensor<2x3xf32>",
            "%5 : tensor<0x2xf32>",
            "%6 : tensor<2x0xi32>",
        ],
    )
    z = np.arange(6, dtype=np.float32).reshape(2, 3)
    compiled, expected = run_both(
        text, np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), z, z[:1]
    )
    assert_same(compiled, expected)
    assert [c.shape for c in compiled] == [(2, 0), (0, 3), (0, 7), (0, 2), (2, 3), (0, 2), (2, 0)]
    np.testing.assert_array_equal(compiled[4], z)


@pytest.mark.parametrize("transpose_a", [False, True])
def test_matmul_over_an_empty_k_is_zeros_also_fused(transpose_a):
    a = "tensor<0x4xf32>" if transpose_a else "tensor<4x0xf32>"
    t = "tensor<4x8xf32>"
    flag = str(transpose_a).lower()
    text = graph_text(
        {"x": a, "w": "tensor<0x8xf32>", "b": "tensor<8xf32>"},
        f"  %0 = graph.matmul %x, %w {{transpose_a = {flag}}} : ({a}, tensor<0x8xf32>) -> {t}\n"
        f"  %1 = graph.add %0, %b : ({t}, tensor<8xf32>) -> {t}\n"
        f"  %2 = graph.relu %1 : {t}\n"
        f"  %3 = graph.matmul %x, %w {{transpose_a = {flag}}} : ({a}, tensor<0x8xf32>) -> {t}",
        [f"%2 : {t}", f"%3 : {t}"],
    )
    x = np.zeros((0, 4) if transpose_a else (4, 0), np.float32)
    bias = np.arange(8, dtype=np.float32) - 3
    compiled, expected = run_both(text, x, np.zeros((0, 8), np.float32), bias)
    assert_same(compiled, expected)
    np.testing.assert_array_equal(compiled[0], np.broadcast_to(np.maximum(bias, 0), (4, 8)))
    np.testing.assert_array_equal(compiled[1], np.zeros((4, 8), np.float32))


@pytest.mark.parametrize(
    "op, dtype, identity",
    [
        ("reduce_sum", "f32", 0.0),
        ("reduce_prod", "f32", 1.0),
        ("reduce_mean", "f32", np.nan),
        ("reduce_max", "f32", -np.inf),
        ("reduce_min", "f32", np.inf),
        ("reduce_sum", "i32", 0),
        ("reduce_max", "i32", np.iinfo(np.int32).min),
        ("reduce_min", "i32", np.iinfo(np.int32).max),
        ("reduce_max", "i64", np.iinfo(np.int64).min),
    ],
)
def test_reductions_over_an_empty_axis_give_the_identity(op, dtype, identity):
    t = f"tensor<2x0x{dtype}>"
    text = graph_text(
        {"x": t},
        f"  %0 = graph.{op} %x {{axes = array<i64: 1>}} : {t} -> tensor<2x{dtype}>",
        [f"%0 : tensor<2x{dtype}>"],
    )
    x = np.zeros((2, 0), {"f32": np.float32, "i32": np.int32, "i64": np.int64}[dtype])
    for result in run_both(text, x):
        assert result[0].shape == (2,)
        np.testing.assert_array_equal(result[0], np.full(2, identity, result[0].dtype))


# --- 12. NaN propagation -----------------------------------------------------------------------


def test_nan_propagates_through_elementwise_ops():
    t = "tensor<6xf32>"
    ops = {
        "relu": f"graph.relu %x : {t}",
        "maximum": f"graph.maximum %x, %y : ({t}, {t}) -> {t}",
        "minimum": f"graph.minimum %x, %y : ({t}, {t}) -> {t}",
        "clamp": f"graph.clamp %x {{min = -1.0 : f32, max = 1.0 : f32}} : {t}",
        "sigmoid": f"graph.sigmoid %x : {t}",
        "exp": f"graph.exp %x : {t}",
        "erf": f"graph.erf %x : {t}",
        "gelu": f"graph.gelu %x : {t}",
        "leaky_relu": f"graph.leaky_relu %x {{alpha = 0.1 : f32}} : {t}",
        "tanh": f"graph.tanh %x : {t}",
    }
    body = "\n".join(f"  %{name} = {op}" for name, op in ops.items())
    text = graph_text({"x": t, "y": t}, body, [f"%{name} : {t}" for name in ops])
    x = np.array([np.nan, 1.0, -np.inf, np.inf, np.nan, -0.5], np.float32)
    y = np.array([1.0, np.nan, 0.0, 0.0, np.nan, -2.0], np.float32)
    compiled, expected = run_both(text, x, y)
    assert_same(compiled, expected, rtol=1e-6, atol=1e-7)
    for name, got in zip(ops, compiled, strict=True):
        assert np.isnan(got[0]), name
    assert np.isnan(compiled[1]).tolist() == [True, True, False, False, True, False]  # maximum
    np.testing.assert_array_equal(compiled[0][1:4], [1.0, 0.0, np.inf])  # relu


def test_nan_propagates_through_max_pool():
    t_in, t_out = "tensor<1x1x4x4xf32>", "tensor<1x1x2x2xf32>"
    text = graph_text(
        {"x": t_in},
        f"  %0 = graph.max_pool2d %x {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : {t_in} -> {t_out}",
        [f"%0 : {t_out}"],
    )
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    compiled, expected = run_both(text, x)
    assert_same(compiled, expected)
    assert np.isnan(compiled[0][0, 0, 0, 0]) and compiled[0][0, 0, 1, 1] == 15


def test_bf16_nan_survives_the_round_trip():
    t = "tensor<3xbf16>"
    text = graph_text(
        {"x": "tensor<3xf32>"}, f"  %0 = graph.cast %x : tensor<3xf32> -> {t}", [f"%0 : {t}"]
    )
    nan_payload = np.array([0x7FFFFFFF, 0xFFFFFFFF, 0x7F800001], np.uint32).view(np.float32)
    compiled, expected = run_both(text, nan_payload)
    assert np.isnan(compiled[0]).all() and np.isnan(expected[0]).all()


# --- 13. float -> int casts saturate --------------------------------------------------------

SPECIAL = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 300.7, -300.7, -0.9, 2.5e19], np.float32)
SATURATED = {
    "i32": [0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 300, -300, 0, 2**31 - 1],
    "i8": [0, 127, -128, 127, -128, 127, -128, 0, 127],
    "ui8": [0, 255, 0, 255, 0, 255, 0, 0, 255],
    "i16": [0, 32767, -32768, 32767, -32768, 300, -300, 0, 32767],
    "i64": [0, 2**63 - 1, -(2**63), 3000000000, -3000000000, 300, -300, 0, 2**63 - 1],
    "i1": [True, True, True, True, True, True, True, True, True],
}


@pytest.mark.parametrize("source", ["f32", "f16", "bf16"])
def test_float_to_int_casts_saturate(source):
    shape = f"tensor<{SPECIAL.size}x"
    body = "\n".join(
        f"  %{target} = graph.cast %x : {shape}{source}> -> {shape}{target}>"
        for target in SATURATED
    )
    text = graph_text(
        {"x": f"{shape}{source}>"}, body, [f"%{target} : {shape}{target}>" for target in SATURATED]
    )
    with np.errstate(over="ignore"):  # 3e9 is inf in f16
        values = SPECIAL.astype(np.float16) if source == "f16" else SPECIAL
    if source == "bf16":
        values = element_types.round_to_bf16(SPECIAL)
    compiled, expected = run_both(text, values)
    assert_same(compiled, expected)
    exact = np.asarray(values, np.float64)  # f16/bf16 round 300.7 and overflow 3e9 first
    for (target, want), got in zip(SATURATED.items(), compiled, strict=True):
        if source == "f32":
            np.testing.assert_array_equal(got, np.array(want, got.dtype), err_msg=target)
        saturated = reference.to_tensor(exact, tensor_type([exact.size], target))
        np.testing.assert_array_equal(got, saturated, err_msg=f"{source} -> {target}")


# --- 14. erf accuracy ----------------------------------------------------------------------------


def test_erf_absolute_error_on_a_dense_grid():
    grid = np.concatenate(
        [
            np.linspace(-6.0, 6.0, 1 << 20),
            np.linspace(2.5, 3.92, 1 << 18),  # where the rational's rounding is largest
            -np.linspace(2.5, 3.92, 1 << 18),
            np.linspace(3.5, 4.5, 1 << 14),  # around the clamp
            np.geomspace(1e-30, 1e-2, 1 << 12),  # tiny: relative accuracy
        ]
    ).astype(np.float32)
    n = grid.size
    text = graph_text(
        {"x": f"tensor<{n}xf32>"},
        f"  %0 = graph.erf %x : tensor<{n}xf32>",
        [f"%0 : tensor<{n}xf32>"],
    )
    got = graphcompiler.compile(text)(grid).astype(np.float64)
    want = np.vectorize(math.erf)(grid.astype(np.float64))
    assert np.abs(got - want).max() < 4.0e-7  # 5.6 ulp of 1; measured 3.3e-7
    tiny = np.abs(grid) < 1e-2
    assert (np.abs(got - want)[tiny] / np.abs(want[tiny])).max() < 2.5e-7
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 10.0], np.float32)
    t = "tensor<6xf32>"
    result = graphcompiler.compile(
        graph_text({"x": t}, f"  %0 = graph.erf %x : {t}", [f"%0 : {t}"])
    )(special)
    assert np.isnan(result[0]) and result[1:].tolist() == [1.0, -1.0, 0.0, 0.0, 1.0]
    assert math.copysign(1.0, result[4]) == -1.0


# --- 16. messages --------------------------------------------------------------------------------


def test_bf16_inputs_take_float32_or_bits_and_say_so():
    t = "tensor<2xbf16>"
    compiled = graphcompiler.compile(
        graph_text({"x": t}, f"  %0 = graph.relu %x : {t}", [f"%0 : {t}"])
    )
    np.testing.assert_array_equal(compiled(np.array([1.5, -1.0], np.float32)), [1.5, 0.0])
    np.testing.assert_array_equal(compiled(np.array([0x3FC0, 0xBFC0], np.uint16)), [1.5, 0.0])
    with pytest.raises(
        ValueError,
        match=r"argument #0 \('%x'\) of @main has dtype float64; a tensor<2xbf16> input takes float32 values",
    ):
        compiled(np.array([1.5, -1.0]))


def test_f80_tir_const_is_a_located_error():
    from graphcompiler.ir.diagnostics import DiagnosticError

    with pytest.raises(
        DiagnosticError, match=r"^<string>:2:18: error: f80 attributes are not supported"
    ):
        graphcompiler.parse("tir.func @f() {\n  %c = tir.const 1.0 : f80\n  tir.return\n}")


@pytest.mark.parametrize(
    "constant, message",
    [
        (
            "dense<1.0e+308> : tensor<2xf32>",
            "2:23: error: floating point value too large for its type",
        ),
        ("dense<0.0> : tensor<2xf80>", "2:23: error: constants of this type are not supported"),
    ],
)
def test_unrepresentable_graph_constants_are_located_errors(constant, message):
    from graphcompiler.ir.diagnostics import DiagnosticError

    type_ = constant.split(" : ")[1]
    text = graph_text({}, f"  %c = graph.constant {constant}", [f"%c : {type_}"])
    with pytest.raises(DiagnosticError, match=f"^<string>:{message}"):
        graphcompiler.parse(text)


def test_f16_without_f16c_converts_through_libgcc():
    """GC_TARGET=generic has no F16C: LLVM calls __extendhfsf2/__truncsfhf2,
    which the JIT finds in libgcc (the process used to die with SIGSEGV)."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, graphcompiler\n"
        "t = '''func.func @main(%x: tensor<37xf16>) -> tensor<37xf16> {\n"
        "  %0 = graph.relu %x : tensor<37xf16>\n"
        "  func.return %0 : tensor<37xf16>\n}'''\n"
        "x = np.linspace(-2, 2, 37).astype(np.float16)\n"
        "assert np.array_equal(graphcompiler.compile(t)(x), np.maximum(x, 0))\n"
    )
    env = {**os.environ, "GC_TARGET": "generic"}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


def test_nan_and_infinities_times_a_zero_constant_are_nan():
    """A float X * 0 is not folded to 0: NaN and +-inf times 0 are NaN, as
    numpy and onnxruntime give (exporters' masks multiply by zero constants)."""
    text = graph_text(
        {"x": "tensor<5xf32>"},
        "  %zero = graph.constant dense<0.0> : tensor<1xf32>\n"
        "  %y = graph.mul %x, %zero : (tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>",
        ["%y : tensor<5xf32>"],
    )
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], np.float32)
    with np.errstate(invalid="ignore"):
        expected = x * np.float32(0.0)
    for (got,) in run_both(text, x):
        np.testing.assert_array_equal(got, expected)


def test_inf_weight_over_zero_padding_is_nan_in_direct_convolutions():
    """The direct loop nests (f16 here) multiply a float weight by the
    padding's 0 too, as numpy and onnxruntime do: an output that reads only
    padding through an inf weight is NaN, not 0."""
    t_x, t_w, t_out = "tensor<1x2x1x1xf16>", "tensor<1x2x1x1xf16>", "tensor<1x1x1x2xf16>"
    text = graph_text(
        {"x": t_x, "w": t_w},
        f"  %y = graph.conv2d %x, %w {{padding = array<i64: 0, 1, 0, 0>}} : ({t_x}, {t_w}) -> {t_out}",
        [f"%y : {t_out}"],
    )
    x = np.array([1.0, 2.0], np.float16).reshape(1, 2, 1, 1)
    w = np.array([np.inf, 1.0], np.float16).reshape(1, 2, 1, 1)
    for (got,) in run_both(text, x, w):
        np.testing.assert_array_equal(got.reshape(-1), np.array([np.nan, np.inf], np.float16))
