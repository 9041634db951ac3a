"""graphcompiler's benchmark suite: `python -m bench` from the repository root.

graphcompiler, numpy and onnxruntime side by side in one process on the
workloads of issues 11 and 12, with the host's measured FMA peak and copy
bandwidth as yardsticks. Never run by the tests (test_bench.py runs one tiny
workload). `python -m bench --help` lists the options.
"""
