"""Pieces shared by graphcompiler's dialects."""

from __future__ import annotations

from typing import Self

from xdsl.ir import TypedAttribute
from xdsl.parser import Parser
from xdsl.printer import Printer


class TypedValueFormat:
    """The custom form `dialect.op <typed attribute> attr-dict` of constant
    ops: the `value` property carries the result type, e.g.
    `graph.constant dense<1.0> : tensor<4xf32>` or `tir.const 0 : index`."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        start = parser.pos
        value = parser.parse_attribute()  # literals xDSL cannot build: see parsing.py
        if not isinstance(value, TypedAttribute):
            parser.raise_error("expected a typed constant such as 1.0 : f32", start, parser.pos)
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            properties={"value": value}, result_types=[value.type], attributes=attributes
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)
