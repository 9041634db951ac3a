"""MLIR's textual pass pipelines, parsed and resolved against a `Registry`.

    builtin.module(cse,func.func(canonicalize,cse),some-pass{opt=1 other=abc})

An element is a pass with optional `{key=value ...}` options (lists as
`key=1,2,3`), a registered named pipeline (spliced in place), or an op name
followed by a parenthesized pipeline that runs on each op of that name nested
directly in the current op. A flat list (xDSL's `-p a,b{x=1}`) is anchored on
`builtin.module`.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field
from typing import get_args, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.hints import isa, type_repr

from graphcompiler.ir.registry import Registry

MODULE_ANCHOR = "builtin.module"
ANY_ANCHOR = "any"


class PipelineError(Exception):
    """A pipeline that does not parse or names unknown passes/options."""


# --- syntax ---------------------------------------------------------------


@dataclass
class PassElement:
    name: str
    options: dict[str, tuple[str, ...]]


@dataclass
class NestedElement:
    anchor: str
    elements: list[PassElement | NestedElement]


_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class _PipelineLexer:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def expect(self, char: str, context: str) -> None:
        if not self.take(char):
            found = repr(self.peek()) if self.peek() else "end of pipeline"
            self.fail(f"expected '{char}' {context}, found {found}")

    def name(self, what: str) -> str:
        self.skip_space()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            found = repr(self.peek()) if self.peek() else "end of pipeline"
            self.fail(f"expected {what}, found {found}")
        self.pos = match.end()
        return match.group()

    def option_value(self) -> str:
        """A raw value: a quoted string, a `{...}` group, or text up to a
        space or the closing brace."""
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == '"':
                end = self.text.find('"', self.pos + 1)
                if end == -1:
                    self.fail("unterminated string in pass options")
                self.pos = end + 1
                continue
            if char == "{":
                depth += 1
            elif char == "}":
                if depth == 0:
                    break
                depth -= 1
            elif char.isspace() and depth == 0:
                break
            self.pos += 1
        return self.text[start : self.pos]

    def fail(self, message: str) -> None:
        raise PipelineError(f"{message} at column {self.pos + 1} of '{self.text}'")


def _split_list(value: str) -> tuple[str, ...]:
    """`1,2,"a,b"` -> ('1', '2', 'a,b'): commas outside quotes/braces split."""
    items, depth, quoted, current = [], 0, False, ""
    for char in value:
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "{":
            depth += 1
        elif not quoted and char == "}":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            items.append(current)
            current = ""
            continue
        current += char
    items.append(current)
    return tuple(item.strip() for item in items if item.strip())


def _parse_elements(lexer: _PipelineLexer) -> list[PassElement | NestedElement]:
    elements: list[PassElement | NestedElement] = []
    while True:
        name = lexer.name("a pass or pipeline name")
        if lexer.take("("):
            nested = [] if lexer.peek() == ")" else _parse_elements(lexer)
            lexer.expect(")", f"to close '{name}('")
            elements.append(NestedElement(name, nested))
        else:
            options: dict[str, tuple[str, ...]] = {}
            if lexer.take("{"):
                while lexer.peek() not in ("}", ""):
                    key = lexer.name(f"an option name for '{name}'")
                    options[key] = _split_list(lexer.option_value()) if lexer.take("=") else ()
                lexer.expect("}", f"to close the options of '{name}'")
            elements.append(PassElement(name, options))
        if not lexer.take(","):
            return elements


def parse_pipeline_text(text: str) -> NestedElement:
    """Parse pipeline text into a tree rooted at a `builtin.module` anchor."""
    lexer = _PipelineLexer(text)
    if lexer.peek() == "":
        return NestedElement(MODULE_ANCHOR, [])
    elements = _parse_elements(lexer)
    if lexer.peek() != "":
        lexer.fail(f"unexpected {lexer.peek()!r}")
    if (
        len(elements) == 1
        and isinstance(elements[0], NestedElement)
        and elements[0].anchor == MODULE_ANCHOR
    ):
        return elements[0]
    return NestedElement(MODULE_ANCHOR, elements)


# --- resolution -----------------------------------------------------------


@dataclass
class OpPassManager:
    """Passes to run, in order, on an op named `anchor` (MLIR's OpPassManager)."""

    anchor: str
    elements: list[ModulePass | OpPassManager] = field(default_factory=list)

    def __str__(self) -> str:
        inner = ",".join(
            str(e) if isinstance(e, OpPassManager) else format_pass(e) for e in self.elements
        )
        return f"{self.anchor}({inner})"

    def pass_count(self) -> int:
        return sum(e.pass_count() if isinstance(e, OpPassManager) else 1 for e in self.elements)


def _option_name(field_name: str) -> str:
    return field_name.replace("_", "-")


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_format_value(v) for v in value)
    if isinstance(value, str) and (not value or re.search(r'[\s,{}"]', value)):
        return f'"{value}"'
    return str(value)


def pass_option(default, help: str):
    """A pass option (a dataclass field of the pass) with the text
    `gc-opt --list-passes` shows for it."""
    return field(default=default, metadata={"help": help})


def option_help(option: dataclasses.Field) -> str:
    return option.metadata.get("help", "")


def format_pass(pass_: ModulePass) -> str:
    """`name{opt=value ...}` with every option, as `--dump-pass-pipeline` shows."""
    options = " ".join(
        f"{_option_name(f.name)}={_format_value(getattr(pass_, f.name))}"
        for f in dataclasses.fields(pass_)
        if f.init and getattr(pass_, f.name) is not None
    )
    return f"{pass_.name}{{{options}}}" if options else pass_.name


def _suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def _typed_value(raw: str) -> str | int | float | bool:
    if raw in ("true", "false"):
        return raw == "true"
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1]
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    return raw


def _accepts_float(field_type: object) -> bool:
    return field_type is float or any(_accepts_float(a) for a in get_args(field_type))


def _convert_option(
    element: PassElement, key: str, raw_values: tuple[str, ...], field_type: object
) -> object:
    """Typed value for one option: a scalar, or a tuple for list options."""
    values = tuple(_typed_value(v) for v in raw_values)
    if _accepts_float(field_type):
        # `eps=1` for a float option means 1.0, not a type error.
        values = tuple(float(v) if type(v) is int else v for v in values)  # noqa: E721
    if len(values) == 1 and isa(values[0], field_type):
        return values[0]
    if values and isa(values, field_type):
        return values
    if not values:
        # A bare `flag` sets a bool option; `key=` is an empty list; a bare
        # key of an optional option is None.
        if field_type is bool or bool in get_args(field_type):
            return True
        for empty in ((), None):
            if isa(empty, field_type):
                return empty
    raise PipelineError(
        f"invalid value '{','.join(raw_values)}' for option '{key}' of pass "
        f"'{element.name}': expected {type_repr(field_type)}"
    )


def _instantiate_pass(pass_class: type[ModulePass], element: PassElement) -> ModulePass:
    fields = {_option_name(f.name): f.name for f in dataclasses.fields(pass_class) if f.init}
    field_types = get_type_hints(pass_class)
    arguments = {}
    for key, raw_values in element.options.items():
        option = _option_name(key)
        if option not in fields:
            hint = _suggest(option, list(fields)) or (
                f"; '{element.name}' has options: {', '.join(fields)}"
                if fields
                else f"; '{element.name}' has no options"
            )
            raise PipelineError(f"unknown option '{key}' for pass '{element.name}'{hint}")
        field_name = fields[option]
        arguments[field_name] = _convert_option(element, key, raw_values, field_types[field_name])
    missing = pass_class.required_fields() - arguments.keys()
    if missing:
        names = ", ".join(sorted(_option_name(m) for m in missing))
        raise PipelineError(f"pass '{element.name}' requires option(s): {names}")
    return pass_class(**arguments)


def build_pass_manager(registry: Registry, text: str) -> OpPassManager:
    """Parse and resolve pipeline text; raises `PipelineError` with suggestions."""
    return _resolve(registry, parse_pipeline_text(text), ())


def _resolve(
    registry: Registry, nested: NestedElement, expanding: tuple[str, ...]
) -> OpPassManager:
    manager = OpPassManager(nested.anchor)
    for element in nested.elements:
        if isinstance(element, NestedElement):
            manager.elements.append(_resolve(registry, element, expanding))
        elif element.name in registry.pipelines:
            manager.elements.extend(_expand_named(registry, element, expanding))
        elif element.name in registry.passes:
            pass_class = registry.pass_class(element.name)
            manager.elements.append(_instantiate_pass(pass_class, element))
        else:
            hint = _suggest(element.name, [*registry.passes, *registry.pipelines])
            raise PipelineError(f"unknown pass or pipeline '{element.name}'{hint}")
    return manager


def _expand_named(
    registry: Registry, element: PassElement, expanding: tuple[str, ...]
) -> list[ModulePass | OpPassManager]:
    if element.options:
        raise PipelineError(f"pipeline '{element.name}' takes no options")
    if element.name in expanding:
        raise PipelineError(f"pipeline '{element.name}' includes itself")
    definition = registry.pipelines[element.name]
    parsed = parse_pipeline_text(definition.pipeline)
    return _resolve(registry, parsed, (*expanding, element.name)).elements
