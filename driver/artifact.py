"""Ahead-of-time artifacts: a compiled graph saved as one shared library that
runs without the compiler (`CompiledGraph.save`, `gc-translate
--emit-shared`), as TVM's `export_library` does.

The library holds
- the program's machine code, built from the compiled graph's LLVM IR with
  the native runtime and its generated microkernels as one position-
  independent module, for the same CPU and features as the JIT's code (so
  that its outputs equal the in-process graph's, bit for bit);
- the thread pool (runtime/threadpool.ll), its own copy;
- the constants the JIT keeps outside the code (weights, packed weights),
  in read-only data, each 64-byte aligned;
- the C API of runtime/gc_model.h (runtime/gc_model.c), which checks the CPU
  and starts the pool.
The system C compiler links them (`$CC`, else cc, gcc or clang), exporting
only `gc_model_*`. A footer after the ELF image (runtime/artifact.py) holds
the signature as JSON and a checksum, which the loader reads before it
opens the library. A C header for the model is written beside it.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from graphcompiler.runtime.artifact import (
    FORMAT,
    ArtifactError,
    buffer_dtype,
    footer,
    host_cpu_flags,
)

ENTRY_SYMBOL = "gc_model_entry"

_LLVM_TO_CPUINFO = {
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "bmi": "bmi1",
    "lzcnt": "abm",
    "sahf": "lahf_lm",
    "avx512bf16": "avx512_bf16",
    "avx512vnni": "avx512_vnni",
    "avx512fp16": "avx512_fp16",
    "avx512vbmi2": "avx512_vbmi2",
    "avx512bitalg": "avx512_bitalg",
    "avx512vpopcntdq": "avx512_vpopcntdq",
    "avxvnni": "avx_vnni",
    "amx-tile": "amx_tile",
    "amx-bf16": "amx_bf16",
    "amx-int8": "amx_int8",
}
"""LLVM's names of x86 features whose /proc/cpuinfo flag is spelled otherwise."""


def required_cpu_flags(features: str, host_flags: set[str]) -> list[str]:
    """The /proc/cpuinfo flags of the enabled LLVM `features` ("+avx2,-sse4a,...")
    that this host reports: what a CPU must have to run code built with them."""
    enabled = [f[1:] for f in features.split(",") if f.startswith("+")]
    flags = {_LLVM_TO_CPUINFO.get(name, name.replace(".", "_")) for name in enabled}
    return sorted(flags & host_flags)


def c_compiler() -> str:
    """The C compiler that links artifacts: $CC, else cc, gcc or clang."""
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        found = shutil.which(name) if name else None
        if found:
            return found
    raise ArtifactError(
        "saving an artifact needs a C compiler to link it (set CC, or install cc, gcc or clang)"
    )


def _argument_specs(types: list, names: list[str]) -> list[dict[str, Any]]:
    """Each tensor argument as the loader checks it: an encoded element type
    (bf16, a float8) travels as float32, its `encoding` named."""
    from graphcompiler.driver.program import buffer_dtype
    from graphcompiler.ir.element_types import lookup

    specs = []
    for name, type_ in zip(names, types, strict=True):
        row = lookup(type_.element_type)
        encoding = row.name if row is not None and row.encode is not None else None
        dtype = "float32" if encoding else buffer_dtype(type_.element_type).name
        specs.append(
            {"name": name, "shape": list(type_.get_shape()), "dtype": dtype, "encoding": encoding}
        )
    return specs


def metadata(compiled: Any, cpu: str, flags: list[str]) -> dict[str, Any]:
    """What the loader needs to call the entry, and what built it."""
    outputs = [f"out{i}" for i in range(len(compiled.output_types))]
    return {
        "format": FORMAT,
        "entry": compiled.entry,
        "inputs": _argument_specs(compiled.input_types, compiled.input_names),
        "outputs": _argument_specs(compiled.output_types, outputs),
        "arena_bytes": compiled.arena_bytes,
        "machine": platform.machine(),
        "cpu": cpu,
        "cpu_flags": flags,
        "graphcompiler": _version(),
    }


def _objects(compiled: Any, directory: Path) -> list[Path]:
    """The program with its runtime and microkernels, and the thread pool,
    as position-independent objects for the JIT's CPU and features."""
    import llvmlite.binding as llvm

    from graphcompiler.runtime.jit.engine import machine_features, program_and_runtime
    from graphcompiler.runtime.jit.optimizer import OPT_LEVEL, optimize_here
    from graphcompiler.runtime.threadpool import pool_source

    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=machine_features(), opt=OPT_LEVEL, reloc="pic"
    )
    context = llvm.create_context()
    try:
        program, runtime = program_and_runtime(
            compiled.llvm_ir, context, compiled.entry, None, compiled.microkernels
        )
        program.get_function(compiled.entry).name = ENTRY_SYMBOL
        program.link_in(runtime)
        pool = llvm.parse_assembly(pool_source(), context)
        paths = []
        for name, module in (("program", program), ("pool", pool)):
            module.verify()
            optimize_here(module, machine)
            paths.append(directory / f"{name}.o")
            paths[-1].write_bytes(machine.emit_object(module))
            module.close()
        return paths
    finally:
        context.close()


def _data_assembly(data: dict[str, Any], directory: Path) -> Path:
    """An assembly file defining each external constant as read-only data
    (64-byte aligned), its bytes included from one file."""
    blob = directory / "data.bin"
    lines = ['\t.section .rodata,"a"']
    offset = 0
    with blob.open("wb") as out:
        for name, buffer in data.items():
            size = buffer.nbytes
            lines += [
                f"\t.globl {name}",
                "\t.balign 64",
                f"{name}:",
                f'\t.incbin "{blob}", {offset}, {size}' if size else "\t.byte 0",
            ]
            out.write(memoryview(buffer).cast("B"))
            offset += size
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    path = directory / "data.S"
    path.write_text("\n".join(lines) + "\n")
    return path


def _c_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _api_source(info: dict[str, Any], directory: Path) -> Path:
    """runtime/gc_model.c for this entry, beside a copy of gc_model.h."""
    package = resources.files("graphcompiler.runtime")
    arguments = [f"inputs[{i}]" for i in range(len(info["inputs"]))]
    arguments += [f"outputs[{i}]" for i in range(len(info["outputs"]))]
    parameters = ["const void *"] * len(info["inputs"]) + ["void *"] * len(info["outputs"])
    if info["arena_bytes"] is not None:
        arguments.append("model->arena")
        parameters.append("void *")

    def sizes(side: str) -> str:
        return "".join(f"{math.prod(a['shape']) * buffer_dtype(a).itemsize}, " for a in info[side])

    parts = {
        "@INPUT_BYTES@": sizes("inputs"),
        "@OUTPUT_BYTES@": sizes("outputs"),
        "@NUM_INPUTS@": str(len(info["inputs"])),
        "@NUM_OUTPUTS@": str(len(info["outputs"])),
        "@ARENA_BYTES@": str(-1 if info["arena_bytes"] is None else info["arena_bytes"]),
        "@ENTRY_PARAMETERS@": ", ".join(parameters) or "void",
        "@ENTRY_ARGUMENTS@": ", ".join(arguments),
        "@METADATA@": _c_string(json.dumps(info)),
        "@REQUIRED_FLAGS@": "".join(f'"{flag}", ' for flag in info["cpu_flags"]),
    }
    text = package.joinpath("gc_model.c").read_text()
    for placeholder, value in parts.items():
        text = text.replace(placeholder, value)
    (directory / "gc_model.h").write_text(package.joinpath("gc_model.h").read_text())
    path = directory / "gc_model.c"
    path.write_text(text)
    return path


def _c_element(argument: dict[str, Any]) -> str:
    """How the C header names an argument's elements (an encoded one by its codes)."""
    encoding = argument["encoding"]
    if not encoding:
        return argument["dtype"]
    return f"{encoding} ({buffer_dtype(argument).name} {'bits' if encoding == 'bf16' else 'codes'})"


def model_header(info: dict[str, Any]) -> str:
    """gc_model.h with this model's arguments described on top."""

    def describe(side: str) -> list[str]:
        return [
            f" *   {side}[{i}] {a['name']}: {_c_element(a)} {a['shape'] or '(rank 0: one element)'}"
            for i, a in enumerate(info[side])
        ]

    summary = [
        f"/* graphcompiler artifact of @{info['entry']} (cpu {info['cpu']}):",
        *describe("inputs"),
        *describe("outputs"),
        " */",
    ]
    return (
        "\n".join(summary)
        + "\n"
        + resources.files("graphcompiler.runtime").joinpath("gc_model.h").read_text()
    )


def save(compiled: Any, path: str | Path) -> Path:
    """Write `compiled` as a shared library at `path` and its C header beside
    it (path with the suffix .h); returns the library's path."""
    import llvmlite.binding as llvm

    path = Path(path)
    compiler = c_compiler()
    info = metadata(compiled, llvm.get_host_cpu_name(), _required_flags())
    with tempfile.TemporaryDirectory(prefix="gc-artifact-") as work:
        directory = Path(work)
        sources = [
            _api_source(info, directory),
            _data_assembly(compiled.engine.external_data, directory),
            *_objects(compiled, directory),
        ]
        script = directory / "exports.map"
        script.write_text("{ global: gc_model_*; local: *; };\n")
        library = directory / "model.so"
        command = [compiler, "-shared", "-fPIC", "-O2", "-o", str(library), *map(str, sources),
                   f"-Wl,-soname,{path.name}",
                   f"-Wl,--version-script={script}", "-Wl,-z,noexecstack", "-lpthread"]  # fmt: skip
        linked = subprocess.run(command, capture_output=True, text=True)
        if linked.returncode != 0:
            raise ArtifactError(
                f"linking the artifact failed ({compiler}):\n{linked.stderr[-2000:]}"
            )
        tail = footer(library, info)
        with library.open("ab") as out:
            out.write(tail)
        temporary = path.with_name(f".{path.name}.partial")
        try:
            shutil.copyfile(library, temporary)
            os.replace(temporary, path)
            path.with_suffix(".h").write_text(model_header(info))
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise ArtifactError(f"cannot write {error.filename}: {error.strerror}") from None
    return path


def _version() -> str:
    try:
        return importlib.metadata.version("graphcompiler")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _required_flags() -> list[str]:
    from graphcompiler.runtime.jit.engine import machine_features

    return required_cpu_flags(machine_features(), host_cpu_flags())
