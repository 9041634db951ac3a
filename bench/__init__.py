"""graphcompiler's benchmark suite: `python -m bench` from the repository root.

graphcompiler, numpy and onnxruntime side by side in one process on the
workloads of issues 11 and 12, with the host's measured FMA peak and copy
bandwidth as yardsticks. Never run by the tests (test_bench.py runs one tiny
workload). `python -m bench --help` lists the options.
"""

import sys
from pathlib import Path

# `python -m bench` puts the repository root on sys.path; the root is the
# package graphcompiler itself, and its statistics.py, target.py, test/ ...
# would shadow modules of the same names (statistics is the standard
# library's). graphcompiler is imported from its installation instead.
_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT]
