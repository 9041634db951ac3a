"""ONNX's Tan, Atan, Asin, Acos, Sinh, Cosh, Asinh, Acosh and Atanh
(frontends/onnx/ops_trig.py: compositions of graph ops) against numpy in
float64, in float32 ulp, over the whole domain: dense grids where the
formulas switch branches (0.5, 1, tan(pi/8), 88), tiny and huge values,
±0, ±inf and NaN; every target the host runs; one fused kernel each.
"""

import numpy as np
import pytest
from onnx import TensorProto
from onnx_node_model import node_model

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]

GRID = np.concatenate(
    [
        np.linspace(-3, 3, 12001),
        np.geomspace(1e-30, 1e30, 3001),
        -np.geomspace(1e-30, 1e30, 3001),
        np.linspace(0.35, 0.6, 2001),  # atan's tan(pi/8), asin's 0.5
        np.geomspace(0.9, 1.1, 2001),
        -np.geomspace(0.9, 1.1, 2001),
        np.linspace(80, 95, 2001),  # exp's overflow, sinh's and cosh's
        -np.linspace(80, 95, 2001),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1 - 2**-24, -(1 - 2**-24)],
    ]
).astype(np.float32)

FUNCTIONS = {
    "Tan": np.tan, "Atan": np.arctan, "Asin": np.arcsin, "Acos": np.arccos, "Sinh": np.sinh,
    "Cosh": np.cosh, "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh,
}  # fmt: skip

MAX_ULP = 3.0
"""numpy's own float32 functions are up to 2.8 ulp off (tan) on this grid."""


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return np.abs(got - exact) / np.maximum(spacing, np.finfo(np.float32).tiny)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op_type", FUNCTIONS)
def test_within_3_ulp_of_float64_numpy(monkeypatch, target, op_type):
    monkeypatch.setenv("GC_TARGET", target)
    shape = [GRID.size]
    model = node_model(
        op_type, [("x", TensorProto.FLOAT, shape)], [("y", TensorProto.FLOAT, shape)]
    )
    compiled = graphcompiler.compile(import_onnx(model), cache=False)
    assert len(compiled.microkernels) == 0 and compiled.graph.count("graph.fused") == 1
    got = compiled(GRID)
    with np.errstate(all="ignore"):
        exact = FUNCTIONS[op_type](GRID.astype(np.float64))
        single = FUNCTIONS[op_type](GRID)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(single))
    infinite = np.isinf(single)
    np.testing.assert_array_equal(got[infinite], single[infinite])
    finite = np.isfinite(single)
    if op_type == "Tan":  # tan near its poles: float32 x is far from pi/2
        finite &= np.abs(GRID) < 1e4
    assert _ulps(got[finite].astype(np.float64), exact[finite]).max() <= MAX_ULP
    zeros = GRID == 0
    if op_type not in ("Cosh", "Acos", "Acosh"):  # odd functions keep the zero's sign
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(GRID[zeros]))


def test_float16_and_float64_inputs_keep_their_type():
    x = np.array([-0.75, -0.2, 0.0, 0.3, 0.9], np.float64)
    for onnx_type, dtype, tolerance in ((TensorProto.DOUBLE, np.float64, 1e-6),
                                        (TensorProto.FLOAT16, np.float16, 2e-3)):  # fmt: skip
        model = node_model("Atanh", [("x", onnx_type, [5])], [("y", onnx_type, [5])])
        got = graphcompiler.compile(import_onnx(model), cache=False)(x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.arctanh(x), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("op_type", FUNCTIONS)
def test_float16_is_numpys_float16_result_over_its_range(op_type):
    """f16 is computed in f32 and rounded once: the infinities, overflow
    (sinh of 12) and huge values (where f32's thresholds are inf in f16)
    give numpy's f16 results."""
    x = np.concatenate([np.linspace(-12, 12, 481), [np.inf, -np.inf, np.nan, 0.0, -0.0, 300.0,
                        -300.0, 65504.0, -65504.0, 0.999, -0.999]]).astype(np.float16)  # fmt: skip
    model = node_model(op_type, [("x", TensorProto.FLOAT16, [x.size])],
                       [("y", TensorProto.FLOAT16, [x.size])])  # fmt: skip
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    with np.errstate(all="ignore"):
        want = FUNCTIONS[op_type](x.astype(np.float64)).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    finite = np.isfinite(want) & (np.abs(x) < 1e4 if op_type == "Tan" else True)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-3, atol=1e-4)


def test_integer_input_is_a_located_error():
    model = node_model("Sinh", [("x", TensorProto.INT32, [3])], [("y", TensorProto.INT32, [3])])
    with pytest.raises(Exception, match="floating point only"):
        import_onnx(model)
