"""Differential tests: random graphs (test/fuzz/random_graphs.py) compiled
with the default pipeline compute what the reference interpreter computes,
with 1 and 2 threads bitwise identical; and each graph pass alone keeps the
examples' results.

The generator covers element-wise ops, comparisons, select, casts,
batched/transposed matmuls, multi-axis reductions, softmax, layer/batch norm,
conv2d, pooling, concat, slice, broadcast_to, reshape (rank 0 too), with
dims like 1/3/17/65/127 and NaN/inf inputs. Each graph runs in a worker
process, so a crash fails its test with the graph's text instead of ending
the run. `python -m test.fuzz --random-graphs 1000` runs a thousand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver.registration import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE
from graphcompiler.interpreters import reference
from graphcompiler.test.fuzz import random_graphs
from graphcompiler.test.fuzz.pool import Pool

CI_GRAPHS = 40


@pytest.fixture(scope="module")
def pool():
    with Pool(workers=1, timeout=60.0) as pool:
        yield pool


@pytest.mark.parametrize("seed", range(CI_GRAPHS))
def test_random_graph_matches_reference(pool, seed):
    graph = random_graphs.case(seed)
    outcome = pool.run("graph", graph)
    pipeline = graph.pipeline or "the default pipeline"
    assert not outcome.failed, (
        f"random graph {seed} ({pipeline}): {outcome.describe()}\n{graph.text}"
    )


def test_the_generator_covers_every_op_family():
    names, attention_types = set(), set()
    for seed in range(200):  # generating is cheap; compiling is what CI limits
        for op in random_graphs.generate(seed).builder.block.ops:
            names.add(op.name)
            if op.name == "graph.attention":
                attention_types.add(str(op.results[0].type.element_type))
    for op in ["conv2d", "max_pool2d", "avg_pool2d", "layer_norm", "batch_norm", "gelu",
               "concat", "slice", "broadcast_to", "select", "greater", "cast", "matmul",
               "reduce_sum", "softmax", "transpose", "reshape", "attention"]:  # fmt: skip
        assert f"graph.{op}" in names
    assert attention_types == {"f32", "f16", "bf16"}
    arrays = [a for seed in range(CI_GRAPHS) for a in random_graphs.generate(seed).arrays]
    assert any(array.ndim == 0 for array in arrays)
    assert {1, 3, 17}.issubset({dim for array in arrays for dim in array.shape})
    assert any(np.isnan(array).any() for array in arrays if array.dtype.kind == "f")


@pytest.mark.parametrize(
    ("got", "want", "problem"),
    [
        ([1.0, np.nan], [1.0, np.nan], None),
        ([1.0, 2.0], [1.0, np.nan], "NaN positions differ: at [1]"),
        ([np.inf, 2.0], [-np.inf, 2.0], "infinities differ: at [0]"),
        ([1.0, 2.001], [1.0, 2.0], "at [1] got 2.0009999"),
        ([1.0, 2.0000001], [1.0, 2.0], None),
    ],
)
def test_compare_wants_nan_and_inf_where_the_reference_has_them(got, want, problem):
    found = random_graphs.compare(np.array(got, np.float32), np.array(want, np.float32), 1e-5)
    assert found == problem or (problem and found and found.startswith(problem))


def _as_tuple(results) -> tuple:
    return results if isinstance(results, tuple) else (results,)


def _assert_close(got: np.ndarray, want: np.ndarray) -> None:
    scale = float(np.abs(want).max(initial=0.0)) + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The examples with a @main graph small enough to interpret quickly.
GRAPH_EXAMPLES = ["attention.mlir", "cnn.mlir", "mlp.mlir", "transformer.mlir"]


@pytest.mark.parametrize("example", GRAPH_EXAMPLES)
@pytest.mark.parametrize("pass_name", GRAPH_PASSES)
def test_each_graph_pass_keeps_examples_equal_to_reference(pass_name, example):
    """Each graph pass alone, then lowering, keeps an example's results."""
    text = (EXAMPLES / example).read_text()
    function = next(op for op in graphcompiler.parse(text).ops if op.sym_name.data == "main")
    rng = np.random.default_rng(1)
    arrays = [
        rng.uniform(-1, 1, arg.type.get_shape()).astype(np.float32)
        for arg in function.body.block.args
    ]
    expected = _as_tuple(reference.run(text, *arrays))
    pipeline = f"builtin.module({pass_name},{TIR_STAGE},{LLVM_STAGE})"
    actual = _as_tuple(graphcompiler.compile(text, pipeline=pipeline)(*arrays))
    for got, want in zip(actual, expected, strict=True):
        _assert_close(got, want)
