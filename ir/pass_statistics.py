"""Pass statistics, as MLIR's `-mlir-pass-statistics` shows them.

A pass calls `record(self, "peak-bytes-after", 4096, "peak live bytes after")`;
the pass manager collects what each run recorded and `gc-opt
--mlir-pass-statistics` prints the report on stderr. Outside a collection
(plain `pass.apply(...)`) recording is a no-op.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from xdsl.passes import ModulePass


@dataclass
class Statistic:
    name: str
    value: int | float
    description: str


@dataclass
class StatisticsCollector:
    """Statistics per pass name, summed over the runs of that pass."""

    by_pass: dict[str, dict[str, Statistic]] = field(default_factory=dict)

    def add(self, pass_name: str, statistic: Statistic) -> None:
        stats = self.by_pass.setdefault(pass_name, {})
        if statistic.name in stats:
            stats[statistic.name].value += statistic.value
        else:
            stats[statistic.name] = statistic

    def report(self) -> str:
        bar = "===" + "-" * 73 + "==="
        lines = [bar, " " * 25 + "... Pass statistics report ...", bar]
        for pass_name, stats in self.by_pass.items():
            lines.append(pass_name)
            for statistic in stats.values():
                lines.append(f"  (S) {statistic.value} {statistic.name} - {statistic.description}")
        return "\n".join(lines) + "\n"


_collector: ContextVar[StatisticsCollector | None] = ContextVar(
    "graphcompiler_statistics", default=None
)


def record(pass_: ModulePass, name: str, value: int | float, description: str) -> None:
    collector = _collector.get()
    if collector is not None:
        collector.add(pass_.name, Statistic(name, value, description))


@contextmanager
def collect_statistics(collector: StatisticsCollector) -> Iterator[StatisticsCollector]:
    token = _collector.set(collector)
    try:
        yield collector
    finally:
        _collector.reset(token)
