"""Models with symbolic input dims: compiled once per set of input shapes
(driver/specializing.py), their constants shared between the programs
(runtime/jit/shared_data.py), and gc-run taking the shapes from its inputs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.driver.specializing import SpecializingGraph  # noqa: E402
from graphcompiler.runtime.jit import shared_data  # noqa: E402

WIDTH = 64  # a 64x64 f32 weight is 16 KiB: big enough to leave the machine code


def _weight(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((WIDTH, WIDTH)).astype(np.float32)


def _model(weight: np.ndarray) -> onnx.ModelProto:
    """y = reshape(x @ w, [batch, seq * WIDTH]) + bias[seq-broadcast], the
    target shape computed in the graph as exporters do (Shape, Gather,
    Mul, Concat), the mask's batch and sequence dims symbolic."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Gather", ["shape", "one"], ["seq"], axis=0),
        helper.make_node("Mul", ["seq", "width"], ["flat"]),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        helper.make_node("Unsqueeze", ["flat", "axes"], ["flat1"]),
        helper.make_node("Concat", ["batch1", "flat1"], ["target"], axis=0),
        helper.make_node("Reshape", ["xw", "target"], ["flat_xw"]),
        helper.make_node("Cast", ["mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["mask_f", "axes"], ["count"], keepdims=1),
        helper.make_node("Add", ["flat_xw", "count"], ["y"]),
    ]
    initializers = [
        numpy_helper.from_array(weight, "w"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array(WIDTH, np.int64), "width"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
    ]
    graph = helper.make_graph(
        nodes,
        "dynamic",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", WIDTH]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _expected(x: np.ndarray, mask: np.ndarray, weight: np.ndarray) -> np.ndarray:
    flat = (x @ weight).reshape(x.shape[0], -1)
    return flat + mask.astype(np.float32).sum(-1, keepdims=True)


def _inputs(batch: int, seq: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, seq, WIDTH)).astype(np.float32)
    return x, rng.integers(0, 2, (batch, seq)).astype(np.int64)


def test_each_new_set_of_shapes_is_compiled_once():
    weight = _weight(1)
    compiled = graphcompiler.compile(_model(weight), cache=False)
    assert isinstance(compiled, SpecializingGraph)
    for batch, seq in [(1, 3), (4, 5), (1, 3)]:
        x, mask = _inputs(batch, seq)
        np.testing.assert_allclose(
            compiled(x, mask), _expected(x, mask, weight), rtol=1e-5, atol=1e-4
        )
    assert compiled.specializations == [
        {"x": (1, 3, WIDTH), "mask": (1, 3)},
        {"x": (4, 5, WIDTH), "mask": (4, 5)},
    ]
    x, mask = _inputs(2, 2)
    np.testing.assert_allclose(
        compiled(mask=mask, x=x), _expected(x, mask, weight), rtol=1e-5, atol=1e-4
    )
    assert len(compiled.specializations) == 3
    assert compiled.specialization({"x": (2, 2, WIDTH), "mask": (2, 2)}).signature.input_names == [
        "x",
        "mask",
    ]


def test_shapes_compiled_before_are_found_without_the_checks(monkeypatch):
    """A call with shapes already compiled (by position, name or both) is a
    lookup: the dims' checks ran when those shapes were compiled."""
    weight = _weight(2)
    compiled = graphcompiler.compile(_model(weight), cache=False)
    x, mask = _inputs(2, 3)
    compiled(x, mask)
    monkeypatch.setattr(compiled, "_checked", lambda shapes: pytest.fail("checked again"))
    for positional, named in (
        ((x, mask), {}),
        ((), {"mask": mask, "x": x}),
        ((x,), {"mask": mask}),
    ):
        np.testing.assert_allclose(
            compiled(*positional, **named), _expected(x, mask, weight), rtol=1e-5, atol=1e-4
        )
    monkeypatch.undo()
    with pytest.raises(ValueError, match="dim 'seq' is 3 in input 'x' but 4 in input 'mask'"):
        compiled(x, np.zeros((2, 4), np.int64))  # a new set of shapes is checked


def test_specializations_share_the_weights():
    """Two shapes whose matmuls pack the weight alike (as many rows in
    all: 2 x 12 and 4 x 6 tokens) read one copy of it (a shape that picks
    another register tile packs its own)."""
    weight = _weight(2)
    compiled = graphcompiler.compile(_model(weight), cache=False)
    compiled(*_inputs(2, 12))
    first = shared_data.resident_bytes()
    compiled(*_inputs(4, 6))
    assert shared_data.resident_bytes() == first
    texts = [compiled.specialization(s).llvm_ir for s in compiled.specializations]
    names = [{w for w in t.split() if w.startswith('@"gc.data.')} for t in texts]
    assert names[0] and names[0] == names[1]
    other = graphcompiler.compile(_model(_weight(3)), cache=False)
    assert other(*_inputs(2, 8)).shape == (2, 8 * WIDTH)
    assert shared_data.resident_bytes() > first  # other weights, other data


def test_symbols_must_agree_and_fixed_dims_must_match():
    compiled = graphcompiler.compile(_model(_weight(1)), cache=False)
    x, _ = _inputs(2, 3)
    with pytest.raises(ValueError, match="dim 'seq' is 3 in input 'x' but 4 in input 'mask'"):
        compiled(x, np.zeros((2, 4), np.int64))
    with pytest.raises(ValueError, match=f"input 'x' dim 2 is {WIDTH}"):
        compiled(np.zeros((2, 3, 5), np.float32), np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="input 'mask' has rank 2"):
        compiled(x, np.zeros((2, 3, 1), np.int64))
    with pytest.raises(ValueError, match="missing inputs: mask"):
        compiled(x)
    assert compiled.specializations == []


def test_input_shapes_give_one_static_program():
    weight = _weight(1)
    compiled = graphcompiler.compile(
        _model(weight), input_shapes={"x": [2, 3, WIDTH], "mask": [2, 3]}, cache=False
    )
    assert not isinstance(compiled, SpecializingGraph)
    x, mask = _inputs(2, 3)
    np.testing.assert_allclose(compiled(x, mask), _expected(x, mask, weight), rtol=1e-5, atol=1e-4)


def test_gc_run_takes_the_shapes_from_its_inputs(tmp_path):
    weight = _weight(1)
    onnx.save(_model(weight), tmp_path / "model.onnx")
    x, mask = _inputs(3, 2)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "mask.npy", mask)
    run = [sys.executable, "-m", "graphcompiler.tools.gc_run", str(tmp_path / "model.onnx")]
    result = subprocess.run(
        [*run, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"mask={tmp_path / 'mask.npy'}",
         "--check-reference", "--print-output"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "output #0: matches the reference" in result.stdout
    result = subprocess.run(
        [*run, "--random-inputs"], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert result.returncode == 1
    assert "input 'x' has symbolic dimension 'batch'" in result.stderr
