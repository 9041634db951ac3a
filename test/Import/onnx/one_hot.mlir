// gc-translate --import-onnx of OneHot: the indices, negative ones wrapped by
// depth, compared with an iota constant along the new axis, then a select of
// the values' on and off elements.

// RUN: %python %S/Inputs/onnx_text.py %S/Inputs/one_hot.onnxtxt %t.onnx
// RUN: gc-translate --import-onnx %t.onnx --mlir-print-debuginfo | filecheck %s

// CHECK-LABEL: func.func @main(%idx: tensor<2x3xi64> loc(unknown)) -> tensor<2x4x3xf32> {
// CHECK:         %values = graph.constant dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32> loc("values")
// CHECK-NEXT:    %[[OFF:.*]] = graph.slice %values {starts = array<i64: 0>, ends = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32> loc("hot")
// CHECK-NEXT:    %[[ON:.*]] = graph.slice %values {starts = array<i64: 1>, ends = array<i64: 2>} : tensor<2xf32> -> tensor<1xf32> loc("hot")
// CHECK:         %[[NEGATIVE:.*]] = graph.less %idx, %{{.*}} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi1>
// CHECK:         %[[DEPTH:.*]] = graph.constant dense<4> : tensor<i64>
// CHECK-NEXT:    %[[WRAPPED:.*]] = graph.add %idx, %[[DEPTH]]
// CHECK-NEXT:    %[[INDEX:.*]] = graph.select %[[NEGATIVE]], %[[WRAPPED]], %idx
// CHECK-NEXT:    %[[COLUMN:.*]] = graph.reshape %[[INDEX]] : tensor<2x3xi64> -> tensor<2x1x3xi64>
// CHECK-NEXT:    %[[IOTA:.*]] = graph.constant dense<{{\[\[\[}}0], [1], [2], [3]]]> : tensor<1x4x1xi64>
// CHECK-NEXT:    %[[HOT:.*]] = graph.equal %[[COLUMN]], %[[IOTA]] : (tensor<2x1x3xi64>, tensor<1x4x1xi64>) -> tensor<2x4x3xi1>
// CHECK-NEXT:    %y = graph.select %[[HOT]], %[[ON]], %[[OFF]] : (tensor<2x4x3xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x3xf32> loc("hot")
// CHECK-NEXT:    func.return %y : tensor<2x4x3xf32>

// RUN: gc-run %t.onnx --random-inputs --check-reference | filecheck %s --check-prefix=EXEC
// EXEC: output #0: matches the reference
