"""int8 and bf16 rows beside f32: `python -m bench.quantized [--threads 1,2]
[--markdown] [--models bert,resnet]`.

Each workload (a 1024^3 matmul with constant weights, the bench's MLP and
its transformer layer; with `--models`, the models table's full-size
exports, bench/models.py) is an f32 ONNX model, quantized with
onnxruntime's tools: `quantize_dynamic` (int8 weights, activations
quantized per call) and `quantize_static` in the QDQ format (per-channel
int8 weights, u8 activations calibrated on the inputs). The bf16 row is
the f32 file compiled with `precision="bf16"` (onnxruntime's CPU provider
has no such mode on x86: its column runs the f32 file). graphcompiler and
onnxruntime run each file side by side in one process, medians; the table
gives each engine's time, ours / onnxruntime, our speed-up over our f32,
and our largest error relative to onnxruntime's outputs on the same file
(for bf16, to the f32 file's). Needs onnxruntime (its quantization tools);
never run by CI."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from bench import models, onnx_models
from bench.graph import Graph
from bench.runner import measure_side_by_side, paired_ratio, pause_before_blocks
from bench.workloads import WORKLOADS, mlp

SCHEMES = ("f32", "int8 dynamic", "int8 QDQ")
BF16 = "bf16 (fpmath)"
"""The f32 model at precision="bf16"."""


def _weighted_matmul(size: int):
    def build() -> Graph:
        g = Graph()
        g.set_output(g.matmul(g.input("a", [size, size]), g.weight("b", [size, size])))
        return g

    return build


def workloads() -> list[tuple[str, object]]:
    by_name = {w.name: w for w in WORKLOADS}
    return [
        ("matmul 1024^3 (weights constant)", _weighted_matmul(1024)),
        (by_name["mlp"].title, mlp([512, 1024, 1024, 512], 128)),
        (by_name["encoder_layer"].title, by_name["encoder_layer"].build),
    ]


def _built(build, directory: Path) -> tuple[dict[str, Path], dict[str, np.ndarray]]:
    """The f32, dynamic and QDQ files of a built workload, and its feeds."""
    graph = build()
    arrays = graph.random_inputs()
    model, names = onnx_models.build_model(graph, arrays)
    by_name = {spec.value.name: array for spec, array in zip(graph.inputs, arrays, strict=True)}
    path = directory / "f32.onnx"
    path.write_bytes(model)
    return _quantized(path, {name: by_name[name] for name in names}, directory)


def _exported(name: str, models_dir: Path, directory: Path):
    """The files of a full-size model of the models table (exported once)
    and its saved inputs."""
    path = models.export(name, "torchscript", models_dir, lambda message: print(message))
    with np.load(path.with_suffix(".npz")) as data:
        feeds = {key: data[key] for key in data.files if not key.startswith("output_")}
    return _quantized(path, feeds, directory / name)


def _quantized(f32: Path, feeds: dict, directory: Path):
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    directory.mkdir(parents=True, exist_ok=True)
    paths = {scheme: directory / f"{index}.onnx" for index, scheme in enumerate(SCHEMES)}
    paths["f32"] = f32
    quantize_dynamic(paths["f32"], paths["int8 dynamic"], weight_type=QuantType.QInt8)

    class Feeds(CalibrationDataReader):
        def __init__(self):
            self.pending = [feeds]

        def get_next(self):
            return self.pending.pop() if self.pending else None

    quantize_static(
        paths["f32"], paths["int8 QDQ"], Feeds(), quant_format=QuantFormat.QDQ,
        per_channel=True, weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8,
    )  # fmt: skip
    return paths, feeds


def run(threads: list[int], seconds: float, names: list[str], models_dir: Path) -> list[dict]:
    import graphcompiler

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        if names:
            made = [(name, lambda d, name=name: _exported(name, models_dir, d)) for name in names]
        else:
            made = [
                (title, lambda d, build=build: _built(build, d)) for title, build in workloads()
            ]
        for title, make in made:
            paths, feeds = make(Path(directory))
            for scheme, path in [*paths.items(), (BF16, paths["f32"])]:
                precision = "bf16" if scheme == BF16 else "f32"
                compiled = graphcompiler.compile(path, cache=False, precision=precision)
                inputs = list(feeds.values())
                for count in threads:
                    compiled.set_num_threads(count)
                    session = onnx_models.session(path.read_bytes(), count)
                    ours_outputs = compiled(*inputs)
                    if not isinstance(ours_outputs, tuple | list):
                        ours_outputs = [ours_outputs]
                    pairs = zip(ours_outputs, session.run(None, feeds), strict=True)
                    error = max(models.relative_error(got, want) for got, want in pairs)
                    calls = {
                        "ours": lambda: compiled(*inputs),  # noqa: B023
                        "ort": lambda: session.run(None, feeds),  # noqa: B023
                    }
                    timed = measure_side_by_side(calls, seconds, 3, pause_before_blocks(count))
                    ours, ort = timed["ours"], timed["ort"]
                    rows.append({"workload": title, "scheme": scheme, "threads": count, "error": error,
                                 "ours_ms": ours["median_ms"], "ort_ms": ort["median_ms"],
                                 "ours_over_ort": paired_ratio(ours, ort)})  # fmt: skip
                    print(f"{title} {scheme} x{count}: ours {ours['median_ms']:.2f} ms, "
                          f"onnxruntime {ort['median_ms']:.2f} ms, error {error:.1e}", flush=True)  # fmt: skip
    return rows


def table(rows: list[dict], markdown: bool) -> str:
    f32 = {(r["workload"], r["threads"]): r["ours_ms"] for r in rows if r["scheme"] == "f32"}
    header = ["workload", "scheme", "threads", "ours ms", "onnxruntime ms", "ours/ort",
              "vs our f32", "error"]  # fmt: skip
    lines = [header]
    for r in rows:
        speedup = f32[r["workload"], r["threads"]] / r["ours_ms"]
        lines.append([r["workload"], r["scheme"], str(r["threads"]), f"{r['ours_ms']:.2f}",
                      f"{r['ort_ms']:.2f}", f"{r['ours_over_ort']:.2f}", f"{speedup:.2f}x",
                      f"{r['error']:.1e}"])  # fmt: skip
    if markdown:
        text = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(header)]
        return "\n".join(text + ["| " + " | ".join(line) + " |" for line in lines[1:]])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quantized", description=__doc__)
    parser.add_argument("--threads", default="1", help="comma-separated thread counts")
    parser.add_argument("--seconds", type=float, default=2.0, help="time box per engine")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--models", default="", help=f"full-size models: {','.join(models.MODELS)}")
    parser.add_argument("--models-dir", type=Path, default=models.default_directory())
    args = parser.parse_args(argv)
    missing = onnx_models.available()
    if missing:
        print(missing)
        return 1
    names = models.select(args.models) if args.models else []
    rows = run([int(t) for t in args.threads.split(",")], args.seconds, names, args.models_dir)
    print(table(rows, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
