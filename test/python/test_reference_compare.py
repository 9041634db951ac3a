"""`reference.compare_to_reference`, what `gc-run --check-reference` decides
with: NaN and inf must sit in the same places (a plain difference is NaN
there), the tolerance comes from the finite reference values only, and
integers are compared in float64 (|INT_MIN| overflows in its own type)."""

import math

import numpy as np
import pytest

from graphcompiler.interpreters.reference import compare_to_reference
from graphcompiler.tools import gc_run

ATOL, RTOL = 1e-5, 1e-4
NAN, INF = math.nan, math.inf


def compare(got, want, dtype=np.float32):
    return compare_to_reference(np.array(got, dtype), np.array(want, dtype), ATOL, RTOL)


def test_nan_in_the_same_places_matches():
    assert compare([NAN, 1.0, NAN], [NAN, 1.0, NAN]) == (True, 0.0)


@pytest.mark.parametrize(("got", "want"), [([NAN, 1.0], [0.0, 1.0]), ([0.0, 1.0], [NAN, 1.0])])
def test_nan_in_one_only_is_a_mismatch(got, want):
    # the error is reported over the finite places, not as NaN
    assert compare(got, want) == (False, 0.0)


def test_inf_matches_the_same_inf():
    assert compare([INF, -INF, 2.0], [INF, -INF, 2.0]) == (True, 0.0)


def test_inf_of_the_other_sign_is_a_mismatch():
    assert compare([INF, 2.0], [-INF, 2.0]) == (False, 0.0)


@pytest.mark.parametrize(("got", "want"), [([0.0, 2.0], [INF, 2.0]), ([INF, 2.0], [0.0, 2.0])])
def test_inf_against_a_finite_value_is_a_mismatch(got, want):
    assert compare(got, want) == (False, 0.0)


def test_a_reference_inf_leaves_the_tolerance_finite():
    # the bound is atol + rtol * 1 from the finite values, not infinite
    assert compare([INF, 5.0], [INF, 1.0]) == (False, 4.0)
    assert compare([INF, 1.0 + 1e-3], [INF, 1.0]) == (False, pytest.approx(1e-3, rel=1e-3))
    assert compare([INF, 1.0 + 1e-5], [INF, 1.0])[0]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integers_holding_their_minimum_compare_in_float64(dtype):
    low = np.iinfo(dtype).min
    assert compare([low, 7], [low, 7], dtype) == (True, 0.0)
    assert compare([low, 8], [low, 7], dtype) == (True, 1.0)  # within rtol * |low|
    beyond = int(-low * RTOL * 2)
    assert compare([low, 7 + beyond], [low, 7], dtype) == (False, float(beyond))


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_empty_outputs_match(shape):
    assert compare_to_reference(np.zeros(shape), np.zeros(shape), ATOL, RTOL) == (True, 0.0)


def test_a_shape_difference_is_a_mismatch():
    assert compare([1.0, 2.0], [1.0, 2.0, 3.0])[0] is False


SPECIALS = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<2xi32>, %j: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %0 = graph.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.add %i, %j : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %0, %1 : tensor<4xf32>, tensor<2xi32>
}
"""


def test_gc_run_check_reference_accepts_nan_inf_and_int_min(tmp_path, capsys):
    (tmp_path / "specials.mlir").write_text(SPECIALS)
    inputs = {
        "a": np.array([0, 1, -1, 6], np.float32),
        "b": np.array([0, 0, 0, 3], np.float32),  # 0/0, 1/0, -1/0, 6/3: NaN, inf, -inf, 2
        "i": np.array([np.iinfo(np.int32).min, 5], np.int32),
        "j": np.zeros(2, np.int32),
    }
    flags = []
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        flags += ["--input", f"{name}={tmp_path / name}.npy"]
    assert gc_run.main([str(tmp_path / "specials.mlir"), *flags, "--check-reference"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "output #0: matches the reference (max abs error 0)",
        "output #1: matches the reference (max abs error 0)",
    ]
