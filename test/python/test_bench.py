"""The benchmark suite runs end to end on its tiny smoke workload.

`python -m bench` runs from the repository root in a subprocess, as its
users run it (the root is the graphcompiler package, so importing bench in
this process would put the root's modules on sys.path).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "bench", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_smoke_run_writes_every_field(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    path = tmp_path / "results.json"
    run = _bench(
        "--quick", "--seconds", "0.05", "--only", "smoke", "--threads", "1", "--json", str(path)
    )
    assert run.returncode == 0, run.stderr
    assert "smoke" in run.stdout and "ours/ort" in run.stdout
    assert "(1/1)" in run.stderr  # progress goes to stderr
    document = json.loads(path.read_text())
    assert {"host", "settings", "peaks", "rows"} <= document.keys()
    peaks = document["peaks"]
    assert peaks["fma_gflops"]["8"]["1"] > 0 and peaks["copy_gbs"]["1"] > 0
    [row] = document["rows"]
    assert (
        row["workload"] == "smoke"
        and row["threads"] == 1
        and row["flops"] == 2 * 8 * 32 * (16 + 16)
    )
    assert row["compile_s"] > 0 and row["ours_over_onnxruntime"] > 0 and row["ours_over_numpy"] > 0
    for engine in ("ours", "numpy", "onnxruntime"):
        result = row["engines"][engine]
        assert result["status"] == "ok", result
        assert result["min_ms"] <= result["median_ms"] and result["runs"] >= 2
        assert result["gflops"] > 0 and result["percent_of_peak"] > 0


def test_unknown_workload_is_a_clear_error():
    run = _bench("--only", "no_such_workload")
    assert run.returncode != 0
    assert "--only 'no_such_workload' matches no workload" in run.stderr
    assert "Traceback" not in run.stderr


def test_mismatch_and_nan_are_reported_not_raised():
    code = (
        "import numpy as np; from bench.runner import check\n"
        "want = np.ones((2, 2))\n"
        "print(check(want + 1e-6, want, 1e-4)['status'], check(want + 1, want, 1e-4)['status'],"
        " check(np.full((2, 2), np.nan), want, 1e-4)['status'], check(np.ones(3), want, 1)['message'])"
    )
    run = _bench(code=code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().split(maxsplit=3) == [
        "ok",
        "mismatch",
        "mismatch",
        "shape (3,), expected (2, 2)",
    ]


def test_engines_are_timed_in_turns_and_ratios_pair_the_turns():
    """A burst of load falls on every engine's blocks, not on one engine's
    whole time box: the engines alternate block by block (who goes first
    rotates), and a ratio is the median of the rounds' ratios."""
    code = (
        "from bench.runner import measure_side_by_side, paired_ratio\n"
        "order = []\n"
        "calls = {name: (lambda name=name: order.append(name)) for name in 'ab'}\n"
        "timed = measure_side_by_side(calls, 0.0, 3, pause=0.0, rounds=3)\n"
        "print(''.join(order))\n"
        "print(len(timed['a']['round_ms']), timed['a']['runs'], timed['b']['runs'])\n"
        "ours = {'round_ms': [1.0, 2.0, 9.0], 'median_ms': 2.0}\n"
        "other = {'round_ms': [1.0, 1.0, 3.0], 'median_ms': 1.0}\n"
        "print(paired_ratio(ours, other), paired_ratio({'median_ms': 3.0}, other))\n"
        "from bench.runner import rounds_for\n"
        "print(rounds_for(0.2), rounds_for(4.0))\n"
    )
    run = _bench(code=code)
    assert run.returncode == 0, run.stderr
    order, counts, ratios, rounds = run.stdout.splitlines()
    assert order == "ab" + "ab" + "ba" + "ab"  # warm-ups, then rounds starting a, b, a
    assert counts == "3 3 3"  # a block per round, min_runs spread over the rounds
    assert ratios == "2.0 3.0"  # median of 1, 2, 3; without blocks, the medians' ratio
    assert rounds == "5 16"  # blocks of 0.25 s, 5 at least


def test_models_mode_selects_the_unnamed_architectures_by_exact_name_only():
    code = (
        "from bench.models import select\n"
        "print(','.join(select(None)))\n"
        "print(','.join(select('resnet,regnet')))\n"
        "print(','.join(select('net')))\n"
    )
    run = _bench(code=code)
    assert run.returncode == 0, run.stderr
    default, named, substring = run.stdout.splitlines()
    assert "regnet" not in default.split(",") and "resnet" in default.split(",")
    assert named == "resnet,regnet"  # "resnet" is ResNet-50 alone; regnet by its name
    assert substring == "resnet,resnet18,mobilenet_v2,efficientnet"  # MODELS only
