"""Reading MLIR text into located, verified modules.

xDSL's parser does not attach source locations to operations, so errors found
after parsing (verifier, passes) could not point back at the input. The
`LocatingParser` records a `FileLineColLoc` for every parsed operation that has
no explicit `loc(...)`, which makes `FILE:LINE:COL: error:` diagnostics and
`--verify-diagnostics` possible. Verifying is verifier.py's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    SSAValue,
    TypeAttribute,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind

from graphcompiler.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceFile,
    did_you_mean,
)
from graphcompiler.ir.verifier import builtin_type_error

SPLIT_MARKER = "// -----"
BIG_SPLAT = 1 << 16
"""Splat literals of this many elements on are held as one value."""
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
                'unknown escape in string literal (use \\n, \\t, \\\\, \\" or two hex digits)',
            )
        if end == len(text) or text[end] != '"':
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "unterminated string literal: expected '\"' before the end of the line",
            )
        return super()._lex_string_literal(start_pos)


@dataclass
class _LiteralElement(AttrParser._TensorLiteralElement):
    """A tensor literal element converted to its element type as MLIR does.

    A hex integer in a float tensor is the float's bit pattern (xDSL prints
    inf and NaN that way but parsed them back as numbers: dense<0xff800000>
    : tensor<f32> became 4.29e9 instead of -inf), in either part of a complex
    one too (`(0x7F80, 0.0)` for a complex<bf16> inf, which xDSL refused as
    mixed types); a complex element must be a (real, imaginary) pair (xDSL
    asserted)."""

    is_hex: bool = False
    hex_parts: tuple[bool, bool] = (False, False)

    def to_type(self, parser: AttrParser, type: Attribute):
        if isinstance(type, ComplexType):
            if not isinstance(self.value, tuple):
                parser.raise_error(
                    f"expected a (real, imaginary) pair for an element of type {type}", self.span
                )
            return self._complex_parts(parser, type.element_type)
        if isinstance(type, AnyFloat) and isinstance(self.value, int) and self.is_hex:
            return self._from_bits(parser, self.value, type)
        return super().to_type(parser, type)

    def _complex_parts(self, parser: AttrParser, part_type: Attribute) -> tuple:
        if not isinstance(part_type, AnyFloat):
            if any(isinstance(part, float) for part in self.value):
                parser.raise_error(
                    f"expected integer parts for an element of type complex<{part_type}>", self.span
                )
            return tuple(int(part) for part in self.value)
        return tuple(
            self._from_bits(parser, part, part_type) if is_hex else float(part)
            for part, is_hex in zip(self.value, self.hex_parts, strict=True)
        )

    def _from_bits(self, parser: AttrParser, bits: int, type: AnyFloat) -> float:
        try:
            raw = bits.to_bytes(type.compile_time_size, "little")
        except OverflowError:
            parser.raise_error(f"hexadecimal literal does not fit in {type}", self.span)
        return next(type.iter_unpack(raw))


_T = TypeVar("_T")


def _xdsl_error_message(error: Exception, what: str) -> str:
    """Words for an exception that one of xDSL's attribute or type
    constructors raised on a literal it could not build."""
    detail = str(error).strip()
    if isinstance(error, OverflowError):
        kind = "floating point value" if "float" in detail else "literal"
        return f"{kind} too large for its type"
    if isinstance(error, NotImplementedError):
        return (
            "constants of this type are not supported"
            " (integers up to 64 bits, index, f16, bf16, f32 and f64 are)"
        )
    if isinstance(error, ZeroDivisionError):  # a zero-bit element size
        return "elements of zero bits (i0) are not supported here"
    if isinstance(error, RecursionError):
        return f"{what} nested too deeply"
    if isinstance(error, MemoryError):
        return f"not enough memory to build this {what}"
    if isinstance(error, VerifyException | ValueError | TypeError) and detail:
        return detail
    return f"invalid {what}" + (f": {detail}" if detail else f" ({type(error).__name__})")


@cache
def _printable_float_type(type_: Attribute) -> bool:
    """xDSL builds f80/f128 float attributes but cannot print them."""
    try:
        str(FloatAttr(0.0, type_))
    except Exception:
        return False
    return True


class LocatingParser(Parser):
    """An xDSL parser that gives each parsed op the location of its name."""

    def __init__(self, ctx: Context, source: SourceFile):
        super().__init__(ctx, "", source.name)
        self._parser_state = ParserState(LinearTimeLexer(Input(source.text, source.name)))
        self.source = source
        self._op_name_offsets: list[int] = []
        self._op_types: list[type[Operation]] = []
        self._first_forward_use: dict[str, int] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])  # an empty file is an empty module, as in mlir-opt
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
            op_type = super()._get_op_by_name(name)
        except ParseError as error:
            offset = self._op_name_offsets[-1]
            known = (op.name for op in self.ctx.loaded_ops)
            self.raise_error(error.msg + did_you_mean(name, known), offset, offset + len(name))
        self._op_types.append(op_type)
        return op_type

    def _parse_tensor_literal_element(self) -> AttrParser._TensorLiteralElement:
        if self._current_token.kind == MLIRTokenKind.L_PAREN:
            return self._parse_complex_literal_element()
        is_hex = self._at_hex_literal()
        element = super()._parse_tensor_literal_element()
        return _LiteralElement(element.is_negative, element.value, element.span, is_hex)

    def _parse_complex_literal_element(self) -> _LiteralElement:
        """`(real, imaginary)`: a hex part is a float's bit pattern, so it
        may stand beside a float part (MLIR prints a non-finite part so)."""
        start = self._consume_token(MLIRTokenKind.L_PAREN).span.start
        real_is_hex = self._at_hex_literal()
        real, _ = self._parse_bool_int_or_float()
        self.parse_punctuation(",")
        imag_is_hex = self._at_hex_literal()
        imag, _ = self._parse_bool_int_or_float()
        end = self._consume_token(MLIRTokenKind.R_PAREN).span.end
        span = Span(start, end, self.lexer.input)
        mixed = isinstance(real, float) != isinstance(imag, float)
        if mixed and not (real_is_hex or imag_is_hex):
            self.raise_error("Complex value must be either (float, float) or (int, int)", span)
        return _LiteralElement(False, (real, imag), span, False, (real_is_hex, imag_is_hex))

    def _at_hex_literal(self) -> bool:
        token = self._current_token
        return token.kind == MLIRTokenKind.INTEGER_LIT and token.text[:2] in ("0x", "0X")

    def parse_dense_int_or_fp_elements_attr(self, type_) -> DenseIntOrFPElementsAttr:
        """`dense<v> : T` of many elements is held as its one value (a splat,
        as graph-constant-fold makes them): xDSL's parser lists and packs the
        value once per element, 12 s for the 8.5M of a 16x8x257x257 tensor."""
        start = self._current_token.span.start
        splat = self._parse_optional_big_splat(type_)
        if splat is not None:
            return splat
        self._resume_from(start)
        return super().parse_dense_int_or_fp_elements_attr(type_)

    def _parse_optional_big_splat(self, type_) -> DenseIntOrFPElementsAttr | None:
        """A splat of at least BIG_SPLAT elements of an int or float type,
        else None (the caller parses again from the start)."""
        if self.parse_optional_punctuation("<") is None or self._current_token.kind in (
            MLIRTokenKind.L_SQUARE,
            MLIRTokenKind.STRING_LIT,
            MLIRTokenKind.GREATER,
        ):
            return None
        element = self._parse_tensor_literal_element()
        if self.parse_optional_punctuation(">") is None:
            return None
        if type_ is None:
            if self.parse_optional_punctuation(":") is None:
                return None
            type_ = self._parse_dense_literal_type()
        element_type = type_.get_element_type()
        if not isinstance(element_type, AnyFloat | IntegerType) or (
            math.prod(type_.get_shape()) < BIG_SPLAT
        ):
            return None
        one = DenseIntOrFPElementsAttr.from_list(
            TensorType(element_type, [1]), [element.to_type(self, element_type)]
        )  # xDSL's checks and packing, for the one value
        return DenseIntOrFPElementsAttr(type_, one.data)

    def _built_by_xdsl(self, parse: Callable[[], _T], what: str) -> _T:
        """Run one of xDSL's attribute or type parsers. Their constructors
        verify and pack values while building (struct.pack overflows, f80
        has no binary form, i0 divides by zero): whatever they raise is a
        located error at the attribute or type being parsed. Nested calls
        report the innermost one."""
        start = self.current_offset()
        try:
            return parse()
        except ParseError:
            raise
        except Exception as error:
            end = max(self.current_offset(), start + 1)
            self.raise_error(_xdsl_error_message(error, what), start, end)

    def _parse_dialect_type_or_attribute_body(self, name: str, is_type: bool, *rest):
        try:
            return super()._parse_dialect_type_or_attribute_body(name, is_type, *rest)
        except ValueError as error:
            # xDSL builds a parametrized attribute by zipping its parameter
            # definitions with what was parsed (`!tir.ptr<f80>`).
            if not str(error).startswith("zip()"):
                raise
            lookup = self.ctx.get_optional_type if is_type else self.ctx.get_optional_attr
            definition = lookup(name)
            takes = (
                f" (it takes {len(definition.get_irdl_definition().parameters)})"
                if definition
                else ""
            )
            raise ValueError(f"wrong number of parameters for '{name}'{takes}") from None

    def parse_optional_attribute(self) -> Attribute | None:
        return self._built_by_xdsl(super().parse_optional_attribute, "attribute")

    def parse_optional_builtin_int_or_float_attr(self):
        start = self.current_offset()
        attribute = super().parse_optional_builtin_int_or_float_attr()
        if isinstance(attribute, FloatAttr) and not _printable_float_type(attribute.type):
            self.raise_error(
                f"{attribute.type} attributes are not supported (f16, bf16, f32 and f64 are)",
                start,
                self.current_offset(),
            )
        return attribute

    def parse_optional_type(self) -> TypeAttribute | None:
        start = self.current_offset()
        type_ = self._built_by_xdsl(super().parse_optional_type, "type")
        problem = builtin_type_error(type_) if type_ is not None else None
        if problem is not None:
            self.raise_error(problem, start, start + 1)
        return type_

    def parse_optional_attr_dict(self) -> dict[str, Attribute]:
        # Ops with `check_parsed_attributes` (graph ops) judge their
        # attribute dictionary before xDSL's format parser reads properties
        # out of it, which would report a wrong kind without op or name.
        attributes = super().parse_optional_attr_dict()
        check = (
            getattr(self._op_types[-1], "check_parsed_attributes", None) if self._op_types else None
        )
        if check is not None:
            try:
                check(attributes)
            except VerifyException as error:
                offset = self._op_name_offsets[-1]
                self.raise_error(f"'{self._op_types[-1].name}' op {error}", offset, offset + 1)
        return attributes

    def _parse_block(self) -> Block:
        # xDSL forgets where a forward-referenced block was defined, so a
        # second definition of its label escaped as a KeyError.
        token = self._current_token
        name = token.text[1:]
        if (
            token.kind == MLIRTokenKind.CARET_IDENT
            and name in self.blocks
            and self.blocks[name][1] is None
            and name not in self.forward_block_references
        ):
            self.raise_error(f"re-declaration of block '{name}'", token.span.start, token.span.end)
        return super()._parse_block()

    def parse_operation(self) -> Operation:
        depth = len(self._op_types)
        try:
            op = super().parse_operation()
        finally:
            del self._op_types[depth:]
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
        # Attributes and types are handled in `_built_by_xdsl`; an op's
        # constructor may verify too (VerifyException, ValueError); anything
        # else escaping a dialect's parser is a bug, still located.
        where = source.location(parser.current_offset() if parser else 0)
        message = str(error)
        if not isinstance(error, VerifyException | ValueError | TypeError):
            message = f"internal error while parsing: {type(error).__name__}: {error}"
        raise DiagnosticError(Diagnostic(Severity.ERROR, message, where)) from error
    if isinstance(module.location, UnknownLoc):
        module.location = parser.file_loc(0)
    return module


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
