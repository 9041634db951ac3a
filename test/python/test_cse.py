"""`cse` (passes/cse.py): xDSL's CSE, big constants keyed by sampled bytes.

The same constants merge as with xDSL's full hash (equal keys are still
compared byte for byte), and keying a weight reads a sample of it, not all
of its bytes (hashing BERT-base's 440 MB took 0.3 s of a cold compile)."""

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import GraphBuilder, dense_constant
from graphcompiler.driver.registration import apply_pipeline
from graphcompiler.passes.cse import WEIGHT_KEY_MIN_BYTES


def _after_cse(values: list[DenseIntOrFPElementsAttr]) -> tuple[int, list]:
    """(constants left, the constant each add reads) after cse on a graph
    that adds each value to the input, one after the other."""
    builder = GraphBuilder()
    x = builder.make_input(values[0].type.get_shape())
    for value in values:
        constant = builder.make("constant", [], value=value)
        x = builder.make("add", [x, constant.results[0]]).results[0]
    builder.make_output(x)
    module = builder.module()
    apply_pipeline(module, "builtin.module(func.func(cse))")
    constants = sum(isinstance(op, graph.ConstantOp) for op in module.walk())
    read = [op.operands[1].owner for op in module.walk() if isinstance(op, graph.AddOp)]
    return constants, read


def test_equal_weights_merge_and_weights_differing_between_samples_do_not():
    weights = np.random.default_rng(0).standard_normal((512, 512), dtype=np.float32)
    assert weights.nbytes >= WEIGHT_KEY_MIN_BYTES  # 1 MiB: keyed by a sample
    changed = weights.copy()
    changed[256, 100] += 1.0  # between the sampled lines: the two keys collide
    values = [dense_constant(array) for array in (weights, weights.copy(), changed, weights)]
    constants, read = _after_cse(values)
    assert constants == 2
    assert read[0] is read[1] is read[3] and read[2] is not read[0]
    kept = np.frombuffer(read[2].properties["value"].data.data, np.float32)
    np.testing.assert_array_equal(kept.reshape(512, 512), changed)


def test_small_constants_merge_as_before():
    small = np.arange(16, dtype=np.float32).reshape(4, 4)
    constants, read = _after_cse([dense_constant(a) for a in (small, small.copy(), small + 1)])
    assert constants == 2 and read[0] is read[1] is not read[2]


class _UnhashableBytes(bytes):
    def __hash__(self):
        raise AssertionError("a weight's whole payload was hashed")


def test_a_weight_is_keyed_without_hashing_its_payload():
    attribute = dense_constant(np.ones((256, 256), np.float32))
    payload = BytesAttr(_UnhashableBytes(attribute.data.data))
    unhashable = DenseIntOrFPElementsAttr(attribute.type, payload)
    constants, _ = _after_cse([unhashable, unhashable])
    assert constants == 1
