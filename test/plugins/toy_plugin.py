"""A third-party plugin for the tests: a `toy` dialect, two passes and a
named pipeline, registered without touching graphcompiler's sources.

Loaded with `gc-opt --load-plugin=toy_plugin` (module on PYTHONPATH), with
`--load-plugin=path/to/toy_plugin.py`, or through a `graphcompiler.plugins`
entry point.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import I64, IntegerAttr, ModuleOp, i64
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def, traits_def
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from graphcompiler.ir.diagnostics import emit_error, emit_warning
from graphcompiler.ir.pass_statistics import record

LIMIT = 1000


@irdl_op_definition
class ToyConstantOp(IRDLOperation):
    """An i64 constant below 1000."""

    name = "toy.constant"
    value = prop_def(IntegerAttr[I64])
    result = result_def(I64)
    assembly_format = "$value attr-dict"
    traits = traits_def(Pure())

    def __init__(self, value: int):
        super().__init__(properties={"value": IntegerAttr(value, i64)}, result_types=[i64])

    def verify_(self) -> None:
        if self.value.value.data >= LIMIT:
            raise VerifyException(f"value {self.value.value.data} must be below {LIMIT}")


Toy = Dialect("toy", [ToyConstantOp])


@dataclass(frozen=True)
class ToyScaleConstantsPass(ModulePass):
    """Multiply every toy.constant by `factor`."""

    name = "toy-scale-constants"
    factor: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        constants = [constant for constant in op.walk() if isinstance(constant, ToyConstantOp)]
        for constant in constants:
            scaled = ToyConstantOp(constant.value.value.data * self.factor)
            scaled.location = constant.location
            Rewriter.replace_op(constant, scaled)
        record(self, "constants-scaled", len(constants), "toy.constant ops multiplied")


@dataclass(frozen=True)
class ToyCheckSignPass(ModulePass):
    """Reject negative toy.constants; warn about zero ones."""

    name = "toy-check-sign"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for constant in op.walk():
            if isinstance(constant, ToyConstantOp):
                value = constant.value.value.data
                if value == 0:
                    emit_warning(constant, "zero constant")
                elif value < 0:
                    emit_error(constant, f"negative constant {value}")


def register(registry) -> None:
    registry.register_dialect(Toy)
    registry.register_pass(ToyScaleConstantsPass)
    registry.register_pass(ToyCheckSignPass)
    registry.register_pipeline(
        "toy-pipeline",
        "toy-scale-constants{factor=3},func.func(cse)",
        "Triple the toy constants, then CSE each function",
    )
