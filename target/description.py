"""Where generated code runs: the target description every kernel reads.

Templates say *what* an op computes, schedules *how* it is tiled and
vectorized, and the target *where*: vector width, register file, caches and
ISA extensions. The host is detected once (CPU features from LLVM, cache
sizes from the OS); `GC_TARGET=avx512|avx2|generic` or a pass's `target`
option picks a fixed description instead (ISA and caches alike), so tests
are reproducible on every host and the narrower paths can be exercised on a
wider host.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path

TARGET_NAMES = ("host", "avx512", "avx2", "generic")


@dataclass(frozen=True)
class Target:
    """A CPU as kernels see it (sizes in bytes)."""

    name: str
    f32_lanes: int
    """f32 elements per vector register (16 with avx512f, 8 with avx2, else 4)."""
    vector_registers: int
    """Architectural vector registers (32 with AVX-512, 16 below)."""
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    l3_bytes: int = 8 * 1024 * 1024
    llvm_features: str = ""
    """The feature string the JIT compiles with ("" = the host's)."""
    extensions: frozenset[str] = frozenset()
    """ISA extensions worth knowing: avx512_bf16, avx512_vnni, amx_tile, ..."""
    cores: int = 16
    """Cores the code runs on: schedules cut parallel work for this many."""

    @property
    def vector_bytes(self) -> int:
        return self.f32_lanes * 4


_AVX512_FEATURES = "+avx,+avx2,+fma,+f16c,+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx512cd"
_AVX2_FEATURES = "+avx,+avx2,+fma,+f16c,-avx512f,-avx512vl,-avx512bw,-avx512dq,-avx512cd"
_GENERIC_FEATURES = "-avx,-avx2,-fma,-f16c,-avx512f,-avx512vl,-avx512bw,-avx512dq,-avx512cd"

# A named target is a whole, fixed description, caches included, so the code it
# gives (and every lit test that names it) is the same on every host. The cache
# sizes are those of a typical core of that class: Sapphire Rapids for avx512,
# Zen 2/3 for avx2; 16 cores.
_FIXED = {
    "avx512": Target("avx512", 16, 32, 48 * 1024, 2048 * 1024, 32 * 1024 * 1024, _AVX512_FEATURES),
    "avx2": Target("avx2", 8, 16, 32 * 1024, 512 * 1024, 16 * 1024 * 1024, _AVX2_FEATURES),
    "generic": Target("generic", 4, 16, 32 * 1024, 256 * 1024, 8 * 1024 * 1024, _GENERIC_FEATURES),
}


def _cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level from sysfs (one core's view)."""
    sizes: dict[int, int] = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
        try:
            sizes[level] = int(text.rstrip("KM")) * scale
        except ValueError:
            continue
    return sizes


def host_features() -> dict[str, bool]:
    """LLVM's view of the host's CPU features ({'avx512f': True, ...})."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    return dict(llvm.get_host_cpu_features())


@functools.cache
def host_target() -> Target:
    features = host_features()
    if features.get("avx512f"):
        base = _FIXED["avx512"]
    elif features.get("avx2") and features.get("fma"):
        base = _FIXED["avx2"]
    else:
        base = _FIXED["generic"]
    caches = _cache_sizes()
    known = (
        "avx512bf16", "avx512vnni", "avxvnni", "avx512fp16", "avx512vbmi", "amx-tile", "amx-bf16", "amx-int8",
    )  # fmt: skip
    return replace(
        base,
        name="host",
        l1_bytes=caches.get(1, base.l1_bytes),
        l2_bytes=caches.get(2, base.l2_bytes),
        l3_bytes=caches.get(3, base.l3_bytes),
        llvm_features="",
        extensions=frozenset(f for f in known if features.get(f)),
        cores=_available_cores(),
    )


def _available_cores() -> int:
    """The CPUs this process may run on (its affinity mask, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def supported(name: str) -> bool:
    """Can code for the fixed target `name` run on this host?"""
    if name in ("host", "generic"):
        return True
    features = host_features()
    if name == "avx2":
        return bool(features.get("avx2") and features.get("fma"))
    return bool(features.get("avx512f"))


def get_target(name: str = "") -> Target:
    """The target called `name`; "" means GC_TARGET, else the host."""
    name = name or os.environ.get("GC_TARGET", "").strip() or "host"
    if name not in TARGET_NAMES:
        raise ValueError(f"unknown target '{name}' (expected one of {', '.join(TARGET_NAMES)})")
    return host_target() if name == "host" else _FIXED[name]
