"""Run one fuzz case in-process and classify what happened.

A case is MLIR text plus an optional graph pipeline. It goes parse -> verify
-> print -> parse, then down the path its dialect takes: graph functions are
compiled with `graphcompiler.compile` (each stage's printed text must parse
back) and run on random inputs, then interpreted by the reference; Tensor IR
is lowered with tir-to-llvm and JIT-compiled (not run: mutated tir may index
out of bounds, which is undefined like C); the llvm dialect is translated and
JIT-compiled. Crashes and hangs cannot be seen from inside; the worker pool
(pool.py) classifies those.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SUCCESS = "success"
DIAGNOSTIC = "diagnostic"  # a DiagnosticError with a location: what bad input must give
INTERNAL = "internal"  # an unlocated diagnostic, or one saying "internal error"
TRACEBACK = "traceback"  # any other exception escaping the compiler
CRASH = "crash"  # the process died (signal)
HANG = "hang"  # no answer within the time limit
MISMATCH = "mismatch"  # random graphs: compiled != reference, or 1 and 2 threads differ
REJECTED = "rejected"  # random graphs: a valid graph refused with a diagnostic
FAILURES = (INTERNAL, TRACEBACK, CRASH, HANG, MISMATCH, REJECTED)
KINDS = (SUCCESS, DIAGNOSTIC, *FAILURES)

FILENAME = "fuzz.mlir"
RUN_ELEMENT_LIMIT = 1 << 22  # bigger graphs are compiled but not run
_REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    text: str
    pipeline: str | None = None  # None: graphcompiler.compile's default stages


@dataclass(frozen=True)
class Outcome:
    kind: str
    stage: str
    message: str = ""
    where: str = ""  # tracebacks: the innermost frame in the repository

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    def signature(self) -> str:
        """What makes two failures the same bug: kind, stage and the message
        with numbers, names and shapes blurred (tracebacks: type and frame)."""
        if self.kind == TRACEBACK:
            return f"{self.kind}|{self.stage}|{self.message.split(':', 1)[0]}|{self.where}"
        text = re.sub(r"[%@^#][\w.$-]+", "%v", self.message)
        while re.search(r"<[^<>]*>", text):  # nested types: innermost first
            text = re.sub(r"<[^<>]*>", "\0", text)
        text = text.replace("\0", "<>")
        text = re.sub(r"'[^']*'", "'x'", text) if self.kind == DIAGNOSTIC else text
        text = re.sub(r"0x[0-9a-f]+|-?\d+(\.\d+)?(e[+-]?\d+)?", "N", text)
        return f"{self.kind}|{self.stage}|{text[:100]}"

    def describe(self) -> str:
        where = f" [{self.where}]" if self.where else ""
        return f"{self.kind} at {self.stage}: {self.message}{where}"


class _Internal(Exception):
    """A valid intermediate text the compiler cannot read back."""


def classify(error: BaseException, stage: str) -> Outcome:
    from graphcompiler.ir.diagnostics import DiagnosticError

    if isinstance(error, _Internal):
        return Outcome(INTERNAL, stage, str(error))
    if isinstance(error, DiagnosticError):
        diagnostic = error.diagnostic
        message = diagnostic.message
        if diagnostic.location is None:
            return Outcome(INTERNAL, stage, f"loc(unknown): {message}")
        if "internal error" in message:
            return Outcome(INTERNAL, stage, message)
        return Outcome(DIAGNOSTIC, stage, f"{diagnostic.location.line}:{message}")
    frames = traceback.extract_tb(error.__traceback__)
    ours = [frame for frame in frames if _in_repo(frame.filename)]
    last = (ours or frames)[-1] if frames else None
    where = f"{Path(last.filename).name}:{last.name}" if last else ""
    return Outcome(TRACEBACK, stage, f"{type(error).__name__}: {error}"[:500], where)


def _in_repo(filename: str) -> bool:
    path = Path(filename).resolve()
    return _REPO in path.parents and "test" not in path.relative_to(_REPO).parts[:1]


def _reparse(text: str, what: str):
    """`text` (printed by us) must parse, verify and print the same again."""
    import graphcompiler
    from graphcompiler.ir.diagnostics import DiagnosticError

    try:
        module = graphcompiler.parse(text, filename=what)
    except DiagnosticError as error:
        where, message = error.diagnostic.location, error.diagnostic.message
        raise _Internal(f"the printed {what} does not parse back: {where}: {message}") from None
    if str(module) != text:
        raise _Internal(f"the printed {what} changes when parsed and printed again")
    return module


def random_inputs(types, rng: np.random.Generator) -> list | None:
    """Random arguments for a graph function's input types, or None when
    some type cannot be passed or the inputs would be too big to run."""
    from xdsl.dialects.builtin import NoneAttr, TensorType

    from graphcompiler.interpreters.reference import random_input

    arrays = []
    for type_ in types:
        if not isinstance(type_, TensorType) or not isinstance(type_.encoding, NoneAttr):
            return None  # blocked formats take pre-blocked arrays, the reference does not
        shape = tuple(type_.get_shape())
        if any(d < 0 for d in shape) or np.prod(shape, dtype=object) > RUN_ELEMENT_LIMIT:
            return None
        arrays.append(random_input(type_, rng, -2.0, 2.0))
    return arrays


def _module_kind(module) -> str:
    from xdsl.dialects import func

    from graphcompiler.dialects import tir

    if any(isinstance(op, func.FuncOp) for op in module.ops):
        return "graph"
    if any(isinstance(op, tir.FuncOp | tir.GlobalOp) for op in module.ops):
        return "tir"
    if any(op.dialect_name() == "llvm" for op in module.ops):
        return "llvm"
    return "other"


def run_case(case: Case, on_stage: Callable[[str], None] = lambda stage: None) -> Outcome:
    """Everything one case goes through; the first failure decides."""
    from graphcompiler.driver.registration import default_registry
    from graphcompiler.ir.diagnostics import SourceFile, collect_diagnostics
    from graphcompiler.ir.parsing import parse_module
    from graphcompiler.ir.verifier import verify_module

    stage = "start"

    def enter(name: str) -> None:
        nonlocal stage
        stage = name
        on_stage(name)

    try:
        with collect_diagnostics(), np.errstate(all="ignore"):
            enter("parse")
            module = parse_module(
                default_registry().create_context(), SourceFile(FILENAME, case.text)
            )
            enter("verify")
            verify_module(module)
            enter("roundtrip")
            _reparse(str(module), "input")
            kind = _module_kind(module)
            if kind == "graph":
                _graph(module, case.pipeline, enter)
            elif kind == "tir":
                _tir(module, enter)
            elif kind == "llvm":
                _llvm(module, enter)
    except Exception as error:  # classifying every failure is the point
        return classify(error, stage)
    return Outcome(SUCCESS, stage)


def _graph(module, pipeline: str | None, enter: Callable[[str], None]) -> None:
    from xdsl.dialects import func

    import graphcompiler
    from graphcompiler.driver.registration import LLVM_STAGE
    from graphcompiler.interpreters import reference

    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    entry = function.sym_name.data
    enter("compile")
    compiled = graphcompiler.compile(module, entry=entry, pipeline=pipeline, num_threads=1)
    inputs = random_inputs(function.function_type.inputs.data, np.random.default_rng(0))
    outputs = random_inputs(function.function_type.outputs.data, np.random.default_rng(0))
    if inputs is not None and outputs is not None:
        enter("run")
        compiled(*inputs)
        enter("reference")
        reference.run(module, *inputs, entry=entry)
    # Last, so that a stage printing badly does not hide a crash after it.
    # A stage's text elides big constants (compile_cache.TEXT_ELIDE_ABOVE): it
    # is for reading, and only whole texts are expected to parse back. Nor
    # does a tir text naming a blob (#tir.blob: bytes held by the compile).
    enter("graph-roundtrip")
    if "__elided__" not in compiled.graph:
        _reparse(compiled.graph, "graph stage")
    whole = compiled.tir is not None and not any(
        mark in compiled.tir for mark in ("__elided__", "#tir.blob<")
    )
    if whole:
        enter("tir-roundtrip")
        lowered = _reparse(compiled.tir, "tir stage")
        enter("tir-to-llvm")
        graphcompiler.apply_pipeline(lowered, f"builtin.module({LLVM_STAGE})")
        enter("llvm-roundtrip")
        _reparse(str(lowered), "llvm stage")


def _tir(module, enter: Callable[[str], None]) -> None:
    import graphcompiler
    from graphcompiler.driver.program import TIR_TO_LLVM
    from graphcompiler.lowering.llvm.translate import translate_program
    from graphcompiler.runtime.jit.engine import JitEngine

    enter("tir-to-llvm")
    graphcompiler.apply_pipeline(module, TIR_TO_LLVM)
    enter("llvm-roundtrip")
    _reparse(str(module), "llvm stage")
    enter("translate")
    program = translate_program(module)
    enter("jit")
    JitEngine(program.text, 1, program=program)


def _llvm(module, enter: Callable[[str], None]) -> None:
    from graphcompiler.lowering.llvm.translate import translate_program
    from graphcompiler.runtime.jit.engine import JitEngine

    enter("translate")
    program = translate_program(module)
    enter("jit")
    JitEngine(program.text, 1, program=program)
