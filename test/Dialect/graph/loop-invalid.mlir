// graph.loop's verifier: its types against the step function's signature,
// the sequences' common length, and the step function's existence.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @missing_step(%s: tensor<4xf32>, %xs: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{no graph function @nowhere in the module}}
  %total, %sums = graph.loop @nowhere(%s) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  func.return %total : tensor<4xf32>
}

// -----

func.func @wrong_slice(%s: tensor<4xf32>, %xs: tensor<8x3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@step takes (tensor<4xf32>, tensor<4xf32>), the loop passes (tensor<4xf32>, tensor<3xf32>): the states, a slice of each sequence, the invariants}}
  %total, %sums = graph.loop @step(%s) over (%xs) : (tensor<4xf32>, tensor<8x3xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  func.return %total : tensor<4xf32>
}
func.func private @step(%sum: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %next = graph.add %sum, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %next, %next : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @wrong_output(%s: tensor<4xf32>, %xs: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@step returns (tensor<4xf32>, tensor<4xf32>), the loop needs (tensor<4xf32>, tensor<2xf32>): the new states, a slice of each output sequence}}
  %total, %sums = graph.loop @step(%s) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x2xf32>)
  func.return %total : tensor<4xf32>
}
func.func private @step(%sum: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %next = graph.add %sum, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %next, %next : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @uneven_sequences(%s: tensor<4xf32>, %xs: tensor<8x4xf32>, %ys: tensor<7x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the sequences must have a first axis of one length (the number of steps)}}
  %total = graph.loop @step(%s) over (%xs, %ys) : (tensor<4xf32>, tensor<8x4xf32>, tensor<7x4xf32>) -> (tensor<4xf32>)
  func.return %total : tensor<4xf32>
}

// -----

func.func @final_state_type(%s: tensor<4xf32>, %xs: tensor<8x4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{a final state has type tensor<4xf16>, not tensor<4xf32>}}
  %total = graph.loop @step(%s) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf16>)
  func.return %total : tensor<4xf16>
}

// -----

func.func @no_sequence(%s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs at least one sequence (it sets the number of steps)}}
  %total = graph.loop @step(%s) over () : (tensor<4xf32>) -> (tensor<4xf32>)
  func.return %total : tensor<4xf32>
}

// -----

func.func @recursive(%s: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{@recursive loops back into @recursive: recursion is not supported}}
  %total, %sums = graph.loop @recursive(%s) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  func.return %total, %total : tensor<4xf32>, tensor<4xf32>
}
