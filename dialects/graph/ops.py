"""The `graph` dialect's ops, attributes and shared op bases (the dialect's
introduction is the package's docstring)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
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
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.common import TypedValueFormat
from graphcompiler.dialects.graph.checks import check_attributes
from graphcompiler.ir.verifier import builtin_type_error

FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type, Float64Type)
INTEGER_WIDTHS = (64, 32, 16, 8, 1)
"""Signless integers (signed arithmetic); ui8 is the one unsigned type."""


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, FLOAT_TYPES)


def is_element_type(element_type: Attribute) -> bool:
    """One of the element types graph tensors may have."""
    if is_float(element_type):
        return True
    if not isinstance(element_type, IntegerType):
        return False
    if element_type.signedness.data == Signedness.UNSIGNED:
        return element_type.width.data == 8
    return (
        element_type.signedness.data == Signedness.SIGNLESS
        and element_type.width.data in INTEGER_WIDTHS
    )


def _check_element_type(element_type: Attribute, role: str) -> None:
    if is_element_type(element_type):
        return
    raise VerifyException(
        f"{role} has element type {element_type}; expected one of f32, f16, bf16, f64, i64, "
        "i32, i16, i8, ui8, i1"
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

    def verify_(self) -> None:
        operand_types = [
            _check_tensor(operand.type, self.operand_role(index))
            for index, operand in enumerate(self.operands)
        ]
        actual = _check_tensor(self.results[0].type, "result")
        inferred = self.infer_type(operand_types, self.with_defaults(self.properties), actual)
        if (_shape(inferred), inferred.element_type) != (_shape(actual), actual.element_type):
            raise VerifyException(
                f"result type {_without_format(actual)} does not match the inferred type "
                f"{_without_format(inferred)}"
            )


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


def _require_same_element_type(cls: type[GraphOp], types: Sequence[TensorType]) -> None:
    for index, type_ in enumerate(types[1:], start=1):
        if type_.element_type != types[0].element_type:
            raise VerifyException(
                f"{cls.operand_role(index)} has element type {type_.element_type}, expected "
                f"{types[0].element_type} like {cls.operand_role(0)}"
            )


# --- element-wise ops ---------------------------------------------------------


class UnaryOp(GraphOp):
    """f(x) element by element; the result has the input's type.

    Example:

        %y = {op} %x : tensor<4x8xf32>
    """

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($input)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        return operand_types[0]


class FloatUnaryOp(UnaryOp):
    """A unary op defined on floating-point tensors only."""

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return operand_types[0]


def _op_class(base_class: type[GraphOp], op_name: str, doc: str) -> type[GraphOp]:
    """Define `graph.<op_name>` as a subclass of a family's base class."""
    class_name = "".join(part.title() for part in op_name.split("_")) + "Op"
    namespace = {"name": f"graph.{op_name}", "__doc__": doc}
    return irdl_op_definition(type(class_name, (base_class,), namespace))


ReluOp = _op_class(UnaryOp, "relu", "max(x, 0)")
AbsOp = _op_class(UnaryOp, "abs", "|x|")
NegOp = _op_class(UnaryOp, "neg", "-x")
SquareOp = _op_class(UnaryOp, "square", "x * x")
SigmoidOp = _op_class(FloatUnaryOp, "sigmoid", "1 / (1 + exp(-x))")
TanhOp = _op_class(FloatUnaryOp, "tanh", "tanh(x)")
ExpOp = _op_class(FloatUnaryOp, "exp", "e ** x")
LogOp = _op_class(FloatUnaryOp, "log", "natural logarithm")
SqrtOp = _op_class(FloatUnaryOp, "sqrt", "square root")
RsqrtOp = _op_class(FloatUnaryOp, "rsqrt", "1 / sqrt(x)")
ErfOp = _op_class(FloatUnaryOp, "erf", "the error function")
ReciprocalOp = _op_class(FloatUnaryOp, "reciprocal", "1 / x")


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """not x on i1 (numpy.logical_not).

    Example:

        %y = graph.logical_not %x : tensor<4x8xi1>
    """

    name = "graph.logical_not"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_bool(cls, operand_types)
        return operand_types[0]


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """x * Phi(x): 0.5 * x * (1 + erf(x / sqrt(2))) with `approximate = "none"`
    (the default), 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))
    with `approximate = "tanh"` (ONNX Gelu, PyTorch); NaN stays NaN. Phi is the
    standard normal CDF.

    Example:

        %y = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
    """

    name = "graph.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if properties["approximate"].data not in ("none", "tanh"):
            raise VerifyException(
                f'approximate must be "none" or "tanh", got "{properties["approximate"].data}"'
            )
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """x if x >= 0 else alpha * x (alpha defaults to 0.01, as in PyTorch and
    ONNX); NaN stays NaN.

    Example:

        %y = graph.leaky_relu %x {alpha = 0.2 : f32} : tensor<4x8xf32>
    """

    name = "graph.leaky_relu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(0.01))


@irdl_op_definition
class EluOp(FloatUnaryOp):
    """x if x > 0 else alpha * (exp(x) - 1) (ONNX Elu; alpha defaults to 1.0);
    NaN stays NaN."""

    name = "graph.elu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(1.0))


@irdl_op_definition
class SeluOp(FloatUnaryOp):
    """gamma * (x if x > 0 else alpha * exp(x) - alpha) (ONNX Selu; alpha
    defaults to 1.6732632, gamma to 1.0507010, ONNX's f32 values); NaN stays NaN."""

    name = "graph.selu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(1.67326319217681884765625))
    gamma = prop_def(FloatAttr, default_value=f32_attr(1.05070102214813232421875))


SoftplusOp = _op_class(
    FloatUnaryOp,
    "softplus",
    "log(1 + exp(x)), computed as numpy.logaddexp(0, x) = max(x, 0) + log1p(exp(-|x|)): x for\n"
    "    large x (no overflow to inf), exp(x) to full relative precision for very negative x;\n"
    "    NaN stays NaN, +inf gives +inf, -inf gives 0.",
)


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid; alpha defaults to
    0.2, beta to 0.5); NaN stays NaN."""

    name = "graph.hard_sigmoid"
    alpha = prop_def(FloatAttr, default_value=f32_attr(0.2))
    beta = prop_def(FloatAttr, default_value=f32_attr(0.5))


HardSwishOp = _op_class(
    FloatUnaryOp,
    "hard_swish",
    "x * max(0, min(1, x / 6 + 0.5)) (ONNX HardSwish: hard_sigmoid with alpha 1/6, beta 0.5);\n"
    "    NaN stays NaN.",
)


@irdl_op_definition
class ClampOp(UnaryOp):
    """min(max(x, min), max), with f32 bounds (min <= max) converted to the
    element type; NaN stays NaN (numpy.clip).

    Example:

        %y = graph.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x8xf32>
    """

    name = "graph.clamp"
    min = prop_def(FloatAttr)
    max = prop_def(FloatAttr)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        low, high = float_value(properties, "min"), float_value(properties, "max")
        if low > high:
            raise VerifyException(f"min {low} is greater than max {high}")
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class CastOp(GraphOp):
    """Converts each element to the result's element type (C semantics:
    floats truncate toward zero into integers, nonzero becomes true in i1).

    float -> integer saturates: NaN -> 0, values beyond the range (and
    +-inf) -> the type's maximum or minimum; integer -> narrower integer
    wraps; f32 -> f16/bf16 rounds to nearest even. The shape is kept.

    Example:

        %y = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
    """

    name = "graph.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        result_type = _require_result_type(cls, result_type)
        if _shape(result_type) != _shape(operand_types[0]):
            raise VerifyException(
                f"result shape {_fmt(_shape(result_type))} differs from {cls.operand_role(0)} "
                f"shape {_fmt(_shape(operand_types[0]))}"
            )
        return result_type


class BinaryOp(GraphOp):
    """lhs (op) rhs element by element, with numpy broadcasting; both
    operands have one element type (no implicit promotion: graph.cast first).

    Example:

        %z = {op} %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        return cls.broadcast(operand_types)

    @classmethod
    def broadcast(cls, operand_types: Sequence[TensorType]) -> TensorType:
        _require_same_element_type(cls, operand_types)
        shape = broadcast_shapes(
            [_shape(t) for t in operand_types], [cls.operand_role(i) for i in range(2)]
        )
        return TensorType(operand_types[0].element_type, shape)


class ComparisonOp(BinaryOp):
    """A broadcasting comparison (also of booleans); the result is i1.
    Comparisons with NaN are false, except not_equal (true).

    Example:

        %m = {op} %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    """

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        return TensorType(i1, cls.broadcast(operand_types).get_shape())


AddOp = _op_class(BinaryOp, "add", "lhs + rhs")
SubOp = _op_class(BinaryOp, "sub", "lhs - rhs")
MulOp = _op_class(BinaryOp, "mul", "lhs * rhs")
DivOp = _op_class(BinaryOp, "div", "lhs / rhs (integers: truncating toward zero)")


class FloatBinaryOp(BinaryOp):
    """A broadcasting binary op defined on floating-point tensors only."""

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


PowOp = _op_class(FloatBinaryOp, "pow", "lhs ** rhs")
MaximumOp = _op_class(BinaryOp, "maximum", "max(lhs, rhs)")
MinimumOp = _op_class(BinaryOp, "minimum", "min(lhs, rhs)")
GreaterOp = _op_class(ComparisonOp, "greater", "lhs > rhs")
LessOp = _op_class(ComparisonOp, "less", "lhs < rhs")
EqualOp = _op_class(ComparisonOp, "equal", "lhs == rhs")
GreaterEqualOp = _op_class(
    ComparisonOp, "greater_equal", "lhs >= rhs (numpy.greater_equal: false if either is NaN)"
)
LessEqualOp = _op_class(
    ComparisonOp, "less_equal", "lhs <= rhs (numpy.less_equal: false if either is NaN)"
)
NotEqualOp = _op_class(
    ComparisonOp, "not_equal", "lhs != rhs (numpy.not_equal: true if either is NaN)"
)


def _require_bool(cls: type[GraphOp], types: Sequence[TensorType]) -> None:
    for index, type_ in enumerate(types):
        if type_.element_type != i1:
            raise VerifyException(
                f"{cls.operand_role(index)} has element type {type_.element_type}; {cls.name} "
                "needs i1 (graph.cast or compare first)"
            )


class LogicalBinaryOp(BinaryOp):
    """A broadcasting boolean op: i1 operands, i1 result.

    Example:

        %m = {op} %a, %b : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
    """

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_bool(cls, operand_types)
        return cls.broadcast(operand_types)


LogicalAndOp = _op_class(LogicalBinaryOp, "logical_and", "lhs and rhs on i1 (numpy.logical_and)")
LogicalOrOp = _op_class(LogicalBinaryOp, "logical_or", "lhs or rhs on i1 (numpy.logical_or)")
LogicalXorOp = _op_class(LogicalBinaryOp, "logical_xor", "lhs != rhs on i1 (numpy.logical_xor)")


@irdl_op_definition
class SelectOp(GraphOp):
    """cond ? true_value : false_value element by element, broadcasting all three
    (numpy.where); `cond` is i1, the values share one element type.

    Example:

        %y = graph.select %c, %x, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    """

    name = "graph.select"
    cond = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if operand_types[0].element_type != i1:
            raise VerifyException(
                f"{cls.operand_role(0)} has element type {operand_types[0].element_type}, "
                "expected i1"
            )
        _require_same_element_type(cls, operand_types[1:])
        shape = broadcast_shapes(
            [_shape(t) for t in operand_types], [cls.operand_role(i) for i in range(3)]
        )
        return TensorType(operand_types[1].element_type, shape)


@irdl_op_definition
class PreluOp(GraphOp):
    """x if x >= 0 else slope * x (ONNX PRelu; numpy.where(x < 0, slope * x, x)):
    `slope` broadcasts to the input's shape (never the other way); NaN stays NaN.

    Example:

        %y = graph.prelu %x, %slope : (tensor<1x3x8x8xf32>, tensor<3x1x1xf32>) -> tensor<1x3x8x8xf32>
    """

    name = "graph.prelu"
    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $slope attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        roles = [cls.operand_role(0), cls.operand_role(1)]
        if broadcast_shapes([shape, _shape(operand_types[1])], roles) != shape:
            raise VerifyException(
                f"{roles[1]} of shape {_fmt(_shape(operand_types[1]))} does not broadcast to "
                f"the shape {_fmt(shape)} of {roles[0]}"
            )
        return operand_types[0]


# --- matmul -------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(GraphOp):
    """a @ b over the last two dims (optionally transposed); the batch dims
    in front broadcast like numpy.

    a is [..., M, K] ([..., K, M] with `transpose_a`), b is [..., K, N]
    ([..., N, K] with `transpose_b`, e.g. a PyTorch Linear weight), the
    result [..., M, N] (numpy.matmul; both operands have rank >= 2 and one
    element type). f16 and bf16 accumulate in f32; integers wrap.

    Example:

        %y = graph.matmul %x, %w {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    """

    name = "graph.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    transpose_b = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shapes = [_shape(t) for t in operand_types]
        for index, shape in enumerate(shapes):
            if len(shape) < 2:
                raise VerifyException(
                    f"{cls.operand_role(index)} has rank {len(shape)}, expected at least 2"
                )
        (m, k_a), (k_b, n) = shapes[0][-2:], shapes[1][-2:]
        if bool_value(properties, "transpose_a"):
            m, k_a = k_a, m
        if bool_value(properties, "transpose_b"):
            k_b, n = n, k_b
        if k_a != k_b:
            raise VerifyException(
                f"{cls.operand_role(1)} contracting dimension is {k_b}, expected {k_a} to "
                f"match {cls.operand_role(0)}"
            )
        batch = broadcast_shapes(
            [shapes[0][:-2], shapes[1][:-2]], [cls.operand_role(0), cls.operand_role(1)]
        )
        return TensorType(operand_types[0].element_type, [*batch, m, n])


# --- reductions and normalizations -----------------------------------------


def reduced_axes(properties: Mapping[str, Attribute], rank: int) -> list[int]:
    """The normalized `axes` of a reduction; none listed means all."""
    axes = [normalize_axis(a, rank, "axes entry") for a in int_list(properties, "axes")]
    if len(set(axes)) != len(axes):
        raise VerifyException(f"axes {int_list(properties, 'axes')} has duplicates")
    return sorted(axes) if axes else list(range(rank))


class ReduceOp(GraphOp):
    """Reduces `axes` (all if empty), keeping them as size 1 if `keep_dims`.
    Axes may be negative (counted from the end), as in numpy.

    Example:

        %s = {op} %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(DenseArrayBase, default_value=i64_array([]))
    keep_dims = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        shape = _shape(operand_types[0])
        axes = reduced_axes(properties, len(shape))
        keep = bool_value(properties, "keep_dims")
        reduced = [1 if d in axes else s for d, s in enumerate(shape) if keep or d not in axes]
        return TensorType(operand_types[0].element_type, reduced)


class FloatReduceOp(ReduceOp):
    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


ReduceSumOp = _op_class(
    ReduceOp,
    "reduce_sum",
    "sum over axes (0 if empty). Floats are summed reassociated: lane-wise partial sums,\n    folded every 64 vectors per lane along a contiguous axis, then a tree; error within a\n    few ulp of sum(|x|) (not bitwise numpy's pairwise order); an outer axis is summed in\n    order per column, as numpy does. Integers wrap (exact).",
)
ReduceMeanOp = _op_class(
    FloatReduceOp, "reduce_mean", "mean over axes: reduce_sum's order, one division (NaN if empty)"
)
ReduceMaxOp = _op_class(
    ReduceOp, "reduce_max", "maximum over axes: exact; NaN if any element is NaN; -inf if empty"
)
ReduceMinOp = _op_class(
    ReduceOp, "reduce_min", "minimum over axes: exact; NaN if any element is NaN; +inf if empty"
)
ReduceProdOp = _op_class(
    ReduceOp,
    "reduce_prod",
    "product over axes (1 if empty); floats reassociated lane-wise (~n ulp relative), integers wrap",
)


class SoftmaxBase(FloatUnaryOp):
    """Normalizes along `axis` (default -1, the innermost; negative counts
    from the end); the result has the input's type.

    Example:

        %p = {op} %x {axis = 1 : i64} : tensor<4x8xf32>
    """

    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        normalize_axis(int_value(properties, "axis"), len(_shape(operand_types[0])))
        return super().infer_type(operand_types, properties, result_type)


SoftmaxOp = _op_class(
    SoftmaxBase,
    "softmax",
    "exp(x - max) / sum(exp(x - max)) along axis. Compiled: one pass keeps a running max and a\n    rescaled sum per lane (online softmax), a second normalizes; within ~1e-6 relative of the\n    reference. NaN for a row holding NaN or +inf or only -inf (inf - inf), as the reference.",
)
LogSoftmaxOp = _op_class(
    SoftmaxBase,
    "log_softmax",
    "x - max - log(sum(exp(x - max))) along axis; softmax's algorithm and NaN rules, absolute\n    error ~1e-6 + 1 ulp of |x - max|.",
)


def _check_parameter_shape(
    cls: type[GraphOp], types: Sequence[TensorType], index: int, expected: Sequence[int]
) -> None:
    if _shape(types[index]) != list(expected):
        raise VerifyException(
            f"{cls.operand_role(index)} has shape {_fmt(_shape(types[index]))}, expected "
            f"{_fmt(expected)}"
        )


@irdl_op_definition
class LayerNormOp(GraphOp):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta, with mean and variance
    over the dims axis..rank-1; gamma and beta have the shape of those dims.
    Compiled: per block (64 vectors per accumulator) the mean, then the centred sum of
    squares (f32 vector partial sums), blocks merged with Chan's formula in
    f64: as accurate as numpy's float32 (max error ~4e-6 against float64 on
    2^20 values around 100).

    The variance is the biased one (divided by the element count, as in
    PyTorch and ONNX LayerNormalization); operands are in the order input,
    gamma (scale), beta (bias); epsilon defaults to 1e-5.

    Example:

        %y = graph.layer_norm %x, %gamma, %beta {epsilon = 1.0e-06 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.layer_norm"
    input = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        for index in (1, 2):
            _check_parameter_shape(cls, operand_types, index, shape[axis:])
        return operand_types[0]


@irdl_op_definition
class RmsNormOp(GraphOp):
    """x / sqrt(mean(x**2) + epsilon) * scale, the mean over the dims
    axis..rank-1 (ONNX RMSNormalization, T5/LLaMA's RMSNorm); scale has the
    shape of those dims; `axis` defaults to -1, `epsilon` to 1e-5. Compiled
    with layer_norm's row moments (f64 mean and variance; mean(x**2) =
    variance + mean**2); NaN or inf in a row makes the row NaN, as numpy.

    Example:

        %y = graph.rms_norm %x, %scale : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.rms_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $scale attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        _check_parameter_shape(cls, operand_types, 1, shape[axis:])
        return operand_types[0]


@irdl_op_definition
class InstanceNormOp(GraphOp):
    """(x - mean) / sqrt(var + epsilon) * scale[c] + bias[c] for input
    [N, C, D1, ...], mean and (biased) variance over D1, ... per (n, c)
    (ONNX InstanceNormalization); scale and bias are [C]; `epsilon` defaults
    to 1e-5. Compiled with layer_norm's row moments (f64); NaN or inf in a
    slice makes the slice NaN, as numpy.

    Example:

        %y = graph.instance_norm %x, %scale, %bias : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8x8xf32>
    """

    name = "graph.instance_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        if len(shape) < 3:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}, expected at least 3 "
                "([N, C, D1, ...])"
            )
        for index in (1, 2):
            _check_parameter_shape(cls, operand_types, index, [shape[1]])
        return operand_types[0]


@irdl_op_definition
class AttentionOp(GraphOp):
    """Scaled dot-product attention over the last two dims:
    softmax(query x keyᵀ * scale + mask, over keys) x value, with query
    [..., Sq, D], key [..., Sk, D] (or [..., D, Sk] with `key_transposed`),
    value [..., Sk, Dv], an optional additive mask broadcasting to
    [..., Sq, Sk], batch dims broadcasting like matmul's. Made by the
    `attention` rewrite rule from matmul -> scale -> [+ mask] -> softmax ->
    matmul. Compiled as one kernel (online softmax over key blocks, the
    Sq x Sk scores never stored whole); a row whose scores are all -inf, or
    that holds +inf or NaN, is NaN as in softmax. Accuracy: the scores and
    products accumulate in f32 in a different order than the unfused ops
    (about 1e-6 relative for D, Sk up to 1024).

    Example:

        %o = graph.attention %q, %k, %v {scale = 0.125 : f32} : (tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32>
    """

    name = "graph.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr, default_value=f32_attr(1.0))
    key_transposed = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shapes = [_shape(t) for t in operand_types]
        for index, shape in enumerate(shapes[:3]):
            if len(shape) < 2:
                raise VerifyException(f"{cls.operand_role(index)} has rank {len(shape)}, expected at least 2")
        (sq, d), (sk, dv) = shapes[0][-2:], shapes[2][-2:]
        key = shapes[1][-2:][::-1] if bool_value(properties, "key_transposed") else shapes[1][-2:]
        if key != [sk, d]:
            raise VerifyException(
                f"{cls.operand_role(1)} has {_fmt(key)} keys x features, expected {_fmt([sk, d])} "
                f"from the query's features and the value's keys"
            )
        roles = [cls.operand_role(i) for i in range(3)]
        batch = broadcast_shapes([s[:-2] for s in shapes[:3]], roles)
        if len(shapes) == 4:
            scores = [*batch, sq, sk]
            if broadcast_shapes([shapes[3], scores], [cls.operand_role(3), "the scores"]) != scores:
                raise VerifyException(
                    f"{cls.operand_role(3)} of shape {_fmt(shapes[3])} does not broadcast to the "
                    f"scores' shape {_fmt(scores)}"
                )
        return TensorType(operand_types[0].element_type, [*batch, sq, dv])


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch norm over channel dim 1:
    (x - mean) / sqrt(var + epsilon) * scale + bias; element-wise, in this
    order (a few ulp).

    Operands in ONNX BatchNormalization's order: input [N, C, ...], then
    scale, bias, mean, var, each of shape [C] (PyTorch's
    `F.batch_norm(x, running_mean, running_var, weight, bias)` orders them
    differently); epsilon defaults to 1e-5.

    Example:

        %y = graph.batch_norm %x, %scale, %bias, %mean, %var : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
    """

    name = "graph.batch_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        if len(shape) < 2:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}, expected at least 2"
            )
        for index in range(1, 5):
            _check_parameter_shape(cls, operand_types, index, [shape[1]])
        return operand_types[0]


# --- data movement --------------------------------------------------------------


@irdl_op_definition
class TransposeOp(GraphOp):
    """result[i_perm[0], ...] = input[i_0, ...]: result dim d is input dim perm[d]
    (numpy.transpose(input, perm)).

    Example:

        %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
    """

    name = "graph.transpose"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape = _shape(operand_types[0])
        perm = int_list(properties, "perm")
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(
                f"perm {_fmt(perm)} is not a permutation of the {len(shape)} dims of "
                f"{cls.operand_role(0)}"
            )
        return TensorType(operand_types[0].element_type, [shape[p] for p in perm])


class ResultShapedOp(GraphOp):
    """A data-movement op whose result type gives the new shape."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def check_shapes(cls, source: list[int], target: list[int]) -> None:
        raise NotImplementedError

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        target = _shape(_require_result_type(cls, result_type))
        cls.check_shapes(_shape(operand_types[0]), target)
        return TensorType(operand_types[0].element_type, target)


@irdl_op_definition
class ReshapeOp(ResultShapedOp):
    """The same elements in row-major order under the result's shape
    (numpy.reshape; the element counts agree).

    Example:

        %r = graph.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
    """

    name = "graph.reshape"

    @classmethod
    def check_shapes(cls, source, target):
        if math.prod(source) != math.prod(target):
            raise VerifyException(
                f"cannot reshape {cls.operand_role(0)} of shape {_fmt(source)} "
                f"({math.prod(source)} elements) to {_fmt(target)} ({math.prod(target)} elements)"
            )


@irdl_op_definition
class BroadcastToOp(ResultShapedOp):
    """numpy.broadcast_to the result's shape.

    Example:

        %b = graph.broadcast_to %x : tensor<8xf32> -> tensor<4x8xf32>
    """

    name = "graph.broadcast_to"

    @classmethod
    def check_shapes(cls, source, target):
        padded = [1] * (len(target) - len(source)) + source
        if len(source) > len(target) or any(
            s not in (1, t) for s, t in zip(padded, target, strict=True)
        ):
            raise VerifyException(
                f"{cls.operand_role(0)} of shape {_fmt(source)} cannot be broadcast to "
                f"{_fmt(target)}"
            )


@irdl_op_definition
class ConcatOp(GraphOp):
    """Joins the inputs along `axis`; all other dims must agree
    (numpy.concatenate).

    Example:

        %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    """

    name = "graph.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if not operand_types:
            raise VerifyException("needs at least one input")
        _require_same_element_type(cls, operand_types)
        first = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(first))
        total = 0
        for index, type_ in enumerate(operand_types):
            shape = _shape(type_)
            expected = [*first[:axis], shape[axis] if len(shape) > axis else 0, *first[axis + 1 :]]
            if shape != expected:
                raise VerifyException(
                    f"{cls.operand_role(index)} has shape {_fmt(shape)}, expected "
                    f"{_fmt(expected)} (all dims but {axis} like {cls.operand_role(0)})"
                )
            total += shape[axis]
        return TensorType(operand_types[0].element_type, [*first[:axis], total, *first[axis + 1 :]])


def slice_ranges(properties: Mapping[str, Attribute], shape: Sequence[int]) -> list[range]:
    """Python-slice semantics per dim (negative and out-of-range bounds clamp)."""
    starts, ends, steps = (int_list(properties, n) for n in ("starts", "ends", "steps"))
    steps = steps or [1] * len(shape)
    for name, values in (("starts", starts), ("ends", ends), ("steps", steps)):
        if len(values) != len(shape):
            raise VerifyException(
                f"{name} has {len(values)} entries, expected {len(shape)} (the rank)"
            )
    if any(step <= 0 for step in steps):
        raise VerifyException(f"steps {_fmt(steps)} must be positive")
    return [
        range(*slice(start, end, step).indices(dim))
        for start, end, step, dim in zip(starts, ends, steps, shape, strict=True)
    ]


@irdl_op_definition
class SliceOp(GraphOp):
    """input[starts[0]:ends[0]:steps[0], ...] with Python slice semantics:
    negative bounds count from the end, out-of-range ones clamp; steps
    (default all 1) are positive.

    Example:

        %s = graph.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 4, 8>, steps = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
    """

    name = "graph.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(DenseArrayBase)
    ends = prop_def(DenseArrayBase)
    steps = opt_prop_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        ranges = slice_ranges(properties, _shape(operand_types[0]))
        return TensorType(operand_types[0].element_type, [len(r) for r in ranges])


@irdl_op_definition
class GatherOp(GraphOp):
    """numpy.take(input, indices, axis) (ONNX Gather): the result has shape
    input.shape[:axis] + indices.shape + input.shape[axis + 1:]. An index i
    in [-n, 0) reads i + n (n = input.shape[axis]); an index outside
    [-n, n) reads 0 (false for i1) instead of failing. `indices` are integers
    of any width (not i1); `axis` defaults to 0.

    Example:

        %g = graph.gather %table, %ids : (tensor<100x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
    """

    name = "graph.gather"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = operand_types[1].element_type
        if not isinstance(element, IntegerType) or element == i1:
            raise VerifyException(
                f"{cls.operand_role(1)} has element type {element}, expected an integer type"
            )
        shape = _shape(operand_types[0])
        if not shape:
            raise VerifyException(f"{cls.operand_role(0)} has rank 0, expected at least 1")
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        return TensorType(
            operand_types[0].element_type,
            [*shape[:axis], *_shape(operand_types[1]), *shape[axis + 1 :]],
        )


PAD_MODES = ("constant", "reflect", "edge", "wrap")


def pad_amounts(properties: Mapping[str, Attribute], rank: int) -> list[tuple[int, int]]:
    """(before, after) per dim from ONNX-ordered `pads` [b0, b1, ..., e0, e1, ...]."""
    pads = int_list(properties, "pads")
    if len(pads) != 2 * rank:
        raise VerifyException(f"pads has {len(pads)} entries, expected {2 * rank} (twice the rank)")
    return list(zip(pads[:rank], pads[rank:], strict=True))


@irdl_op_definition
class PadOp(GraphOp):
    """numpy.pad (ONNX Pad): dim d grows by pads[d] elements before and
    pads[rank + d] after; a negative amount removes elements instead (numpy.pad
    of the positive amounts, then a slice). `mode`: "constant" (the default)
    fills with `value` (default 0.0; an integer tensor needs an integral value
    in its range), "reflect" mirrors without repeating the border (amounts at
    most n - 1; a dim of one element repeats it), "edge" repeats the border,
    "wrap" repeats the tensor periodically; the last three need a non-empty dim
    wherever they pad.

    Example:

        %p = graph.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<4x8xf32> -> tensor<4x10xf32>
    """

    name = "graph.pad"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(DenseArrayBase)
    mode = prop_def(StringAttr, default_value=StringAttr("constant"))
    value = prop_def(FloatAttr, default_value=f32_attr(0.0))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape, element = _shape(operand_types[0]), operand_types[0].element_type
        mode = properties["mode"].data
        if mode not in PAD_MODES:
            raise VerifyException(f'mode must be one of {", ".join(PAD_MODES)}, got "{mode}"')
        value = float_value(properties, "value")
        if mode == "constant" and isinstance(element, IntegerType):
            _check_integral(value, element)
        result = []
        amounts = pad_amounts(properties, len(shape))
        for d, (size, (before, after)) in enumerate(zip(shape, amounts, strict=True)):
            padded = max(before, 0) or max(after, 0)
            if mode != "constant" and padded and size == 0:
                raise VerifyException(f'dim {d} is empty: "{mode}" has nothing to pad it with')
            if mode == "reflect" and size > 1 and max(before, after) > size - 1:
                raise VerifyException(
                    f'"reflect" pads dim {d} of size {size} by {max(before, after)}, at most '
                    f"{size - 1} allowed"
                )
            if size + before + after < 0:
                raise VerifyException(
                    f"pads ({before}, {after}) remove more than the {size} elements of dim {d}"
                )
            result.append(size + before + after)
        return TensorType(element, result)


def _check_integral(value: float, element: IntegerType) -> None:
    """A fill value must be exactly representable in the integer type."""
    width = element.width.data
    if element.signedness.data == Signedness.UNSIGNED:
        low, high = 0, 2**width - 1
    elif width == 1:
        low, high = 0, 1
    else:
        low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        raise VerifyException(f"value {value} is not a {element} (an integer in [{low}, {high}])")


@irdl_op_definition
class ConstantOp(TypedValueFormat, GraphOp):
    """A tensor constant: `graph.constant dense<...> : tensor<...>`.

    Example:

        %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    """

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        return properties["value"].type


# --- convolution and pooling ----------------------------------------------------


def _window_output(
    size: int, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int
) -> int:
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def _window_params(properties, name: str, count: int, default: int) -> list[int]:
    values = int_list(properties, name) if name in properties else [default] * count
    if len(values) != count:
        raise VerifyException(f"{name} has {len(values)} entries, expected {count}")
    if name != "padding" and any(v <= 0 for v in values):
        raise VerifyException(f"{name} {_fmt(values)} must be positive")
    if name == "padding" and any(v < 0 for v in values):
        raise VerifyException(f"padding {_fmt(values)} must not be negative")
    return values


def window_output_shape(
    properties, input_shape: Sequence[int], kernel: Sequence[int], dilations: Sequence[int]
) -> list[int]:
    """Output H, W of a 2-D window op (NCHW input, padding = top, left, bottom, right)."""
    strides = _window_params(properties, "strides", 2, 1)
    padding = _window_params(properties, "padding", 4, 0)
    sizes = [
        _window_output(
            input_shape[2 + d], kernel[d], strides[d], padding[d], padding[d + 2], dilations[d]
        )
        for d in range(2)
    ]
    if min(sizes) <= 0:
        raise VerifyException(
            f"the window does not fit: input spatial size {_fmt(input_shape[2:])} gives "
            f"output {_fmt(sizes)}"
        )
    return sizes


def _require_rank(cls: type[GraphOp], types: Sequence[TensorType], index: int, rank: int) -> None:
    if len(_shape(types[index])) != rank:
        raise VerifyException(
            f"{cls.operand_role(index)} has rank {len(_shape(types[index]))}, expected {rank}"
        )


@irdl_op_definition
class Conv2dOp(GraphOp):
    """2-D convolution, input NCHW, weight OIHW (I = C / groups).

    Cross-correlation as in PyTorch's conv2d and ONNX Conv (the filter is not
    flipped), without bias (add one with graph.add of a [O, 1, 1] tensor):
    input [N, C, H, W], weight [O, C / groups, KH, KW], result [N, O, OH, OW]
    with OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) // stride_h + 1
    (likewise OW). `strides` and `dilations` are [h, w]; `padding` is
    [top, left, bottom, right] (zeros; ONNX `pads` order [h_begin, w_begin,
    h_end, w_end], unlike PyTorch's symmetric [h, w]); `groups` splits the
    channels (groups = C = O is depthwise). Accumulates in f32.

    Example:

        %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x16x16xf32>
    """

    name = "graph.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    strides = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    padding = prop_def(DenseArrayBase, default_value=i64_array([0, 0, 0, 0]))
    dilations = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        for index in (0, 1):
            _require_rank(cls, operand_types, index, 4)
        (n, c, _, _), (o, i, kh, kw) = _shape(operand_types[0]), _shape(operand_types[1])
        groups = int_value(properties, "groups")
        if groups <= 0 or c % groups or o % groups:
            raise VerifyException(
                f"groups {groups} must be positive and divide the {c} input and {o} output channels"
            )
        if i * groups != c:
            raise VerifyException(
                f"{cls.operand_role(1)} has {i} input channels, expected {c // groups} "
                f"({c} channels of {cls.operand_role(0)} / {groups} groups)"
            )
        dilations = _window_params(properties, "dilations", 2, 1)
        h, w = window_output_shape(properties, _shape(operand_types[0]), [kh, kw], dilations)
        return TensorType(operand_types[0].element_type, [n, o, h, w])


class PoolOp(GraphOp):
    """A 2-D pooling window over an NCHW input: `kernel` [KH, KW] (required),
    `strides` [h, w], `padding` [top, left, bottom, right]; output sizes as
    conv2d's (no dilation, floor rounding: no ceil_mode).

    Example:

        %p = {op} %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    padding = prop_def(DenseArrayBase, default_value=i64_array([0, 0, 0, 0]))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        _require_rank(cls, operand_types, 0, 4)
        kernel = _window_params(properties, "kernel", 2, 1)
        n, c, _, _ = _shape(operand_types[0])
        h, w = window_output_shape(properties, _shape(operand_types[0]), kernel, [1, 1])
        return TensorType(operand_types[0].element_type, [n, c, h, w])


class FloatPoolOp(PoolOp):
    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


MaxPool2dOp = _op_class(PoolOp, "max_pool2d", "maximum over each window (padding never wins)")
AvgPool2dOp = _op_class(
    FloatPoolOp, "avg_pool2d", "mean over each window, padding excluded from the count"
)


# --- fusion ---------------------------------------------------------------------

ELEMENTWISE_OPS: tuple[type[GraphOp], ...] = (
    ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, NegOp, ErfOp,
    ReciprocalOp, SquareOp, GeluOp, LeakyReluOp, ClampOp, CastOp,
    EluOp, SeluOp, SoftplusOp, HardSigmoidOp, HardSwishOp, PreluOp, LogicalNotOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, GreaterOp, LessOp, EqualOp,
    GreaterEqualOp, LessEqualOp, NotEqualOp, LogicalAndOp, LogicalOrOp, LogicalXorOp,
    SelectOp, BroadcastToOp,
)  # fmt: skip
"""Ops computing each output element from the same element of their
(broadcast) operands: the ones graph-fuse groups."""

ROW_ANCHORS = (SoftmaxOp, LogSoftmaxOp, LayerNormOp)
"""Anchors over the innermost axis: element-wise producers of their first
operand run before them in the group (on each load), consumers after."""

FUSION_ANCHORS = (MatmulOp, Conv2dOp, *ROW_ANCHORS)
"""Ops a fused group is built around, their result feeding element-wise ops
after them (matmul and conv2d come first in the region)."""


@irdl_op_definition
class YieldOp(DefinedAttributesOnly):
    """The results of a graph.fused region.

    Example:

        graph.yield %y : tensor<4x8xf32>
    """

    name = "graph.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "$values attr-dict `:` type($values)"


@irdl_op_definition
class FusedOp(DefinedAttributesOnly):
    """A group of ops computed in one loop nest (graph-fuse): the region's
    block arguments are the inputs, `graph.yield` gives the results. The
    region holds element-wise ops, optionally after one anchor (matmul or
    conv2d) whose result they consume; intermediates never touch memory.

    Example:

        %y = graph.fused %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
        ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
          %0 = graph.add %a, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
          %1 = graph.relu %0 : tensor<4x8xf32>
          graph.yield %1 : tensor<4x8xf32>
        }
    """

    name = "graph.fused"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $outputs) $body"

    @property
    def anchor(self) -> GraphOp | None:
        return next((op for op in self.body.block.ops if isinstance(op, FUSION_ANCHORS)), None)

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException("needs at least one result (a group of dead ops is not fused)")
        block = self.body.block
        if tuple(a.type for a in block.args) != tuple(i.type for i in self.inputs):
            raise VerifyException("the region's arguments must have the types of the inputs")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or tuple(v.type for v in terminator.values) != tuple(
            r.type for r in self.outputs
        ):
            raise VerifyException("the region must end with a graph.yield of the result types")
        anchor = self.anchor
        for position, op in enumerate(block.ops):
            if op is terminator:
                continue
            allowed = isinstance(op, ELEMENTWISE_OPS) or (
                op is anchor and (position == 0 or isinstance(op, ROW_ANCHORS))
            )
            if not allowed:
                raise VerifyException(
                    f"'{op.name}' cannot be fused (element-wise ops around one anchor: a "
                    "leading matmul or conv2d, or a softmax, log_softmax or layer_norm)"
                )
        if isinstance(anchor, ROW_ANCHORS):
            self._verify_row_anchor(anchor)

    def _verify_row_anchor(self, anchor: GraphOp) -> None:
        """The lowering evaluates the ops before a row anchor on each load of
        its normalized operand, so they may feed nothing else."""
        rank = len(anchor.operands[0].type.get_shape())
        axis = normalize_axis(int_value(anchor.with_defaults(anchor.properties), "axis"), rank)
        if axis != rank - 1:
            raise VerifyException(f"a fused '{anchor.name}' must normalize the innermost axis")
        before = set()
        for op in self.body.block.ops:
            if op is anchor:
                break
            before.add(op)
        for op in before:
            for use in op.results[0].uses:
                if use.operation not in before and not (
                    use.operation is anchor and use.index == 0
                ):
                    raise VerifyException(
                        f"'{op.name}' before the anchor may only feed the anchor's first operand"
                    )


GRAPH_OPS: tuple[type[GraphOp], ...] = (
    ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, RsqrtOp, AbsOp, NegOp, ErfOp,
    ReciprocalOp, SquareOp, GeluOp, LeakyReluOp, ClampOp, CastOp,
    EluOp, SeluOp, SoftplusOp, HardSigmoidOp, HardSwishOp, PreluOp, LogicalNotOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, GreaterOp, LessOp, EqualOp,
    GreaterEqualOp, LessEqualOp, NotEqualOp, LogicalAndOp, LogicalOrOp, LogicalXorOp,
    SelectOp, MatmulOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, InstanceNormOp, BatchNormOp, AttentionOp,
    TransposeOp, ReshapeOp, BroadcastToOp, ConcatOp, SliceOp, GatherOp, PadOp, ConstantOp,
    Conv2dOp, MaxPool2dOp, AvgPool2dOp,
)  # fmt: skip

OPS_BY_NAME: dict[str, type[GraphOp]] = {op.name.removeprefix("graph."): op for op in GRAPH_OPS}

Graph = Dialect("graph", [*GRAPH_OPS, FusedOp, YieldOp], [FormatAttr])
