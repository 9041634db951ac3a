"""A damaged compile-cache file is never used: every kind (the thread
pool's object, an entry's JSON and .npz, a source alias), zeroed in part,
bit-flipped, cut short, emptied, random or another file copied over it,
is found by its hash in a new process, deleted and built again, and the
process runs correctly (a zeroed block of the pool's object used to crash
every later process; a cut .npz raised BadZipFile from compile())."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from graphcompiler.runtime.object_cache import read_verified

GRAPH = """
func.func @main(%x: tensor<4x64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {
  %0 = graph.add %x, %b : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %1 = graph.relu %0 : tensor<4x64xf32>
  func.return %1 : tensor<4x64xf32>
}
"""

OTHER = GRAPH.replace("  %1 = graph.relu %0 : tensor<4x64xf32>\n", "").replace("%1 :", "%0 :")
"""Another graph of the same signature (no relu): its files, copied over
the first one's, would give wrong results if they were used."""

PROCESS = """
import sys, numpy as np, graphcompiler
compiled = graphcompiler.compile(sys.argv[1])
np.save(sys.argv[3], compiled(*np.load(sys.argv[2]).values()))
"""

KINDS = {
    "pool object": "threadpool-*.o",
    "entry json": "[0-9a-f]*.json",
    "entry npz": "*.npz",
    "source alias": "source-*.json",
}


def _zeroed(data: bytes, other: bytes) -> bytes:
    """512 bytes in the middle zeroed, the length kept (all of a smaller file)."""
    start = max(0, len(data) // 2 - 256)
    return data[:start] + bytes(len(data[start : start + 512])) + data[start + 512 :]


def _flipped(data: bytes, other: bytes) -> bytes:
    """The low bit of 16 letters or digits spread past the headers: they
    stay letters or digits, so that a JSON file still parses."""
    damaged = bytearray(data)
    kept = b"bcdefghijklmnopqrstuvwxyBCDEFGHIJKLMNOPQRSTUVWXY0123456789"
    for start in np.linspace(64, len(data) - 1, 16).astype(int):
        position = next((i for i in range(start, len(data)) if data[i] in kept), None)
        if position is not None:
            damaged[position] ^= 1
    return bytes(damaged)


DAMAGES = {
    "zeroed block": _zeroed,
    "flipped bits": _flipped,
    "truncated": lambda data, other: data[: len(data) // 2],
    "empty": lambda data, other: b"",
    "random": lambda data, other: np.random.default_rng(0).bytes(len(data)),
    "foreign": lambda data, other: other,
}


def _environment(cache):
    environment = {**os.environ, "GC_CACHE_DIR": str(cache)}
    environment.pop("GC_DISABLE_CACHE", None)  # conftest turns it off for the tests
    return environment


def _run(work, cache, graph="graph.mlir"):
    """The graph compiled and called in a new process; its output."""
    done = subprocess.run(
        [sys.executable, "-c", PROCESS, str(work / graph), str(work / "inputs.npz"),
         str(work / "out.npy")],
        env=_environment(cache), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return np.load(work / "out.npy")


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache holding both graphs, and for each kind the first graph's
    file and the file copied over it as 'foreign' (the other graph's file
    of that kind; for the one pool object, the other graph's .npz)."""
    work = tmp_path_factory.mktemp("damage")
    (work / "graph.mlir").write_text(GRAPH)
    (work / "other.mlir").write_text(OTHER)
    rng = np.random.default_rng(1)
    np.savez(work / "inputs.npz", x=rng.standard_normal((4, 64), np.float32),
             b=rng.standard_normal(64, np.float32))  # fmt: skip
    cache = work / "cache"
    _run(work, cache)
    files = {kind: _only(cache, pattern) for kind, pattern in KINDS.items()}
    _run(work, cache, "other.mlir")
    others = {
        kind: _only(cache, pattern, besides=files[kind]) for kind, pattern in KINDS.items()
        if kind != "pool object"
    }  # fmt: skip
    others["pool object"] = others["entry npz"]
    return work, cache, files, others


def _only(cache, pattern, besides=None):
    (path,) = [path for path in cache.glob(pattern) if path != besides]
    return path


def _expected(work):
    inputs = np.load(work / "inputs.npz")
    return np.maximum(inputs["x"] + inputs["b"], 0)


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_cache_file_is_built_again(warm, tmp_path, kind, damage):
    work, warm_cache, files, others = warm
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    path = cache / files[kind].name
    damaged = DAMAGES[damage](path.read_bytes(), others[kind].read_bytes())
    path.write_bytes(damaged)
    np.testing.assert_array_equal(_run(work, cache), _expected(work))
    assert path.read_bytes() != damaged, "the damaged file was kept"
    assert read_verified(path) is not None, "no good file replaced it"


@pytest.mark.parametrize("damage", ["zeroed block", "flipped bits"])
def test_gc_run_survives_a_damaged_pool_object(warm, tmp_path, damage):
    """The issue's case: gc-run died (SIGSEGV, or LLVM's abort) after it."""
    work, warm_cache, files, others = warm
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    path = cache / files["pool object"].name
    path.write_bytes(DAMAGES[damage](path.read_bytes(), b""))
    done = subprocess.run(
        [shutil.which("gc-run") or "gc-run", str(work / "graph.mlir"), "--random-inputs"],
        env=_environment(cache), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert read_verified(path) is not None
