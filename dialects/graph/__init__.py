"""The Graph IR dialect `graph`: tensor ops inside `func.func` (the oneDNN Graph Compiler design's Graph IR).

A graph is a `func.func` over statically shaped builtin tensors: its arguments
are the graph inputs, its `func.return` operands the outputs. Every op here
infers its result type from its operands and properties (`infer_type`, used
by the Python builder) and its verifier checks the declared result against
that inference, so a wrong shape, rank, axis, permutation or element type is
reported naming the operand and the expected vs. actual value.

Parameters are properties: integer lists are `array<i64: ...>`, flags are
`true`/`false`, float parameters are f32. In the custom form they are written
in the attribute dictionary, defaults omitted:

    %1 = graph.softmax %0 {axis = 1 : i64} : tensor<4x8xf32>
    %2 = graph.add %1, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>

A tensor's memory format is a `#graph.format<...>` encoding (plain tensors
have none), e.g. `tensor<64x32xf32, #graph.format<"KN" -> "NK16k16n">>`.
"""

# ops.py: the dialect and every name of the op modules it assembles (base.py,
# elementwise.py, matmul.py, reductions.py, normalization.py, shape.py,
# constant.py, conv_pool.py, fused.py, loop.py); canonicalization.py: their patterns;
# checks.py: attribute checks; builders.py: building graphs from Python.

from graphcompiler.dialects.graph import canonicalization  # noqa: F401 - fills the ops' patterns
from graphcompiler.dialects.graph.ops import *  # noqa: F403
