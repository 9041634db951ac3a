"""Reading MLIR text into located, verified modules.

xDSL's parser does not attach source locations to operations, so errors found
after parsing (verifier, passes) could not point back at the input. The
`LocatingParser` records a `FileLineColLoc` for every parsed operation that has
no explicit `loc(...)`, which makes `FILE:LINE:COL: error:` diagnostics and
`--verify-diagnostics` possible. `verify_module` walks the IR itself so that a
verifier failure is reported at the op that failed.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken

from graphcompiler.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceFile,
    op_diagnostic,
)

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^// -----[ \t]*$", re.MULTILINE)


class LinearTimeLexer(MLIRLexer):
    r"""xDSL's lexer with a string-literal regex that cannot backtrack.

    xDSL's `"(?:[^"\\\n\v\f]+|\\(?:...))*"` nests `+` inside `*`: on a
    literal with no closing quote the regex engine tries every way of
    splitting the line into runs, 2**n for n characters. Matching one
    character per repetition leaves a single way to split, so any input is
    lexed in time linear in its length."""

    _string_body = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*')
    _unescaped_characters_regex = re.compile(_string_body.pattern + '"')

    def _lex_string_literal(self, start_pos: int) -> MLIRToken:
        text = self.input.content
        end = self._string_body.match(text, start_pos).end()
        if end < len(text) and text[end] == "\\":
            raise ParseError(
                Span(end, end + 2, self.input),
                "unknown escape in string literal (use \\n, \\t, \\\\, \\\" or two hex digits)",
            )
        if end == len(text) or text[end] != '"':
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "unterminated string literal: expected '\"' before the end of the line",
            )
        return super()._lex_string_literal(start_pos)


class LocatingParser(Parser):
    """An xDSL parser that gives each parsed op the location of its name."""

    def __init__(self, ctx: Context, source: SourceFile):
        super().__init__(ctx, "", source.name)
        self._parser_state = ParserState(LinearTimeLexer(Input(source.text, source.name)))
        self.source = source
        self._op_name_offsets: list[int] = []
        self._first_forward_use: dict[str, int] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError:
            if not self.forward_ssa_references:
                raise
            # xDSL reports undefined values at the end of the input; MLIR
            # reports the first use of one, which is what a user needs.
            name = min(self.forward_ssa_references, key=self._first_forward_use.__getitem__)
            offset = self._first_forward_use[name]
            self.raise_error(
                f"use of undeclared SSA value name %{name}", offset, offset + len(name) + 1
            )

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values:
            self._first_forward_use.setdefault(operand.operand_name, operand.span.start)
        return super().resolve_operand(operand, type)

    def _parse_op_result_list(self):
        # Called first by `parse_operation`; afterwards the current token is
        # the op name, which is where MLIR locates an op.
        results = super()._parse_op_result_list()
        self._op_name_offsets.append(self._current_token.span.start)
        return results

    def _get_op_by_name(self, name: str) -> type[Operation]:
        # Report an unknown op at its name, not at the token after it.
        try:
            return super()._get_op_by_name(name)
        except ParseError as error:
            offset = self._op_name_offsets[-1]
            self.raise_error(error.msg, offset, offset + len(name))

    def parse_operation(self) -> Operation:
        op = super().parse_operation()
        offset = self._op_name_offsets.pop()
        if isinstance(op.location, UnknownLoc):
            op.location = self.file_loc(offset)
        return op

    def file_loc(self, offset: int) -> FileLineColLoc:
        where = self.source.location(offset)
        return FileLineColLoc(
            StringAttr(where.filename), IntAttr(where.line), IntAttr(where.column)
        )

    def current_offset(self) -> int:
        return self._current_token.span.start


def parse_module(ctx: Context, source: SourceFile) -> ModuleOp:
    """Parse `source` into a module; errors raise `DiagnosticError`."""
    parser: LocatingParser | None = None
    try:
        parser = LocatingParser(ctx, source)  # lexes the first token already
        module = parser.parse_module()
    except ParseError as error:
        where = source.location(error.span.start)
        raise DiagnosticError(Diagnostic(Severity.ERROR, error.msg, where)) from None
    except Exception as error:
        # Attribute/type constructors verify while the parser builds them;
        # anything else escaping a dialect's parser is a bug, still reported
        # at the place the parser reached.
        where = source.location(parser.current_offset() if parser else 0)
        message = str(error)
        if not isinstance(error, VerifyException | ValueError | TypeError):
            message = f"internal error while parsing: {type(error).__name__}: {error}"
        raise DiagnosticError(Diagnostic(Severity.ERROR, message, where)) from error
    if isinstance(module.location, UnknownLoc):
        module.location = parser.file_loc(0)
    return module


def verify_module(op: Operation) -> None:
    """Verify `op` and everything nested in it, raising a `DiagnosticError`
    located at the first op (outermost first) that fails."""
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as error:
        raise DiagnosticError(op_diagnostic(op, str(error))) from None
    for region in op.regions:
        for block in region.blocks:
            if (
                block.first_op is None
                and len(region.blocks) == 1
                and not op.has_trait(NoTerminator)
            ):
                raise DiagnosticError(
                    op_diagnostic(op, "expects a non-empty block ending in a terminator")
                )
            for nested in block.ops:
                verify_module(nested)


def split_input(source: SourceFile) -> list[SourceFile]:
    """Split on lines that are exactly `// -----`, as `--split-input-file`
    does. Each piece is padded with blank lines so that its line numbers are
    those of the original file."""
    chunks: list[SourceFile] = []
    lines_before = 0
    for piece in _SPLIT_LINE.split(source.text):
        chunks.append(SourceFile(source.name, "\n" * lines_before + piece))
        lines_before += piece.count("\n")
    return chunks
