// gc-translate --import-onnx: an ONNX model as a graph function (mlir-translate's
// convention). Inputs are arguments named as in the model, initializers constants,
// every op is located at its ONNX node: loc("fc").

// RUN: %python %S/Inputs/onnx_text.py %S/Inputs/dense.onnxtxt %t.onnx
// RUN: gc-translate --import-onnx %t.onnx --input-shape x=2x4 --mlir-print-debuginfo | filecheck %s
// RUN: gc-translate --import-onnx %t.onnx --input-shape x=2x4 --mlir-elide-elementsattrs-if-larger 4 | filecheck %s --check-prefix=ELIDED
// RUN: not gc-translate --import-onnx %t.onnx 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: gc-translate --import-onnx %t.onnx --input-shape x=2x4 | gc-opt | filecheck %s --check-prefix=ROUNDTRIP

// CHECK-LABEL: func.func @main(%x: tensor<2x4xf32> loc(unknown)) -> tensor<2x3xf32> {
// CHECK-NEXT:    %W = graph.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00], {{.*}}> : tensor<4x3xf32> loc("W")
// CHECK-NEXT:    %0 = graph.matmul %x, %W : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("fc")
// CHECK-NEXT:    %b = graph.constant dense<1.000000e+00> : tensor<3xf32> loc("b")
// CHECK-NEXT:    %h = graph.add %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("fc")
// CHECK-NEXT:    %y = graph.relu %h : tensor<2x3xf32> loc("act")
// CHECK-NEXT:    func.return %y : tensor<2x3xf32>

// ELIDED: %W = graph.constant dense_resource<__elided__> : tensor<4x3xf32>
// ELIDED: %b = graph.constant dense<1.000000e+00> : tensor<3xf32>

// SYMBOLIC: gc-translate: error: {{.*}}.onnx: input 'x' has symbolic dimension 'N' (shape Nx4); give a static shape, e.g. --input-shape x=1x4

// ROUNDTRIP: %y = graph.relu %h : tensor<2x3xf32>

// RUN: %python %S/Inputs/onnx_text.py %S/Inputs/unsupported.onnxtxt %t.unsupported.onnx
// RUN: not gc-translate --import-onnx %t.unsupported.onnx 2>&1 | filecheck %s --check-prefix=NODE-ERROR
// NODE-ERROR: gc-translate: error: {{.*}}.onnx: node 'decode' (ImageDecoder): operator is not supported
// NODE-ERROR-NOT: Traceback

// gc-run reads .onnx files directly.
// RUN: gc-run %t.onnx --input-shape x=2x4 --random-inputs --check-reference | filecheck %s --check-prefix=EXEC
// EXEC: output #0: matches the reference
