"""graph-integer-matmul: a matmul of dequantized 8-bit operands (the QDQ
format of quantized models) becomes an integer matmul with the scales
applied to its sum, as oneDNN Graph folds dequantize -> matmul (and
convolutions likewise: integer_conv.py):

    %a = mul (sub (cast %qa : i8/u8 -> f32), %za_f), %sa     (DequantizeLinear)
    %b = mul (sub (cast %qb -> f32), %zb_f), %sb
    %y = matmul %a, %b
 -> %acc = matmul (sub (cast %qa -> i16), %za), (sub (cast %qb -> i16), %zb) : -> i32
    %y   = mul (cast %acc -> f32), (mul %sa, %sb)

where the zero points are integers cast to f32 (how the ONNX importer
writes DequantizeLinear) and the scales factor out of the sum: one value
for A, one value or one per output column for B. The integer sum is exact
(8-bit operands minus their zero points fit in i16, products and sums in
i32); the pass's second rewrite (eight_bit_matmul.py) then multiplies the
8-bit values themselves, u8 by s8, and subtracts the zero points' terms
after, which is what the ONNX importer's integer ops get too. The float
result differs from the dequantized f32 product only by that
product's rounding. Anything else (per-row scales of A, scales along K,
other element types) stays as it is, and so does a product of two
activations (B computed at run time, as the attention's keys): packing both
operands into pairs per call cost more than the pairs saved (BERT-base QDQ,
1 thread: 259 ms against 239 ms with those products in f32).

Runs first in the graph stage: constant folding would otherwise fold a
dequantized weight into an f32 constant and the pattern would be gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import substitute_if_typed
from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass
from graphcompiler.passes.graph import eight_bit_matmul, integer_conv, quantized_movement
from graphcompiler.passes.graph.dequantized import (
    centered_i16,
    dequantized,
    one_value,
    scaled_product,
    shape_of,
)
from graphcompiler.runtime.microkernels import byte_quads
from graphcompiler.target.description import get_target

f32, i32 = Float32Type(), IntegerType(32)


def _per_column(value: SSAValue | None, columns: int, transposed: bool) -> bool:
    """One value, or one per column of B ([N] / [1, N]; [N, 1] transposed)."""
    shape = shape_of(value)
    if one_value(value):
        return True
    if transposed:
        return len(shape) == 2 and shape == [columns, 1]
    return shape[-1] == columns and all(size == 1 for size in shape[:-1]) and len(shape) <= 2


def rewrite(matmul: graph.MatmulOp) -> bool:
    """Rewrite `matmul` if both operands are dequantized as the module doc
    says; whether it did."""
    a, b = dequantized(matmul.a), dequantized(matmul.b)
    if a is None or b is None or matmul.a_transposed:
        return False
    if not isinstance(b.quantized.owner, graph.ConstantOp):
        return False  # see the module doc: a B computed at run time stays f32
    columns = matmul.result.type.get_shape()[-1]
    transposed = matmul.b_transposed
    if not (one_value(a.scale) and one_value(a.zero)):
        return False
    if not (_per_column(b.scale, columns, transposed) and _per_column(b.zero, columns, transposed)):
        return False
    ops: list[Operation] = []
    try:
        operands = [centered_i16(ops, a), centered_i16(ops, b)]
        shape = list(matmul.result.type.get_shape())
        acc = graph.MatmulOp.build_from(
            operands, TensorType(i32, shape), transpose_a=False, transpose_b=transposed
        )
        # B's scales per row of a transposed B ([N, 1]) are one per column
        per_column = [columns] if transposed and not one_value(b.scale) else None
        result = scaled_product(ops, acc, a.scale, b.scale, per_column)
    except VerifyException:
        return False
    return substitute_if_typed(matmul, ops, result)


@dataclass(frozen=True)
class GraphIntegerMatmulPass(FunctionPass):
    """Matmuls of dequantized 8-bit operands as integer matmuls (module
    doc), then every integer matmul of centered 8-bit values as a u8 x s8
    one with its zero points' terms (eight_bit_matmul.py); convolutions
    likewise, and max pools of dequantized values on the 8-bit values
    (integer_conv.py)."""

    name = "graph-integer-matmul"
    target: str = pass_option(
        "", "host, avx512, avx2 or generic (default: GC_TARGET, else the host)"
    )
    convolutions: str = pass_option(
        "auto",
        "auto (convolutions too where the target multiplies byte quads: VNNI or "
        "AMX-INT8; elsewhere they stay f32, faster than emulated quads), all or none",
    )
    STATISTICS = {
        "integer-matmuls": "matmuls of dequantized operands computed on integers",
        "u8-s8-matmuls": "integer matmuls on the 8-bit values, zero points subtracted after",
        "integer-convolutions": "convolutions of dequantized operands computed on integers",
        "u8-s8-convolutions": "integer convolutions on the 8-bit values, padded with the zero point",
        "8-bit-max-pools": "max pools of dequantized values run on the 8-bit values",
        "8-bit-moves": "reshapes and transposes of dequantized values run on the 8-bit values",
        "requantizations-dropped": "quantizations of a value dequantized with the same scale and zero point",
    }

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        def ops_of(kind: type) -> list:
            return [op for op in function.body.block.ops if isinstance(op, kind)]

        counts = self._moves_on_bytes(function)
        counts |= {
            "integer-matmuls": sum(rewrite(op) for op in ops_of(graph.MatmulOp)),
            "u8-s8-matmuls": sum(eight_bit_matmul.rewrite(op) for op in ops_of(graph.MatmulOp)),
            "8-bit-max-pools": sum(
                integer_conv.rewrite_max_pool(op) for op in ops_of(graph.MaxPool2dOp)
            ),
        }
        if self._rewrites_convolutions():
            counts["integer-convolutions"] = sum(
                integer_conv.rewrite_dequantized(op) for op in ops_of(graph.Conv2dOp)
            )
            counts["u8-s8-convolutions"] = sum(
                integer_conv.rewrite_eight_bit(op) for op in ops_of(graph.Conv2dOp)
            )
        return counts

    @staticmethod
    def _moves_on_bytes(function: func.FuncOp) -> dict[str, int]:
        """Reshapes and transposes of dequantized values on the 8-bit values,
        and requantizations to the same scale dropped (quantized_movement.py),
        in block order, so a chain of them is undone in one walk."""
        counts = {"8-bit-moves": 0, "requantizations-dropped": 0}
        for op in list(function.body.block.ops):
            if op.parent is None:  # replaced by an earlier rewrite
                continue
            if isinstance(op, quantized_movement.MOVES):
                counts["8-bit-moves"] += quantized_movement.rewrite_move(op)
            elif isinstance(op, graph.CastOp):
                counts["requantizations-dropped"] += quantized_movement.rewrite_requantize(op)
        return counts

    def _rewrites_convolutions(self) -> bool:
        if self.convolutions not in ("auto", "all", "none"):
            message = f"convolutions={self.convolutions}: expected auto, all or none"
            raise DiagnosticError(Diagnostic(Severity.ERROR, message))
        if self.convolutions != "auto":
            return self.convolutions == "all"
        try:
            return byte_quads(get_target(self.target))
        except ValueError as error:
            raise DiagnosticError(Diagnostic(Severity.ERROR, str(error))) from None
