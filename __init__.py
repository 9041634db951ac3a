"""graphcompiler: an MLIR-style multi-dialect deep-learning compiler on xDSL.

Public API:
    compile(source, entry="main")    -> a graph JIT-compiled, callable on numpy arrays
    parse(text)                      -> verified builtin.module
    apply_pipeline(module, pipeline) -> runs an MLIR textual pass pipeline
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from graphcompiler.registry import Registry

__version__ = "0.1.0"


def compile(
    source,
    *,
    entry: str = "main",
    pipeline: str | None = None,
    num_threads: int | None = None,
    constants=None,
    plugins=(),
    registry: Registry | None = None,
    cast_inputs: bool = False,
    cache=None,
    verify_each: bool = False,
    progress=None,
):
    """JIT-compile a graph function; see graphcompiler.compiler.compile."""
    if pipeline is None and not plugins and registry is None and not cast_inputs:
        from graphcompiler.warm_start import cached_graph

        cached = cached_graph(source, entry, num_threads, constants, cache)
        if cached is not None:  # a cache hit by the arguments as given: no compiler import
            return cached
    from graphcompiler.runtime.jit import prepare_in_background

    prepare_in_background()  # LLVM gets ready while xDSL is imported and the graph lowered
    from graphcompiler.compiler import compile as compile_graph

    return compile_graph(
        source,
        entry=entry,
        pipeline=pipeline,
        num_threads=num_threads,
        constants=constants,
        plugins=plugins,
        registry=registry,
        cast_inputs=cast_inputs,
        cache=cache,
        verify_each=verify_each,
        progress=progress,
    )


def parse(text: str, *, filename: str = "<string>", registry: Registry | None = None) -> ModuleOp:
    """Parse and verify MLIR text; errors raise `DiagnosticError`."""
    from graphcompiler.diagnostics import SourceFile
    from graphcompiler.parsing import parse_module, verify_module
    from graphcompiler.registry import default_registry

    ctx = (registry or default_registry()).create_context()
    module = parse_module(ctx, SourceFile(filename, text))
    verify_module(module)
    return module


def apply_pipeline(
    module: ModuleOp, pipeline: str, *, registry: Registry | None = None, verify_each: bool = True
) -> ModuleOp:
    """Run `pipeline` (e.g. 'builtin.module(func.func(cse))') on `module` in
    place; `verify_each=False` skips the verifier between passes (faster)."""
    from graphcompiler.pass_manager import Instrumentation, run_pipeline
    from graphcompiler.pipeline import build_pass_manager
    from graphcompiler.registry import default_registry

    registry = registry or default_registry()
    run_pipeline(
        build_pass_manager(registry, pipeline),
        module,
        registry.create_context(),
        Instrumentation(verify_each=verify_each),
    )
    return module
