"""What the run was on, the derived columns, the table and the JSON file.

Rates: compute-bound rows give GFLOP/s (matmul and convolution flops over
the median time) and their % of the FMA peak measured with the same thread
count at the widest vector width; memory-bound rows give GB/s (inputs +
output bytes over the median) and their % of the measured copy bandwidth.
Ratios are ours / other, the engines timed side by side in turns
(runner.BLOCK_SECONDS): the median over the rounds of the ratio of their block
medians. Above 1, graphcompiler is slower.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from bench.runner import ENGINES, paired_ratio

BLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def host_info() -> dict:
    """CPU, target, library versions, numpy's BLAS and the variables that steer them."""
    import numpy

    from graphcompiler.target.description import get_target

    target = get_target()
    info = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "target": {
            "name": target.name,
            "f32_lanes": target.f32_lanes,
            "vector_registers": target.vector_registers,
            "l1_bytes": target.l1_bytes,
            "l2_bytes": target.l2_bytes,
            "l3_bytes": target.l3_bytes,
        },
        "environment": {
            name: os.environ.get(name)
            for name in (*BLAS_VARIABLES, "GC_TARGET", "GC_NUM_THREADS", "OMP_NUM_THREADS")
        },
    }
    try:
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        info["onnxruntime"] = None
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {
                key: pool.get(key)
                for key in ("internal_api", "version", "architecture", "num_threads", "filepath")
            }
            for pool in threadpool_info()
            if pool.get("user_api") == "blas"
        ]
    except ImportError:
        info["blas"] = None
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_host(info: dict) -> list[str]:
    lines = [
        f"host: {info['cpu']}, {info['cores']} cores; target {info['target']['name']} "
        f"({info['target']['f32_lanes']} f32 lanes, {info['target']['vector_registers']} vector registers)",
        f"numpy {info['numpy']}, onnxruntime {info['onnxruntime'] or 'not installed'}",
    ]
    if info["load_average"] and info["load_average"][0] > 0.5:
        lines.append(
            f"note: load average {info['load_average'][0]:.1f} at the start: other processes "
            "compete for the cores, and the figures are noisier and lower than on an idle host"
        )
    if info["blas"] is None:
        lines.append("numpy BLAS: unknown (threadpoolctl not installed; --threads cannot limit it)")
    for pool in info["blas"] or []:
        lines.append(
            f"numpy BLAS: {pool['internal_api']} {pool['version']}, kernel {pool['architecture']}, "
            f"{pool['num_threads']} threads ({pool['filepath']})"
        )
    set_variables = [
        f"{n}={info['environment'][n]}" for n in BLAS_VARIABLES if info["environment"][n]
    ]
    if set_variables:
        lines.append(
            f"note: {' '.join(set_variables)} is set and may pick a slower OpenBLAS kernel; for "
            "numpy's best, run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m bench"
        )
    return lines


def derive(rows: list[dict], peaks: dict) -> None:
    """Adds rate, % of peak and ratios to each engine result of each row."""
    for row in rows:
        threads = str(row["threads"])
        compute = row["bound"] == "compute"
        work = row["flops"] if compute else row["bytes"]
        if compute:
            ceiling = peaks["fma_gflops"][str(peaks["lanes"])][threads]
        else:
            ceiling = peaks["copy_gbs"][threads]
        engines = row["engines"]
        for result in engines.values():
            if "median_ms" in result:
                rate = work / (result["median_ms"] * 1e-3) / 1e9
                result["gflops" if compute else "gbs"] = rate
                result["percent_of_peak"] = 100 * rate / ceiling
        for other in ("numpy", "onnxruntime"):
            row[f"ours_over_{other}"] = paired_ratio(engines["ours"], engines[other])


def _ms(result: dict) -> str:
    return f"{result['median_ms']:.3f} ({result['min_ms']:.3f})" if "median_ms" in result else "-"


def _rate(result: dict) -> str:
    if "gflops" in result:
        return f"{result['gflops']:.1f} GFLOP/s"
    return f"{result['gbs']:.1f} GB/s" if "gbs" in result else "-"


def _percent(result: dict) -> str:
    return f"{result['percent_of_peak']:.0f}%" if "percent_of_peak" in result else "-"


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value else "-"


def engine_problems(engines: dict) -> str:
    """The check column: `ok`, or each engine that failed or mismatched, and how."""
    problems = [
        f"{name} {r['status']}: {r['message']}"
        for name, r in engines.items()
        if r.get("status") != "ok"
    ]
    return "; ".join(problems) or "ok"


COLUMNS = [
    ("workload", 19, "<"),
    ("thr", 3, ">"),
    ("ours ms (min)", 19, ">"),
    ("ours rate", 15, ">"),
    ("%peak", 5, ">"),
    ("compile s", 9, ">"),
    ("numpy ms", 10, ">"),
    ("ours/np", 7, ">"),
    ("ort ms", 10, ">"),
    ("ort rate", 15, ">"),
    ("ort %pk", 7, ">"),
    ("ours/ort", 8, ">"),
    ("check", 0, "<"),
]


def aligned_table(columns, cells: list[list[str]], markdown: bool = False) -> str:
    """Rows of cells under `columns` ((title, width, alignment) each):
    aligned text, or a Markdown table (for issue notes)."""

    def line(row: list[str]) -> str:
        if markdown:
            return "| " + " | ".join(row) + " |"
        return "  ".join(f"{c:{a}{w}}" for c, (_, w, a) in zip(row, columns, strict=True)).rstrip()

    out = [line([c[0] for c in columns])]
    if markdown:
        out.append(line(["---" if a == "<" else "---:" for _, _, a in columns]))
    return "\n".join([*out, *map(line, cells)])


def table(rows: list[dict], markdown: bool = False) -> str:
    """One row per workload and thread count (COLUMNS)."""
    cells = []
    for row in rows:
        ours, numpy_, ort = (row["engines"][e] for e in ENGINES)
        compile_s = f"{row['compile_s']:.2f}" if row["compile_s"] is not None else "-"
        cells.append(
            [
                row["workload"],
                str(row["threads"]),
                _ms(ours),
                _rate(ours),
                _percent(ours),
                compile_s,
                f"{numpy_['median_ms']:.3f}" if "median_ms" in numpy_ else "-",
                _ratio(row["ours_over_numpy"]),
                f"{ort['median_ms']:.3f}" if "median_ms" in ort else "-",
                _rate(ort),
                _percent(ort),
                _ratio(row["ours_over_onnxruntime"]),
                engine_problems(row["engines"]),
            ]
        )
    return aligned_table(COLUMNS, cells, markdown)


def describe_peaks(peaks: dict) -> list[str]:
    lines = []
    for lanes, by_threads in peaks["fma_gflops"].items():
        figures = ", ".join(f"{g:.1f} GFLOP/s on {t} thread(s)" for t, g in by_threads.items())
        lines.append(f"FMA peak, {lanes}-lane f32 vectors: {figures}")
    figures = ", ".join(f"{g:.1f} GB/s on {t} thread(s)" for t, g in peaks["copy_gbs"].items())
    lines.append(f"copy bandwidth (64 MiB, read + write): {figures}")
    lines.append(
        f"% of peak: compute rows against the {peaks['lanes']}-lane FMA peak, "
        "memory rows against the copy bandwidth, at the row's thread count"
    )
    return lines


def write_json(path: Path, host: dict, settings: dict, peaks: dict, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"host": host, "settings": settings, "peaks": peaks, "rows": rows}
    path.write_text(json.dumps(document, indent=1) + "\n")
