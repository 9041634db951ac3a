"""python -m bench [--quick] [--only NAMES] [--threads 1,N] [--json PATH]
python -m bench --models [--only NAMES] [--exporter E] [--models-dir DIR]  (bench/models.py)

Progress goes to stderr as the run goes; the table to stdout at the end;
every figure to the JSON file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench import report, runner
from bench.workloads import WORKLOADS, select


def _threads(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected positive thread counts like 1,2, got {text!r}")
    return list(dict.fromkeys(counts))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="graphcompiler vs numpy vs onnxruntime, with the host's FMA peak and "
        "copy bandwidth as yardsticks",
        epilog="workloads: " + ", ".join(w.name for w in WORKLOADS),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short time boxes (0.2 s per engine and thread count) and probes",
    )
    parser.add_argument(
        "--only", metavar="NAMES", help="comma-separated substrings of workload names"
    )
    parser.add_argument(
        "--threads",
        type=_threads,
        default=_threads(f"1,{cores}"),
        help=f"comma-separated thread counts (default 1,{cores})",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).parent / "results.json",
        help="where to write the results (default bench/results.json)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        help="time box per engine and thread count (default 1.0, --quick 0.2)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the table in Markdown (for issue notes)"
    )
    parser.add_argument(
        "--weights-as-inputs",
        action="store_true",
        help="pass model weights as call inputs to graphcompiler and onnxruntime, rather "
        "than as compile-time constants (compile(constants=...), ONNX initializers) that "
        "both may prepack",
    )
    models = parser.add_argument_group(
        "real models", "full-size exported models vs onnxruntime (bench/models.py)"
    )
    models.add_argument(
        "--models",
        action="store_true",
        help="BERT, GPT-2, Llama, ViT, ResNet-50, ResNet-18, MobileNet-v2, EfficientNet-B0 (exported with "
        "torch once: pip install -e '.[models]'); --only then names models",
    )
    models.add_argument(
        "--exporter",
        choices=("torchscript", "dynamo"),
        default="torchscript",
        help="the torch ONNX exporter of the models (default torchscript)",
    )
    models.add_argument(
        "--models-dir",
        type=Path,
        help="where the exported models are kept (default ~/.cache/graphcompiler/bench-models)",
    )
    return parser.parse_args(argv)


def measure_peaks(threads: list[int], seconds: float, progress) -> dict:
    from bench.peak import FmaProbe, copy_bandwidth
    from graphcompiler.target.description import get_target

    target = get_target()
    lane_counts = [8, 16] if target.f32_lanes >= 16 else [8]
    probe = FmaProbe(lane_counts, target.vector_registers)
    peaks: dict = {
        "lanes": lane_counts[-1],
        "accumulators": probe.accumulators,
        "fma_gflops": {},
        "copy_gbs": {},
    }
    for lanes in lane_counts:
        peaks["fma_gflops"][str(lanes)] = {}
        for count in threads:
            gflops = probe.gflops(lanes, count, seconds)
            peaks["fma_gflops"][str(lanes)][str(count)] = gflops
            progress(f"FMA peak, {lanes} lanes x{count}: {gflops:.1f} GFLOP/s")
    for count in threads:
        peaks["copy_gbs"][str(count)] = copy_bandwidth(count, seconds)
        progress(f"copy bandwidth x{count}: {peaks['copy_gbs'][str(count)]:.1f} GB/s")
    return peaks


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import graphcompiler  # noqa: F401
    except ImportError:
        raise SystemExit(
            "error: graphcompiler is not installed: pip install -e '.[bench]'"
        ) from None
    if args.models:
        from bench import models

        return models.main(args)
    workloads = select(args.only)
    seconds = args.seconds or (0.2 if args.quick else 1.0)
    began = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f}s] {message}", file=sys.stderr, flush=True)

    host = report.host_info()
    for line in report.describe_host(host):
        progress(line)
    peaks = measure_peaks(args.threads, 0.2 if args.quick else 1.0, progress)
    settings = runner.Settings(seconds, 2 if args.quick else 3, args.weights_as_inputs)
    rows: list[dict] = []
    for index, workload in enumerate(workloads, 1):
        progress(f"({index}/{len(workloads)}) {workload.title}")
        rows += runner.run_workload(workload, args.threads, settings, progress)
    report.derive(rows, peaks)
    print("\n".join(report.describe_host(host) + report.describe_peaks(peaks)))
    print(
        f"times in ms: median (min) of runs within {seconds:g} s per engine and thread count, "
        f"the engines taking {runner.rounds_for(seconds)} turns; ratios: ours / other, the median of the turns' "
        "ratios (above 1: graphcompiler slower)\n"
    )
    print(report.table(rows, args.markdown))
    options = {
        "quick": args.quick,
        "only": args.only,
        "threads": args.threads,
        "seconds": seconds,
        "weights_as_inputs": args.weights_as_inputs,
    }
    report.write_json(args.json, host, options, peaks, rows)
    progress(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
