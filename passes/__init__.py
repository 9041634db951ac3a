"""graphcompiler's passes: `graph/` on Graph IR, `tir/` on Tensor IR, and view-op-graph on any IR."""
