"""frontends/onnx/weights_in_file.py: a model's big initializers stay in its
file until imported, read once; the model imports exactly as onnx.load's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.driver.loading import load_module  # noqa: E402
from graphcompiler.frontends.onnx import weights_in_file  # noqa: E402
from graphcompiler.frontends.onnx.weights_in_file import (  # noqa: E402
    initializer_array,
    load_weights_in_file,
)

MODELS = Path(__file__).resolve().parent.parent / "models"
ROWS = 640  # a 640 x 512 f32 weight is 1.25 MiB: past IN_FILE_MIN_BYTES


def _write_model(path: Path, weight: np.ndarray, batch: int | str = 2) -> None:
    """y = x @ w + b, x of [batch, 640]."""
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["y"]),
        ],
        "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, weight.shape[1]])],
        [
            numpy_helper.from_array(weight, "w"),
            numpy_helper.from_array(np.ones(512, np.float32), "b"),
        ],
    )
    path.write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    )


def _weight(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((ROWS, 512)).astype(np.float32)


def _x(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, ROWS)).astype(np.float32)


def test_a_big_initializer_is_left_in_its_file(tmp_path):
    path, weight = tmp_path / "dense.onnx", _weight(0)
    _write_model(path, weight)
    model = load_weights_in_file(path)
    big, small = model.graph.initializer
    entries = {entry.key: entry.value for entry in big.external_data}
    assert big.data_location == TensorProto.EXTERNAL and not big.raw_data
    assert entries["location"] == "dense.onnx" and entries["basepath"] == str(tmp_path)
    offset, length = int(entries["offset"]), int(entries["length"])
    assert path.read_bytes()[offset : offset + length] == weight.tobytes()
    assert small.data_location == TensorProto.DEFAULT and small.raw_data
    np.testing.assert_array_equal(initializer_array(big), weight)
    compiled = graphcompiler.compile(path, cache=False)
    np.testing.assert_allclose(compiled(_x(2)), _x(2) @ weight + 1, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "name", ["bert_torchscript_static", "gpt2_dynamo_static", "resnet_torchscript_static"]
)
def test_exported_models_import_as_from_onnx_load(name, monkeypatch):
    """Every initializer of 9 KiB or more left in the file (shape inference
    reads those up to 8 KiB): the same module as onnx.load's model gives."""
    path = MODELS / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path.name} is not in test/models")
    monkeypatch.setattr(weights_in_file, "IN_FILE_MIN_BYTES", 9 << 10)
    model = load_weights_in_file(path)
    assert model is not None
    assert any(t.data_location == TensorProto.EXTERNAL for t in model.graph.initializer)
    assert str(load_module(model)) == str(load_module(onnx.load(str(path))))


def test_a_model_behind_a_symbolic_link(tmp_path):
    """As in a Hugging Face cache: the weights are read from the real file."""
    (tmp_path / "blobs").mkdir()
    (tmp_path / "snapshot").mkdir()
    real, weight = tmp_path / "blobs" / "0123abcd", _weight(4)
    _write_model(real, weight)
    link = tmp_path / "snapshot" / "model.onnx"
    link.symlink_to(real)
    compiled = graphcompiler.compile(link, cache=False)
    np.testing.assert_allclose(compiled(_x(2)), _x(2) @ weight + 1, rtol=1e-5, atol=1e-4)


def test_a_damaged_file_is_left_to_onnx_load(tmp_path):
    path = tmp_path / "dense.onnx"
    _write_model(path, _weight(1))
    path.write_bytes(path.read_bytes()[:-1000])
    assert load_weights_in_file(path) is None
    with pytest.raises(graphcompiler.frontends.onnx.OnnxImportError, match="dense.onnx"):
        load_module(path)


def test_a_specializing_graph_keeps_the_weights_it_read(tmp_path):
    """Imported again for each new shape: a file rewritten meanwhile does
    not change the weights of a graph compiled from the first version."""
    path, weight = tmp_path / "dense.onnx", _weight(2)
    _write_model(path, weight, batch="batch")
    compiled = graphcompiler.compile(path, cache=False)
    np.testing.assert_allclose(compiled(_x(2)), _x(2) @ weight + 1, rtol=1e-5, atol=1e-4)
    _write_model(path, _weight(3), batch="batch")
    np.testing.assert_allclose(compiled(_x(3)), _x(3) @ weight + 1, rtol=1e-5, atol=1e-4)


def _reading_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name.startswith("gc-read-weights")]


def test_weights_are_read_while_nodes_convert_and_the_reader_ends(tmp_path, monkeypatch):
    """The in-file weights are read on the reading thread, in file order,
    the values exactly the file's; the thread has ended when the import
    returns, and after a failed import too."""
    import threading

    from graphcompiler.frontends.onnx import import_onnx

    path, weight = tmp_path / "dense.onnx", _weight(3)
    _write_model(path, weight)
    readers = []
    read = weights_in_file.initializer_array

    def recording(tensor):
        readers.append((tensor.name, threading.current_thread().name))
        return read(tensor)

    monkeypatch.setattr(weights_in_file, "initializer_array", recording)
    module = import_onnx(path)
    assert [(name, thread.split("_")[0]) for name, thread in readers] == [("w", "gc-read-weights")]
    assert not _reading_threads()
    compiled = graphcompiler.compile(module, cache=False)
    want = _x(2) @ weight + 1  # 640-term sums, in an order of the target's lanes
    np.testing.assert_allclose(compiled(_x(2)), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

    model = onnx.load(path)
    model.graph.node[1].op_type = "NoSuchOp"  # the import fails after the weights' reads began
    path.write_bytes(model.SerializeToString())
    with pytest.raises(Exception, match="NoSuchOp"):
        import_onnx(path)
    assert not _reading_threads()


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_external_data_short_or_missing_is_an_import_error(tmp_path, damage):
    """A weights file cut short or gone is an import error naming the
    initializer (onnx's reason), from the reading thread too; gc-run says
    `error:`, not `internal error:`."""
    import subprocess
    import sys

    from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

    weight = _weight(4)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 512])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "dense.onnx"
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    if damage == "truncated":
        (tmp_path / "w.bin").write_bytes(b"\0" * 1000)
    else:
        (tmp_path / "w.bin").unlink()
    with pytest.raises(OnnxImportError, match="initializer 'w': "):
        import_onnx(path)
    assert not _reading_threads()
    run = subprocess.run(
        [sys.executable, "-m", "graphcompiler.tools.gc_run", str(path), "--random-inputs"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0 and "error: " in run.stderr and "internal" not in run.stderr
    assert "Traceback" not in run.stderr
