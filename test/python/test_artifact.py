"""Ahead-of-time artifacts (driver/artifact.py, runtime/artifact.py): saved
graphs run without the compiler, bit for bit as the compiled graph; they
pickle to their bytes; C calls them; bad files are clear errors."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver import artifact as builder
from graphcompiler.runtime.artifact import ArtifactError, LoadedGraph, load
from graphcompiler.tools import gc_translate

MODELS = Path(__file__).resolve().parents[1] / "models"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

try:
    builder.c_compiler()
    HAVE_CC = True
except ArtifactError:
    HAVE_CC = False
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="saving an artifact needs a C compiler")

MIXED = """
func.func @main(%x: tensor<4x8xf32>, %h: tensor<8xbf16>, %n: tensor<i64>) -> (tensor<4x8xf32>, tensor<8xbf16>, tensor<i64>, tensor<4xf32>) {
  %w = graph.constant dense<0.5> : tensor<8x8xf32>
  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e = graph.exp %h : tensor<8xbf16>
  %m = graph.add %n, %n : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %s = graph.reduce_sum %y {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  func.return %y, %e, %m, %s : tensor<4x8xf32>, tensor<8xbf16>, tensor<i64>, tensor<4xf32>
}
"""


def _mixed_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((4, 8), dtype=np.float32),
        "h": rng.standard_normal(8, dtype=np.float32),
        "n": np.array(21, np.int64),
    }


def _suite_model(name: str) -> tuple[Path, dict[str, np.ndarray]]:
    data = np.load(MODELS / f"{name}.npz")
    return MODELS / f"{name}.onnx", {k: data[k] for k in data.files if not k.startswith("output")}


def _same(a, b) -> bool:
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
        for x, y in zip(a, b, strict=True)
    )


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    """The suite's ResNet saved, with its compiled graph and inputs."""
    path, inputs = _suite_model("resnet_torchscript_static")
    compiled = graphcompiler.compile(path, cache=False)
    saved = compiled.save(tmp_path_factory.mktemp("resnet") / "resnet.so")
    return compiled, saved, inputs


def test_saved_model_equals_the_compiled_graph_bit_for_bit(resnet):
    compiled, saved, inputs = resnet
    loaded = load(saved)
    assert _same(loaded(**inputs), compiled(**inputs))
    assert _same(loaded(*inputs.values()), compiled(**inputs))
    assert saved.with_suffix(".h").read_text().count(" *   outputs[") == 2


def test_bf16_rank0_named_inputs_and_out(tmp_path):
    compiled = graphcompiler.compile(MIXED, cache=False)
    loaded = load(compiled.save(tmp_path / "mixed.so"))
    inputs = _mixed_inputs()
    want = compiled(**inputs)
    assert _same(loaded(**inputs), want)
    assert _same(loaded(inputs["x"], inputs["h"], n=inputs["n"]), want)
    out = (np.empty((4, 8), np.float32), np.empty(8, np.float32), np.empty((), np.int64),
           np.empty(4, np.float32))  # fmt: skip
    assert loaded(**inputs, out=out)[0] is out[0]
    assert _same(out, want)
    with pytest.raises(ValueError, match="input 'x' of @main has dtype float64, expected float32"):
        loaded(**{**inputs, "x": inputs["x"].astype(np.float64)})
    with pytest.raises(ValueError, match=r"has shape \[3, 8\], expected \[4, 8\]"):
        loaded(**{**inputs, "x": inputs["x"][:3]})
    with pytest.raises(ValueError, match="has no input 'y'"):
        loaded(**inputs, y=inputs["x"])
    with pytest.raises(ValueError, match="takes 3 inputs, got 2"):
        loaded(inputs["x"], inputs["h"])


def test_threads_and_errors_of_set_num_threads(resnet):
    compiled, saved, inputs = resnet
    loaded = load(saved)
    for count in (1, 2, 0):
        loaded.set_num_threads(count)
        assert _same(loaded(**inputs), compiled(**inputs))
    with pytest.raises(ValueError, match="from 1 to 4096"):
        loaded.set_num_threads(-1)


def _run_loaded(graph: LoadedGraph, inputs: dict) -> tuple:
    result = graph(**inputs)
    return result if isinstance(result, tuple) else (result,)


def test_compiled_and_loaded_graphs_pickle_to_their_artifact(resnet):
    compiled, saved, inputs = resnet
    want = compiled(**inputs)
    unpickled = pickle.loads(pickle.dumps(compiled))
    assert isinstance(unpickled, LoadedGraph) and _same(unpickled(**inputs), want)
    again = pickle.loads(pickle.dumps(load(saved)))
    assert again.to_bytes() == saved.read_bytes() and _same(again(**inputs), want)
    # a fresh process (spawn: nothing inherited) runs it without compiling
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        results = pool.submit(_run_loaded, compiled, inputs).result(timeout=120)
    assert _same(results if len(results) > 1 else results[0], want)


def test_loader_needs_only_numpy(resnet, tmp_path):
    """In a process whose path has numpy and graphcompiler only (no xDSL,
    no llvmlite, no onnx), an artifact loads and runs."""
    _, saved, inputs = resnet
    site = tmp_path / "site"
    site.mkdir()
    (site / "graphcompiler").symlink_to(Path(graphcompiler.__file__).parent)
    numpy_dir = Path(np.__file__).parent
    for entry in numpy_dir.parent.iterdir():  # numpy and its bundled libraries
        if entry.name == "numpy" or entry.name.startswith("numpy.libs"):
            (site / entry.name).symlink_to(entry)
    np.savez(tmp_path / "inputs.npz", **inputs)
    script = textwrap.dedent(f"""
        import sys
        sys.path[:] = [{str(site)!r}] + [p for p in sys.path if "site-packages" not in p]
        import numpy as np
        from graphcompiler.runtime import load
        graph = load({str(saved)!r})
        data = np.load({str(tmp_path / "inputs.npz")!r})
        outputs = graph(**{{k: data[k] for k in data.files}})
        np.savez({str(tmp_path / "outputs.npz")!r}, *outputs)
        for name in ("xdsl", "llvmlite", "onnx"):
            assert name not in sys.modules, name
            try:
                __import__(name)
            except ImportError:
                pass
            else:
                raise AssertionError(name + " is importable")
        """)
    run = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "outputs.npz")
    compiled = resnet[0](**inputs)
    assert _same(tuple(got[f"arr_{i}"] for i in range(len(compiled))), compiled)


def test_c_example_matches_python(resnet, tmp_path):
    compiled, _, inputs = resnet
    library = tmp_path / "model.so"
    assert gc_translate.main([str(MODELS / "resnet_torchscript_static.onnx"), "--emit-shared",
                              "-o", str(library)]) == 0  # fmt: skip
    source = EXAMPLES / "c" / "run_model.c"
    program = tmp_path / "run_model"
    subprocess.run([builder.c_compiler(), "-O2", "-Wall", "-Werror", f"-I{tmp_path}", str(source),
                    str(library), "-Wl,-rpath,$ORIGIN", "-o", str(program)], check=True)  # fmt: skip
    names = [tmp_path / f"in{i}.bin" for i in range(len(inputs))]
    for array, name in zip(inputs.values(), names, strict=True):
        array.tofile(name)
    outputs = [tmp_path / f"out{i}.bin" for i in range(2)]
    subprocess.run([str(program), *map(str, names), *map(str, outputs)], check=True,
                   env={**os.environ, "GC_NUM_THREADS": "2"})  # fmt: skip
    want = compiled(**inputs)
    for path, array in zip(outputs, want, strict=True):
        assert np.array_equal(np.fromfile(path, array.dtype).reshape(array.shape), array)


def test_bad_files_are_clear_errors(resnet, tmp_path):
    _, saved, _ = resnet
    data = saved.read_bytes()
    text = tmp_path / "notes.so"
    text.write_text("not a library")
    with pytest.raises(ArtifactError, match="not a graphcompiler artifact"):
        load(text)
    truncated = tmp_path / "truncated.so"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError, match="truncated"):
        load(truncated)
    damaged = tmp_path / "damaged.so"
    damaged.write_bytes(data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:])
    with pytest.raises(ArtifactError, match="checksum mismatch"):
        load(damaged)
    foreign = tmp_path / "foreign.so"
    shutil.copyfile(next(Path(np.__file__).parent.rglob("*.so")), foreign)  # numpy's own
    with pytest.raises(ArtifactError, match="library graphcompiler did not save"):
        load(foreign)
    with pytest.raises(ArtifactError, match="cannot read"):
        load(tmp_path / "missing.so")


def test_artifact_for_missing_cpu_features_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(builder, "_required_flags", lambda: ["fpu", "gc_imaginary_isa"])
    compiled = graphcompiler.compile(MIXED, cache=False)
    saved = compiled.save(tmp_path / "future.so")
    with pytest.raises(ArtifactError, match="this CPU lacks gc_imaginary_isa, which the artifact"):
        load(saved)


def test_saving_without_a_c_compiler_is_a_clear_error(tmp_path, monkeypatch):
    compiled = graphcompiler.compile(MIXED, cache=False)
    monkeypatch.setenv("CC", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ArtifactError, match="needs a C compiler"):
        compiled.save(tmp_path / "x.so")


def test_required_cpu_flags_follow_cpuinfo_names():
    host = {"avx2", "fma", "sse4_2", "avx512_bf16", "bmi1"}
    features = "+avx2,+fma,-avx512f,+sse4.2,+avx512bf16,+bmi,+cx8"
    assert builder.required_cpu_flags(features, host) == [
        "avx2", "avx512_bf16", "bmi1", "fma", "sse4_2"
    ]  # fmt: skip
