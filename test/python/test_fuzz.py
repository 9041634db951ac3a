"""The fuzzing harness (test/fuzz): a fixed-seed sample of mutants must give
only successes and located diagnostics; every corpus reproducer too; and the
harness itself classifies crashes, hangs and memory blow-ups."""

from __future__ import annotations

import time

import pytest

from graphcompiler.test.fuzz import campaign, mutate
from graphcompiler.test.fuzz.minimize import minimize
from graphcompiler.test.fuzz.oracle import (
    CRASH,
    DIAGNOSTIC,
    HANG,
    SUCCESS,
    TRACEBACK,
    Case,
)
from graphcompiler.test.fuzz.pool import Pool

SAMPLE_SIZE = 500
FAULTS = "graphcompiler.test.fuzz.faults"


@pytest.fixture(scope="module")
def pool():
    with Pool(workers=1, timeout=10.0) as pool:
        yield pool


def test_fixed_sample_of_mutants_fails_cleanly():
    """The CI sample: no crash, hang, traceback or internal error."""
    start = time.monotonic()
    report = campaign.run_sample(SAMPLE_SIZE, seed=0, workers=2, timeout=30.0)
    print(f"\n{report.summary()}\n({time.monotonic() - start:.1f} s)")
    assert sum(report.counts.values()) == SAMPLE_SIZE
    problems = [
        f"{outcome.describe()[:300]}\n  from {origin}\n{case.text}"
        for case, origin, outcome in report.failures.values()
    ]
    assert not problems, f"{len(problems)} distinct failures:\n\n" + "\n\n".join(problems)


@pytest.mark.parametrize("path", campaign.corpus_files(), ids=lambda path: path.stem)
def test_corpus_reproducer_fails_cleanly(pool, path):
    """Each minimized past failure now succeeds or gives a located diagnostic."""
    outcome = pool.run_case(campaign.read_corpus_case(path))
    assert outcome.kind in (SUCCESS, DIAGNOSTIC), f"{path.name}: {outcome.describe()}"


def test_a_crash_is_classified_and_the_worker_replaced(pool):
    outcome = pool.run(f"{FAULTS}:abort", "LLVM ERROR: something went wrong")
    assert (outcome.kind, outcome.stage) == (CRASH, "abort")
    assert outcome.message == "SIGABRT: LLVM ERROR: something went wrong"
    assert pool.run_case(Case("func.func @main() {\n  %0 = graph.nope\n}\n")).kind == DIAGNOSTIC


def test_a_hang_is_classified_after_the_time_limit():
    with Pool(workers=1, timeout=1.0) as short:
        start = time.monotonic()
        outcome = short.run(f"{FAULTS}:sleep", 30)
        assert (outcome.kind, outcome.stage) == (HANG, "sleep")
        assert time.monotonic() - start < 10
        assert short.run(f"{FAULTS}:sleep", 0) is None  # a new worker answers


def test_memory_is_capped(pool):
    outcome = pool.run(f"{FAULTS}:allocate", 8 << 30)
    assert outcome.kind == TRACEBACK and outcome.message.startswith("MemoryError")


def test_a_located_diagnostic_is_clean_and_an_unlocated_one_internal(pool):
    outcome = pool.run_case(Case("func.func @main() {\n  %0 = graph.nope\n}\n"))
    assert (outcome.kind, outcome.stage) == (DIAGNOSTIC, "parse")
    assert outcome.message.startswith("2:")


def test_mutants_are_reproducible_one_by_one():
    first = [case for (case, _), _ in zip(campaign.mutants(7), range(20), strict=False)]
    again = [case for (case, _), _ in zip(campaign.mutants(7, start=10), range(10), strict=False)]
    assert first[10:] == again
    assert len({case.text for case in first}) > 15


def test_seeds_are_the_repository_files_without_the_corpus():
    names = {seed.name.split(":")[0] for seed in mutate.load_seeds()}
    assert "examples/mlp.mlir" in names and "test/Dialect/graph/ops.mlir" in names
    assert not any("fuzz" in name or "Output" in name for name in names)


def test_minimize_keeps_what_the_failure_needs():
    text = "a b c\nd bad1 e\nf g\nh bad2 i\n"
    small = minimize(text, lambda t: "bad1" in t and "bad2" in t, seconds=10)
    assert small.split() == ["bad1", "bad2"]
