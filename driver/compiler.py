"""`graphcompiler.compile`: a graph, JIT-compiled for this CPU, callable on numpy arrays.

    compiled = graphcompiler.compile(text_or_path_or_module, entry="main")
    outputs = compiled(x, w)          # arrays in, arrays out (one or a tuple)
    compiled.graph, compiled.tir, compiled.llvm_ir, compiled.asm

The default pipeline is gc-cpu-pipeline, run in stages so that each stage's
text is kept; a custom `pipeline` must end in the llvm dialect.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, Region

from graphcompiler.dialects import tir
from graphcompiler.driver.compile_cache import UNPRINTED, graph_texts, module_text
from graphcompiler.driver.loading import bind_constants, load_module, onnx_source
from graphcompiler.driver.native_values import (
    cast_input,
    from_native,
    is_encoded,
    native_dtype,
    native_view,
    to_native,
)
from graphcompiler.driver.registration import (
    COMPILE_TIR_STAGE,
    GRAPH_STAGE,
    LLVM_TIR_PASSES,
    PROFILE_LLVM_STAGE,
    default_registry,
)
from graphcompiler.driver.specializing import SpecializingGraph, needed_input, onnx_specializing
from graphcompiler.ir.registry import Registry
from graphcompiler.lowering.graph_to_tir.kernel import tir_tensor_type
from graphcompiler.passes.tir.plan_memory import arena_argument_bytes
from graphcompiler.runtime.direct_call import DirectCall, aligned_empty, inputs_in_order

if TYPE_CHECKING:
    from graphcompiler.driver.warm_start import SourceAlias
    from graphcompiler.lowering.llvm.split import LlvmProgram
    from graphcompiler.runtime.kernel_profile import KernelTime


class CompiledGraph:
    """A compiled graph function. Calling it checks the inputs (ValueError
    naming the argument), allocates the outputs (or fills `out=`) and
    returns them. The intermediates' arena is allocated on the first call
    and reused; concurrent calls from several Python threads each take
    their own arena from a small free list."""

    def __init__(
        self,
        module: ModuleOp,
        entry: str,
        pipeline: str | None,
        num_threads: int | None,
        constants: Mapping[str, Any] | None = None,
        registry: Registry | None = None,
        cast_inputs: bool = False,
        cache: bool | str | Path | None = None,
        verify_each: bool = False,
        progress: Callable[[str], None] | None = None,
        profile: bool = False,
        precision: str = "f32",
        source_key: str | Callable[[], str | None] | None = None,
    ):
        """`source_key`: the key of the compile's arguments as given
        (warm_start.SourceAlias), which then keys the cache entry: the same
        arguments give the same module, so it need not be printed and its
        constants hashed again (BERT-base: 1.5 s). A function instead: the
        key of a source the cache cannot hold yet, asked for once the module
        is lowered (its file's digest is taken meanwhile); None then stores
        nothing."""
        from graphcompiler.driver.compile_cache import CachedCompile, EntryWriter, cache_key
        from graphcompiler.driver.compile_cache import load as load_cached
        from graphcompiler.driver.program import TirFunction
        from graphcompiler.runtime.jit.engine import (
            JitEngine,
            check_num_threads,
            default_num_threads,
            prepare_in_background,
        )
        from graphcompiler.runtime.object_cache import cache_directory

        # a bad count fails before the pipeline runs, not after
        num_threads = check_num_threads(
            default_num_threads() if num_threads is None else num_threads
        )
        self.registry = registry or default_registry()
        self.cast_inputs = cast_inputs
        if pipeline is not None:
            if profile:
                raise ValueError(
                    "profile=True times the default pipeline's kernels: give no pipeline"
                )
            check_pipeline_ends_in_llvm(self.registry, pipeline)
        self._profiled = profile
        function = _find_entry(module, entry)
        if constants:
            bind_constants(function, constants)
        if check_precision(precision) == "bf16":  # before the cache key: it is another graph
            from graphcompiler.driver.registration import apply_pipeline
            from graphcompiler.runtime.amx_tiles import has_amx
            from graphcompiler.target.description import get_target

            # convolutions gain from bf16 on AMX tiles only (graph-bf16-fpmath)
            tiles = str(has_amx(get_target(), "bf16")).lower()
            fpmath = f"graph-bf16-fpmath{{convolutions={tiles}}}"
            apply_pipeline(module, f"builtin.module({fpmath})", registry=self.registry)
        self.entry = entry
        self.input_types: list[TensorType] = list(function.function_type.inputs.data)
        self.output_types: list[TensorType] = list(function.function_type.outputs.data)
        names = [a.name_hint or f"arg{i}" for i, a in enumerate(function.body.block.args)]
        self.input_names = names
        self.tir: str | None = None
        self.arena_bytes: int | None = None  # the entry's arena argument, if it has one
        self._progress = progress or (lambda stage: None)
        self.cache_hit = False
        directory = cache_directory(cache) if pipeline is None and not profile else None
        key_later = source_key if callable(source_key) else None
        key = (source_key or cache_key(module, entry)) if directory and not key_later else ""
        self.cache_key = key  # "" when the cache is off
        cached = load_cached(directory, key) if key else None
        if cached is not None:
            self._progress("loading the cached machine code")
            self.graph, self.tir, self.llvm_ir = cached.graph, cached.tir, cached.llvm_ir
            self._graph_dot, self.arena_bytes = cached.graph_dot, cached.arena_bytes
            self.microkernels = cached.microkernels
            self.engine = JitEngine(
                self.llvm_ir, num_threads, cached.external_data, cached.object_code
            )
            self.cache_hit = True
        else:
            prepare_in_background()  # while the graph is lowered (begun already, usually)
            program, external_data = self._lower(module, pipeline, verify_each)
            if directory and key_later:
                self.cache_key = key = key_later() or ""
            writer = EntryWriter(directory, key, external_data) if key else None
            self._progress("generating machine code (LLVM)")
            bound = (lambda: writer.mapped_data() or external_data) if writer else external_data
            self.engine = JitEngine(self.llvm_ir, num_threads, bound, entry=entry, program=program)
            if writer is not None and self.engine.object_code:
                writer.finish(
                    CachedCompile(
                        self.graph,
                        self._graph_dot,
                        self.tir,
                        self.llvm_ir,
                        self.microkernels,
                        self.arena_bytes,
                        self.engine.external_data,  # the mapped file's, where it was written
                        self.engine.object_code,
                    )  # fmt: skip
                )
        self._function = TirFunction(
            self.engine,
            _signature(entry, names, self.input_types, self.output_types, self.arena_bytes),
            read_only=range(len(self.input_types)),  # inputs are never written
        )
        plain = self._plain_signature or (None, None)
        self._direct = DirectCall(self.engine, entry, *plain, self.arena_bytes)

    def _lower(
        self, module: ModuleOp, pipeline: str | None, verify_each: bool
    ) -> tuple[LlvmProgram, dict[str, bytes]]:
        """Run the pipeline (the default one in stages, keeping each stage's
        text) and translate to LLVM IR; returns it in pieces, and the
        constants set aside."""
        from graphcompiler.driver.parallel_lowering import Beside, many_ops
        from graphcompiler.driver.registration import apply_pipeline
        from graphcompiler.ir.verifier import verify_module
        from graphcompiler.lowering.llvm.translate import translate_program

        def stage(pipeline: str, verify: bool = False) -> None:
            """The default pipeline runs without the verifier between passes
            (it was half of the compile time; gc-opt keeps MLIR's
            verify-each); `verify` checks the graph passes' output once."""
            apply_pipeline(
                module,
                f"builtin.module({pipeline})",
                registry=self.registry,
                verify_each=verify_each,
            )
            if verify and not verify_each:
                verify_module(module)

        external_data: dict[str, bytes] = {}
        program = None  # translated already, by workers (parallel_lowering.py)
        if pipeline is None:
            self._progress("graph passes")
            stage(GRAPH_STAGE, verify=True)
            big = not self._profiled and many_ops(module)
            with Beside(lambda: graph_texts(module), fork=big) as texts:  # beside the lowering
                program = self._graph_to_llvm(module, stage, external_data)
                self.graph, self._graph_dot = texts.value(lambda: UNPRINTED)
        else:  # a user's pipeline (plugin passes, maybe): verified after each pass
            self._progress("the pass pipeline")
            self.graph, self._graph_dot = graph_texts(module)
            apply_pipeline(module, pipeline, registry=self.registry)
        if program is None:
            self._progress("translating to LLVM IR")
            program = translate_program(module, external_data)
        self.llvm_ir, self.microkernels = program.text, program.microkernels
        return program, external_data

    def _graph_to_llvm(
        self, module: ModuleOp, stage: Callable[[str], None], external_data: dict[str, bytes]
    ) -> LlvmProgram | None:
        """The default pipeline after the graph passes: Tensor IR (its text
        kept), then the llvm dialect, converted and translated by workers
        where it can be (None: the module is in the llvm dialect here)."""
        from graphcompiler.driver.parallel_lowering import Beside, lower_in_parallel, worth_forking

        self._progress("lowering to Tensor IR")
        stage(COMPILE_TIR_STAGE)
        big = not self._profiled and worth_forking(module)
        with Beside(lambda: module_text(module), fork=big) as text:  # printed meanwhile
            self.arena_bytes = arena_argument_bytes(module, self.entry)
            self._progress("lowering to the llvm dialect")
            if self._profiled:
                stage(PROFILE_LLVM_STAGE)
                program = None
            else:
                stage(LLVM_TIR_PASSES)
                program = lower_in_parallel(module, external_data)
            # if the child failed: the text after the tir passes
            self.tir = text.value(lambda: module_text(module))
        if program is None and not self._profiled:
            stage("convert-tir-to-llvm")
        return program

    def __call__(
        self, *inputs: Any, out: Any = None, **named: Any
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        """Run on `inputs` (by position or by name). `out`: an array (one
        output) or a tuple of arrays to write the outputs into, of the
        outputs' shapes and dtypes (checked like inputs); they are returned."""
        if not self.cast_inputs:  # named inputs too: onnxruntime's users pass feeds by name
            ordered = inputs_in_order(self.entry, self.input_names, inputs, named)
            fast = self._direct.try_call(tuple(ordered), out)
            if fast is not None:
                return fast
        inputs = self.bind_inputs(inputs, named)
        if len(inputs) != len(self.input_types):
            raise ValueError(
                f"@{self.entry} takes {len(self.input_types)} inputs, got {len(inputs)}"
            )
        native_inputs = [
            to_native(array, type_, self._function.label(index))
            for index, (array, type_) in enumerate(zip(inputs, self.input_types, strict=True))
        ]
        given = self._checked_out(out)
        outputs = [
            native_view(array, t) if array is not None and not is_encoded(t)
            else aligned_empty(tir_tensor_type(t).get_shape(), native_dtype(t))
            for array, t in zip(given, self.output_types, strict=True)
        ]  # fmt: skip
        if self.arena_bytes is None:
            self._function(*native_inputs, *outputs)
        else:
            arena = self._direct.take_arena()
            try:
                self._function(*native_inputs, *outputs, arena)
            finally:
                self._direct.give_arena(arena)
        results = [from_native(o, t) for o, t in zip(outputs, self.output_types, strict=True)]
        if out is not None:
            for result, array, type_ in zip(results, given, self.output_types, strict=True):
                if is_encoded(type_):
                    np.copyto(array, result)
            results = given
        return results[0] if len(results) == 1 else tuple(results)

    @functools.cached_property
    def _plain_signature(self) -> tuple[list, list] | None:
        """((shape, dtype) of each input, of each output) when every tensor
        travels as is (no bf16 bits, no rank 0): what DirectCall checks."""
        types = [*self.input_types, *self.output_types]
        if any(is_encoded(t) or not t.get_shape() for t in types):
            return None
        specs = [(tuple(t.get_shape()), native_dtype(t)) for t in types]
        return specs[: len(self.input_types)], specs[len(self.input_types) :]

    def _checked_out(self, out: Any) -> list[Any]:
        """`out=` as one array per output (None each when not given): an
        array for a single output, else a sequence; each of the output's
        shape and dtype (float32 for bf16), C-contiguous and writable."""
        from graphcompiler.driver.program import check_array

        if out is None:
            return [None] * len(self.output_types)
        arrays = [out] if isinstance(out, np.ndarray) else list(out)
        if len(arrays) != len(self.output_types):
            raise ValueError(
                f"out= gives {len(arrays)} arrays, @{self.entry} has {len(self.output_types)} outputs"
            )
        for index, (array, type_) in enumerate(zip(arrays, self.output_types, strict=True)):
            label = f"out= array #{index} of @{self.entry}"
            element = Float32Type() if is_encoded(type_) else type_.element_type
            shape = tuple(type_.get_shape())
            expected = tir.TirTensorType(shape or (1,), element)
            if not isinstance(array, np.ndarray) or array.shape != shape:
                got = list(array.shape) if isinstance(array, np.ndarray) else type(array).__name__
                raise ValueError(f"{label} must be an array of shape {list(shape)}, got {got}")
            check_array(array.reshape(expected.get_shape()), expected, label)
        return arrays

    def bind_inputs(self, positional: tuple[Any, ...], named: Mapping[str, Any]) -> list[Any]:
        """The inputs in argument order: positional ones first, then those
        given by argument name (`compiled(x=..., b=...)`); with
        `cast_inputs`, each converted as the signature's docstring says."""
        inputs = inputs_in_order(self.entry, self.input_names, positional, named)
        if self.cast_inputs and len(inputs) == len(self.input_types):  # else: __call__ says
            inputs = [
                cast_input(value, type_, self._function.label(index))
                for index, (value, type_) in enumerate(zip(inputs, self.input_types, strict=True))
            ]
        return inputs

    @property
    def signature(self) -> Signature:
        """Names, shapes and element types of the inputs and outputs;
        prints as `main(x: tensor<4x8xf32>, ...) -> (tensor<4x8xf32>)`."""
        return Signature(self.entry, self.input_names, self.input_types, self.output_types)

    def graph_dot(self) -> str:
        """The graph after the graph passes as Graphviz DOT (see
        `gc-opt --view-op-graph`); `dot -Tsvg` draws it."""
        return self._graph_dot

    def set_num_threads(self, count: int) -> None:
        """Threads for parallel loops: 1..4096, or 0 for all cores (ValueError otherwise)."""
        self.engine.set_num_threads(count)

    def save(self, path: str | Path) -> Path:
        """Save as an ahead-of-time artifact: one shared library at `path`
        that `graphcompiler.runtime.artifact.load` (numpy only) or C (the
        header written beside it) runs without the compiler; see
        driver/artifact.py. Needs a C compiler to link it."""
        from graphcompiler.driver import artifact

        return artifact.save(self, path)

    def to_bytes(self) -> bytes:
        """The artifact's bytes (see `save`; built once, in a temporary
        directory): `graphcompiler.runtime.loads` runs them."""
        data = self.__dict__.get("_artifact_bytes")
        if data is None:
            with tempfile.TemporaryDirectory(prefix="gc-artifact-bytes-") as directory:
                data = self.save(Path(directory) / "graph.so").read_bytes()
            self.__dict__["_artifact_bytes"] = data
        return data

    def __reduce__(self) -> tuple:
        """Pickles to its artifact's bytes: unpickled, a LoadedGraph that
        runs without compiling."""
        from graphcompiler.runtime.artifact import loads

        return loads, (self.to_bytes(),)

    def profile(self, reset: bool = False) -> list[KernelTime]:
        """With `compile(profile=True)`: each kernel's calls and seconds over
        the calls so far, the longest first (`kernel_profile.table` prints
        them); `reset` starts the count again after reading it."""
        from graphcompiler.runtime import kernel_profile

        if not self._profiled:
            raise ValueError("compile with profile=True to time the kernels")
        names = kernel_profile.kernels(self.llvm_ir)
        times = kernel_profile.read(self.engine, names, self.tir or "")
        if reset:
            kernel_profile.reset(self.engine, names)
        return times

    @functools.cached_property
    def asm(self) -> str:
        from graphcompiler.runtime.jit.engine import assembly

        return assembly(self.llvm_ir, self.microkernels)


@dataclass(frozen=True)
class Signature:
    """What a compiled graph takes and returns."""

    entry: str
    input_names: list[str]
    input_types: list[TensorType]
    output_types: list[TensorType]

    def __str__(self) -> str:
        inputs = ", ".join(
            f"{n}: {t}" for n, t in zip(self.input_names, self.input_types, strict=True)
        )
        return f"{self.entry}({inputs}) -> ({', '.join(map(str, self.output_types))})"


PRECISIONS = ("f32", "bf16")


def check_precision(precision: str) -> str:
    """`precision` if compile() knows it, else a ValueError naming the choices."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"unknown precision {precision!r} (expected one of {', '.join(PRECISIONS)})"
        )
    return precision


def check_pipeline_ends_in_llvm(registry: Registry, pipeline: str) -> None:
    """A custom pipeline must leave the llvm dialect for the JIT: its last
    pass (after expanding named pipelines) is convert-tir-to-llvm. Checked
    before anything runs; the error names the fix."""
    from graphcompiler.ir.pipeline import OpPassManager, build_pass_manager

    manager = build_pass_manager(registry, pipeline)
    while manager.elements and isinstance(manager.elements[-1], OpPassManager):
        manager = manager.elements[-1]
    last = manager.elements[-1].name if manager.elements else None
    if last != "convert-tir-to-llvm":
        raise ValueError(
            f"the pipeline must end in the llvm dialect, but its last pass is "
            f"{repr(last) if last else 'missing'}: end it with tir-to-llvm (graph input: "
            "convert-graph-to-tir,tir-to-llvm, or gc-cpu-pipeline)"
        )


def _find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if entry not in functions:
        raise ValueError(
            f"no graph function @{entry} (functions: {', '.join(sorted(functions)) or 'none'})"
        )
    if len(functions[entry].body.blocks) != 1:
        from graphcompiler.ir.diagnostics import emit_error

        emit_error(functions[entry], "a graph function needs a body of exactly one block")
    return functions[entry]


def _signature(
    entry: str,
    names: list[str],
    inputs: list[TensorType],
    outputs: list[TensorType],
    arena_bytes: int | None = None,
) -> tir.FuncOp:
    """The tir entry's signature, with the graph's argument names for
    messages (and the arena argument, when it takes one)."""
    types = [tir_tensor_type(t) for t in (*inputs, *outputs)]
    names = [*names, *(f"out{i}" for i in range(len(outputs)))]
    if arena_bytes is not None:
        types.append(tir.TirTensorType([arena_bytes], IntegerType(8)))
        names.append("arena")
    block = Block(arg_types=types)
    for arg, name in zip(block.args, names, strict=True):
        arg.name_hint = name
    return tir.FuncOp(entry, types, None, Region(block))


def compile(
    source: str | Path | ModuleOp,
    *,
    entry: str = "main",
    pipeline: str | None = None,
    num_threads: int | None = None,
    constants: Mapping[str, Any] | None = None,
    plugins: Sequence[str | Path] = (),
    registry: Registry | None = None,
    cast_inputs: bool = False,
    cache: bool | str | Path | None = None,
    verify_each: bool = False,
    progress: Callable[[str], None] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    profile: bool = False,
    precision: str = "f32",
) -> CompiledGraph | SpecializingGraph:
    """Compile graph function `entry` of `source` (.mlir text, a path, or a
    module). `constants` binds arguments by name to arrays known at compile
    time (model weights): they become graph constants, matmul and conv pack
    them once, and the compiled function no longer takes them. `plugins`
    (module names or .py paths, as `gc-opt --load-plugin`) are loaded into
    `registry` (default: the installed dialects, passes and plugins), which
    parses `source` and resolves `pipeline`. `cast_inputs` converts inputs
    of another dtype (see `cast_input`); by default a wrong dtype is an error.
    `cache`: where the default pipeline's results and machine code are
    kept and reused (compile_cache.py): None (default) or True for
    $GC_CACHE_DIR or ~/.cache/graphcompiler (None: unless GC_DISABLE_CACHE
    is set), a directory, or False; `compiled.cache_hit` says whether one
    was used. `verify_each` runs the verifier after every pass (as gc-opt
    does); by default the IR is verified once, after the graph passes.
    `progress(stage)` is called as each stage starts (tools/progress.py).
    An ONNX model's symbolic input dims are fixed by `input_shapes`
    ({name: shape}); those left symbolic give a SpecializingGraph, which
    compiles once per set of input shapes it is called with. `profile`
    times each kernel (`compiled.profile()`), without the cache and without
    parallel regions (a little slower). `precision="bf16"` computes the
    matmuls and convolutions with constant weights on bf16 operands with f32
    sums (graph-bf16-fpmath; oneDNN's fpmath mode); "f32" (default) keeps
    every op in its own type."""
    check_precision(precision)
    default = (
        pipeline is None
        and not plugins
        and registry is None
        and not cast_inputs
        and not profile
        and precision == "f32"
    )
    registry = registry or default_registry()
    for plugin in plugins:
        registry.load_plugin(str(plugin))

    def compile_module(module: ModuleOp, alias: SourceAlias | None = None) -> CompiledGraph:
        """`alias`: the arguments `module` was read from, if the source is
        still what they were keyed from (then they key the cache entry)."""
        if alias is not None and alias.digest_pending:  # a new file: nothing to look up
            source_key: str | Callable[[], str | None] | None = alias.key_when_hashed
        else:
            source_key = alias.key if alias is not None and alias.unchanged() else None
        return CompiledGraph(
            module, entry, pipeline, num_threads, constants, registry, cast_inputs, cache,
            verify_each, progress, profile, precision, source_key,
        )  # fmt: skip

    alias = None
    if default:  # a later compile of the same arguments can skip the compiler (warm_start.py)
        from graphcompiler.driver.warm_start import SourceAlias

        alias = SourceAlias.of(source, entry, constants, input_shapes, cache)  # before reading
    model = onnx_source(source)
    if model is not None:
        specializing = onnx_specializing(model, input_shapes, num_threads, compile_module, alias)
        if specializing is not None:
            return specializing
    private = model is not None and model is not source  # read here, from a path
    try:
        module = load_module(model or source, registry, input_shapes, private)
    except Exception as error:
        if model is None or needed_input(error) is None:
            raise
        # an input's value: specialized on it, call by call
        return onnx_specializing(
            model, input_shapes, num_threads, compile_module, None, always=True
        )
    compiled = compile_module(module, alias)
    if alias is not None:
        alias.remember(compiled)
    return compiled
