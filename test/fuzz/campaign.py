"""Campaigns: mutants for a while (new failures minimized into the corpus),
the fixed CI sample, the corpus replay, and random-graph runs."""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graphcompiler.test.fuzz import mutate
from graphcompiler.test.fuzz.minimize import minimize
from graphcompiler.test.fuzz.oracle import DIAGNOSTIC, KINDS, Case, Outcome
from graphcompiler.test.fuzz.pool import Pool

CORPUS = Path(__file__).resolve().parent / "corpus"
_HEADER = "// fuzz-"


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    failures: dict[str, tuple[Case, str, Outcome]] = field(default_factory=dict)  # by signature
    occurrences: Counter = field(default_factory=Counter)
    stages: Counter = field(default_factory=Counter)  # where diagnostics stopped
    seconds: float = 0.0

    def add(self, case: Case, origin: str, outcome: Outcome) -> bool:
        """Count `outcome`; True if it is a failure not seen before."""
        self.counts[outcome.kind] += 1
        if outcome.kind == DIAGNOSTIC:
            self.stages[outcome.stage] += 1
        if not outcome.failed:
            return False
        signature = outcome.signature()
        self.occurrences[signature] += 1
        if signature in self.failures:
            return False
        self.failures[signature] = (case, origin, outcome)
        return True

    def summary(self) -> str:
        total = sum(self.counts.values())
        rate = total / self.seconds if self.seconds else 0.0
        lines = [f"{total} cases in {self.seconds:.0f} s ({rate:.1f}/s): "
                 + ", ".join(f"{kind} {self.counts[kind]}" for kind in KINDS if self.counts[kind])]  # fmt: skip
        if self.stages:
            where = ", ".join(f"{stage} {count}" for stage, count in self.stages.most_common())
            lines.append(f"  diagnostics by stage: {where}")
        for signature, (_, origin, outcome) in self.failures.items():
            lines.append(
                f"  {self.occurrences[signature]:5d}x {outcome.describe()[:200]}  <- {origin}"
            )
        return "\n".join(lines)


# --- the corpus ---------------------------------------------------------------------


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    return sorted(corpus.glob("*.mlir"))


def read_corpus_case(path: Path) -> Case:
    """A corpus file as a case: its text, and its pipeline from the header."""
    text = path.read_text()
    pipeline = None
    for line in text.splitlines():
        if line.startswith(f"{_HEADER}pipeline: "):
            value = line.split(": ", 1)[1].strip()
            pipeline = None if value == "default" else value
    return Case(text, pipeline)


def signature_of(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(f"{_HEADER}signature: "):
            return line.split(": ", 1)[1].strip()
    return ""


def write_corpus_case(case: Case, origin: str, outcome: Outcome, corpus: Path = CORPUS) -> Path:
    signature = outcome.signature()
    name = hashlib.sha1((signature + case.text).encode()).hexdigest()[:10]
    path = corpus / f"{outcome.kind}-{outcome.stage}-{name}.mlir"
    message = " ".join(outcome.describe().split())[:400]
    header = [
        f"{_HEADER}class: {message}",
        f"{_HEADER}signature: {signature}",
        f"{_HEADER}pipeline: {case.pipeline or 'default'}",
        f"{_HEADER}origin: {origin}",
    ]
    corpus.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n" + case.text)
    return path


def minimize_case(pool: Pool, case: Case, outcome: Outcome, seconds: float) -> Case:
    """The smallest text that still fails with `outcome`'s signature."""
    signature = outcome.signature()
    if outcome.kind == "hang":  # each try costs the whole time limit
        seconds = min(seconds, 4 * pool.timeout)

    def still_fails(text: str) -> bool:
        return pool.run_case(Case(text, case.pipeline)).signature() == signature

    return Case(minimize(case.text, still_fails, seconds), case.pipeline)


# --- runs ---------------------------------------------------------------------------


def _pipeline_for(rng: random.Random) -> str | None:
    """Mostly the default stages; sometimes one graph pass alone, then lowering."""
    from graphcompiler.driver.registration import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE

    if rng.random() < 0.8:
        return None
    return f"builtin.module({rng.choice(GRAPH_PASSES)},{TIR_STAGE},{LLVM_STAGE})"


def mutants(seed: int, start: int = 0):
    """Mutants `start`, `start + 1`, ... of campaign `seed` (each reproducible alone)."""
    seeds = mutate.load_seeds()
    names = mutate.op_names(seeds)
    index = start
    while True:
        rng = random.Random(f"{seed}:{index}")
        case, origin = mutate.mutant(rng, seeds, names)
        yield Case(case.text, _pipeline_for(rng)), f"mutant {seed}:{index} of {origin}"
        index += 1


def run_sample(count: int, seed: int = 0, workers: int = 2, timeout: float = 10.0) -> Report:
    """The first `count` mutants of campaign `seed`: the CI sample."""
    generator = mutants(seed)
    cases = [next(generator) for _ in range(count)]
    report = Report()
    start = time.monotonic()
    with Pool(workers, timeout) as pool:
        for (case, origin), outcome in zip(
            cases, pool.map("case", [c for c, _ in cases]), strict=True
        ):
            report.add(case, origin, outcome)
    report.seconds = time.monotonic() - start
    return report


def fuzz(minutes: float, seed: int, workers: int, timeout: float, minimize_seconds: float,
         corpus: Path = CORPUS, findings: Path | None = None) -> Report:  # fmt: skip
    """Mutants for `minutes`; each new failure is minimized into `corpus`,
    unless a corpus file still fails that way (a fixed bug that comes back in
    another form is new again)."""
    report = Report()
    start = time.monotonic()
    end = start + minutes * 60
    generator = mutants(seed)
    with Pool(workers, timeout) as pool:
        paths = corpus_files(corpus)
        replayed = pool.map("case", [read_corpus_case(path) for path in paths])
        known = {signature_of(p) for p, o in zip(paths, replayed, strict=True) if o.failed}
        while time.monotonic() < end:
            batch = [next(generator) for _ in range(8 * workers)]
            outcomes = list(pool.map("case", [case for case, _ in batch]))
            for (case, origin), outcome in zip(batch, outcomes, strict=True):
                if not report.add(case, origin, outcome):
                    continue
                print(f"new: {outcome.describe()[:300]}  <- {origin}", file=sys.stderr)
                if outcome.signature() in known:
                    continue
                small = minimize_case(pool, case, outcome, minimize_seconds)
                path = write_corpus_case(small, origin, outcome, corpus)
                print(f"  minimized to {path}", file=sys.stderr)
                if findings is not None:
                    _append_finding(findings, path, small, outcome)
            report.seconds = time.monotonic() - start
            print(f"\r{sum(report.counts.values())} cases, {len(report.failures)} distinct failures", end="", file=sys.stderr)  # fmt: skip
    print(file=sys.stderr)
    report.seconds = time.monotonic() - start
    return report


def _append_finding(findings: Path, path: Path, case: Case, outcome: Outcome) -> None:
    with findings.open("a") as file:
        file.write(f"\n### {outcome.kind} at stage `{outcome.stage}`\n\n"
                   f"{outcome.describe()[:600]}\n\nReproducer ({path.name}, pipeline "
                   f"{case.pipeline or 'default'}):\n\n```mlir\n{case.text.rstrip()}\n```\n")  # fmt: skip


def replay_corpus(
    workers: int = 1, timeout: float = 10.0, corpus: Path = CORPUS
) -> list[tuple[Path, Outcome]]:
    paths = corpus_files(corpus)
    with Pool(workers, timeout) as pool:
        return list(zip(paths, pool.map("case", [read_corpus_case(p) for p in paths]), strict=True))


def run_random_graphs(count: int, seed: int = 0, workers: int = 1, timeout: float = 60.0) -> Report:
    """Graphs `seed` .. `seed + count - 1` through the differential check."""
    from graphcompiler.test.fuzz.random_graphs import case

    report = Report()
    start = time.monotonic()
    graphs = [case(index) for index in range(seed, seed + count)]
    with Pool(workers, timeout) as pool:
        outcomes = pool.map("graph", graphs)
        for done, (graph, outcome) in enumerate(zip(graphs, outcomes, strict=True), start=1):
            pipeline = graph.pipeline or "default pipeline"
            if report.add(Case(graph.text, graph.pipeline), f"random graph {graph.seed}", outcome):
                print(f"\nrandom graph {graph.seed} ({pipeline}): {outcome.describe()[:300]}\n{graph.text}", file=sys.stderr)  # fmt: skip
            print(f"\r{done}/{count} graphs", end="", file=sys.stderr)
    print(file=sys.stderr)
    report.seconds = time.monotonic() - start
    return report
