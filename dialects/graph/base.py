"""What every graph op shares: the element types graph tensors may have,
the `#graph.format` memory-format attribute, property and shape helpers, and
the op bases (`GraphOp`: operand checks against the type `infer_type`
computes, and the typed builder `GraphOp.build_from`) with the checks their
`infer_type`s share.

Outside the op classes, properties are read through typed accessors
(`TransposeOp.permutation`, `HasAxis.normalized_axis(rank)`, ...); the
string-keyed helpers (`int_list`, `int_value`, ...) serve `infer_type`,
which sees a property mapping before the op exists."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar, Self

from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    param_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.checks import check_attributes
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES
from graphcompiler.ir.verifier import builtin_type_error

FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type, Float64Type, *NARROW_FLOAT_TYPES)
INTEGER_WIDTHS = (64, 32, 16, 8, 4, 2, 1)
"""Signless integers (signed arithmetic), and unsigned ones (ui2 ... ui64) of
the widths but 1."""

STORAGE_OPS = frozenset(
    ("graph.cast", "graph.bitcast", "graph.constant", "graph.reshape", "graph.transpose", "graph.concat",
     "graph.slice", "graph.gather", "graph.broadcast_to")
)  # fmt: skip
"""The ops that take the storage-only element types (see `is_storage_only`):
they convert values or move them, and compute nothing on them."""


def is_storage_only(element_type: Attribute) -> bool:
    """The 8- and 4-bit floats and the 4- and 2-bit integers: what models
    store (quantized weights, float8 activations) and convert with
    graph.cast to compute; no other op computes on them."""
    if isinstance(element_type, NARROW_FLOAT_TYPES):
        return True
    return isinstance(element_type, IntegerType) and element_type.width.data in (4, 2)


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, FLOAT_TYPES)


def is_element_type(element_type: Attribute) -> bool:
    """One of the element types graph tensors may have."""
    if is_float(element_type):
        return True
    if not isinstance(element_type, IntegerType):
        return False
    if element_type.signedness.data == Signedness.UNSIGNED:
        return element_type.width.data in INTEGER_WIDTHS[:-1]
    return (
        element_type.signedness.data == Signedness.SIGNLESS
        and element_type.width.data in INTEGER_WIDTHS
    )


def _check_element_type(element_type: Attribute, role: str) -> None:
    if is_element_type(element_type):
        return
    raise VerifyException(
        f"{role} has element type {element_type}; expected one of f32, f16, bf16, f64, i64, "
        "i32, i16, i8, ui64, ui32, ui16, ui8, i1, or a storage type (f8E4M3FN, f8E4M3FNUZ, "
        "f8E5M2, f8E5M2FNUZ, f4E2M1FN, i4, ui4, i2, ui2)"
    )


# --- memory formats -------------------------------------------------------


def parse_layout(layout: str) -> list[tuple[str, int | None]]:
    """'NK16k16n' -> [('N', None), ('K', None), ('k', 16), ('n', 16)]."""
    symbols: list[tuple[str, int | None]] = []
    index = 0
    while index < len(layout):
        digits = ""
        while index < len(layout) and layout[index].isdigit():
            digits += layout[index]
            index += 1
        if index == len(layout):
            raise VerifyException(f"format '{layout}' ends with a block size and no dimension")
        letter = layout[index]
        index += 1
        if letter.isupper() and not digits:
            symbols.append((letter, None))
        elif letter.islower() and digits and int(digits) > 0:
            symbols.append((letter, int(digits)))
        else:
            raise VerifyException(
                f"format '{layout}': expected an outer dimension (uppercase letter) "
                f"or a block (size then lowercase letter) at '{digits}{letter}'"
            )
    return symbols


@irdl_attr_definition
class FormatAttr(ParametrizedAttribute):
    """A blocked memory format: `plain -> layout`, e.g. `"KN" -> "NK16k16n"`.

    `plain` names the logical dimensions in order (default `A`, `B`, `C`, ...,
    written `#graph.format<"AB16b16a">`); `layout` orders the outer
    dimensions (uppercase) and the inner blocks (size + lowercase letter)
    from outermost to innermost.
    """

    name = "graph.format"
    plain: StringAttr = param_def(StringAttr)
    layout: StringAttr = param_def(StringAttr)

    @staticmethod
    def positional_names(rank: int) -> str:
        return "".join(chr(ord("A") + d) for d in range(rank))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            first = parser.parse_str_literal()
            if parser.parse_optional_punctuation("->") is None:
                rank = len({s for s, size in parse_layout(first) if size is None})
                return (StringAttr(cls.positional_names(rank)), StringAttr(first))
            return (StringAttr(first), StringAttr(parser.parse_str_literal()))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            if self.plain.data != self.positional_names(len(self.plain.data)):
                printer.print_string_literal(self.plain.data)
                printer.print_string(" -> ")
            printer.print_string_literal(self.layout.data)

    def verify(self) -> None:
        plain = self.plain.data
        if not plain.isalpha() or not plain.isupper() or len(set(plain)) != len(plain):
            raise VerifyException(
                f"format dimension names '{plain}' must be distinct uppercase letters"
            )
        symbols = parse_layout(self.layout.data)
        outer = [s for s, size in symbols if size is None]
        if sorted(outer) != sorted(plain):
            raise VerifyException(
                f"format '{self.layout.data}' must name each of the dimensions '{plain}' once "
                "in uppercase"
            )
        for letter, size in symbols:
            if size is not None and letter.upper() not in plain:
                raise VerifyException(
                    f"format '{self.layout.data}' blocks unknown dimension '{letter}'"
                )

    def blocks(self) -> dict[int, list[int]]:
        """Block sizes of each logical dimension, outermost first."""
        result: dict[int, list[int]] = {d: [] for d in range(len(self.plain.data))}
        for letter, size in parse_layout(self.layout.data):
            if size is not None:
                result[self.plain.data.index(letter.upper())].append(size)
        return result

    def physical_shape(self, shape: Sequence[int]) -> list[int]:
        """The stored (blocked) shape of a tensor of logical `shape`."""
        blocks = self.blocks()
        physical = []
        for letter, size in parse_layout(self.layout.data):
            if size is None:
                dim = self.plain.data.index(letter)
                physical.append(shape[dim] // math.prod(blocks[dim]))
            else:
                physical.append(size)
        return physical

    def check_shape(self, shape: Sequence[int], role: str) -> None:
        if len(shape) != len(self.plain.data):
            raise VerifyException(
                f"{role} of rank {len(shape)} has format '{self.layout.data}' for rank "
                f"{len(self.plain.data)}"
            )
        for dim, sizes in self.blocks().items():
            if shape[dim] % math.prod(sizes):
                raise VerifyException(
                    f"{role} dimension {dim} of size {shape[dim]} is not a multiple of its "
                    f"blocks {sizes} in format '{self.layout.data}'"
                )


def _check_tensor(type_: Attribute, role: str) -> TensorType:
    if not isinstance(type_, TensorType):
        raise VerifyException(f"{role} must be a ranked tensor, got {type_}")
    if not type_.has_static_shape():
        raise VerifyException(f"{role} must have a static shape, got {type_}")
    if (problem := builtin_type_error(type_)) is not None:
        raise VerifyException(f"{role}: {problem}")
    _check_element_type(type_.element_type, role)
    if isinstance(type_.encoding, FormatAttr):
        type_.encoding.check_shape(type_.get_shape(), role)
    return type_


# --- property access and shape helpers ------------------------------------


def _shape(type_: TensorType) -> list[int]:
    return list(type_.get_shape())


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_shapes(shapes: Sequence[Sequence[int]], roles: Sequence[str]) -> list[int]:
    """numpy broadcasting; the error names the operands that disagree."""
    rank = max(len(s) for s in shapes)
    result = []
    for axis in range(rank):
        size, owner = 1, None
        for shape, role in zip(shapes, roles, strict=True):
            dim = shape[axis - rank + len(shape)] if axis - rank + len(shape) >= 0 else 1
            if dim == 1 or dim == size:
                continue
            if size != 1:
                raise VerifyException(
                    f"{role} of shape {_fmt(shape)} does not broadcast with {owner} of shape "
                    f"{_fmt(shapes[roles.index(owner)])}"
                )
            size, owner = dim, role
        result.append(size)
    return result


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def int_list(properties: Mapping[str, Attribute], name: str) -> list[int]:
    value = properties.get(name)
    return list(value.get_values()) if isinstance(value, DenseArrayBase) else []


def int_value(properties: Mapping[str, Attribute], name: str) -> int:
    return properties[name].value.data


def float_value(properties: Mapping[str, Attribute], name: str) -> float:
    return properties[name].value.data


def bool_value(properties: Mapping[str, Attribute], name: str) -> bool:
    value = properties.get(name)
    return bool(value is not None and value.value.data)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def f32_attr(value: float) -> FloatAttr:
    return FloatAttr(value, Float32Type())


def property_attribute(name: str, value: object) -> Attribute:
    """A Python value as the property attribute graph ops use: bool -> i1,
    int -> i64, float -> f32, str, int list -> array<i64>; an attribute is
    kept as it is."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, Float32Type())
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, list | tuple) and all(isinstance(v, int) for v in value):
        return DenseArrayBase.from_list(i64, list(value))
    raise ValueError(f"cannot use {value!r} as the value of property '{name}'")


# --- op base ----------------------------------------------------------------


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Gives `canonicalize` the graph patterns. They are written with these
    ops, so canonicalization.py adds them to `patterns` when the dialect
    package is imported (which any import of this module does first)."""

    patterns: ClassVar[list[RewritePattern]] = []

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return tuple(cls.patterns)


class DefinedAttributesOnly(IRDLOperation):
    """Rejects attributes the op does not define (see checks.py)."""

    @classmethod
    def check_parsed_attributes(cls, attributes: Mapping[str, Attribute]) -> None:
        """Called by the parser on the op's attribute dictionary."""
        check_attributes(cls, attributes)

    def verify(self, verify_nested_ops: bool = True) -> None:
        misplaced = sorted(self.attributes.keys() & self.get_irdl_definition().properties.keys())
        if misplaced:
            raise VerifyException(
                f"'{misplaced[0]}' is a property of {self.name}: in the generic form write it "
                "in <{...}>"
            )
        check_attributes(type(self), {**self.attributes, **self.properties})
        super().verify(verify_nested_ops)


class GraphOp(DefinedAttributesOnly):
    """Base of every graph op: checks operand/result tensors and that the
    declared result type is the one `infer_type` computes."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), GraphCanonicalization())

    @classmethod
    def infer_type(
        cls,
        operand_types: Sequence[TensorType],
        properties: Mapping[str, Attribute],
        result_type: TensorType | None = None,
    ) -> TensorType:
        """The result type for these operands and properties (defaults
        filled in). Ops whose result is free (reshape, cast, broadcast_to)
        check the given `result_type` instead."""
        raise NotImplementedError

    @classmethod
    def operand_role(cls, index: int) -> str:
        """`operand #1 ('rhs')`: how messages name an operand."""
        operands = cls.get_irdl_definition().operands
        return f"operand #{index} ('{operands[min(index, len(operands) - 1)][0]}')"

    @classmethod
    def with_defaults(cls, properties: Mapping[str, Attribute]) -> dict[str, Attribute]:
        merged = {
            name: prop.default_value
            for name, prop in cls.get_irdl_definition().properties.items()
            if prop.default_value is not None
        }
        merged.update(properties)
        return merged

    @classmethod
    def build_from(
        cls,
        operands: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **properties: object,
    ) -> Self:
        """A verified, detached op on `operands` with its result type
        inferred (give `result_type` for reshape, broadcast_to and cast);
        properties as Python values (see `property_attribute`) or attributes:

            graph.TransposeOp.build_from([x], perm=[1, 0])
            graph.ReshapeOp.build_from([x], TensorType(f32, [2, 16]))

        A VerifyException says why these operands and properties make no op."""
        attributes = {name: property_attribute(name, v) for name, v in properties.items()}
        inferred = cls.infer_type(
            [value.type for value in operands], cls.with_defaults(attributes), result_type
        )
        op = cls.create(
            operands=list(operands), result_types=[result_type or inferred], properties=attributes
        )
        op.verify()
        return op

    def verify_(self) -> None:
        operand_types = [
            _check_tensor(operand.type, self.operand_role(index))
            for index, operand in enumerate(self.operands)
        ]
        actual = _check_tensor(self.results[0].type, "result")
        if self.name not in STORAGE_OPS:
            for type_ in (*operand_types, actual):
                if is_storage_only(type_.element_type):
                    raise VerifyException(
                        f"{self.name} does not compute on {type_.element_type}, a storage type: "
                        "convert it with graph.cast first"
                    )
        inferred = self.infer_type(operand_types, self.with_defaults(self.properties), actual)
        if (_shape(inferred), inferred.element_type) != (_shape(actual), actual.element_type):
            raise VerifyException(
                f"result type {_without_format(actual)} does not match the inferred type "
                f"{_without_format(inferred)}"
            )


class HasAxis:
    """An op with an integer `axis` property (negative counts from the end)."""

    def normalized_axis(self, rank: int) -> int:
        """`axis` as a dim of a tensor of `rank`, in [0, rank)."""
        return normalize_axis(self.axis.value.data, rank)


class HasEpsilon:
    """A normalization with an f32 `epsilon` property (added under its square root)."""

    @property
    def epsilon_value(self) -> float:
        return self.epsilon.value.data


def _without_format(type_: TensorType) -> TensorType:
    return TensorType(type_.element_type, type_.get_shape())


def _require_result_type(cls: type[GraphOp], result_type: TensorType | None) -> TensorType:
    if result_type is None:
        raise VerifyException(f"{cls.name} needs its result type to be given")
    return result_type


def _require_float(cls: type[GraphOp], type_: TensorType, index: int) -> None:
    if not is_float(type_.element_type):
        raise VerifyException(
            f"{cls.operand_role(index)} has element type {type_.element_type}; "
            f"{cls.name} needs a floating-point type"
        )


def _require_numeric(cls: type[GraphOp], type_: TensorType, index: int) -> None:
    """Arithmetic is not defined on i1 (the compiled kernels have none)."""
    if type_.element_type == i1:
        raise VerifyException(
            f"{cls.operand_role(index)} has element type i1; {cls.name} needs a numeric type "
            "(graph.cast booleans first)"
        )


def _require_integer(cls: type[GraphOp], type_: TensorType, index: int) -> None:
    """Bitwise ops: integers of any width but 1 (i1 has the logical ops)."""
    element = type_.element_type
    if not isinstance(element, IntegerType) or element == i1:
        raise VerifyException(
            f"{cls.operand_role(index)} has element type {element}; {cls.name} needs an "
            "integer type (i1: the logical ops)"
        )


def _require_same_element_type(cls: type[GraphOp], types: Sequence[TensorType]) -> None:
    for index, type_ in enumerate(types[1:], start=1):
        if type_.element_type != types[0].element_type:
            raise VerifyException(
                f"{cls.operand_role(index)} has element type {type_.element_type}, expected "
                f"{types[0].element_type} like {cls.operand_role(0)}"
            )


def widens_to(operand: Attribute, result: Attribute) -> bool:
    """Whether products of `operand` values may accumulate into `result`:
    integers of at most 16 bits into i32, f16 and bf16 into f32."""
    if isinstance(operand, IntegerType):
        return 1 < operand.width.data <= 16 and result == IntegerType(32)
    return isinstance(operand, Float16Type | BFloat16Type) and isinstance(result, Float32Type)


EIGHT_BIT_PAIR = {IntegerType(8), IntegerType(8, Signedness.UNSIGNED)}
"""u8 and i8: the one pair of different element types a matmul or a
convolution multiplies (into i32: VNNI's `vpdpbusd`)."""


def widened_element(cls: type[GraphOp], operand_types: Sequence[TensorType], result_type):
    """The result element type of a product of the operands: theirs, or
    the wider accumulator the given result asks for (widens_to); u8 x i8
    only into i32."""
    _require_numeric(cls, operand_types[0], 0)
    mixed_bytes = {t.element_type for t in operand_types} == EIGHT_BIT_PAIR
    if not mixed_bytes:
        _require_same_element_type(cls, operand_types)
    element = operand_types[0].element_type
    if result_type is not None and widens_to(element, result_type.element_type):
        return result_type.element_type
    if mixed_bytes:
        raise VerifyException(f"a u8 x i8 {cls.name.split('.')[-1]} has an i32 result (it widens)")
    return element
