"""The process's thread pool (runtime/threadpool.ll): dynamic grains, the
caller waiting for work rather than threads, a busy pool falling back to
serial, helpers joined at exit and forgotten after fork, the default count
taken from the CPU affinity."""

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import graphcompiler

EXAMPLES = Path(__file__).parents[2] / "examples"
PARALLEL_TIR = Path(__file__).parents[1] / "Execution" / "parallel.mlir"

CHAIN = """
func.func @main(%x: tensor<512x1024xf32>, %w: tensor<1024x256xf32>) -> tensor<512x256xf32> {
  %y = graph.matmul %x, %w : (tensor<512x1024xf32>, tensor<1024x256xf32>) -> tensor<512x256xf32>
  %z = graph.relu %y : tensor<512x256xf32>
  %s = graph.softmax %z {axis = -1 : i64} : tensor<512x256xf32>
  func.return %s : tensor<512x256xf32>
}
"""


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((512, 1024), np.float32), rng.standard_normal(
        (1024, 256), np.float32
    )


def _expected(x, w):
    """In float64: the logits reach ~100, so a float32 sum of 1024 products
    moves a softmax output by ~1e-4 relative (more without FMA)."""
    z = np.maximum(x.astype(np.float64) @ w, 0)
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def chain():
    return graphcompiler.compile(CHAIN)


@pytest.mark.parametrize("threads", [1, 2, 3, 8, 64])
def test_any_thread_count_gives_the_same_result(chain, threads):
    """More threads than cores (oversubscription) and counts that do not
    divide the work: every grain runs exactly once."""
    x, w = _inputs()
    chain.set_num_threads(1)
    serial = chain(x, w)
    chain.set_num_threads(threads)
    for _ in range(5):
        np.testing.assert_array_equal(chain(x, w), serial)
    np.testing.assert_allclose(serial, _expected(x, w), rtol=1e-3, atol=1e-6)


def test_concurrent_calls_from_python_threads(chain):
    """Four Python threads calling compiled graphs at once: one owns the
    pool, the others run serially, all results right."""
    mlp = graphcompiler.compile(EXAMPLES / "mlp.mlir")
    mlp_inputs = [np.random.default_rng(i).standard_normal(t.get_shape()).astype(np.float32)
                  for i, t in enumerate(mlp.input_types)]  # fmt: skip
    mlp_expected = mlp(*mlp_inputs)
    chain.set_num_threads(2)
    x, w = _inputs(1)
    chain_expected = chain(x, w)
    failures = []

    def work(index):
        for _ in range(20):
            if index % 2:
                ok = np.array_equal(mlp(*mlp_inputs), mlp_expected)
            else:
                ok = np.array_equal(chain(x, w), chain_expected)
            if not ok:
                failures.append(index)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def _run(script: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_exit_right_after_a_parallel_call_is_clean():
    """Helpers still spinning (or not yet started) at exit are joined before
    the interpreter unloads their code: this used to end in SIGSEGV (libgomp
    unloaded by llvmlite's exit-time dlclose under OMP_WAIT_POLICY=active)."""
    script = f"""
        import numpy as np, graphcompiler
        c = graphcompiler.compile({str(EXAMPLES / "mlp.mlir")!r}, num_threads=2)
        args = [np.ones(t.get_shape(), np.float32) for t in c.input_types]
        for _ in range(3):
            c(*args)
    """
    for _ in range(4):
        result = _run(script, {"OMP_WAIT_POLICY": "active"})
        assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_parallel_code():
    script = f"""
        import os, numpy as np, graphcompiler
        c = graphcompiler.compile({str(EXAMPLES / "mlp.mlir")!r}, num_threads=2)
        args = [np.ones(t.get_shape(), np.float32) for t in c.input_types]
        expected = c(*args)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if np.array_equal(c(*args), expected) else 3)
        _, status = os.waitpid(pid, 0)
        raise SystemExit(os.waitstatus_to_exitcode(status))
    """
    result = _run(script)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_default_thread_count_is_the_affinity_mask():
    """Thread count 0 (the default) means the CPUs this process may use:
    pinned to one CPU, every iteration runs on the calling thread."""
    script = f"""
        import os
        os.sched_setaffinity(0, {{sorted(os.sched_getaffinity(0))[0]}})
        from graphcompiler.driver.program import TirProgram
        TirProgram({str(PARALLEL_TIR)!r}, num_threads=0)["main"]()
    """
    result = _run(script, {"GC_NUM_THREADS": "", "OMP_NUM_THREADS": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split() == ["0"] * 8


def test_gc_run_bench_from_the_repository_root():
    """`python -m graphcompiler.tools.gc_run ... --bench` run from the
    repository root (its statistics.py then shadows the standard library's)
    with OMP_WAIT_POLICY=active: exits cleanly every time."""
    root = Path(__file__).parents[2]
    for _ in range(3):
        result = subprocess.run(
            [sys.executable, "-m", "graphcompiler.tools.gc_run", "examples/mlp.mlir",
             "--random-inputs", "--bench", "5"],
            cwd=root, capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "OMP_WAIT_POLICY": "active"},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "bench: 5 calls, median" in result.stdout


def _softmax_transpose_chain(rounds: int) -> str:
    """rounds x (softmax, scale by 50, transpose): each kernel reads what the
    one before wrote, and the scale keeps the values apart."""
    t, u = "tensor<256x192xf32>", "tensor<192x256xf32>"
    lines = [f"func.func @main(%x: {t}) -> {t} {{"]
    lines.append("  %c = graph.constant dense<50.0> : tensor<f32>")
    value, shape = "%x", t
    for i in range(rounds):
        other = u if shape == t else t
        lines += [
            f"  %s{i} = graph.softmax {value} {{axis = -1 : i64}} : {shape}",
            f"  %m{i} = graph.mul %s{i}, %c : ({shape}, tensor<f32>) -> {shape}",
            f"  %t{i} = graph.transpose %m{i} {{perm = array<i64: 1, 0>}} : {shape} -> {other}",
        ]
        value, shape = f"%t{i}", other
    lines.append(f"  func.return {value} : {shape}\n}}")
    return "\n".join(lines)


def _softmax_transpose_expected(x, rounds):
    value = x.astype(np.float64)
    for _ in range(rounds):
        e = np.exp(value - value.max(-1, keepdims=True))
        value = (e / e.sum(-1, keepdims=True) * 50).T
    return value


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_parallel_region_runs_its_loops_in_order(threads):
    """40 kernels of one parallel loop each, every one reading what the one
    before wrote, run as one region (tir-parallel-regions): the queue fills
    at 32 loops and runs, then takes the rest; two Python threads calling at
    once each have their own queue."""
    rounds = 20
    compiled = graphcompiler.compile(_softmax_transpose_chain(rounds), num_threads=threads)
    main = compiled.tir[compiled.tir.index("tir.func @main") :]
    assert main.count("tir.call @") >= 2 * rounds
    assert "sc_region_begin" in compiled.llvm_ir
    x = np.random.default_rng(1).standard_normal((256, 192), np.float32)
    expected = _softmax_transpose_expected(x, rounds)
    results = {}

    def call(slot):
        results[slot] = [compiled(x) for _ in range(20)]

    workers = [threading.Thread(target=call, args=(slot,)) for slot in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 2
    for outputs in results.values():
        for output in outputs:
            np.testing.assert_allclose(output, expected, rtol=2e-4, atol=1e-5)


def test_the_pool_is_compiled_once_per_cache_directory(tmp_path):
    """A new process loads the pool's machine code that an earlier one
    compiled for this CPU, and runs parallel code with it."""
    script = textwrap.dedent(
        f"""
        import numpy as np, graphcompiler
        x = np.arange(512 * 1024, dtype=np.float32).reshape(512, 1024) % 7
        compiled = graphcompiler.compile({CHAIN!r}, num_threads=2, cache=False)
        w = np.ones((1024, 256), np.float32) / 1024
        y = x @ w
        e = np.exp(np.maximum(y, 0) - np.maximum(y, 0).max(-1, keepdims=True))
        np.testing.assert_allclose(compiled(x, w), e / e.sum(-1, keepdims=True), rtol=1e-4)
        """
    )
    environment = {**os.environ, "GC_CACHE_DIR": str(tmp_path)}
    environment.pop("GC_DISABLE_CACHE", None)
    for run in range(2):
        subprocess.run([sys.executable, "-c", script], env=environment, check=True)
        (pool,) = tmp_path.glob("threadpool-*.o")
        if run == 0:
            made = pool.stat().st_mtime_ns
    assert pool.stat().st_mtime_ns == made, "the second process compiled the pool again"


def test_machine_code_kept_by_key_is_built_once(monkeypatch, tmp_path):
    from graphcompiler.runtime.object_cache import cached_object

    monkeypatch.setenv("GC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GC_DISABLE_CACHE", raising=False)
    builds = []

    def build():
        builds.append(1)
        return b"machine code"

    assert cached_object("part", ["source", "cpu"], build) == b"machine code"
    assert cached_object("part", ["source", "cpu"], build) == b"machine code"
    assert len(builds) == 1
    cached_object("part", ["source", "other cpu"], build)
    assert len(builds) == 2
    for path in tmp_path.glob("part-*.o"):
        path.write_bytes(path.read_bytes()[:-3])  # damaged: built again
    assert cached_object("part", ["source", "cpu"], build) == b"machine code"
    assert len(builds) == 3
    monkeypatch.setenv("GC_DISABLE_CACHE", "1")
    cached_object("part", ["source", "cpu"], build)
    assert len(builds) == 4
