"""Running an `OpPassManager` tree on IR, with MLIR's instrumentation.

xDSL passes are `ModulePass`es: they take a `builtin.module`. A pass nested
under another anchor (`func.func(cse)`) runs on each such op separately: the
op is moved into a scratch module for the duration of the pass, so the pass
sees that op alone, exactly as MLIR's nested pass managers do.

After every pass the IR is verified (unless `verify_each` is off). Failures of any kind come out as a
`DiagnosticError` located at the op the pass was running on (or wherever the
pass pointed), never as a bare Python exception.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity, location_of
from graphcompiler.ir.pipeline import ANY_ANCHOR, OpPassManager
from graphcompiler.ir.verifier import verify_module


@dataclass
class TimingNode:
    """Wall time of one named step and of the steps nested in it."""

    name: str
    seconds: float = 0.0
    children: dict[str, TimingNode] = field(default_factory=dict)

    def child(self, name: str) -> TimingNode:
        return self.children.setdefault(name, TimingNode(name))


class Timer:
    """Accumulates a `TimingNode` tree; renders MLIR's `--mlir-timing` report."""

    def __init__(self) -> None:
        self.root = TimingNode("Total")
        self._stack = [self.root]

    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        node = self._stack[-1].child(name)
        self._stack.append(node)
        start = time.perf_counter()
        try:
            yield
        finally:
            node.seconds += time.perf_counter() - start
            self._stack.pop()

    def report(self) -> str:
        total = sum(child.seconds for child in self.root.children.values())
        bar = "===" + "-" * 73 + "==="
        lines = [
            bar,
            " " * 25 + "... Execution time report ...",
            bar,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]

        def emit(node: TimingNode, depth: int) -> None:
            share = 100.0 * node.seconds / total if total else 0.0
            lines.append(f"  {node.seconds:8.4f} ({share:5.1f}%)  {'  ' * depth}{node.name}")
            for child in node.children.values():
                emit(child, depth + 1)

        for child in self.root.children.values():
            emit(child, 0)
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


class ElidingPrinter(Printer):
    """xDSL's printer, with MLIR's `--mlir-elide-elementsattrs-if-larger=N`:
    a dense elements attribute of more than N elements prints as
    `dense_resource<__elided__>` (a 256x256 constant is otherwise one
    half-megabyte line)."""

    def __init__(self, *args, elide_elements_above: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.elide_elements_above = elide_elements_above

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        """xDSL's, its common case (a token, no newline) written straight to
        the stream: a print() call per token was a quarter of printing a
        compiled module's Tensor IR."""
        if "\n" in text or self.stream is None:
            super().print_string(text, indent=indent)
        else:
            self._current_column += len(text)
            self.stream.write(text)

    def print_attribute(self, attribute: Attribute) -> None:
        limit = self.elide_elements_above
        if (
            limit is not None
            and isinstance(attribute, DenseIntOrFPElementsAttr)
            and len(attribute) > limit
        ):
            self.print_string("dense_resource<__elided__> : ")
            self.print_attribute(attribute.get_type())
            return
        super().print_attribute(attribute)


@dataclass(frozen=True)
class PrintOptions:
    """How IR is printed (mlir-opt's `--mlir-print-*` and elision flags)."""

    generic: bool = False
    debuginfo: bool = False
    elide_elements_above: int | None = None

    def print(self, op: Operation, stream: TextIO) -> None:
        ElidingPrinter(
            stream=stream,
            print_generic_format=self.generic,
            print_debuginfo=self.debuginfo,
            elide_elements_above=self.elide_elements_above,
        ).print_op(op)

    def text(self, op: Operation) -> str:
        text = StringIO()
        self.print(op, text)
        return text.getvalue()


@dataclass
class Instrumentation:
    """What to show and check around each pass, with mlir-opt's semantics:
    `print_before`/`print_after` name passes (or hold `ALL_PASSES`);
    `print_after_change` keeps only the after-dumps of passes that changed
    the IR; `print_after_failure` dumps the IR a failed pass left;
    `verify_each` runs the verifier after every pass (off: faster, and a
    broken pass shows up later, not at its own output)."""

    print_before: frozenset[str] = frozenset()
    print_after: frozenset[str] = frozenset()
    print_after_change: bool = False
    print_after_failure: bool = False
    verify_each: bool = True
    print_options: PrintOptions = PrintOptions()
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    timer: Timer | None = None

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        if self.timer is None:
            yield
        else:
            with self.timer.scope(name):
                yield

    def wants_before(self, pass_: ModulePass) -> bool:
        return ALL_PASSES in self.print_before or pass_.name in self.print_before

    def wants_after(self, pass_: ModulePass) -> bool:
        return ALL_PASSES in self.print_after or pass_.name in self.print_after

    def dump(self, when: str, op: Operation, text: str | None = None) -> None:
        what = "" if isinstance(op, ModuleOp) else f" ('{op.name}' operation{_symbol_suffix(op)})"
        self.stream.write(f"// -----// IR Dump {when}{what} //----- //\n")
        self.stream.write(self.print_options.text(op) if text is None else text)
        self.stream.write("\n\n")


ALL_PASSES = "*"
"""In `Instrumentation.print_before`/`print_after`: every pass."""


def _symbol_suffix(op: Operation) -> str:
    symbol = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return f": @{symbol.data}" if symbol is not None and hasattr(symbol, "data") else ""


def run_pipeline(
    manager: OpPassManager,
    module: ModuleOp,
    ctx: Context,
    instrumentation: Instrumentation | None = None,
) -> None:
    """Run `manager` (anchored on builtin.module) on `module` in place."""
    _PassRunner(ctx, instrumentation or Instrumentation()).run(manager, module)


@dataclass
class _PassRunner:
    ctx: Context
    instrumentation: Instrumentation

    def run(self, manager: OpPassManager, op: Operation) -> None:
        for element in manager.elements:
            if isinstance(element, OpPassManager):
                with self.instrumentation.time(f"'{element.anchor}' Pipeline"):
                    for nested in _nested_ops(op, element.anchor):
                        self.run(element, nested)
            else:
                self.run_pass(element, op)

    def run_pass(self, pass_: ModulePass, op: Operation) -> None:
        instrumentation = self.instrumentation
        if instrumentation.wants_before(pass_):
            instrumentation.dump(f"Before {pass_.name}", op)
        print_after = instrumentation.wants_after(pass_)
        before = (
            instrumentation.print_options.text(op)
            if print_after and instrumentation.print_after_change
            else None
        )
        try:
            with instrumentation.time(pass_.name):
                _apply_isolated(pass_, op, self.ctx)
            if instrumentation.verify_each:
                with instrumentation.time("(A) Verifier"):
                    verify_module(op)
        except DiagnosticError:
            if instrumentation.print_after_failure:
                instrumentation.dump(f"After {pass_.name} Failed", op)
            raise
        if print_after:
            after = instrumentation.print_options.text(op)
            if after != before:
                instrumentation.dump(f"After {pass_.name}", op, after)


def _nested_ops(op: Operation, anchor: str) -> list[Operation]:
    """Ops named `anchor` directly inside `op`'s regions (snapshot, since
    passes may add or remove siblings)."""
    return [
        nested
        for region in op.regions
        for block in region.blocks
        for nested in block.ops
        if anchor in (ANY_ANCHOR, nested.name)
    ]


def _apply_isolated(pass_: ModulePass, op: Operation, ctx: Context) -> None:
    """Apply a module pass to `op`; a non-module op is lent to a scratch
    module and put back (with any siblings the pass created) afterwards."""
    if isinstance(op, ModuleOp):
        _apply_reporting_failures(pass_, op, op, ctx)
        return
    block, successor = op.parent_block(), op.next_op
    assert block is not None, "nested pass managers only run on ops inside blocks"
    op.detach()
    scratch = ModuleOp([op])
    try:
        _apply_reporting_failures(pass_, scratch, op, ctx)
    finally:
        for result_op in list(scratch.body.block.ops):
            result_op.detach()
            if successor is None:
                block.add_op(result_op)
            else:
                block.insert_op_before(result_op, successor)


def _apply_reporting_failures(
    pass_: ModulePass, module: ModuleOp, anchor: Operation, ctx: Context
) -> None:
    try:
        pass_.apply(ctx, module)
    except DiagnosticError:
        raise
    except DiagnosticException as error:
        # xDSL passes fail with a message but no op: locate it at the anchor.
        raise DiagnosticError(
            Diagnostic(Severity.ERROR, f"pass '{pass_.name}' failed: {error}", location_of(anchor))
        ) from error
    except MemoryError as error:  # a graph too big for this machine, not a compiler bug
        detail = f": {error}" if str(error) else ""
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR,
                f"pass '{pass_.name}' ran out of memory{detail}",
                location_of(anchor),
            )
        ) from None
    except Exception as error:
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR,
                f"internal error in pass '{pass_.name}': {type(error).__name__}: {error}",
                location_of(anchor),
            )
        ) from error
