"""The JIT engine: LLVM IR -> host machine code with llvmlite (MCJIT, O2,
host CPU name and features), linked with the native runtime.

A program is built as several objects at once, each in a helper process
(runtime/optimizer.py): the program itself, split into parts of about equal
size (lowering/llvm_split.py), and the native runtime (runtime/native.ll)
with the microkernels the program calls, keeping only the functions it
calls. MCJIT loads them all and resolves the symbols between them, then
against the libraries of the runtime symbol table and the thread pool.
"""

from __future__ import annotations

import ctypes
import operator
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import llvmlite.binding as llvm

from graphcompiler.runtime.amx_tiles import enable_amx
from graphcompiler.runtime.jit import shared_data
from graphcompiler.runtime.jit.optimizer import OPT_LEVEL, Job, build, optimize_here, prestart
from graphcompiler.runtime.microkernels import GeneratedKernel, microkernel_module
from graphcompiler.runtime.native import NATIVE_LIBRARIES, NUM_THREADS_GLOBAL, native_source
from graphcompiler.runtime.object_cache import pack_objects, unpack_objects
from graphcompiler.runtime.threadpool import available_cpus, thread_pool
from graphcompiler.target.description import get_target

if TYPE_CHECKING:  # not imported to load cached machine code (it imports llvmlite.ir)
    from graphcompiler.lowering.llvm.split import LlvmProgram

_initializing = threading.Lock()
_initialized = False


def _new_lock_after_fork() -> None:  # a child of a fork during initialization
    global _initializing
    _initializing = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def initialize_llvm() -> None:
    """LLVM's host target, the runtime's libraries and the thread pool
    (compiled here: ~50 ms), once per process, whichever thread asks."""
    global _initialized
    with _initializing:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()  # the pool's spin hint is inline asm
            for library in NATIVE_LIBRARIES:
                llvm.load_library_permanently(library)
            thread_pool()  # programs link against its gc_pool_* functions
            _initialized = True


_preparing: threading.Thread | None = None


def prepare_in_background(helpers: int | None = None) -> None:
    """On a thread of its own: `initialize_llvm`, then start `helpers`
    (default: one per program part, and one for the runtime) optimizer
    helpers one after the other. LLVM does not hold the GIL while it
    compiles the pool, and a starting helper is another process: both use
    another core than the compile's own work (all at once, they took its
    core too: its graph passes ran 2.5x slower). Nothing new starts while
    an earlier preparation still runs."""
    global _preparing
    if _preparing is not None and _preparing.is_alive():
        return
    count = program_parts() + 1 if helpers is None else helpers

    def prepare() -> None:
        initialize_llvm()
        prestart(count, one_at_a_time=True)

    _preparing = threading.Thread(target=prepare, name="graphcompiler-prepare")
    _preparing.start()


def _symbol(name: str) -> bytes:
    """A symbol's name as LLVM holds it: UTF-8 (MLIR allows any string,
    `@é`; llvmlite's lookups encode as ASCII and raised on it)."""
    return name.encode("utf-8")


def machine_features() -> str:
    """The host's features, narrowed to GC_TARGET's ISA when one is set.
    With AVX-512, 512-bit vectors are legal everywhere: some CPUs' tuning
    (prefer-256-bit) would otherwise split the kernels' 16-lane vectors."""
    target = get_target()
    features = llvm.get_host_cpu_features().flatten()
    if target.llvm_features:
        features = f"{features},{target.llvm_features}"
    if target.f32_lanes >= 16:
        features += ",-prefer-256-bit"
    return features


def _target_machine() -> llvm.TargetMachine:
    """A new host target machine: an execution engine takes ownership of
    the one it is given, so each engine needs its own."""
    initialize_llvm()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=machine_features(),
        opt=OPT_LEVEL,
        codemodel="jitdefault",
    )


MAX_THREADS = 4096
"""More threads than any machine we target has cores (the pool's limit)."""


def check_num_threads(count: object, what: str = "num_threads") -> int:
    """`count` as a thread count: 0 (all cores) or 1..MAX_THREADS."""
    try:
        value = None if isinstance(count, bool) else operator.index(count)
    except TypeError:
        value = None
    if value is None or not 0 <= value <= MAX_THREADS:
        raise ValueError(
            f"{what} must be an integer from 1 to {MAX_THREADS}, or 0 for all cores; got {count!r}"
        )
    return value


def default_num_threads() -> int:
    """GC_NUM_THREADS, else OMP_NUM_THREADS (its first level), else 0
    (the pool's default: the CPUs this process may run on, see
    threadpool.available_cpus). A set but invalid value is an error."""
    for variable in ("GC_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(variable, "").strip()
        if variable == "OMP_NUM_THREADS":
            value = value.split(",")[0].strip()  # "4,2": per nesting level
        if not value:
            continue
        try:
            count = int(value)
        except ValueError:
            count = value
        return check_num_threads(count, f"environment variable {variable}")
    return 0


def parse_llvm_ir(text: str, name: str = "program", context=None) -> llvm.ModuleRef:
    module = llvm.parse_assembly(text, context)
    module.name = name
    module.verify()
    return module


def assembly(llvm_ir: str, microkernels: Sequence[GeneratedKernel] = ()) -> str:
    """Host assembly of optimized `llvm_ir` and the generated `microkernels`
    it declares (without the runtime)."""
    machine = _target_machine()
    module = parse_llvm_ir(llvm_ir)
    microkernels = microkernel_module(microkernels)
    if microkernels:
        module.link_in(parse_llvm_ir(microkernels, "graphcompiler_microkernels"))
    optimize_here(module, machine)
    return machine.emit_assembly(module)


MAX_PROGRAM_PARTS = 4
"""The most modules a program is split into (lowering/llvm_split.py)."""

BESIDE_LINE_COST = 0.33
"""LLVM's time for a line of the runtime and microkernels, in lines of
program: microkernels are straight-line FMA code whose tap loops LLVM does
not unroll (microkernels.NOT_UNROLLED), which it builds about three times
as fast as the kernels' loop nests. Counted at full weight, the part built
beside them got too little of the program: EfficientNet-B0's two parts
took 2.45 s and 1.38 s; at 0.33 ResNet-50's and EfficientNet-B0's parts
take within about 15% of each other's time."""


def program_parts() -> int:
    """How many modules a program is built as: one per CPU this process
    may use, up to MAX_PROGRAM_PARTS; its runtime is built beside them."""
    return max(1, min(available_cpus(), MAX_PROGRAM_PARTS))


def program_and_runtime(
    llvm_ir: str,
    context,
    entry: str | None,
    program: LlvmProgram | None,
    microkernels: Sequence[GeneratedKernel],
) -> list[llvm.ModuleRef]:
    """The modules that LLVM builds at once, one per helper process, in
    `context`: the program (split into parts when `program` and `entry`
    are given) and the runtime with the program's microkernels, linked
    into the part that was sized to take it, or a module of its own. The
    runtime keeps only what the program calls; each part keeps external
    only the entry and what the other parts call."""
    runtime_text = native_source()
    kernels_text = microkernel_module(microkernels) if microkernels else ""
    modules: list[llvm.ModuleRef] = []
    try:
        if program is not None and entry is not None:
            beside = round(BESIDE_LINE_COST * (runtime_text.count("\n") + kernels_text.count("\n")))
            parts = [
                (part.text, part.exported, part.builds_beside)
                for part in program.split(entry, program_parts(), beside)
            ]
        else:
            parts = [(llvm_ir, frozenset(), False)]
        for index, (text, exported, _) in enumerate(parts):
            modules.append(parse_llvm_ir(text, f"program{index}", context))
            if entry is not None:
                _internalize_all_but(modules[-1], {entry, *exported})
                _build_entry_as_is(modules[-1], entry)
        called = {f.name for module in modules for f in module.functions if f.is_declaration}
        runtime = parse_llvm_ir(runtime_text, "graphcompiler_runtime", context)
        modules.append(runtime)
        if kernels_text:
            modules.append(parse_llvm_ir(kernels_text, "graphcompiler_microkernels", context))
            runtime.link_in(modules.pop())
        for function in runtime.functions:
            unused = not function.is_declaration and function.name not in called
            if unused and function.linkage == llvm.Linkage.external:
                function.linkage = llvm.Linkage.linkonce_odr  # dropped from the object
        host = next((index for index, part in enumerate(parts) if part[2]), None)
        if host is not None:
            modules[host].link_in(modules.pop())
        return modules
    except BaseException:
        for module in modules:  # freed before their context is (a linked one is already)
            module.close()
        raise


def _build_entry_as_is(module: llvm.ModuleRef, entry: str) -> None:
    """The entry, a list of kernel calls, is built as it is (optnone): LLVM
    inlined every kernel it calls once into it, making one function of the
    program's part that its optimizer and code generator then worked on
    again, superlinearly in its size (a 2-layer SegFormer's LLVM build:
    4.15 -> 2.52 s, Swin's 2.88 -> 1.46 s; the kernels run as fast)."""
    for function in module.functions:
        if function.name == entry and not function.is_declaration:
            function.add_function_attribute("noinline")
            function.add_function_attribute("optnone")


def _internalize_all_but(module: llvm.ModuleRef, kept: set[str]) -> None:
    """Functions defined here become internal, but `kept` (external)."""
    for function in module.functions:
        if function.is_declaration:
            continue
        if function.name in kept:
            function.linkage = llvm.Linkage.external
        elif function.linkage == llvm.Linkage.external:
            function.linkage = llvm.Linkage.internal


class JitEngine:
    """Compiles `llvm_ir` with the runtime and keeps the machine code alive;
    `.object_code` is all its objects in one blob, for the compile cache."""

    def __init__(
        self,
        llvm_ir: str,
        num_threads: int | None = None,
        external_data: dict[str, bytes] | Callable[[], dict[str, bytes]] | None = None,
        object_code: bytes | None = None,
        entry: str | None = None,
        program: LlvmProgram | None = None,
        microkernels: Sequence[GeneratedKernel] = (),
    ):
        """`external_data`: the bytes of the external globals the code reads
        (see translate_to_llvm_ir), bound by name (shared_data.py); or a
        function giving them, called once the code is built (the compile
        cache's mapped file, written meanwhile).
        `entry`: the one function callers look up; the program's other
        functions become internal, so LLVM drops those it inlines instead
        of also compiling them on their own (None: all stay callable).
        `program`: the same IR in pieces (lowering/llvm_split.py), for
        building it as several modules at once (with `entry`).
        `microkernels`: the generated microkernels the IR declares (the
        program's own, when `program` is given).
        `object_code`: the machine code an earlier engine made of the same
        IR (its `.object_code`): loaded as is, skipping optimization and
        code generation (the compile cache)."""
        num_threads = default_num_threads() if num_threads is None else num_threads
        check_num_threads(num_threads)  # before the costly compilation
        enable_amx()  # code from the compile cache may use AMX tiles
        machine = _target_machine()
        # A context of its own: LLVM keeps the types and constants a module
        # creates for the life of its context, so programs compiled in the
        # global one would never give that memory back.
        self.context = llvm.create_context()
        modules: list[llvm.ModuleRef] = []
        try:
            if object_code is None:
                if program is not None:
                    microkernels = program.microkernels
                modules = program_and_runtime(llvm_ir, self.context, entry, program, microkernels)
                jobs = [Job(module, to_object=True) for module in modules]
                cpu, features = llvm.get_host_cpu_name(), machine_features()
                objects = build(jobs, machine, cpu, features, self.context)
                for module in modules:
                    module.close()
                self.object_code = pack_objects(objects)
            else:
                objects = unpack_objects(object_code)
                self.object_code = object_code
            # the machine code is all in the objects: the engine's own module is empty
            self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly("", self.context), machine)
        except BaseException:
            for module in modules:
                module.close()  # before the context it lives in (a segfault otherwise)
            self.close()
            raise
        if callable(external_data):
            external_data = external_data()
        external_data = external_data or {}  # bound before linking: the code refers to it
        buffers = shared_data.bind(external_data)
        self.external_data = dict(zip(external_data, buffers, strict=True))
        """The external constants' buffers by name (kept alive while the code may read them)."""
        for code in objects:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self.engine.finalize_object()
        self.engine.run_static_constructors()
        self.set_num_threads(num_threads)

    def close(self) -> None:
        """Free the machine code, then the context its modules lived in
        (in that order: the engine's modules belong to the context)."""
        engine, context = self.__dict__.pop("engine", None), self.__dict__.pop("context", None)
        if engine is not None:
            engine.close()
        if context is not None:
            context.close()

    def __del__(self, finalizing=sys.is_finalizing) -> None:
        if not finalizing():  # at exit llvmlite may be torn down first; the OS frees all
            self.close()

    def function_address(self, name: str) -> int:
        return llvm.ffi.lib.LLVMPY_GetFunctionAddress(self.engine, _symbol(name))

    def global_address(self, name: str) -> int:
        return llvm.ffi.lib.LLVMPY_GetGlobalValueAddress(self.engine, _symbol(name))

    def set_num_threads(self, count: int) -> None:
        """Threads for parallel loops: 1..MAX_THREADS, or 0 for all cores."""
        value = check_num_threads(count)
        ctypes.c_int32.from_address(self.global_address(NUM_THREADS_GLOBAL)).value = value
