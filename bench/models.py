"""python -m bench --models: full-size real models, graphcompiler vs onnxruntime.

BERT-base, GPT-2 (124M), a 4-layer Llama with grouped-query attention,
ViT-B/16, ResNet-50, ResNet-18, MobileNet-v2 1.0 and EfficientNet-B0 with random
weights, exported to ONNX with static shapes (batch 1; 128 tokens or
224 px) by `test/models/export_models.py --full`, run in a subprocess:
torch, transformers and onnxscript are needed for that step only
(`pip install -e '.[models]'`), never in this process. The files are kept
in --models-dir and exported again only when missing (delete them after
changing the export script). Per model:

- import s: the .onnx file to the graph dialect (`import_onnx`);
- compile s: `graphcompiler.compile` of that module, the compile cache off;
- ours and onnxruntime's median (min) ms per call at each thread count,
  the two timed in turns, and ours / ort: the median of the turns' ratios
  (runner.BLOCK_SECONDS; above 1: ours slower);
- err vs ort: max |ours - ort| / max |ort| over the outputs and thread
  counts, on the inputs the export saved (onnxruntime's own error against
  torch's outputs is in the JSON file, `ort_vs_torch`).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench import onnx_models, report
from bench.runner import (
    _failure,
    measure_side_by_side,
    paired_ratio,
    pause_before_blocks,
    rounds_for,
)

MODELS = ("bert", "gpt2", "llama", "vit", "resnet", "resnet18", "mobilenet_v2", "efficientnet")
MORE_MODELS = ("swin", "convnext", "regnet")
"""Architectures no issue names, benched only when --only names them
exactly (Swin-T, ConvNeXt-T, RegNet-Y-4GF: `transformers`' defaults)."""
EXPORT_SCRIPT = Path(__file__).resolve().parents[1] / "test" / "models" / "export_models.py"
EXPORT_NEEDS = ("torch", "transformers", "onnxscript", "onnx", "onnxruntime")
TOLERANCE = 1e-3
"""err vs ort above this is a mismatch (deep full-size models, float32)."""


def default_directory() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "graphcompiler" / "bench-models"


def select(only: str | None) -> list[str]:
    """Models named by the comma-separated words: a model's exact name, or
    else a substring of MODELS' names ("resnet" is ResNet-50, not ResNet-18
    too); MORE_MODELS by exact name only."""
    if not only:
        return list(MODELS)
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    known = (*MODELS, *MORE_MODELS)
    chosen = [m for m in MODELS if any(w == m or (w not in known and w in m) for w in wanted)]
    chosen += [m for m in MORE_MODELS if m in wanted]
    if not chosen:
        raise SystemExit(f"error: --only {only!r} matches no model (models: {', '.join(known)})")
    return chosen


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| (a wrong shape: inf)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    scale = float(np.max(np.abs(want))) or 1.0
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def export(name: str, exporter: str, directory: Path, progress: Callable[[str], None]) -> Path:
    """The full-size model's .onnx file (its inputs and torch's outputs in
    the .npz beside it), exported now unless it is there already."""
    path = directory / f"{name}_{exporter}_static.onnx"
    if path.exists() and path.with_suffix(".npz").exists():
        return path
    missing = [m for m in EXPORT_NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(
            f"exporting needs {', '.join(missing)}: pip install -e '.[models]' (or put the "
            f"exported files in {directory})"
        )
    progress(f"{name}: exporting the full-size model with torch ({exporter}) to {directory}")
    command = [sys.executable, str(EXPORT_SCRIPT), "--full", "--out", str(directory)]
    run = subprocess.run(
        [*command, "--only", name, "--exporter", exporter],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0 or not path.exists():
        lines = run.stderr.strip().splitlines() or ["no output"]
        raise RuntimeError(f"export_models.py --full failed: {lines[-1]}")
    return path


def _as_tuple(results) -> list[np.ndarray]:
    return list(results) if isinstance(results, tuple | list) else [results]


def _worst(got: list, want: list) -> float:
    if len(got) != len(want):
        return float("inf")
    errors = [relative_error(g, w) for g, w in zip(got, want, strict=True)]
    return float("nan") if any(np.isnan(errors)) else max(errors)


def run_model(
    name: str,
    path: Path,
    threads: list[int],
    seconds: float,
    min_runs: int,
    progress: Callable[[str], None],
) -> list[dict]:
    """One row per thread count: import and compile seconds (on each),
    {'engines': {'ours': ..., 'onnxruntime': ...}} and the error vs ort."""
    import graphcompiler
    from graphcompiler.frontends.onnx import import_onnx

    with np.load(path.with_suffix(".npz")) as data:
        arrays = {key: data[key] for key in data.files}
    names = [k for k in arrays if not k.startswith("output_")]  # saved in graph-input order
    inputs = [arrays[n] for n in names]
    expected = [arrays[k] for k in arrays if k.startswith("output_")]
    base = {"model": name, "file": path.name, "import_s": None, "compile_s": None}
    compiled, failure = None, None
    try:
        start = time.perf_counter()
        module = import_onnx(path)
        base["import_s"] = time.perf_counter() - start
        progress(f"{name}: imported in {base['import_s']:.2f} s; compiling")
        start = time.perf_counter()
        compiled = graphcompiler.compile(module, cache=False)
        base["compile_s"] = time.perf_counter() - start
        progress(f"{name}: compiled in {base['compile_s']:.2f} s")
        del module
    except Exception as error:  # a model that fails is a table entry, not a crash
        failure = _failure(error)
        progress(f"{name}: {failure['message']}")
    feeds = dict(zip(names, inputs, strict=True))
    rows = []
    for count in threads:
        ort_result, session, ort_outputs = _checked_ort(path, count, feeds, expected)
        calls = {}
        if session is not None:
            calls["onnxruntime"] = lambda session=session: session.run(None, feeds)
        if compiled is None:
            ours_result = dict(failure or {"status": "failed", "message": "not compiled"})
        else:
            reference = ort_outputs if ort_outputs is not None else expected
            ours_result = _checked_ours(compiled, count, inputs, reference, expected)
            if ours_result["status"] != "failed":
                calls["ours"] = lambda: compiled(*inputs)
        engines = {"ours": ours_result, "onnxruntime": ort_result}
        try:
            pause = pause_before_blocks(count)
            for engine, timing in measure_side_by_side(calls, seconds, min_runs, pause).items():
                engines[engine].update(timing)
        except Exception as error:  # a model that fails is a table entry, not a crash
            engines.update({engine: _failure(error) for engine in calls})
        ratio = paired_ratio(engines["ours"], engines["onnxruntime"])
        rows.append({**base, "threads": count, "engines": engines, "ours_over_onnxruntime": ratio})
        progress(
            f"{name} x{count}: ours {_ms(engines['ours'])} ms, ort {_ms(engines['onnxruntime'])} ms"
        )
    return rows


def _checked_ort(path: Path, threads: int, feeds: dict, expected: list):
    """(result, session, outputs of the first call), or (a failure, None, None)."""
    try:
        session = onnx_models.session(str(path), threads)
        outputs = session.run(None, feeds)
    except Exception as error:  # an engine's failure is a table entry, not a crash
        return _failure(error), None, None
    return (
        {"status": "ok", "message": "", "ort_vs_torch": _worst(outputs, expected)},
        session,
        outputs,
    )


def _checked_ours(compiled, threads: int, inputs: list, reference: list, expected: list) -> dict:
    """The first call's result against `reference` (onnxruntime's outputs)."""
    try:
        compiled.set_num_threads(threads)
        outputs = _as_tuple(compiled(*inputs))
    except Exception as error:
        return _failure(error)
    error = _worst(outputs, reference)
    ok = error <= TOLERANCE
    return {
        "status": "ok" if ok else "mismatch",
        "error": error,
        "error_vs_torch": _worst(outputs, expected),
        "message": "" if ok else f"error {error:.2e} > tolerance {TOLERANCE:.0e}",
    }


def _ms(result: dict) -> str:
    return f"{result['median_ms']:.2f} ({result['min_ms']:.2f})" if "median_ms" in result else "-"


def _seconds(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "-"


COLUMNS = [
    ("model", 13, "<"),
    ("thr", 3, ">"),
    ("import s", 8, ">"),
    ("compile s", 9, ">"),
    ("ours ms (min)", 19, ">"),
    ("ort ms (min)", 19, ">"),
    ("ours/ort", 8, ">"),
    ("err vs ort", 10, ">"),
    ("check", 0, "<"),
]


def table(rows: list[dict], markdown: bool = False) -> str:
    """Aligned columns, or a Markdown table; one row per model and thread count."""
    rows_of_cells = []
    for row in rows:
        ours, ort = row["engines"]["ours"], row["engines"]["onnxruntime"]
        ratio = row.get("ours_over_onnxruntime")
        error = ours.get("error")
        cells = [
            row["model"],
            str(row["threads"]),
            _seconds(row.get("import_s")),
            _seconds(row.get("compile_s")),
            _ms(ours),
            _ms(ort),
            f"{ratio:.2f}x" if ratio else "-",
            f"{error:.1e}" if error is not None else "-",
            report.engine_problems(row["engines"]),
        ]
        rows_of_cells.append(cells)
    return report.aligned_table(COLUMNS, rows_of_cells, markdown)


def main(args) -> int:
    """The models mode of `python -m bench` (arguments from bench.__main__)."""
    chosen = select(args.only)
    directory = args.models_dir or default_directory()
    directory.mkdir(parents=True, exist_ok=True)
    seconds = args.seconds or (0.2 if args.quick else 1.0)
    min_runs = 2 if args.quick else 3
    began = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f}s] {message}", file=sys.stderr, flush=True)

    missing = onnx_models.available()
    if missing:
        raise SystemExit(f"error: onnxruntime is the reference here: {missing}")
    host = report.host_info()
    for line in report.describe_host(host):
        progress(line)
    rows: list[dict] = []
    for index, name in enumerate(chosen, 1):
        progress(f"({index}/{len(chosen)}) {name}")
        try:
            path = export(name, args.exporter, directory, progress)
        except Exception as error:
            failure = _failure(error)
            progress(f"{name}: {failure['message']}")
            rows.append(
                {
                    "model": name,
                    "file": None,
                    "import_s": None,
                    "compile_s": None,
                    "threads": args.threads[0],
                    "engines": {"ours": failure, "onnxruntime": dict(failure)},
                    "ours_over_onnxruntime": None,
                }
            )
            continue
        rows += run_model(name, path, args.threads, seconds, min_runs, progress)
    print("\n".join(report.describe_host(host)))
    print(
        f"full-size models ({args.exporter} exporter, static shapes, batch 1) from {directory}; "
        f"times in ms: median (min) of runs within {seconds:g} s per engine and thread count, "
        f"the engines taking {rounds_for(seconds)} turns; ours/ort: the median of the turns' "
        "ratios, above 1 graphcompiler slower; err vs ort: max |ours - ort| / max |ort|\n"
    )
    print(table(rows, args.markdown))
    options = {
        "mode": "models",
        "only": args.only,
        "threads": args.threads,
        "seconds": seconds,
        "exporter": args.exporter,
        "models_dir": str(directory),
    }
    report.write_json(args.json, host, options, {}, rows)
    progress(f"wrote {args.json}")
    return 0
