"""The Tensor IR dialect `tir`: the C-like Tensor IR of the oneDNN Graph Compiler design.

How the design's constructs map to ops (everything is `tir`, so a module reads
as one language):

| design construct                      | here                                            |
|---------------------------------------|-------------------------------------------------|
| module functions / declarations       | `tir.func @f(%A: !tir.tensor<100xf32>) -> f32 {...}`, body-less = declaration |
| global var / tensor (+ initial value) | `tir.global @g : f32 = 1.0 : f32`, read through `tir.global_ref` |
| stmts block                           | `tir.stmts { ... }` (locals defined inside are scoped to it) |
| define var / tensor                   | `%v = tir.define_var %init : !tir.var<f32>`, `%A = tir.define_tensor : !tir.tensor<..>` |
| assign                                | `tir.assign %v = %x : !tir.var<f32>`             |
| store `A[i, j @ 8] = v`               | `tir.store %v, %A[%i, %j lanes 8] : !tir.tensor<..>` |
| evaluate{expr}                        | `tir.evaluate %x : type`                         |
| if / else, for, parallel for, return  | `tir.if`, `tir.for %i = %a to %b step %s [parallel]`, `tir.return` |
| constants (scalar, SIMD)              | `tir.const 1.0 : f32`, `tir.const dense<1.0> : vector<8xf32>` |
| cast, add sub mul div mod, compares   | `tir.cast`, `tir.add` ... `tir.mod`, `tir.gt` ... `tir.ne` |
| and or not, select, func_addr         | `tir.and`, `tir.or`, `tir.not`, `tir.select`, `tir.func_addr` |
| call, indirect call via prototype     | `tir.call @f(...)`, `tir.call_indirect %p(...) {prototype = @f}` |
| tensor load `A[i, j @ 8]`, var read   | `tir.load %A[%i, %j lanes 8]`, `tir.read %v`      |
| `&A[i, j]` (tensorptr)                | `tir.tensor_ptr %A[%i, %j] : ... -> !tir.tensor<..>` |
| intrinsics                            | one op each: `tir.min`, `tir.fmadd`, `tir.brgemm`, ... |

Mutable vars are memory cells (`!tir.var<T>`), so SSA values stay immutable.
Expressions are ops with one result; statements have none (definitions return
the handle they define). A call is an expression: when it is made for its
effect its result (`none` for void functions) must be consumed by
`tir.evaluate`, as in the design. Mixed scalar operands of binary ops are
auto-cast to a common type (int -> float, narrow -> wide); vectors must agree
in lanes. Integers are signless and signed unless written `ui8`, `ui32`...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneType,
    Signedness,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
    i1,
    i32,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
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
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    IsolatedFromAbove,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.common import TypedValueFormat

# --- types -------------------------------------------------------------------


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """An untyped pointer: function addresses, pointer lists for list_brgemm."""

    name = "tir.ptr"


@irdl_attr_definition
class TirTensorType(ParametrizedAttribute, TypeAttribute):
    """A pointer-like buffer with a static row-major shape: `!tir.tensor<4x8xf32>`."""

    name = "tir.tensor"
    shape: ArrayAttr[IntAttr] = param_def(ArrayAttr[IntAttr])
    element_type: Attribute = param_def(AnyAttr())

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def element_count(self) -> int:
        count = 1
        for dim in self.get_shape():
            count *= dim
        return count

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
        return (ArrayAttr([IntAttr(d) for d in shape]), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            for dim in self.get_shape():
                printer.print_string(f"{dim}x")
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        if not self.shape.data or any(d.data < 0 for d in self.shape.data):
            raise VerifyException(
                f"a tensor needs at least one dimension, each >= 0 (0: an empty tensor), got {list(self.get_shape())}"
            )
        if not (is_scalar(self.element_type) or isinstance(self.element_type, PtrType)):
            raise VerifyException(f"tensor element type {self.element_type} is not a scalar type")


@irdl_attr_definition
class VarType(ParametrizedAttribute, TypeAttribute):
    """A mutable variable holding a scalar or SIMD value: `!tir.var<f32>`."""

    name = "tir.var"
    element_type: Attribute = param_def(AnyAttr())

    def verify(self) -> None:
        if not is_value_type(self.element_type):
            raise VerifyException(f"a var cannot hold {self.element_type}")


FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def is_float(type_: Attribute) -> bool:
    return isinstance(element_of(type_), FLOAT_TYPES)


def is_integer(type_: Attribute) -> bool:
    """Integer or index, bool excluded."""
    element = element_of(type_)
    return isinstance(element, IndexType) or (
        isinstance(element, IntegerType) and element.width.data > 1
    )


def is_bool(type_: Attribute) -> bool:
    return element_of(type_) == i1


def is_scalar(type_: Attribute) -> bool:
    return isinstance(type_, (IndexType, IntegerType, *FLOAT_TYPES))


MAX_LANES = 64
"""A vector is a SIMD value (64 lanes: a 512-bit register of bytes); LLVM
runs out of memory on vectors of millions of lanes."""


def is_value_type(type_: Attribute) -> bool:
    """What expressions produce: scalars, 1-D vectors of 1 to MAX_LANES
    scalars, pointers."""
    if isinstance(type_, VectorType):
        return (
            type_.get_num_dims() == 1
            and 1 <= type_.get_shape()[0] <= MAX_LANES
            and is_scalar(type_.element_type)
        )
    return is_scalar(type_) or isinstance(type_, PtrType)


def element_of(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def lanes_of(type_: Attribute) -> int:
    return type_.get_shape()[0] if isinstance(type_, VectorType) else 1


def with_element(type_: Attribute, element: Attribute) -> Attribute:
    """`type_`'s lane count with another element type."""
    return VectorType(element, [lanes_of(type_)]) if isinstance(type_, VectorType) else element


def bit_width(type_: Attribute) -> int:
    element = element_of(type_)
    if isinstance(element, IndexType):
        width = 64
    elif isinstance(element, IntegerType):
        width = element.width.data
    else:
        width = {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(element)]
    return width * lanes_of(type_)


def common_type(lhs: Attribute, rhs: Attribute) -> Attribute:
    """The seed's auto-cast: the type both operands of a binary op convert to."""
    if lhs == rhs:
        return lhs
    if lanes_of(lhs) != lanes_of(rhs):
        raise VerifyException(
            f"operand types {lhs} and {rhs} have different lane counts "
            f"({lanes_of(lhs)} vs {lanes_of(rhs)})"
        )
    a, b = element_of(lhs), element_of(rhs)
    if not (is_scalar(a) and is_scalar(b)) or is_bool(a) != is_bool(b):
        raise VerifyException(f"operand types {lhs} and {rhs} cannot be auto-cast to a common type")
    if is_float(a) != is_float(b):
        common = a if is_float(a) else b
    elif isinstance(a, IndexType) or isinstance(b, IndexType):
        common = IndexType()
    elif bit_width(a) != bit_width(b):
        common = a if bit_width(a) > bit_width(b) else b
    elif is_float(a):
        common = Float32Type()  # f16 with bf16
    else:
        common = a if a.signedness.data != Signedness.UNSIGNED else b
    return with_element(lhs, common)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise VerifyException(message)


# --- helpers for the `%A[%i, %j lanes 8]` access syntax -----------------------------


def parse_access(parser: Parser) -> tuple[UnresolvedOperand, list[UnresolvedOperand], int]:
    """`%A[%i, %j lanes 8]` (the seed's `A[i, j @ 8]`) -> (tensor, indices, lanes)."""
    tensor = parser.parse_unresolved_operand()
    parser.parse_punctuation("[")
    indices = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(","):
        indices.append(parser.parse_unresolved_operand())
    lanes = 1
    if parser.parse_optional_keyword("lanes"):
        lanes = parser.parse_integer(allow_boolean=False, allow_negative=False)
    parser.parse_punctuation("]")
    return tensor, indices, lanes


def print_access(
    printer: Printer, tensor: SSAValue, indices: Sequence[SSAValue], lanes: int
) -> None:
    printer.print_operand(tensor)
    printer.print_string("[")
    printer.print_list(indices, printer.print_operand)
    if lanes != 1:
        printer.print_string(f" lanes {lanes}")
    printer.print_string("]")


def _resolve_access(
    parser: Parser,
    access: tuple[UnresolvedOperand, list[UnresolvedOperand], int],
    tensor_type: Attribute,
) -> tuple[SSAValue, list[SSAValue]]:
    tensor, indices, _ = access
    resolved = [parser.resolve_operand(i, _index_type_of(parser, i)) for i in indices]
    return parser.resolve_operand(tensor, tensor_type), resolved


def _index_type_of(parser: Parser, operand: UnresolvedOperand) -> Attribute:
    """Indices are written without types: take the type of their definition."""
    values = parser.ssa_values.get(operand.operand_name)
    if values is None:
        parser.raise_error(
            f"use of undeclared SSA value name %{operand.operand_name}", operand.span
        )
    return values[operand.index].type


def _check_access(
    op: Operation, tensor: SSAValue, indices: Sequence[SSAValue], lanes: int
) -> TirTensorType:
    tensor_type = tensor.type
    _require(isinstance(tensor_type, TirTensorType), f"{tensor_type} is not a !tir.tensor")
    shape = tensor_type.get_shape()
    _require(
        len(indices) == len(shape),
        f"{len(indices)} indices for a tensor of rank {len(shape)}",
    )
    for position, index in enumerate(indices):
        _require(
            is_integer(index.type) and lanes_of(index.type) == 1,
            f"index #{position} has type {index.type}, expected an integer or index",
        )
    if tensor_type.element_count() == 0:  # accessed only in loops that run zero times
        _require(lanes >= 1, f"{lanes} lanes: an access needs at least one")
        return tensor_type
    _require(
        lanes >= 1 and lanes <= shape[-1],
        f"{lanes} lanes do not fit the last dimension {shape[-1]}",
    )
    last = _constant_int(indices[-1])
    if last is not None:
        _require(
            0 <= last and last + lanes <= shape[-1],
            f"access [{last} lanes {lanes}] is out of bounds for the last dimension {shape[-1]}",
        )
    return tensor_type


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ConstOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _enclosing(op: Operation, kind: type[Operation]) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kind):
        parent = parent.parent_op()
    return parent


def _is_inside(op: Operation, ancestor: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op()
    return False


# --- module level -----------------------------------------------------------------


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A function; without a body it is a declaration resolved at JIT time.
    A declaration may be variadic (`(!tir.ptr, ...)`), like the runtime's
    `sc_parallel_call_cpu` that takes the captures of a parallel body.

    Example:

        tir.func @twice(%x: i32) -> i32 {
          %0 = tir.add %x, %x : (i32, i32) -> i32
          tir.return %0 : i32
        }
    """

    name = "tir.func"
    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    variadic = opt_prop_def(UnitAttr)
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), NoTerminator())

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        output: Attribute | None,
        body: Region | None = None,
        variadic: bool = False,
    ):
        outputs = [] if output is None or isinstance(output, NoneType) else [output]
        properties = {
            "sym_name": StringAttr(name),
            "function_type": FunctionType.from_lists(inputs, outputs),
        }
        if variadic:
            properties["variadic"] = UnitAttr()
        super().__init__(properties=properties, regions=[body if body is not None else Region()])

    @property
    def is_declaration(self) -> bool:
        return not self.body.blocks

    @property
    def return_type(self) -> Attribute:
        outputs = self.function_type.outputs.data
        return outputs[0] if outputs else NoneType()

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, inputs, outputs, body, extra, _, _, variadic = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type"), allow_variadic=True
        )
        op = cls(name, inputs, outputs[0] if outputs else None, body, variadic)
        if extra is not None:
            op.attributes.update(extra.data)
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer, self.sym_name, self.function_type, self.body, self.attributes,
            reserved_attr_names=("sym_name", "function_type", "variadic"), print_empty_outputs=False,
            is_variadic=self.variadic is not None,
        )  # fmt: skip

    def verify_(self) -> None:
        inputs = self.function_type.inputs.data
        _require(len(self.function_type.outputs.data) <= 1, "a function returns at most one value")
        _require(self.variadic is None or self.is_declaration, "only a declaration can be variadic")
        for index, type_ in enumerate(inputs):
            _require(
                is_value_type(type_) or isinstance(type_, TirTensorType),
                f"parameter #{index} has type {type_}; expected a scalar, vector (1 to {MAX_LANES} lanes), pointer or !tir.tensor",
            )
        if not self.is_declaration:
            args = self.body.blocks[0].args
            _require(
                tuple(a.type for a in args) == inputs,
                "the entry block arguments do not match the function type",
            )
            _check_visibility(self.body)


def _check_visibility(region: Region) -> None:
    """Locals (and loop vars) are visible only in the block that defines them
    and the regions nested in it: the scoping rule the seed states."""
    for op in region.walk():
        for operand in op.operands:
            defining_block = (
                operand.owner if isinstance(operand.owner, Block) else operand.owner.parent_block()
            )
            block = op.parent_block()
            while block is not None and block is not defining_block:
                parent = block.parent_op()
                block = parent.parent_block() if parent is not None else None
            if block is None:
                what = "loop variable" if isinstance(defining_block.parent_op(), ForOp) else "value"
                raise VerifyException(
                    f"{what} {operand.name_hint or ''} used by '{op.name}' is not visible here: it is only visible inside the block that defines it".replace(
                        "  ", " "
                    )
                )


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A module-level var or tensor, optionally with an initial value."""

    name = "tir.global"
    sym_name = prop_def(SymbolNameConstraint())
    type = prop_def(AnyAttr())
    initial_value = opt_prop_def(AnyAttr())
    traits = traits_def(SymbolOpInterface())
    assembly_format = "$sym_name `:` $type (`=` $initial_value^)? attr-dict"

    def verify_(self) -> None:
        type_, value = self.type, self.initial_value
        _require(
            is_value_type(type_) or isinstance(type_, TirTensorType),
            f"a global cannot have type {type_}",
        )
        if value is None:
            return
        if isinstance(type_, TirTensorType):
            _require(
                isinstance(value, DenseIntOrFPElementsAttr)
                and tuple(value.type.get_shape()) == type_.get_shape()
                and value.get_element_type() == type_.element_type,
                f"the initial value of a {type_} global must be a dense<...> : tensor of the same shape and element type",
            )
        else:
            _require(
                getattr(value, "type", None) == type_,
                f"the initial value {value} does not have the global's type {type_}",
            )


@irdl_op_definition
class GlobalRefOp(IRDLOperation):
    """The handle of a global: `!tir.var<T>` for vars, the tensor for tensors."""

    name = "tir.global_ref"
    global_name = prop_def(SymbolRefAttr)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$global_name attr-dict `:` type($result)"

    def verify_(self) -> None:
        target = SymbolTable.lookup_symbol(self, self.global_name)
        _require(isinstance(target, GlobalOp), f"{self.global_name} is not a tir.global")
        expected = target.type if isinstance(target.type, TirTensorType) else VarType(target.type)
        _require(
            self.result.type == expected,
            f"the handle of {self.global_name} has type {expected}, not {self.result.type}",
        )


# --- statements ----------------------------------------------------------------------


class StatementOp(IRDLOperation):
    """A statement: it does something and produces no value."""

    irdl_options = (ParsePropInAttrDict(),)


@irdl_op_definition
class StmtsOp(StatementOp):
    """A block of statements; locals defined inside are scoped to it."""

    name = "tir.stmts"
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$body attr-dict"


def _parse_var_type(parser: Parser) -> VarType:
    """`: !tir.var<T>` at the end of an op that works on a var."""
    parser.parse_punctuation(":")
    var_type = parser.parse_type()
    if not isinstance(var_type, VarType):
        parser.raise_error(f"expected a !tir.var<...> type, got {var_type}")
    return var_type


@irdl_op_definition
class DefineVarOp(StatementOp):
    """Defines a local var, optionally initialized.

    Example:

        %zero = tir.const 0.0 : f32
        %acc = tir.define_var %zero : !tir.var<f32>
    """

    name = "tir.define_var"
    init = opt_operand_def()
    result = result_def(VarType)

    @classmethod
    def parse(cls, parser: Parser) -> DefineVarOp:
        init = parser.parse_optional_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        var_type = _parse_var_type(parser)
        operands = [parser.resolve_operand(init, var_type.element_type)] if init else []
        return cls.create(operands=operands, result_types=[var_type], attributes=attributes)

    def print(self, printer: Printer) -> None:
        if self.init is not None:
            printer.print_string(" ")
            printer.print_operand(self.init)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if self.init is not None:
            _require(
                self.init.type == self.result.type.element_type,
                f"initial value of type {self.init.type} for a {self.result.type}",
            )


@irdl_op_definition
class DefineTensorOp(StatementOp):
    """Defines a local tensor (a buffer scoped to its block).

    Example:

        %T = tir.define_tensor : !tir.tensor<16x16xf32>
    """

    name = "tir.define_tensor"
    result = result_def(TirTensorType)
    assembly_format = "attr-dict `:` type($result)"


class _VarValueFormat:
    """`op %var = %value : !tir.var<T>`, the value having type T."""

    @classmethod
    def parse(cls, parser: Parser):
        var = parser.parse_unresolved_operand()
        parser.parse_punctuation("=")
        value = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        var_type = _parse_var_type(parser)
        operands = [
            parser.resolve_operand(var, var_type),
            parser.resolve_operand(value, var_type.element_type),
        ]
        return cls.create(operands=operands, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.var)
        printer.print_string(" = ")
        printer.print_operand(self.value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.var.type)


@irdl_op_definition
class AssignOp(_VarValueFormat, StatementOp):
    """var = value. In a parallel for, only vars defined inside it (or globals).

    Example:

        %acc = tir.define_var : !tir.var<f32>
        %x = tir.const 2.0 : f32
        tir.assign %acc = %x : !tir.var<f32>
    """

    name = "tir.assign"
    var = operand_def(VarType)
    value = operand_def()

    def verify_(self) -> None:
        _require(
            self.value.type == self.var.type.element_type,
            f"assigns a {self.value.type} to a {self.var.type}",
        )
        definition = self.var.owner
        loop = _enclosing(self, ForOp)
        while loop is not None:
            if (
                loop.parallel
                and isinstance(definition, DefineVarOp)
                and not _is_inside(definition, loop)
            ):
                raise VerifyException(
                    "writes a local var defined outside the enclosing parallel tir.for; "
                    "a parallel body may only read outer locals (globals and tensors may be written)"
                )
            loop = _enclosing(loop, ForOp)


@irdl_op_definition
class StoreOp(StatementOp):
    """A[i, j] = value, or A[i, j lanes N] = vector (N lanes along the last dim).

    Example:

        %i = tir.const 0 : index
        %v = tir.const 1.0 : f32
        tir.store %v, %A[%i, %i] : !tir.tensor<4x8xf32>
    """

    name = "tir.store"
    value = operand_def()
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    lanes = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        value_type = _access_type(tensor_type, access[2])
        return cls.create(
            operands=[parser.resolve_operand(value, value_type), tensor, *indices],
            properties={"lanes": IntegerAttr(access[2], 64)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        print_access(printer, self.tensor, self.indices, self.lanes.value.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def verify_(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, self.lanes.value.data)
        expected = _access_type(tensor_type, self.lanes.value.data)
        _require(
            self.value.type == expected,
            f"stores a {self.value.type} into {tensor_type} with {self.lanes.value.data} lanes; expected {expected}",
        )


def _access_type(tensor_type: Attribute, lanes: int) -> Attribute:
    element = tensor_type.element_type if isinstance(tensor_type, TirTensorType) else tensor_type
    return VectorType(element, [lanes]) if lanes > 1 else element


@irdl_op_definition
class EvaluateOp(StatementOp):
    """Evaluates an expression for its effect (a call), discarding its value."""

    name = "tir.evaluate"
    value = operand_def()
    assembly_format = "$value attr-dict `:` type($value)"


@irdl_op_definition
class IfOp(StatementOp):
    """if (cond) { then } else { otherwise }."""

    name = "tir.if"
    cond = operand_def(i1)
    then_region = region_def("single_block")
    else_region = region_def()
    traits = traits_def(NoTerminator())

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.parse_operand(i1)
        then_region = parser.parse_region()
        if not then_region.blocks:  # `{ }` parses to no block; keep one empty block
            then_region.add_block(Block())
        else_region = parser.parse_region() if parser.parse_optional_keyword("else") else Region()
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            operands=[cond], regions=[then_region, else_region], attributes=attributes
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        printer.print_string(" ")
        printer.print_region(self.then_region, False, False)
        if self.else_region.blocks:
            printer.print_string(" else ")
            printer.print_region(self.else_region, False, False)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class ForOp(StatementOp):
    """for (var = start; var < end; var += step); `parallel` runs the
    iterations on the thread pool like OpenMP's parallel for.

    Example:

        %c0 = tir.const 0 : index
        %c4 = tir.const 4 : index
        %c1 = tir.const 1 : index
        tir.for %i = %c0 to %c4 step %c1 parallel {
          %x = tir.load %A[%i] : !tir.tensor<4xf32>
          tir.store %x, %B[%i] : !tir.tensor<4xf32>
        }
    """

    name = "tir.for"
    start = operand_def()
    end = operand_def()
    step = operand_def()
    body = region_def("single_block")
    parallel_attr = prop_def(
        BoolAttr, prop_name="parallel", default_value=BoolAttr.from_bool(False)
    )
    traits = traits_def(NoTerminator())

    @property
    def parallel(self) -> bool:
        return bool(self.parallel_attr.value.data)

    @property
    def loop_var(self) -> SSAValue:
        return self.body.block.args[0]

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        loop_var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        bounds = [parser.parse_unresolved_operand()]
        parser.parse_keyword("to")
        bounds.append(parser.parse_unresolved_operand())
        parser.parse_keyword("step")
        bounds.append(parser.parse_unresolved_operand())
        parallel = parser.parse_optional_keyword("parallel") is not None
        var_type = _index_type_of(parser, bounds[0])
        operands = [parser.resolve_operand(b, _index_type_of(parser, b)) for b in bounds]
        body = parser.parse_region((loop_var.resolve(var_type),))
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            operands=operands,
            regions=[body],
            properties={"parallel": BoolAttr.from_bool(parallel)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.loop_var)
        printer.print_string(" = ")
        printer.print_operand(self.start)
        printer.print_string(" to ")
        printer.print_operand(self.end)
        printer.print_string(" step ")
        printer.print_operand(self.step)
        if self.parallel:
            printer.print_string(" parallel")
        printer.print_string(" ")
        printer.print_region(self.body, False, False)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        var_type = self.loop_var.type if self.body.blocks and self.body.block.args else None
        _require(
            var_type is not None and len(self.body.block.args) == 1,
            "the body takes exactly the loop variable",
        )
        _require(
            is_integer(var_type) and lanes_of(var_type) == 1,
            f"loop variable has type {var_type}, expected an integer or index",
        )
        for name in ("start", "end", "step"):
            bound = getattr(self, name)
            _require(
                bound.type == var_type,
                f"{name} has type {bound.type}, expected {var_type} like the loop variable",
            )


@irdl_op_definition
class ReturnOp(StatementOp):
    """Returns from the function, with its value if it has a return type."""

    name = "tir.return"
    value = opt_operand_def()
    assembly_format = "($value^ `:` type($value))? attr-dict"

    def verify_(self) -> None:
        function = _enclosing(self, FuncOp)
        _require(function is not None, "is not inside a tir.func")
        expected = function.return_type
        actual = self.value.type if self.value is not None else NoneType()
        _require(
            self.value is None or not isinstance(actual, NoneType),
            "returns a value of type none: a function returning none has 'tir.return' alone",
        )
        _require(actual == expected, f"returns {actual} from a function returning {expected}")


# --- expressions -------------------------------------------------------------------------


class ExpressionOp(IRDLOperation):
    """An expression: produces one value."""

    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        _require(
            is_value_type(self.results[0].type)
            or isinstance(self.results[0].type, NoneType | TirTensorType),
            f"an expression cannot produce {self.results[0].type}",
        )
        self.check_types()

    def check_types(self) -> None:
        """Raise VerifyException if the operand/result types break the op's typing rule."""


@irdl_op_definition
class ConstOp(TypedValueFormat, ExpressionOp):
    """A scalar or SIMD vector constant.

    Example:

        %c = tir.const dense<1.0> : vector<8xf32>
    """

    name = "tir.const"
    value = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        """Rejects types tir has no values of (f80, tensors, ...) where they
        are written: such an op could not even be printed in a diagnostic."""
        start = parser.pos
        op = super().parse(parser)
        if not is_value_type(op.value.type):
            parser.raise_error(
                f"tir.const cannot have type {op.value.type}: tir values are integers, "
                "index, f16, bf16, f32, f64 or vectors of them",
                start,
                parser.pos,
            )
        return op

    def check_types(self) -> None:
        value = self.value
        _require(
            isinstance(value, IntegerAttr | FloatAttr | DenseIntOrFPElementsAttr),
            f"{value} is not a scalar or vector constant",
        )
        _require(
            value.type == self.result.type,
            f"the constant's type {value.type} differs from the result type {self.result.type}",
        )
        _require(
            not isinstance(value, DenseIntOrFPElementsAttr) or isinstance(value.type, VectorType),
            "a dense constant must have a vector type",
        )


class BinaryExpression(ExpressionOp):
    """lhs (op) rhs with auto-cast: the result has the operands' common type.

    Example:

        %z = {op} %x, %i : (f32, index) -> f32
    """

    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(not is_bool(common), f"'{cls.name}' does not take booleans")

    @classmethod
    def result_for(cls, common: Attribute) -> Attribute:
        return common

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> Attribute:
        """The result type for these operand types (auto-cast applied)."""
        common = common_type(lhs, rhs)
        cls.operand_rule(common)
        return cls.result_for(common)

    def check_types(self) -> None:
        expected = self.infer_type(self.lhs.type, self.rhs.type)
        _require(
            self.result.type == expected, f"result type {self.result.type} should be {expected}"
        )


class IntegerBinaryExpression(BinaryExpression):
    """A binary intrinsic on integers (vectors of integers lane-wise).

    Example:

        %z = {op} %a, %b : (i32, i32) -> i32
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_integer(common), f"'{cls.name}' needs integer operands, got {common}")


class ComparisonExpression(BinaryExpression):
    """A comparison after auto-cast; the result is i1 (lane-wise on vectors).

    Example:

        %c = {op} %x, %y : (f32, f32) -> i1
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        pass

    @classmethod
    def result_for(cls, common: Attribute) -> Attribute:
        return with_element(common, i1)


class LogicExpression(BinaryExpression):
    """A logical op on i1 (lane-wise on vectors).

    Example:

        %c = {op} %p, %q : (i1, i1) -> i1
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_bool(common), f"'{cls.name}' needs boolean operands, got {common}")


def _op_class(base_class: type[IRDLOperation], op_name: str, doc: str) -> type[IRDLOperation]:
    class_name = "".join(part.title() for part in op_name.split("_")) + "Op"
    return irdl_op_definition(
        type(class_name, (base_class,), {"name": f"tir.{op_name}", "__doc__": doc})
    )


AddOp = _op_class(BinaryExpression, "add", "lhs + rhs")
SubOp = _op_class(BinaryExpression, "sub", "lhs - rhs")
MulOp = _op_class(BinaryExpression, "mul", "lhs * rhs")
DivOp = _op_class(
    BinaryExpression,
    "div",
    "lhs / rhs (integers truncate toward zero and never trap: x / 0 is 0, INT_MIN / -1 is INT_MIN)",
)
ModOp = _op_class(
    IntegerBinaryExpression,
    "mod",
    "lhs % rhs, integers only (C remainder; x % 0 and INT_MIN % -1 are 0, no trap)",
)
MinOp = _op_class(BinaryExpression, "min", "intrinsic min(lhs, rhs); NaN if a float operand is NaN")
MaxOp = _op_class(BinaryExpression, "max", "intrinsic max(lhs, rhs); NaN if a float operand is NaN")


class FloatBinaryExpression(BinaryExpression):
    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_float(common), f"'{cls.name}' needs float operands, got {common}")


PowOp = _op_class(FloatBinaryExpression, "pow", "lhs ** rhs (extension: not in the design's list)")
IntAndOp = _op_class(IntegerBinaryExpression, "int_and", "intrinsic bitwise lhs & rhs")
IntOrOp = _op_class(IntegerBinaryExpression, "int_or", "intrinsic bitwise lhs | rhs")
IntXorOp = _op_class(IntegerBinaryExpression, "int_xor", "intrinsic bitwise lhs ^ rhs")
ShlOp = _op_class(IntegerBinaryExpression, "shl", "intrinsic lhs << rhs")
ShrOp = _op_class(IntegerBinaryExpression, "shr", "intrinsic lhs >> rhs (arithmetic for signed)")
GtOp = _op_class(ComparisonExpression, "gt", "lhs > rhs (lane-wise on vectors)")
LtOp = _op_class(ComparisonExpression, "lt", "lhs < rhs")
GeOp = _op_class(ComparisonExpression, "ge", "lhs >= rhs")
LeOp = _op_class(ComparisonExpression, "le", "lhs <= rhs")
EqOp = _op_class(ComparisonExpression, "eq", "lhs == rhs")
NeOp = _op_class(ComparisonExpression, "ne", "lhs != rhs")
AndOp = _op_class(LogicExpression, "and", "logical lhs && rhs (lane-wise)")
OrOp = _op_class(LogicExpression, "or", "logical lhs || rhs (lane-wise)")


class UnaryExpression(ExpressionOp):
    """f(x); the result has x's type unless the op says otherwise.

    Example:

        %y = {op} %x : f32 -> f32
    """

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    RULE: ClassVar[str] = "numeric"  # numeric | float | bool

    def check_types(self) -> None:
        input_type = self.input.type
        checks = {
            "numeric": is_integer(input_type) or is_float(input_type),
            "float": is_float(input_type),
            "bool": is_bool(input_type),
        }
        _require(checks[self.RULE], f"'{self.name}' needs a {self.RULE} operand, got {input_type}")
        _require(
            self.result.type == input_type, f"result type {self.result.type} should be {input_type}"
        )


def _unary(op_name: str, doc: str, rule: str) -> type[IRDLOperation]:
    class_name = "".join(part.title() for part in op_name.split("_")) + "Op"
    namespace = {
        "name": f"tir.{op_name}",
        "__doc__": doc,
        "RULE": rule,
        "__annotations__": {"RULE": ClassVar[str]},
    }
    return irdl_op_definition(type(class_name, (UnaryExpression,), namespace))


NotOp = _unary("not", "logical !x\n\nExample:\n\n    %y = tir.not %b : i1 -> i1", "bool")
AbsOp = _unary("abs", "intrinsic |x|", "numeric")
RoundOp = _unary("round", "intrinsic: nearest integer value, halves away from zero", "float")
FloorOp = _unary("floor", "intrinsic floor(x)", "float")
CeilOp = _unary("ceil", "intrinsic ceil(x)", "float")
ExpOp = _unary("exp", "intrinsic e ** x", "float")
SqrtOp = _unary("sqrt", "intrinsic sqrt(x)", "float")
RsqrtOp = _unary("rsqrt", "intrinsic 1 / sqrt(x)", "float")
# Math the graph lowering needs beyond the seed's intrinsic list.
LogOp = _unary("log", "natural logarithm (extension: not in the design's list)", "float")
TanhOp = _unary("tanh", "hyperbolic tangent (extension: not in the design's list)", "float")


class ConversionExpression(ExpressionOp):
    """x converted to the result type under the op's rule."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"


@irdl_op_definition
class CastOp(ConversionExpression):
    """Value-preserving conversion (C casts: float -> int truncates).

    Example:

        %y = tir.cast %x : f32 -> i32
    """

    name = "tir.cast"

    def check_types(self) -> None:
        source, target = self.input.type, self.result.type
        _require(
            lanes_of(source) == lanes_of(target),
            f"cannot cast {source} to {target}: lane counts differ",
        )
        _require(
            is_scalar(element_of(source)) and is_scalar(element_of(target)),
            f"cannot cast {source} to {target}",
        )


@irdl_op_definition
class ReinterpretOp(ConversionExpression):
    """Intrinsic: the same bits seen as another type of the same width."""

    name = "tir.reinterpret"

    def check_types(self) -> None:
        _require(
            bit_width(self.input.type) == bit_width(self.result.type),
            f"cannot reinterpret {self.input.type} ({bit_width(self.input.type)} bits) as {self.result.type} ({bit_width(self.result.type)} bits)",
        )


@irdl_op_definition
class BroadcastOp(ConversionExpression):
    """Intrinsic: a vector whose lanes all hold the scalar x.

    Example:

        %v = tir.broadcast %x : f32 -> vector<8xf32>
    """

    name = "tir.broadcast"

    def check_types(self) -> None:
        _require(is_scalar(self.input.type), f"broadcast takes a scalar, got {self.input.type}")
        _require(
            isinstance(self.result.type, VectorType)
            and self.result.type.element_type == self.input.type,
            f"broadcast of {self.input.type} must give a vector of {self.input.type}, got {self.result.type}",
        )


@irdl_op_definition
class IsnanOp(ConversionExpression):
    """Intrinsic: x is NaN (lane-wise)."""

    name = "tir.isnan"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"isnan takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i1),
            f"isnan of {self.input.type} gives {with_element(self.input.type, i1)}",
        )


@irdl_op_definition
class SaturatedCastOp(ConversionExpression):
    """Intrinsic: f32/s32 to u8 (clamped to 0..255) or s8 (-128..127); NaN gives 0."""

    name = "tir.saturated_cast"

    def check_types(self) -> None:
        source, target = self.input.type, self.result.type
        _require(
            element_of(source) in (Float32Type(), i32),
            f"saturated_cast takes f32 or i32, got {source}",
        )
        target_element = element_of(target)
        _require(
            isinstance(target_element, IntegerType) and target_element.width.data == 8,
            f"saturated_cast gives ui8 or i8, got {target}",
        )
        _require(lanes_of(source) == lanes_of(target), "saturated_cast keeps the lane count")


@irdl_op_definition
class RoundAndCastOp(ConversionExpression):
    """Intrinsic: round to nearest (like std::roundf), then convert to s32."""

    name = "tir.round_and_cast"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"round_and_cast takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i32),
            f"round_and_cast of {self.input.type} gives {with_element(self.input.type, i32)}",
        )


class VectorReduceExpression(ExpressionOp):
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check_types(self) -> None:
        _require(
            isinstance(self.input.type, VectorType),
            f"'{self.name}' reduces a vector, got {self.input.type}",
        )
        _require(
            self.result.type == element_of(self.input.type),
            f"reducing {self.input.type} gives {element_of(self.input.type)}",
        )


ReduceAddOp = _op_class(VectorReduceExpression, "reduce_add", "intrinsic: sum of the lanes")
ReduceMulOp = _op_class(VectorReduceExpression, "reduce_mul", "intrinsic: product of the lanes")
ReduceMaxOp = _op_class(
    VectorReduceExpression, "reduce_max", "intrinsic: largest lane (NaN if any lane is NaN)"
)
ReduceMinOp = _op_class(
    VectorReduceExpression, "reduce_min", "intrinsic: smallest lane (NaN if any lane is NaN)"
)


@irdl_op_definition
class SelectOp(ExpressionOp):
    """cond ? a : b, lane-wise for vectors."""

    name = "tir.select"
    cond = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        operands = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            operands.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cond_type = parser.parse_type()
        parser.parse_punctuation(",")
        value_type = parser.parse_type()
        resolved = [parser.resolve_operand(operands[0], cond_type)] + [
            parser.resolve_operand(o, value_type) for o in operands[1:]
        ]
        return cls.create(operands=resolved, result_types=[value_type], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.cond.type}, {self.result.type}")

    def check_types(self) -> None:
        _require(
            is_bool(self.cond.type),
            f"the condition has type {self.cond.type}, expected i1 or a vector of i1",
        )
        _require(
            self.true_value.type == self.false_value.type == self.result.type,
            "both values and the result must have the same type",
        )
        _require(
            lanes_of(self.cond.type) == lanes_of(self.result.type),
            f"the condition has {lanes_of(self.cond.type)} lanes, the values {lanes_of(self.result.type)}",
        )


@irdl_op_definition
class FmaddOp(ExpressionOp):
    """Intrinsic: a * b + c, fused.

    Example:

        %y = tir.fmadd %a, %b, %c : vector<8xf32>
    """

    name = "tir.fmadd"
    a = operand_def()
    b = operand_def()
    c = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> FmaddOp:
        return _parse_same_type(cls, parser, 3)

    def print(self, printer: Printer) -> None:
        _print_same_type(self, printer)

    def check_types(self) -> None:
        _require(is_float(self.result.type), f"fmadd works on floats, got {self.result.type}")


def _parse_same_type(cls, parser: Parser, count: int) -> IRDLOperation:
    """`op %a, %b, ... attr-dict : T` where every operand and the result are T."""
    operands = [parser.parse_unresolved_operand()]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        operands.append(parser.parse_unresolved_operand())
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    type_ = parser.parse_type()
    properties = {
        name: attributes.pop(name)
        for name in list(attributes)
        if name in cls.get_irdl_definition().properties
    }
    return cls.create(
        operands=[parser.resolve_operand(o, type_) for o in operands],
        result_types=[type_],
        properties=properties,
        attributes=attributes,
    )


def _print_same_type(op: IRDLOperation, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_op_attributes({**op.properties, **op.attributes})
    printer.print_string(" : ")
    printer.print_attribute(op.results[0].type)


class VectorPairExpression(ExpressionOp):
    """An x86-style lane shuffle of two vectors of the same type."""

    a = operand_def(VectorType)
    b = operand_def(VectorType)
    result = result_def(VectorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        return _parse_same_type(cls, parser, 2)

    def print(self, printer: Printer) -> None:
        _print_same_type(self, printer)

    def check_types(self) -> None:
        _require(
            self.a.type == self.b.type == self.result.type,
            "both vectors and the result must have the same type",
        )


@irdl_op_definition
class UnpackLowOp(VectorPairExpression):
    """Intrinsic: interleave the low halves of each 128-bit lane of a and b."""

    name = "tir.unpack_low"
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class UnpackHighOp(VectorPairExpression):
    """Intrinsic: interleave the high halves of each 128-bit lane of a and b."""

    name = "tir.unpack_high"
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class ShuffleOp(VectorPairExpression):
    """Intrinsic: x86 shuffle of a and b selected by the `imm` control byte."""

    name = "tir.shuffle"
    imm = prop_def(IntegerAttr[I64])
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class PermuteOp(VectorPairExpression):
    """Intrinsic: x86 permute of 128-bit lanes of a and b by `imm`."""

    name = "tir.permute"
    imm = prop_def(IntegerAttr[I64])


@irdl_op_definition
class Permutex2varOp(ExpressionOp):
    """Intrinsic: lanes of a and b picked by the integer vector idx."""

    name = "tir.permutex2var"
    a = operand_def(VectorType)
    idx = operand_def(VectorType)
    b = operand_def(VectorType)
    result = result_def(VectorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> Permutex2varOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_punctuation(",")
        idx_type = parser.parse_type()
        types = [value_type, idx_type, value_type]
        operands = [parser.resolve_operand(n, t) for n, t in zip(names, types, strict=True)]
        return cls.create(operands=operands, result_types=[value_type], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.a.type}, {self.idx.type}")

    def check_types(self) -> None:
        _require(
            self.a.type == self.b.type == self.result.type,
            "a, b and the result must have the same type",
        )
        _require(
            is_integer(self.idx.type) and lanes_of(self.idx.type) == lanes_of(self.a.type),
            f"idx must be an integer vector with {lanes_of(self.a.type)} lanes, got {self.idx.type}",
        )


@irdl_op_definition
class ReadOp(ExpressionOp):
    """The current value of a var.

    Example:

        %x = tir.read %acc : !tir.var<f32>
    """

    name = "tir.read"
    var = operand_def(VarType)
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        var = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        var_type = _parse_var_type(parser)
        return cls.create(
            operands=[parser.resolve_operand(var, var_type)],
            result_types=[var_type.element_type],
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.var)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.var.type)

    def check_types(self) -> None:
        _require(
            self.result.type == self.var.type.element_type,
            f"reading a {self.var.type} gives {self.var.type.element_type}",
        )


@irdl_op_definition
class LoadOp(ExpressionOp):
    """A[i, j], or the vector A[i, j lanes N] of N lanes along the last dim.

    Example:

        %i = tir.const 0 : index
        %x = tir.load %A[%i, %i lanes 8] : !tir.tensor<4x8xf32>
    """

    name = "tir.load"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    result = result_def()
    lanes = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        return cls.create(
            operands=[tensor, *indices],
            result_types=[_access_type(tensor_type, access[2])],
            properties={"lanes": IntegerAttr(access[2], 64)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.tensor, self.indices, self.lanes.value.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def check_types(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, self.lanes.value.data)
        expected = _access_type(tensor_type, self.lanes.value.data)
        _require(
            self.result.type == expected, f"result type {self.result.type} should be {expected}"
        )


def _is_byte_arena(type_: TirTensorType) -> bool:
    element = type_.element_type
    return (
        isinstance(element, IntegerType) and element.width.data == 8 and len(type_.get_shape()) == 1
    )


def _tensor_bytes(type_: TirTensorType) -> int:
    element = (
        8 if isinstance(type_.element_type, PtrType) else max(1, bit_width(type_.element_type) // 8)
    )
    return type_.element_count() * element


@irdl_op_definition
class TensorPtrOp(ExpressionOp):
    """`&A[i, j]`: a view starting at that element, indexed with the result's
    own dense row-major shape (it must fit in A). A 1-D i8 tensor is a byte
    arena: its views may have any element type, `i` being a byte offset."""

    name = "tir.tensor_ptr"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    result = result_def(TirTensorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> TensorPtrOp:
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        parser.parse_punctuation("->")
        view_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        return cls.create(
            operands=[tensor, *indices], result_types=[view_type], attributes=attributes
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.tensor, self.indices, 1)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.tensor.type} -> {self.result.type}")

    def check_types(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, 1)
        view = self.result.type
        if _is_byte_arena(tensor_type):  # a byte arena holds views of any type
            _require(
                _tensor_bytes(view) <= tensor_type.element_count(),
                f"a view of {_tensor_bytes(view)} bytes does not fit in {tensor_type}",
            )
            return
        _require(
            view.element_type == tensor_type.element_type,
            "the view must have the tensor's element type (or view an i8 arena)",
        )
        _require(
            view.element_count() <= tensor_type.element_count(),
            f"a view of {view.element_count()} elements does not fit in {tensor_type}",
        )


@irdl_op_definition
class AddrOfOp(ExpressionOp):
    """The address of a tensor (or view) as an untyped pointer."""

    name = "tir.addr_of"
    tensor = operand_def(TirTensorType)
    result = result_def(PtrType)
    traits = traits_def(Pure())
    assembly_format = "$tensor attr-dict `:` type($tensor)"


def _lookup_function(op: Operation, name: SymbolRefAttr) -> FuncOp:
    target = SymbolTable.lookup_symbol(op, name)
    _require(isinstance(target, FuncOp), f"{name} does not name a tir.func")
    return target


def _check_call(
    op: Operation, prototype: FuncOp, args: Sequence[SSAValue], result: SSAValue
) -> None:
    expected = prototype.function_type.inputs.data
    variadic = prototype.variadic is not None
    _require(
        len(args) == len(expected) or (variadic and len(args) > len(expected)),
        f"passes {len(args)} arguments to @{prototype.sym_name.data}, which takes "
        f"{len(expected)}{' or more' if variadic else ''}",
    )
    for index, (arg, type_) in enumerate(zip(args, expected, strict=False)):  # variadic tail
        _require(
            arg.type == type_,
            f"argument #{index} has type {arg.type}, but @{prototype.sym_name.data} takes {type_}",
        )
    _require(
        result.type == prototype.return_type,
        f"result type {result.type} should be {prototype.return_type}, the return type of @{prototype.sym_name.data}",
    )
    _require(
        bool(result.uses),
        "a call is an expression: consume its result, or wrap a call made for its effect in tir.evaluate",
    )


@irdl_op_definition
class FuncAddrOp(ExpressionOp):
    """The address of a function, for indirect calls and the parallel call."""

    name = "tir.func_addr"
    callee = prop_def(SymbolRefAttr)
    result = result_def(PtrType)
    traits = traits_def(Pure())
    assembly_format = "$callee attr-dict `:` type($result)"

    def check_types(self) -> None:
        _lookup_function(self, self.callee)


@irdl_op_definition
class CallOp(ExpressionOp):
    """A direct call; the value is the callee's result (`none` if void)."""

    name = "tir.call"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def check_types(self) -> None:
        _check_call(self, _lookup_function(self, self.callee), self.args, self.result)


@irdl_op_definition
class CallIndirectOp(ExpressionOp):
    """A call through a pointer whose prototype is the function `prototype`."""

    name = "tir.call_indirect"
    target = operand_def(PtrType)
    args = var_operand_def()
    prototype = prop_def(SymbolRefAttr)
    result = result_def()
    assembly_format = "$target `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def check_types(self) -> None:
        _check_call(self, _lookup_function(self, self.prototype), self.args, self.result)


# --- batch-reduce GEMM ------------------------------------------------------------------------


class BrgemmBase(StatementOp):
    """C[M, N] (+)= sum over b < batch of A_b[M, K] x B_b[N, K]... with leading
    dimensions lda/ldb/ldc (row-major: A_b[m, k] at m * lda + k)."""

    c = operand_def(TirTensorType)
    batch = operand_def()
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    lda = prop_def(IntegerAttr[I64])
    ldb = prop_def(IntegerAttr[I64])
    ldc = prop_def(IntegerAttr[I64])
    accumulate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    def sizes(self) -> dict[str, int]:
        return {
            name: getattr(self, name).value.data for name in ("m", "n", "k", "lda", "ldb", "ldc")
        }

    def check_common(self) -> dict[str, int]:
        sizes = self.sizes()
        for name in ("m", "n", "k"):
            _require(sizes[name] > 0, f"{name} = {sizes[name]} must be positive")
        _require(
            sizes["lda"] >= sizes["k"], f"lda = {sizes['lda']} is smaller than k = {sizes['k']}"
        )
        _require(
            sizes["ldb"] >= sizes["n"], f"ldb = {sizes['ldb']} is smaller than n = {sizes['n']}"
        )
        _require(
            sizes["ldc"] >= sizes["n"], f"ldc = {sizes['ldc']} is smaller than n = {sizes['n']}"
        )
        _require(
            is_integer(self.batch.type) and lanes_of(self.batch.type) == 1,
            f"the batch count has type {self.batch.type}, expected an integer",
        )
        c_type = self.c.type
        footprint = (sizes["m"] - 1) * sizes["ldc"] + sizes["n"]
        _require(
            footprint <= c_type.element_count(),
            f"C needs {footprint} elements (m, n, ldc) but {c_type} has {c_type.element_count()}",
        )
        return sizes

    def check_inputs(self, a_element: Attribute, b_element: Attribute) -> None:
        _require(
            a_element == b_element, f"A and B element types differ: {a_element} vs {b_element}"
        )
        expected_c = i32 if isinstance(a_element, IntegerType) else Float32Type()
        _require(
            self.c.type.element_type == expected_c,
            f"C must have element type {expected_c} for {a_element} inputs, got {self.c.type.element_type}",
        )


@irdl_op_definition
class BrgemmOp(BrgemmBase):
    """Intrinsic brgemm: A_b = A + b * stride_a, B_b = B + b * stride_b."""

    name = "tir.brgemm"
    a = operand_def(TirTensorType)
    b = operand_def(TirTensorType)
    stride_a = prop_def(IntegerAttr[I64])
    stride_b = prop_def(IntegerAttr[I64])
    assembly_format = "$a `,` $b `,` $c `,` $batch attr-dict `:` type($a) `,` type($b) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        sizes = self.check_common()
        self.check_inputs(self.a.type.element_type, self.b.type.element_type)
        batch = _constant_int(self.batch)
        _require(batch is None or batch > 0, f"the batch count {batch} must be positive")
        last = (batch or 1) - 1
        for name, rows, cols, lead, stride in (
            ("A", sizes["m"], sizes["k"], sizes["lda"], "stride_a"),
            ("B", sizes["k"], sizes["n"], sizes["ldb"], "stride_b"),
        ):
            tensor_type = (self.a if name == "A" else self.b).type
            footprint = last * getattr(self, stride).value.data + (rows - 1) * lead + cols
            _require(
                footprint <= tensor_type.element_count(),
                f"{name} needs {footprint} elements (batch, {stride}, shape, leading dim) but {tensor_type} has {tensor_type.element_count()}",
            )


@irdl_op_definition
class ListBrgemmOp(BrgemmBase):
    """Intrinsic list_brgemm: A_b and B_b are the pointers a_list[b], b_list[b]."""

    name = "tir.list_brgemm"
    a_list = operand_def(TirTensorType)
    b_list = operand_def(TirTensorType)
    a_type = prop_def(AnyAttr())
    b_type = prop_def(AnyAttr())
    assembly_format = "$a_list `,` $b_list `,` $c `,` $batch attr-dict `:` type($a_list) `,` type($b_list) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        self.check_common()
        for name in ("a_list", "b_list"):
            _require(
                isinstance(getattr(self, name).type.element_type, PtrType),
                f"{name} must be a tensor of !tir.ptr, got {getattr(self, name).type}",
            )
        self.check_inputs(self.a_type, self.b_type)
        batch = _constant_int(self.batch)
        if batch is not None:
            for name in ("a_list", "b_list"):
                count = getattr(self, name).type.element_count()
                _require(
                    batch <= count,
                    f"{name} holds {count} pointers, fewer than the batch count {batch}",
                )


MAX_TILE_ACCUMULATORS = 256
"""A generated microkernel unrolls its tile: beyond this it is not a register tile."""


@irdl_op_definition
class BrgemmTileOp(StatementOp):
    """Intrinsic brgemm_tile: one register tile of a batch-reduce GEMM (f32),
    C[m, n] (+)= sum over (a_off, b_off) in `offsets` (default one pair
    (0, 0)) of A_b x B_b with A_b[i, l] = a[a_off + i * a_row + l * a_k],
    B_b[l, j] = b[b_off + l * ldb + j], C[i, j] = c[i * ldc + j]. Lowered to a
    microkernel generated for the target (runtime/microkernels.py): m x
    ceil(n / lanes) vector accumulators, broadcast-A/FMA, lanes past n masked."""

    name = "tir.brgemm_tile"
    a = operand_def(TirTensorType)
    b = operand_def(TirTensorType)
    c = operand_def(TirTensorType)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    lanes = prop_def(IntegerAttr[I64])
    a_row = prop_def(IntegerAttr[I64])
    a_k = prop_def(IntegerAttr[I64])
    ldb = prop_def(IntegerAttr[I64])
    ldc = prop_def(IntegerAttr[I64])
    offsets = opt_prop_def(DenseArrayBase)
    accumulate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    accumulate_if = opt_operand_def(i1)
    """A run-time accumulate flag (e.g. `K block != 0`), in place of `accumulate`."""
    assembly_format = (
        "$a `,` $b `,` $c (`accumulate_if` $accumulate_if^)? attr-dict `:` "
        "type($a) `,` type($b) `,` type($c)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def size(self, name: str) -> int:
        return getattr(self, name).value.data

    def offset_pairs(self) -> tuple[tuple[int, int], ...]:
        if self.offsets is None:
            return ((0, 0),)
        flat = [int(x) for x in self.offsets.get_values()]
        return tuple(zip(flat[0::2], flat[1::2], strict=True))

    def verify_(self) -> None:
        m, n, k, lanes = (self.size(x) for x in ("m", "n", "k", "lanes"))
        a_row, a_k, ldb, ldc = (self.size(x) for x in ("a_row", "a_k", "ldb", "ldc"))
        for name, value in (("m", m), ("n", n), ("k", k), ("lanes", lanes)):
            _require(value > 0, f"{name} = {value} must be positive")
        _require(lanes <= MAX_LANES, f"lanes = {lanes} is more than {MAX_LANES}")
        tile = m * -(-n // lanes)
        _require(
            tile <= MAX_TILE_ACCUMULATORS,
            f"a {m} x {n} tile needs {tile} vector accumulators, more than {MAX_TILE_ACCUMULATORS}",
        )
        _require(ldb >= n and ldc >= n, f"ldb = {ldb} and ldc = {ldc} must be at least n = {n}")
        _require(
            self.accumulate_if is None or not self.accumulate.value.data,
            "accumulate and accumulate_if are exclusive",
        )
        if self.offsets is not None:
            count = len(self.offsets.get_values())
            _require(count > 0 and count % 2 == 0, "offsets must hold (A, B) offset pairs")
        pairs = self.offset_pairs()
        _require(all(a >= 0 and b >= 0 for a, b in pairs), "offsets must not be negative")
        for operand in (self.a, self.b, self.c):
            _require(
                isinstance(operand.type.element_type, Float32Type),
                f"brgemm_tile computes in f32, got {operand.type}",
            )
        for name, footprint, tensor in (
            ("A", max(a for a, _ in pairs) + (m - 1) * a_row + (k - 1) * a_k + 1, self.a),
            ("B", max(b for _, b in pairs) + (k - 1) * ldb + n, self.b),
            ("C", (m - 1) * ldc + n, self.c),
        ):
            count = tensor.type.element_count()
            _require(footprint <= count, f"{name} needs {footprint} elements but {tensor.type} has {count}")


TIR_OPS = [
    FuncOp, GlobalOp, GlobalRefOp, StmtsOp, DefineVarOp, DefineTensorOp, AssignOp,
    StoreOp, EvaluateOp, IfOp, ForOp, ReturnOp, ConstOp,
    AddOp, SubOp, MulOp, DivOp, ModOp, MinOp, MaxOp, IntAndOp, IntOrOp, IntXorOp, ShlOp, ShrOp,
    GtOp, LtOp, GeOp, LeOp, EqOp, NeOp, AndOp, OrOp, NotOp,
    AbsOp, RoundOp, FloorOp, CeilOp, ExpOp, SqrtOp, RsqrtOp, LogOp, TanhOp, PowOp,
    CastOp, ReinterpretOp, BroadcastOp, IsnanOp, SaturatedCastOp, RoundAndCastOp,
    ReduceAddOp, ReduceMulOp, ReduceMaxOp, ReduceMinOp, SelectOp, FmaddOp,
    UnpackLowOp, UnpackHighOp, ShuffleOp, PermuteOp, Permutex2varOp,
    ReadOp, LoadOp, TensorPtrOp, AddrOfOp, FuncAddrOp, CallOp, CallIndirectOp,
    BrgemmOp, ListBrgemmOp, BrgemmTileOp,
]  # fmt: skip

Tir = Dialect("tir", TIR_OPS, [PtrType, TirTensorType, VarType])
