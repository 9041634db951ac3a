"""`cse`: xDSL's common subexpression elimination, with weights keyed by a
sample of their bytes.

xDSL's CSE finds an op's equal by a hash of its attributes, and a dense
attribute hashes every byte it holds: the first `cse` over BERT-base took
0.3 s of its cold compile hashing 440 MB of weights (Python caches the hash
of a bytes object, so later runs were quick). MLIR hashes an attribute by
its uniqued storage, in constant time. Here a `graph.constant` of
WEIGHT_KEY_MIN_BYTES or more hashes its result type, size and
WEIGHT_KEY_SAMPLES sampled lines of bytes instead. Only the hash changes:
ops whose hashes match are still compared attribute by attribute
(xDSL's OperationInfo.__eq__), so the same ops merge as before.

The key is installed into xDSL's OperationInfo when this module is
imported (the pass registry imports it to run `cse`); xDSL's driver builds
its keys inside, with no hook to pass another key.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms import common_subexpression_elimination as xdsl_cse

WEIGHT_KEY_MIN_BYTES = 1 << 16
"""Constants from this size on are hashed by a sample of their bytes."""

WEIGHT_KEY_SAMPLES = 64
"""64-byte lines sampled, evenly spaced, first and last included."""

_full_hash = vars(xdsl_cse.OperationInfo).get("full_hash", xdsl_cse.OperationInfo.__hash__)
xdsl_cse.OperationInfo.full_hash = _full_hash  # xDSL's own, kept should this module load again


def _sampled(data: bytes) -> tuple[int, bytes]:
    step = max(64, (len(data) - 64) // (WEIGHT_KEY_SAMPLES - 1))
    lines = [data[at : at + 64] for at in range(0, len(data) - 64, step)]
    return len(data), b"".join([*lines, data[-64:]])


def _payload(info: xdsl_cse.OperationInfo) -> bytes | None:
    """The bytes of a big graph.constant's value, else None."""
    op = info.op
    if op.name != "graph.constant" or op.regions or op.operands:
        return None
    value = op.properties.get("value", op.attributes.get("value"))
    if not isinstance(value, DenseIntOrFPElementsAttr) or not isinstance(value.data, BytesAttr):
        return None
    data = value.data.data
    return data if len(data) >= WEIGHT_KEY_MIN_BYTES else None


def _weight_key_hash(info: xdsl_cse.OperationInfo) -> int:
    data = _payload(info)
    if data is None:
        return _full_hash(info)
    others = {**info.op.attributes, **info.op.properties}
    others.pop("value")
    return hash(
        (
            info.name,
            _sampled(data),
            sum(hash(item) for item in others.items()),
            hash(info.op.result_types),
        )
    )


xdsl_cse.OperationInfo.__hash__ = _weight_key_hash


class CommonSubexpressionElimination(ModulePass):
    """xDSL's `cse` (see the module's docstring for its weights' key)."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        xdsl_cse.cse(op)
