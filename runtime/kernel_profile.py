"""Kernel times of a program compiled with `compile(profile=True)`.

tir-profile-kernels gives each kernel the entry calls two i64 globals, the
nanoseconds spent in its calls and their count; this reads them back.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

CLOCK = "sc_clock_ns"
NANOSECONDS, CALLS = "gc.profile.ns.", "gc.profile.calls."
"""Prefixes of the globals that hold a kernel's time and call count."""

_COUNTER = re.compile(r'^@"?' + re.escape(NANOSECONDS) + r'([^" ]+)"? = ', re.MULTILINE)


@dataclass(frozen=True)
class KernelTime:
    kernel: str
    calls: int
    seconds: float
    shapes: str = ""
    """Its parameters' types, output first: `1x64x56x56xf32 <- 1x64x56x56xf32, ...`."""


def kernels(llvm_ir: str) -> list[str]:
    """The profiled kernels of a program, from its LLVM IR."""
    return _COUNTER.findall(llvm_ir)


def read(engine, names: list[str], tir_text: str = "") -> list[KernelTime]:
    """The kernels' times so far, the longest first; `tir_text` (the
    program's Tensor IR) gives their shapes."""
    times = [
        KernelTime(
            name,
            ctypes.c_int64.from_address(engine.global_address(CALLS + name)).value,
            ctypes.c_int64.from_address(engine.global_address(NANOSECONDS + name)).value * 1e-9,
            _shapes(tir_text, name),
        )
        for name in names
    ]
    return sorted(times, key=lambda time: -time.seconds)


def _shapes(tir_text: str, name: str) -> str:
    header = re.search(
        r"tir\.func @" + re.escape(name) + r"\((.*?)\)( attributes| \{|$)", tir_text, re.MULTILINE
    )
    if header is None:
        return ""
    shapes = re.findall(r"!tir\.tensor<([^>]*)>", header.group(1))
    return f"{shapes[0]} <- {', '.join(shapes[1:])}" if shapes else ""


def reset(engine, names: list[str]) -> None:
    for name in names:
        for prefix in (CALLS, NANOSECONDS):
            ctypes.c_int64.from_address(engine.global_address(prefix + name)).value = 0


def table(times: list[KernelTime]) -> str:
    """The times as a text table: each one's share of their total, ms per
    call, calls and shapes."""
    total = sum(time.seconds for time in times) or 1.0
    lines = [f"{'kernel':<24} {'share':>6} {'ms/call':>9} {'calls':>6}  shapes (out <- in)"]
    for time in times:
        per_call = time.seconds / time.calls * 1e3 if time.calls else 0.0
        lines.append(
            f"{time.kernel:<24} {time.seconds / total:>6.1%} {per_call:>9.3f} {time.calls:>6}"
            f"  {time.shapes}"
        )
    return "\n".join(lines)
