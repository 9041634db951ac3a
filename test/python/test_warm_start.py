"""A compile-cache hit for an ONNX file in a new process (driver/warm_start.py):
the file is found by its bytes' hash, the machine code and the mapped
weights are loaded without importing the compiler, xDSL or onnx, and an
edited model or a damaged weights file is compiled again."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.driver import compile_cache  # noqa: E402
from graphcompiler.driver.specializing import SpecializingGraph  # noqa: E402
from graphcompiler.runtime.object_cache import map_verified  # noqa: E402

WIDTH = 64  # a 64x64 f32 weight is 16 KiB: big enough to leave the machine code


def _write_model(path, weight: np.ndarray, batch: int | str) -> None:
    """y = relu(x @ w + 1), x of [batch, WIDTH] (`batch` a name: symbolic)."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "one"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, WIDTH])],
        [
            numpy_helper.from_array(weight, "w"),
            numpy_helper.from_array(np.ones(1, np.float32), "one"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path.write_bytes(model.SerializeToString())


def _weight(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((WIDTH, WIDTH)).astype(np.float32)


def _x(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, WIDTH)).astype(np.float32)


def _expected(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.maximum(x @ weight + 1, 0)


def _age(path) -> None:
    """Times an hour old, as a model exported earlier: its hash is remembered."""
    old = time.time() - 3600
    os.utime(path, (old, old))


WARM_PROCESS = """
import sys, numpy as np, graphcompiler
compiled = graphcompiler.compile(sys.argv[1], cache=sys.argv[2])
kinds = [type(compiled).__name__]
results = []
for batch in map(int, sys.argv[4:]):
    results.append(compiled(np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)))
    kinds.append(type(compiled.specialization({"x": (batch, 64)})).__name__
                 if kinds[0] == "SpecializingGraph" else str(compiled.cache_hit))
    kinds.append(",".join(m for m in ("xdsl", "onnx") if m in sys.modules) or "-")
print(" ".join(kinds))
np.savez(sys.argv[3], *results)
"""


def _new_process(tmp_path, model, batches) -> tuple[list[str], list[np.ndarray]]:
    """Compile `model` and call it for each batch size in a new process:
    what it reported (the graph's kind, then per call: the graph's kind or
    whether it hit, and which of xdsl and onnx were imported), its outputs."""
    done = subprocess.run(
        [sys.executable, "-c", WARM_PROCESS, str(model), str(tmp_path / "cache"),
         str(tmp_path / "out.npz"), *map(str, batches)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with np.load(tmp_path / "out.npz") as outputs:
        return done.stdout.split(), [outputs[f"arr_{i}"] for i in range(len(batches))]


def test_an_onnx_file_compiled_before_loads_without_the_compiler(tmp_path):
    model, weight = tmp_path / "dense.onnx", _weight(1)
    _write_model(model, weight, 4)
    first = graphcompiler.compile(model, cache=tmp_path / "cache")
    assert not first.cache_hit
    assert list((tmp_path / "cache").glob("*.data")), "the weights are not in a mapped file"
    report, (output,) = _new_process(tmp_path, model, [4])
    assert report == ["WarmGraph", "True", "-"]
    np.testing.assert_array_equal(output, first(_x(4)))
    np.testing.assert_allclose(output, _expected(_x(4), weight), rtol=1e-5, atol=1e-4)


def test_a_model_with_symbolic_dims_finds_its_compiled_shapes(tmp_path):
    """The dims and each specialization are remembered: a shape compiled
    before loads warm; a new one reads the model and compiles it."""
    model, weight = tmp_path / "dynamic.onnx", _weight(2)
    _write_model(model, weight, "batch")
    first = graphcompiler.compile(model, cache=tmp_path / "cache")
    assert isinstance(first, SpecializingGraph)
    expected = first(_x(3))
    report, outputs = _new_process(tmp_path, model, [3, 5])
    assert report == ["SpecializingGraph", "WarmGraph", "-", "CompiledGraph", "xdsl,onnx"]
    np.testing.assert_array_equal(outputs[0], expected)
    np.testing.assert_allclose(outputs[1], _expected(_x(5), weight), rtol=1e-5, atol=1e-4)
    report, _ = _new_process(tmp_path, model, [5])  # the new shape was remembered too
    assert report == ["SpecializingGraph", "WarmGraph", "-"]


def test_an_edited_model_is_compiled_again(tmp_path):
    """Same path, same size, times set back: the changed ctime makes the
    remembered hash stale, and the new bytes name another entry."""
    model = tmp_path / "dense.onnx"
    _write_model(model, _weight(1), 4)
    _age(model)
    graphcompiler.compile(model, cache=tmp_path / "cache")
    assert graphcompiler.compile(model, cache=tmp_path / "cache").cache_hit
    size = model.stat().st_size
    _write_model(model, _weight(2), 4)
    _age(model)
    assert model.stat().st_size == size
    again = graphcompiler.compile(model, cache=tmp_path / "cache")
    assert not again.cache_hit
    np.testing.assert_allclose(again(_x(4)), _expected(_x(4), _weight(2)), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("damage", ["zeroed block", "truncated", "memo"])
def test_a_damaged_weights_file_is_compiled_again(tmp_path, damage):
    """The weights file is hashed once per version of it: a write changes
    its identity, so the damage is found, and the file built again; a
    damaged memo only costs hashing again."""
    model, weight = tmp_path / "dense.onnx", _weight(3)
    _write_model(model, weight, 4)
    graphcompiler.compile(model, cache=tmp_path / "cache")
    compile_cache._memory.clear()  # as in a new process
    (data,) = (tmp_path / "cache").glob("*.data")
    content = data.read_bytes()
    if damage == "zeroed block":
        middle = len(content) // 2
        data.write_bytes(content[:middle] + bytes(512) + content[middle + 512 :])
    elif damage == "truncated":
        data.write_bytes(content[:-100])
    else:
        for memo in (tmp_path / "cache").glob("memo-*.json"):
            memo.write_bytes(b"{}")
    again = graphcompiler.compile(model, cache=tmp_path / "cache")
    assert again.cache_hit == (damage == "memo")
    np.testing.assert_allclose(again(_x(4)), _expected(_x(4), weight), rtol=1e-5, atol=1e-4)
    assert data.read_bytes() == content, "no good file replaced the damaged one"
    assert map_verified(data) is not None


def test_mapped_weights_are_bound_where_they_lie():
    """The cache's .data mapping is read-only and 64-byte aligned: a hit
    binds it without a copy. Other data is copied to an aligned buffer."""
    from graphcompiler.runtime.jit import shared_data

    raw = np.arange(4096 + 64, dtype=np.uint8)
    start = -raw.ctypes.data % shared_data.DATA_ALIGNMENT
    aligned = memoryview(raw[start : start + 4096]).toreadonly()
    shifted = memoryview(raw[start + 4 : start + 4100]).toreadonly()
    in_place, copied = shared_data.bind({"gc.test.in_place": aligned, "gc.test.shifted": shifted})
    assert np.shares_memory(in_place, raw)
    assert not np.shares_memory(copied, raw)
    assert copied.ctypes.data % shared_data.DATA_ALIGNMENT == 0
    np.testing.assert_array_equal(copied, raw[start + 4 : start + 4100])


def test_a_first_compile_binds_its_weights_from_the_written_file(tmp_path):
    """A cold compile with the cache on binds the .data file it wrote, mapped
    (read-only pages of the page cache), not its own bytes copied."""
    model, weight = tmp_path / "dense.onnx", _weight(6)
    _write_model(model, weight, 4)
    compiled = graphcompiler.compile(model, cache=tmp_path / "cache")
    (name, buffer), *_ = compiled.engine.external_data.items()
    assert name.startswith("gc.data.")
    assert not buffer.flags.writeable
    assert isinstance(buffer.base, memoryview) or isinstance(buffer.base.obj, mmap.mmap)
    np.testing.assert_allclose(compiled(_x(4)), _expected(_x(4), weight), rtol=1e-5, atol=1e-4)


def test_named_blobs_are_written_unhashed_and_checked_when_read(tmp_path, monkeypatch):
    """Blobs given with their content digests (the weights' names) are not
    hashed on writing; reading without the memo checks each against its
    digest, and a wrong one is damage."""
    from graphcompiler.runtime import object_cache
    from graphcompiler.runtime.content_digest import content_digest

    blobs = [np.random.default_rng(7).bytes(5000), b"tail"]
    digests = [content_digest(blob) for blob in blobs]
    hashed = []
    real = object_cache.content_digests
    monkeypatch.setattr(object_cache, "content_digests", lambda b: hashed.append(b) or real(b))
    path = tmp_path / "blobs.data"
    offsets = object_cache.write_mapped(path, blobs, digests)
    assert hashed == [[]]
    for memo in tmp_path.glob("memo-*.json"):
        memo.unlink()
    payload = object_cache.map_verified(path)
    assert [bytes(payload[o : o + len(b)]) for o, b in zip(offsets, blobs, strict=True)] == blobs
    assert len(hashed) == 2  # the read checked the blobs
    wrong = tmp_path / "wrong.data"
    object_cache.write_mapped(wrong, blobs, [digests[1], digests[0]])
    for memo in tmp_path.glob("memo-*.json"):
        memo.unlink()
    assert object_cache.map_verified(wrong) is None
    assert not wrong.exists()


def test_the_compiler_fingerprint_walks_only_the_package_sources(monkeypatch):
    """A hit computes it first: hidden folders (.git, a .venv), caches and
    the tests are not even listed."""
    listed = []
    scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: listed.append(str(path)) or scandir(path))
    compile_cache.compiler_fingerprint.cache_clear()
    fingerprint = compile_cache.compiler_fingerprint()
    assert fingerprint == compile_cache.compiler_fingerprint()
    assert any(path.endswith("driver") for path in listed)
    skipped = [p for p in listed if "/." in p or "__pycache__" in p or p.endswith("/test")]
    assert not skipped


def test_a_compile_that_read_its_file_keys_the_entry_by_the_file(tmp_path, monkeypatch):
    """The source alias (the file's hash, entry, input shapes) keys the cache
    entry: the imported module is neither printed nor its weights hashed for
    a key. A module given as such still gets the module's key."""
    from graphcompiler.driver.loading import load_module
    from graphcompiler.driver.warm_start import SourceAlias

    path = tmp_path / "dense.onnx"
    _write_model(path, _weight(0), 3)
    cache = tmp_path / "cache"
    hashed = []
    real_key = compile_cache.cache_key
    monkeypatch.setattr(
        compile_cache, "cache_key", lambda *args: hashed.append(1) or real_key(*args)
    )
    compiled = graphcompiler.compile(path, cache=cache)
    assert compiled.cache_key == SourceAlias.of(path, "main", None, None, cache).key
    assert not hashed
    module_compiled = graphcompiler.compile(load_module(path), cache=cache)
    assert hashed and module_compiled.cache_key != compiled.cache_key
    np.testing.assert_array_equal(module_compiled(_x(3)), compiled(_x(3)))


def test_a_new_file_is_hashed_beside_its_compile(tmp_path, monkeypatch):
    """No entry can be keyed by a file never hashed into the cache, so its
    compile starts at once and the digest is taken in a thread meanwhile.
    The next compile finds the entry, and so does a copy of the file under
    another path: its sampled blocks say it may be known, so it is hashed first."""
    from graphcompiler.driver import warm_start

    model, cache = tmp_path / "dense.onnx", tmp_path / "cache"
    _write_model(model, _weight(3), 4)
    _age(model)
    deferred = []
    real_soon = warm_start.file_digest_soon
    monkeypatch.setattr(
        warm_start, "file_digest_soon", lambda *args: deferred.append(args) or real_soon(*args)
    )
    first = graphcompiler.compile(model, cache=cache)
    assert deferred and not first.cache_hit and first.cache_key
    again = graphcompiler.compile(model, cache=cache)
    assert again.cache_hit
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(model.read_bytes())
    _age(copy)
    deferred.clear()
    copied = graphcompiler.compile(copy, cache=cache)
    assert copied.cache_hit and not deferred
    np.testing.assert_array_equal(copied(_x(4)), first(_x(4)))


def test_a_file_rewritten_while_hashed_beside_its_compile_keys_nothing(tmp_path):
    from concurrent.futures import Future

    from graphcompiler.driver.warm_start import SourceAlias

    model, cache = tmp_path / "dense.onnx", tmp_path / "cache"
    _write_model(model, _weight(4), 4)
    alias = SourceAlias.of(model, "main", None, None, cache)
    assert isinstance(alias.given_identity, Future)
    _write_model(model, _weight(5), 4)  # during the compile
    _age(model)
    assert alias.key_when_hashed() is None
    assert not alias.unchanged()


PICKLE_PROCESS = """
import pickle, sys, numpy as np, graphcompiler
compiled = graphcompiler.compile(sys.argv[1], cache=sys.argv[2])
x = np.random.default_rng(4).standard_normal((4, 64)).astype(np.float32)
again = pickle.loads(pickle.dumps(compiled))
print(type(compiled).__name__, type(again).__name__, np.array_equal(again(x), compiled(x)))
"""


def test_a_warm_graph_pickles_to_its_artifact(tmp_path):
    """What a cache hit returns pickles as a compiled graph does (its
    default pickling took the engine's ctypes handles, and failed)."""
    from graphcompiler.driver.artifact import c_compiler
    from graphcompiler.runtime.artifact import ArtifactError

    try:
        c_compiler()
    except ArtifactError:
        pytest.skip("pickling builds an artifact, which needs a C compiler")
    model = tmp_path / "dense.onnx"
    _write_model(model, _weight(3), 4)
    graphcompiler.compile(model, cache=tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-c", PICKLE_PROCESS, str(model), str(tmp_path / "cache")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["WarmGraph", "LoadedGraph", "True"]
