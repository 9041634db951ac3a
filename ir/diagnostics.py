"""MLIR-shaped diagnostics: severity, message, source location and notes.

Every user-facing failure of the compiler (parse errors, verifier failures,
pass failures) becomes a `Diagnostic` rendered as `FILE:LINE:COL: error: ...`
with the source line and a caret, never a Python traceback. Passes raise
`DiagnosticError` (via `emit_error`) to abort, and call `emit_warning` /
`emit_remark` for non-fatal messages, which go to the active handler.

`ExpectedDiagnostics` implements `--verify-diagnostics` with MLIR's semantics:
`// expected-error {{text}}` (also `-warning`, `-note`, `-remark`, the `-re`
regex variant and the `@+N`, `@-N`, `@above`, `@below`, `@unknown` designators).
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from xdsl.ir import Attribute, Operation


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    REMARK = "remark"


@dataclass(frozen=True)
class SourceLocation:
    """A position in a source file; line and column are 1-based."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class NamedLocation(SourceLocation):
    """MLIR's `loc("name")` with no file under it (ops imported from an ONNX
    node carry the node's name): rendered as MLIR does, `loc("name"): error:`."""

    def __str__(self) -> str:
        return f'loc("{self.filename}")'


@dataclass
class SourceFile:
    """The text of one input with a fast offset -> (line, column) map."""

    name: str
    text: str
    _line_starts: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._line_starts = [0] + [match.end() for match in re.finditer("\n", self.text)]

    def location(self, offset: int) -> SourceLocation:
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        column = offset - self._line_starts[line_index] + 1
        return SourceLocation(self.name, line_index + 1, column)

    def line_text(self, line: int) -> str | None:
        if not 1 <= line <= len(self._line_starts):
            return None
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end != -1 else len(self.text)]

    def lines(self) -> list[str]:
        return self.text.split("\n")


@dataclass
class Diagnostic:
    severity: Severity
    message: str
    location: SourceLocation | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        # One line per diagnostic, as MLIR prints them (xDSL's messages may
        # span lines), so FileCheck and expected-* comments can match them.
        self.message = re.sub(r"\s*\n\s*", " ", self.message.strip())

    def render(self, sources: Sequence[SourceFile] = ()) -> str:
        """Format as MLIR does: location prefix, source line and caret, notes."""
        where = f"{self.location}: " if self.location else "loc(unknown): "
        text = f"{where}{self.severity.value}: {self.message}\n"
        if self.location is not None:
            source = next((s for s in sources if s.name == self.location.filename), None)
            line = source.line_text(self.location.line) if source else None
            if line is not None:
                text += f"{line}\n{' ' * (self.location.column - 1)}^\n"
        return text + "".join(note.render(sources) for note in self.notes)

    def flatten(self) -> Iterator[Diagnostic]:
        """This diagnostic followed by its notes, as the verifier matches them."""
        yield self
        for note in self.notes:
            yield from note.flatten()


class DiagnosticError(Exception):
    """Aborts the current compilation step with a diagnostic for the user."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic

    def __str__(self) -> str:
        # `FILE:LINE:COL: error: ...` (and its notes): where, not just what
        return self.diagnostic.render().rstrip("\n")


def did_you_mean(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    """`; did you mean 'x'?` naming the closest candidates, or nothing."""
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=cutoff)
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else ""


def location_of(ir: Operation | Attribute | None) -> SourceLocation | None:
    """The file location of an op or a location attribute, looking through
    name, call-site and fused locations the way MLIR's handlers do."""
    from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
    from xdsl.ir import Operation

    loc = ir.location if isinstance(ir, Operation) else ir
    while True:
        match loc:
            case FileLineColLoc():
                return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
            case NameLoc():
                inner = location_of(loc.location)
                return inner if inner is not None else NamedLocation(loc.desc.data, 0, 0)
            case CallSiteLoc():
                loc = loc.callee
            case FusedLoc() if loc.locations.data:
                loc = loc.locations.data[0]
            case _:
                return None


def op_diagnostic(op: Operation, message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    """A diagnostic about `op`, prefixed `'dialect.op' op` like MLIR's."""
    return Diagnostic(severity, f"'{op.name}' op {message}", location_of(op))


_handler: ContextVar[list[Diagnostic] | None] = ContextVar(
    "graphcompiler_diagnostic_handler", default=None
)


def emit_error(op: Operation, message: str, notes: Sequence[Diagnostic] = ()) -> NoReturn:
    """Abort the running pass with an error located at `op`."""
    diagnostic = op_diagnostic(op, message)
    diagnostic.notes.extend(notes)
    raise DiagnosticError(diagnostic)


def emit_warning(op: Operation, message: str) -> None:
    _report(op_diagnostic(op, message, Severity.WARNING))


def emit_remark(op: Operation, message: str) -> None:
    _report(op_diagnostic(op, message, Severity.REMARK))


def _report(diagnostic: Diagnostic) -> None:
    collected = _handler.get()
    if collected is None:
        import sys

        sys.stderr.write(diagnostic.render())
    else:
        collected.append(diagnostic)


@contextmanager
def collect_diagnostics() -> Iterator[list[Diagnostic]]:
    """Collect the non-fatal diagnostics emitted inside the block."""
    collected: list[Diagnostic] = []
    token = _handler.set(collected)
    try:
        yield collected
    finally:
        _handler.reset(token)


# --- --verify-diagnostics -------------------------------------------------

_EXPECTED = re.compile(
    r"expected-(error|warning|note|remark)(-re)? *"
    r"(?:@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}\s*$"
)


@dataclass
class ExpectedDiagnostic:
    severity: Severity
    message: str
    is_regex: bool
    line: int | None  # None: expected at an unknown location
    where: SourceLocation  # of the `expected-...` comment itself
    matched: bool = False

    def matches(self, diagnostic: Diagnostic) -> bool:
        if self.matched or diagnostic.severity != self.severity:
            return False
        actual_line = diagnostic.location.line if diagnostic.location else None
        if actual_line != self.line:
            return False
        if self.is_regex:
            return re.search(_mlir_regex(self.message), diagnostic.message) is not None
        return self.message in diagnostic.message


def _mlir_regex(message: str) -> str:
    """`-re` messages are literal text with `{{regex}}` islands, as in MLIR."""
    pieces = re.split(r"\{\{(.*?)\}\}", message)
    return "".join(piece if index % 2 else re.escape(piece) for index, piece in enumerate(pieces))


@dataclass
class ExpectedDiagnostics:
    """The `expected-*` annotations of one source and their matching state."""

    expected: list[ExpectedDiagnostic]

    @staticmethod
    def from_source(source: SourceFile) -> ExpectedDiagnostics:
        lines = source.lines()
        designator_lines = {
            number for number, text in enumerate(lines, start=1) if _EXPECTED.search(text)
        }

        def nearest_plain_line(start: int, step: int) -> int:
            line = start + step
            while line in designator_lines:
                line += step
            return line

        expected: list[ExpectedDiagnostic] = []
        for number, text in enumerate(lines, start=1):
            match = _EXPECTED.search(text)
            if match is None:
                continue
            severity, regex, designator, message = match.groups()
            if designator is None:
                line: int | None = number
            elif designator == "unknown":
                line = None
            elif designator == "above":
                line = nearest_plain_line(number, -1)
            elif designator == "below":
                line = nearest_plain_line(number, +1)
            else:
                line = number + int(designator)
            where = SourceLocation(source.name, number, match.start() + 1)
            expected.append(
                ExpectedDiagnostic(Severity(severity), message, regex is not None, line, where)
            )
        return ExpectedDiagnostics(expected)

    def check(self, emitted: Sequence[Diagnostic]) -> list[Diagnostic]:
        """Match emitted diagnostics (and their notes) against the expected
        ones; returns the errors describing every mismatch."""
        problems: list[Diagnostic] = []
        for diagnostic in (d for top in emitted for d in top.flatten()):
            expectation = next((e for e in self.expected if e.matches(diagnostic)), None)
            if expectation is None:
                problems.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"unexpected {diagnostic.severity.value}: {diagnostic.message}",
                        diagnostic.location,
                    )
                )
            else:
                expectation.matched = True
        problems.extend(
            Diagnostic(
                Severity.ERROR,
                f'expected {e.severity.value} "{e.message}" was not produced',
                e.where,
            )
            for e in self.expected
            if not e.matched
        )
        return problems
