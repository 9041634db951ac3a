"""graphcompiler's graph-level and tir-level passes, one module per pass."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

    from graphcompiler.registry import Registry

# pass name -> (module, class); imported when first used.
PASSES = {
    "graph-rewrite-rules": ("graphcompiler.passes.graph_rewrite_rules", "GraphRewriteRulesPass"),
    "graph-merge-matmul": ("graphcompiler.passes.graph_merge_matmul", "GraphMergeMatmulPass"),
    "graph-fuse": ("graphcompiler.passes.graph_fuse", "GraphFusePass"),
    "graph-plan-memory": ("graphcompiler.passes.graph_plan_memory", "GraphPlanMemoryPass"),
    "graph-schedule-ops": ("graphcompiler.passes.graph_schedule_ops", "GraphScheduleOpsPass"),
    "graph-constant-fold": ("graphcompiler.passes.graph_constant_fold", "GraphConstantFoldPass"),
    "tir-outline-parallel": ("graphcompiler.passes.tir_outline_parallel", "TirOutlineParallelPass"),
    "tir-parallel-regions": ("graphcompiler.passes.tir_parallel_regions", "TirParallelRegionsPass"),
    "convert-tir-to-llvm": ("graphcompiler.lowering.tir_to_llvm", "ConvertTirToLlvmPass"),
    "convert-graph-to-tir": ("graphcompiler.lowering.graph_to_tir", "ConvertGraphToTirPass"),
}

# The stages of gc-cpu-pipeline; graphcompiler.compile runs them one by one
# to keep each stage's text.
GRAPH_PASSES = (
    "graph-merge-matmul",
    "graph-constant-fold",
    "func.func(canonicalize,cse)",
    "graph-rewrite-rules",
    "graph-fuse",
    "graph-schedule-ops",
)
GRAPH_STAGE = ",".join(GRAPH_PASSES)
TIR_STAGE = "convert-graph-to-tir,graph-plan-memory"
LLVM_STAGE = "tir-outline-parallel,tir-parallel-regions,convert-tir-to-llvm"

# name -> (pipeline elements, description)
PIPELINES = {
    "gc-cpu-pipeline": (
        f"{GRAPH_STAGE},{TIR_STAGE},{LLVM_STAGE}",
        "Graph IR to the llvm dialect for the CPU: optimize the graph, lower to Tensor IR, then to LLVM",
    ),
    "tir-to-llvm": (
        LLVM_STAGE,
        "Tensor IR to the llvm dialect: outline parallel loops, group them in regions, then convert",
    ),
}


def _loader(module: str, attribute: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module), attribute)


def register_passes(registry: Registry) -> None:
    """Register graphcompiler's own passes and named pipelines with the tools."""
    for name, (module, attribute) in PASSES.items():
        registry.register_pass(_loader(module, attribute), name)
    for name, (pipeline, description) in PIPELINES.items():
        registry.register_pipeline(name, pipeline, description)
