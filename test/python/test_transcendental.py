"""f32 exp, log, tanh (and sigmoid, tanh-gelu built on them) are expanded
inline by tir-expand-math, so vector loops stay vectors: compiled graphs
against float64 numpy on dense grids of the hard ranges (denormals, near 1
for log, near 0 and the polynomial/exp switch for tanh, overflow and
underflow for exp) and on special values, at every target the host runs.
"""

import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]

SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-40, 1.1754944e-38,
     3.4028235e38, -3.4028235e38, 0.625, -0.625, 44.0, -45.0, 88.7, 88.72283, 88.73, -87.5,
     -100.0, -103.9, -104.0, -110.0, 2.0**-20],
    np.float32,
)  # fmt: skip


def _grid(*parts) -> np.ndarray:
    return np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(np.float32)


GRIDS = {
    "log": _grid(
        np.geomspace(1.4e-45, 3.4e38, 200_001),  # every binade, denormals included
        np.linspace(0.5, 2.0, 100_001),
        np.linspace(1 - 1e-3, 1 + 1e-3, 20_001),  # near 1: relative accuracy near 0
    ),
    "tanh": _grid(
        np.linspace(-10, 10, 200_001),
        np.geomspace(1e-40, 1.0, 50_001),  # tiny: odd polynomial keeps relative accuracy
        -np.geomspace(1e-40, 1.0, 50_001),
        np.linspace(0.6, 0.65, 20_001),  # the polynomial / exp switch at 0.625
        np.geomspace(10, 1e30, 1_001),
    ),
    "exp": _grid(np.linspace(-104, 89, 200_001), np.linspace(-1e-3, 1e-3, 20_001)),
    "sigmoid": _grid(np.linspace(-110, 110, 200_001), np.linspace(-1e-3, 1e-3, 20_001)),
    "gelu": _grid(np.linspace(-12, 12, 200_001), np.geomspace(1e-30, 1e3, 20_001)),
}

MAX_ULPS = {"log": 1.0, "tanh": 1.5, "exp": 1.5}
"""Measured: log 0.83 ulp, tanh 1.3 ulp, exp 0.87 ulp with FMA and 1.13 without (see passes/tir/expand_math.py)."""


def _reference(name: str, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        if name == "gelu":
            return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))
        return getattr(np, name)(x)


def _compile(name: str, size: int):
    t = f"tensor<{size}xf32>"
    attributes = ' {approximate = "tanh"}' if name == "gelu" else ""
    text = (
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f"  %0 = graph.{name} %x{attributes} : {t}\n  func.return %0 : {t}\n}}"
    )
    return graphcompiler.compile(text)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["log", "tanh", "exp", "sigmoid", "gelu"])
def test_accuracy_on_hard_ranges(monkeypatch, target, name):
    monkeypatch.setenv("GC_TARGET", target)
    x = GRIDS[name]
    compiled = _compile(name, x.size)
    assert not re.search(r'@"?llvm\.(exp|log|tanh)\.', compiled.llvm_ir)  # no libm call per lane
    got = compiled(x).astype(np.float64)
    expected = _reference(name, x)
    with np.errstate(over="ignore"):
        overflow = np.isinf(expected.astype(np.float32))
    assert np.all(got[overflow] == np.inf)  # exp beyond ln(FLT_MAX)
    got, expected, x = got[~overflow], expected[~overflow], x[~overflow]
    error = np.abs(got - expected)
    if name in MAX_ULPS:
        ulp = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
        # exp's denormal results: within an ulp of the smallest denormal
        ulp = np.maximum(ulp, 2.0**-149)
        assert np.max(error / ulp) <= MAX_ULPS[name]
    elif name == "sigmoid":  # 1 / (1 + exp(-x)): three roundings
        assert np.max(error / np.maximum(expected, 1e-30)) <= 2.5e-7
    else:  # gelu: 1 + tanh cancels for negative x; error relative to |x|
        assert np.max(error / np.maximum(np.abs(x), 1.0)) <= 1.5e-7


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["log", "tanh", "exp", "sigmoid", "gelu"])
def test_special_values_as_numpy(monkeypatch, target, name):
    monkeypatch.setenv("GC_TARGET", target)
    got = _compile(name, SPECIAL.size)(SPECIAL)
    with np.errstate(over="ignore"):
        expected = _reference(name, SPECIAL).astype(np.float32)
    np.testing.assert_allclose(got, expected, rtol=3e-7, atol=0)  # NaN == NaN, inf == inf
    exact = ~np.isfinite(expected) | (expected == 0) | (np.abs(expected) == 1)
    np.testing.assert_array_equal(got[exact], expected[exact])
    zeros = expected == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


def test_vector_and_scalar_tail_agree():
    """17 elements: one 16-lane vector (or several narrower ones) and a
    scalar tail go through the same expansions."""
    x = np.linspace(0.1, 5.0, 17).astype(np.float32)
    for name in ("log", "tanh", "exp"):
        got = _compile(name, 17)(x)
        np.testing.assert_allclose(got, _reference(name, x), rtol=2e-7, atol=0)
