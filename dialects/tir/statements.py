"""Module-level ops (`tir.func`, `tir.global`) and statements: ops with no
result, apart from the definitions that return the handle they define."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    NoneType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i1,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.tir.blob import BlobAttr
from graphcompiler.dialects.tir.types import (
    MAX_LANES,
    TirTensorType,
    VarType,
    _require,
    bit_width,
    is_integer,
    is_value_type,
    lanes_of,
)
from graphcompiler.dialects.tir.verify import _enclosing, _index_type_of, _is_inside


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
    """A module-level var or tensor, optionally with an initial value. A big
    packed tensor's value is a blob, `#tir.blob<"blob0">` (blob.py): the
    packed array itself, which the JIT binds in place.

    Example:

        tir.global @counter : i64
        tir.global @scale : f32 = 2.5 : f32
        tir.global @table : !tir.tensor<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    """

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
        if isinstance(type_, TirTensorType) and isinstance(value, BlobAttr):
            _require(
                value.array.shape == type_.get_shape()
                and value.array.itemsize * 8 == bit_width(type_.element_type),
                f"the blob of a {type_} global must hold an array of its shape and element size",
            )
        elif isinstance(type_, TirTensorType):
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
    """The handle of a global: `!tir.var<T>` for vars, the tensor for tensors.

    Example:

        builtin.module {
          tir.global @counter : i64 = 0 : i64
          tir.func @get() -> i64 {
            %v = tir.global_ref @counter : !tir.var<i64>
            %x = tir.read %v : !tir.var<i64>
            tir.return %x : i64
          }
        }
    """

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
    """A block of statements; locals defined inside are scoped to it.

    Example:

        tir.stmts {
          %tmp = tir.define_var %x : !tir.var<f32>
          %y = tir.read %tmp : !tir.var<f32>
        }
    """

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
class EvaluateOp(StatementOp):
    """Evaluates an expression for its effect (a call), discarding its value.

    Example:

        builtin.module {
          tir.func @print_float(f32)
          tir.func @show(%x: f32) {
            %0 = tir.call @print_float(%x) : (f32) -> none
            tir.evaluate %0 : none
            tir.return
          }
        }
    """

    name = "tir.evaluate"
    value = operand_def()
    assembly_format = "$value attr-dict `:` type($value)"


@irdl_op_definition
class IfOp(StatementOp):
    """if (cond) { then } else { otherwise }.

    Example:

        %v = tir.define_var : !tir.var<f32>
        tir.if %c {
          tir.assign %v = %x : !tir.var<f32>
        } else {
          tir.assign %v = %y : !tir.var<f32>
        }
    """

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
        for name, bound in (("start", self.start), ("end", self.end), ("step", self.step)):
            _require(
                bound.type == var_type,
                f"{name} has type {bound.type}, expected {var_type} like the loop variable",
            )


@irdl_op_definition
class ReturnOp(StatementOp):
    """Returns from the function, with its value if it has a return type.

    Example:

        tir.func @id(%x: f32) -> f32 {
          tir.return %x : f32
        }
    """

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
