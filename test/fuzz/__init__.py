"""The fuzzing harness: mutated .mlir inputs and random graphs, each run in
a worker process and classified (see oracle.py); `python -m test.fuzz`."""
