"""Run Python as on an AVX2-only host (a Zen 3: AVX2 and FMA; no AVX-512,
VNNI, BF16 or AMX; 32 KiB L1d, 512 KiB L2) on any x86 host that has AVX2.

    PYTHONPATH=test/hosts/avx2 python -m pytest ...

Python imports this module at start-up when its folder is on PYTHONPATH, in
every process, the compiler's children too. It narrows what LLVM reports of
the host (CPU name and features), which is all the compiler reads to choose
the host target, its vector width, its extensions and the code LLVM
generates; the cache sizes are a Zen 3 core's. `GC_TARGET=avx2` fixes the
generated code alone: this also makes the host *look* like an AVX2 machine,
so host detection, the tests that skip without AVX-512, the tuning table's
machine and the compile cache's key are those of such a host.
"""

import llvmlite.binding as _llvm
from llvmlite.binding import targets as _targets

_ABSENT = ("avx512", "amx", "avxvnni", "avxifma", "avxneconvert", "avx10", "gfni")
_real_features = _targets.get_host_cpu_features


def _avx2_host_features() -> _targets.FeatureMap:
    features = _targets.FeatureMap()
    for name, present in _real_features().items():
        features[name] = present and not name.startswith(_ABSENT)
    return features


def _avx2_host_name() -> str:
    return "znver3"


for _module in (_llvm, _targets):
    _module.get_host_cpu_features = _avx2_host_features
    _module.get_host_cpu_name = _avx2_host_name

try:
    from graphcompiler.target import description as _description
except ImportError:  # graphcompiler not installed in this environment
    pass
else:
    _description._cache_sizes = lambda: {1: 32 * 1024, 2: 512 * 1024, 3: 32 * 1024 * 1024}
