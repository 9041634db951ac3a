"""Real models, exported from torch: BERT, GPT-2, Llama (grouped-query
attention, rotary embeddings, RMSNorm, SiLU gating), ViT, ResNet,
MobileNet-v2 and EfficientNet in small random-weight configurations, each
written by both torch exporters (TorchScript, opset 17; dynamo) with static
and with dynamic batch/sequence dims; and DeBERTa-v2, BLOOM, Phi, Swin,
ConvNeXt, MobileViT and SegFormer by the TorchScript exporter, for what
those seven do not have (relative-position attention, ALiBi, partial
rotary, shifted windows, unfold/fold, reduced-resolution attention)
(test/models/export_models.py made them; test/models/manifest.json says
what each is).

Each compiles from its .onnx file with `graphcompiler.compile(path)` and
matches the outputs torch computed on the saved inputs within 1e-4 of the
largest expected magnitude; a dynamic model is compiled the same way (no
input shapes: it specializes on the call's shapes) and runs both of its
saved input sets through the one compiled object. onnxruntime, where it is
installed, is held to the same tolerance, and each static TorchScript
export is also compiled as onnxruntime's graph optimizer saves it (its
com.microsoft fused ops). No torch here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import graphcompiler  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
MANIFEST = {m["file"]: m for m in json.loads((MODELS / "manifest.json").read_text())["models"]}
FILES = sorted(MANIFEST)
TOLERANCE = 1e-4


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want|."""
    scale = float(np.max(np.abs(want))) or 1.0
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def graph_inputs(path: Path) -> list[str]:
    """The graph's inputs, in order (initializers listed as inputs left out)."""
    model = onnx.load(str(path), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    return [v.name for v in model.graph.input if v.name not in initializers]


def input_sets(file: str) -> list[dict[str, np.ndarray]]:
    sets = []
    for name in MANIFEST[file]["data"]:
        with np.load(MODELS / name) as data:
            sets.append({key: data[key] for key in data.files})
    return sets


def check_outputs(results, data: dict[str, np.ndarray], label: str) -> None:
    results = list(results) if isinstance(results, tuple | list) else [results]
    expected = [data[f"output_{i}"] for i in range(sum(k.startswith("output_") for k in data))]
    assert len(results) == len(expected), f"{label}: {len(results)} outputs, want {len(expected)}"
    for index, (got, want) in enumerate(zip(results, expected, strict=True)):
        got = np.asarray(got)
        assert got.shape == want.shape, (
            f"{label} output {index}: shape {got.shape}, want {want.shape}"
        )
        error = relative_error(got, want)
        assert error <= TOLERANCE, f"{label} output {index}: error {error:.2e} > {TOLERANCE:.0e}"


def test_manifest_lists_every_model():
    on_disk = sorted(p.name for p in MODELS.glob("*.onnx"))
    assert on_disk == FILES
    for file, entry in MANIFEST.items():
        assert entry["exporter"] in ("torchscript", "dynamo"), file
        assert len(entry["data"]) == (2 if entry["dynamic"] else 1), file
        assert all((MODELS / name).exists() for name in entry["data"]), file
        assert entry["ort_max_rel_error"] <= TOLERANCE, file


@pytest.mark.parametrize("file", FILES)
def test_matches_torch(file):
    path = MODELS / file
    names = graph_inputs(path)
    compiled = graphcompiler.compile(path)
    for data in input_sets(file):  # a dynamic model's two shape sets: one compiled object
        shapes = {n: data[n].shape for n in names}
        check_outputs(compiled(*(data[n] for n in names)), data, f"{file} inputs {shapes}")


@pytest.mark.parametrize("file", FILES)
def test_onnxruntime_matches_torch(file):
    onnxruntime = pytest.importorskip("onnxruntime")
    path = MODELS / file
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert names == graph_inputs(path)
    for data in input_sets(file):
        check_outputs(session.run(None, {n: data[n] for n in names}), data, f"{file} onnxruntime")


OPTIMIZED_BY_ONNXRUNTIME = [f for f in FILES if f.endswith("_torchscript_static.onnx")]


@pytest.mark.parametrize("file", OPTIMIZED_BY_ONNXRUNTIME)
def test_matches_torch_as_onnxruntime_optimized_and_saved_it(file, tmp_path):
    """The model as onnxruntime's graph optimizer saves it at its extended
    level (FusedConv, FusedMatMul, FusedGemm, SkipLayerNormalization, ...:
    ops_fused.py, ops_contrib.py) still compiles and matches torch."""
    onnxruntime = pytest.importorskip("onnxruntime")
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / file)
    onnxruntime.InferenceSession(str(MODELS / file), options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(str(tmp_path / file))
    assert any(node.domain == "com.microsoft" for node in optimized.graph.node), file
    names = graph_inputs(tmp_path / file)
    compiled = graphcompiler.compile(tmp_path / file, cache=False)
    for data in input_sets(file):
        check_outputs(compiled(*(data[n] for n in names)), data, f"{file} optimized")
