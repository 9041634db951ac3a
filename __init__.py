"""graphcompiler: an MLIR-style multi-dialect deep-learning compiler on xDSL.

Public API:
    compile(source, entry="main")    -> a graph JIT-compiled, callable on numpy arrays
    parse(text)                      -> verified builtin.module
    apply_pipeline(module, pipeline) -> runs an MLIR textual pass pipeline
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from graphcompiler.ir.registry import Registry

__all__ = ["apply_pipeline", "compile", "parse", "tune"]

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
    input_shapes=None,
    profile: bool = False,
    precision: str = "f32",
):
    """JIT-compile a graph function; see graphcompiler.driver.compiler.compile."""
    default = pipeline is None and not plugins and registry is None and not cast_inputs
    if default and not profile and precision == "f32":
        from graphcompiler.driver.warm_start import cached_graph

        def full_compile():
            from graphcompiler.driver.compiler import compile as compile_graph

            return compile_graph(
                source, entry=entry, constants=constants, cache=cache, num_threads=num_threads,
                input_shapes=input_shapes,
            )  # fmt: skip

        cached = cached_graph(
            source, entry, num_threads, constants, cache, full_compile, input_shapes
        )
        if cached is not None:  # a cache hit by the arguments as given: no compiler import
            return cached
    from graphcompiler.runtime.jit.engine import prepare_in_background

    prepare_in_background()  # LLVM gets ready while xDSL is imported and the graph lowered
    from graphcompiler.driver.compiler import compile as compile_graph

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
        input_shapes=input_shapes,
        profile=profile,
        precision=precision,
    )


# The two below import xDSL when called, not when graphcompiler is imported:
# a warm start (driver/warm_start.py) runs a cached graph without it.


def parse(text: str, *, filename: str = "<string>", registry: Registry | None = None) -> ModuleOp:
    """Parse and verify MLIR text; errors raise `DiagnosticError`."""
    from graphcompiler.driver.loading import parse as parse_text

    return parse_text(text, filename=filename, registry=registry)


def apply_pipeline(
    module: ModuleOp, pipeline: str, *, registry: Registry | None = None, verify_each: bool = True
) -> ModuleOp:
    """Run `pipeline` (e.g. 'builtin.module(func.func(cse))') on `module` in
    place; `verify_each=False` skips the verifier between passes (faster)."""
    from graphcompiler.driver.registration import apply_pipeline as run

    return run(module, pipeline, registry=registry, verify_each=verify_each)


def tune(source, *, input_shapes=None, num_threads: int = 1, seconds: float = 0.3, log=None):
    """Time the candidate kernels of `source`'s convolutions on this machine
    and keep the fastest for later compiles; see graphcompiler.driver.tuning.tune."""
    from graphcompiler.driver.tuning import tune as measure

    return measure(source, input_shapes=input_shapes, num_threads=num_threads, seconds=seconds,
                   log=log)  # fmt: skip


class _OnnxAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`graphcompiler.onnx` is `graphcompiler.frontends.onnx` (its name
    before the frontends had a folder), imported when first asked for."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name == f"{__name__}.onnx" else None

    def create_module(self, spec):
        module = importlib.import_module(f"{__name__}.frontends.onnx")
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.own_spec  # the import machinery gave it the alias's


sys.meta_path.append(_OnnxAlias())
