"""Checks every graph op shares: the names and kinds of its attributes.

xDSL keeps an unknown entry of an op's attribute dictionary as a
discardable attribute, so `graph.softmax %x {axsi = 0 : i64}` would run with
the default axis; MLIR requires discardable attributes to carry a dialect
prefix (`foo.bar`). A property of the wrong kind fails deep in xDSL's format
parser with a message naming neither the op nor the property. Here both are
reported at the op, in words.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation, VerificationContext
from xdsl.irdl.constraints import AttrConstraint
from xdsl.utils.exceptions import VerifyException


def _accepts(constraint: AttrConstraint, value: Attribute) -> bool:
    try:
        constraint.verify(value, VerificationContext())
    except VerifyException:
        return False
    return True


def expected_kind(constraint: AttrConstraint) -> str:
    """How a property of this constraint is written, for messages."""
    bases = constraint.get_bases() or set()
    if DenseArrayBase in bases:
        return "array<i64: ...>"
    if FloatAttr in bases:
        return "a float such as 1.0e-05"
    if StringAttr in bases:
        return 'a string such as "none"'
    if DenseIntOrFPElementsAttr in bases:
        return "dense<...> : tensor<...>"
    if _accepts(constraint, BoolAttr.from_bool(True)):
        return "true or false"
    return "an integer such as 1 : i64"


def _is_kind(constraint: AttrConstraint, value: Attribute) -> bool:
    if isinstance(value, DenseArrayBase) and value.elt_type != IntegerType(64):
        return False  # the integer lists of graph ops are i64
    return _accepts(constraint, value)


def check_attributes(op_class: type[IRDLOperation], attributes: Mapping[str, Attribute]) -> None:
    """Every undotted name must be a property of `op_class`, of its kind."""
    definitions = op_class.get_irdl_definition().properties
    for name, value in attributes.items():
        definition = definitions.get(name)
        if definition is not None:
            if not _is_kind(definition.constr, value):
                raise VerifyException(
                    f"property '{name}' of {op_class.name} must be "
                    f"{expected_kind(definition.constr)}, got {value}"
                )
            continue
        if "." in name:
            continue  # a discardable attribute of some dialect
        close = difflib.get_close_matches(name, definitions, n=1)
        if close:
            hint = f"did you mean '{close[0]}'?"
        elif definitions:
            hint = f"its properties are {', '.join(sorted(definitions))}"
        else:
            hint = "it has no properties"
        raise VerifyException(
            f"unknown property '{name}' of {op_class.name}; {hint} "
            "(other attributes need a dialect prefix, e.g. 'mydialect.note')"
        )
