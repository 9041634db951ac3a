// --show-dialect-doc prints a dialect's op reference in Markdown, generated
// from the op definitions (docs/dialects/*.md are this output).
// RUN: gc-opt --show-dialect-doc=graph | filecheck %s
// RUN: gc-opt --show-dialect-doc=tir | filecheck %s --check-prefix=TIR
// RUN: not gc-opt --show-dialect-doc=grahp 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CHECK:      # The `graph` dialect
// CHECK:      ### `graph.batch_norm`
// CHECK:      | operand | count | type |
// CHECK-NEXT: | --- | --- | --- |
// CHECK-NEXT: | `input` | one | tensor |
// CHECK-NEXT: | `scale` | one | tensor |
// CHECK-NEXT: | `bias` | one | tensor |
// CHECK-NEXT: | `mean` | one | tensor |
// CHECK-NEXT: | `var` | one | tensor |

// CHECK:      ### `graph.conv2d`
// CHECK-EMPTY:
// CHECK-NEXT: 2-D convolution, input NCHW, weight OIHW (I = C / groups).
// CHECK:      `padding` is [top, left, bottom, right]
// CHECK:      | property | type | default |
// CHECK-NEXT: | --- | --- | --- |
// CHECK-NEXT: | `strides` | `array<i64: ...>` | `array<i64: 1, 1>` |
// CHECK-NEXT: | `padding` | `array<i64: ...>` | `array<i64: 0, 0, 0, 0>` |
// CHECK:      Example:
// CHECK-EMPTY:
// CHECK-NEXT: ```mlir
// CHECK-NEXT: %y = graph.conv2d %x, %w

// TIR:        # The `tir` dialect
// TIR:        ### `tir.for`

// UNKNOWN: gc-opt: error: no dialect named 'grahp'; did you mean 'graph'?
