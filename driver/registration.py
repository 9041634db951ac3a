"""Everything the tools know by name: graphcompiler's dialects, passes and
named pipelines beside xDSL's, then installed plugins (`default_registry`).

Dialects and passes are imported when first used, so a tool that runs one
pass does not import every other. The stages of `gc-cpu-pipeline` are named
here too: `graphcompiler.compile` runs them one by one to keep each stage's
text.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.passes import ModulePass

from graphcompiler.ir.pass_manager import Instrumentation, run_pipeline
from graphcompiler.ir.pipeline import build_pass_manager
from graphcompiler.ir.registry import Registry

# dialect name -> (module, Dialect object name)
DIALECTS = {
    "graph": ("graphcompiler.dialects.graph", "Graph"),
    "tir": ("graphcompiler.dialects.tir", "Tir"),
    "llvm": ("graphcompiler.dialects.llvm", "LLVM"),  # in place of xDSL's
}

# pass name -> (module, class)
PASSES = {
    "graph-rewrite-rules": ("graphcompiler.passes.graph.rewrite_rules", "GraphRewriteRulesPass"),
    "graph-integer-matmul": ("graphcompiler.passes.graph.integer_matmul", "GraphIntegerMatmulPass"),
    "graph-bf16-fpmath": ("graphcompiler.passes.graph.bf16_fpmath", "GraphBf16FpmathPass"),
    "graph-merge-matmul": ("graphcompiler.passes.graph.merge_matmul", "GraphMergeMatmulPass"),
    "graph-block-layout": ("graphcompiler.passes.graph.block_layout", "GraphBlockLayoutPass"),
    "graph-sink-pads": ("graphcompiler.passes.graph.sink_pads", "GraphSinkPadsPass"),
    "graph-fuse": ("graphcompiler.passes.graph.fuse", "GraphFusePass"),
    "graph-schedule-ops": ("graphcompiler.passes.graph.schedule_ops", "GraphScheduleOpsPass"),
    "graph-constant-fold": ("graphcompiler.passes.graph.constant_fold", "GraphConstantFoldPass"),
    "graph-lookup-tables": ("graphcompiler.passes.graph.lookup_tables", "GraphLookupTablesPass"),
    "tir-plan-memory": ("graphcompiler.passes.tir.plan_memory", "TirPlanMemoryPass"),
    "tir-outline-parallel": ("graphcompiler.passes.tir.outline_parallel", "TirOutlineParallelPass"),
    "tir-parallel-regions": ("graphcompiler.passes.tir.parallel_regions", "TirParallelRegionsPass"),
    "tir-profile-kernels": ("graphcompiler.passes.tir.profile_kernels", "TirProfileKernelsPass"),
    "tir-legalize-types": ("graphcompiler.passes.tir.legalize_types", "TirLegalizeTypesPass"),
    "tir-expand-math": ("graphcompiler.passes.tir.expand_math", "TirExpandMathPass"),
    "convert-graph-to-tir": ("graphcompiler.lowering.graph_to_tir", "ConvertGraphToTirPass"),
    "convert-tir-to-llvm": ("graphcompiler.lowering.tir_to_llvm", "ConvertTirToLlvmPass"),
    "view-op-graph": ("graphcompiler.passes.view_op_graph", "ViewOpGraphPass"),
    "cse": ("graphcompiler.passes.cse", "CommonSubexpressionElimination"),  # in place of xDSL's
}

GRAPH_PASSES = (
    "graph-integer-matmul",
    "graph-merge-matmul",
    "graph-constant-fold",
    "graph-sink-pads",
    "func.func(canonicalize,cse)",
    "graph-lookup-tables",
    "graph-block-layout",
    "graph-rewrite-rules",
    "graph-fuse",
    "graph-schedule-ops",
)
GRAPH_STAGE = ",".join(GRAPH_PASSES)
TIR_STAGE = "convert-graph-to-tir,tir-plan-memory"
COMPILE_TIR_STAGE = "convert-graph-to-tir{blob-constants=true},tir-plan-memory{arena-argument=true}"
"""compile()'s Tensor IR stage: big packed weights are blobs the JIT binds
in place (dialects/tir/blob.py), and the entry takes its intermediates'
arena as an argument (of `tir.arena_bytes`), which the compiled graph
allocates once."""
LLVM_TIR_PASSES = "tir-outline-parallel,tir-parallel-regions,tir-legalize-types,tir-expand-math"
"""The tir passes of LLVM_STAGE: they see the whole module (parallel
regions span kernels); the conversion after them may run in workers
(driver/parallel_lowering.py)."""
LLVM_STAGE = f"{LLVM_TIR_PASSES},convert-tir-to-llvm"
PROFILE_LLVM_STAGE = (
    "tir-profile-kernels,tir-outline-parallel,tir-legalize-types,tir-expand-math,"
    "convert-tir-to-llvm"
)
"""compile(profile=True)'s: kernel calls timed, no parallel regions (whose
kernels return before their loops have run)."""

# name -> (pipeline elements, description)
PIPELINES = {
    "gc-cpu-pipeline": (
        f"{GRAPH_STAGE},{TIR_STAGE},{LLVM_STAGE}",
        "Graph IR to the llvm dialect for the CPU: optimize the graph, lower to Tensor IR, then to LLVM",
    ),
    "tir-to-llvm": (
        LLVM_STAGE,
        "Tensor IR to the llvm dialect: outline parallel loops, group them in regions, "
        "make conversions explicit, expand math, then convert",
    ),
}


def _loader(module: str, attribute: str) -> Callable[[], Dialect | type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module), attribute)


def register_builtins(registry: Registry) -> None:
    """graphcompiler's own dialects, passes and named pipelines."""
    for name, (module, attribute) in DIALECTS.items():
        registry.dialects.pop(name, None)  # ours replace xDSL's of the same name (llvm)
        registry.register_dialect(_loader(module, attribute), name)
    for name, (module, attribute) in PASSES.items():
        registry.passes.pop(name, None)  # ours replace xDSL's of the same name (cse)
        registry.register_pass(_loader(module, attribute), name)
    for name, (pipeline, description) in PIPELINES.items():
        registry.register_pipeline(name, pipeline, description)


def default_registry(load_plugins: bool = True) -> Registry:
    """Upstream xDSL, graphcompiler's own, then installed plugins."""
    from xdsl.universe import Universe

    registry = Registry()
    multiverse = Universe.get_multiverse()
    for name, dialect_factory in multiverse.all_dialects.items():
        registry.register_dialect(dialect_factory, name)
    for name, pass_factory in multiverse.all_passes.items():
        registry.register_pass(pass_factory, name)
    register_builtins(registry)
    if load_plugins:
        registry.load_entry_point_plugins()
    return registry


def apply_pipeline(
    module: ModuleOp, pipeline: str, *, registry: Registry | None = None, verify_each: bool = True
) -> ModuleOp:
    """Run `pipeline` (e.g. 'builtin.module(func.func(cse))') on `module` in
    place; `verify_each=False` skips the verifier between passes (faster)."""
    registry = registry or default_registry()
    run_pipeline(
        build_pass_manager(registry, pipeline),
        module,
        registry.create_context(),
        Instrumentation(verify_each=verify_each),
    )
    return module
