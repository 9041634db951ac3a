"""`graph.loop`: a graph function called once per step along the first axis
of its sequences, carrying states from step to step (a recurrent layer's
time steps, ONNX's Scan).

The step function is a graph function of the same module that takes the
states, one slice of each sequence ([S, ...] gives [...]) and the
invariants, and returns the new states, then one slice of each output
sequence. The loop gives the final states, then the output sequences,
stacked along a new first axis of length S. `reverse` walks the steps
from the last (slice t of an output is still step t's). The step's ops
are compiled once however long the sequence: Tensor IR calls the step
function in a loop (lowering/graph_to_tir/loop.py).

Example (a running sum of the rows of %xs, and the sums so far):

    %total, %sums = graph.loop @step(%zero) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
    func.func private @step(%sum: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %next = graph.add %sum, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %next, %next : tensor<4xf32>, tensor<4xf32>
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, SymbolRefAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolTable
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import DefinedAttributesOnly


@irdl_op_definition
class LoopOp(DefinedAttributesOnly):
    """States and sequences in, final states and output sequences out (see
    the module doc): `inputs` are the `states` states, then the `sequences`
    sequences, then the invariants.

    Example:

        %h, %ys = graph.loop @cell(%h0) over (%xs) with (%u) reverse : (tensor<2x8xf32>, tensor<5x2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<5x2x8xf32>)
    """

    name = "graph.loop"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = prop_def(SymbolRefAttr)
    state_count = prop_def(IntegerAttr[I64], prop_name="states")
    sequence_count = prop_def(IntegerAttr[I64], prop_name="sequences")
    reverse = opt_prop_def(BoolAttr)
    traits = traits_def(Pure())

    @staticmethod
    def build(
        body: str,
        states: Sequence[SSAValue],
        sequences: Sequence[SSAValue],
        invariants: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        reverse: bool = False,
    ) -> LoopOp:
        properties: dict[str, Attribute] = {
            "body": SymbolRefAttr(body),
            "states": IntegerAttr(len(states), i64),
            "sequences": IntegerAttr(len(sequences), i64),
        }
        if reverse:
            properties["reverse"] = BoolAttr.from_bool(True)
        return LoopOp.create(
            operands=[*states, *sequences, *invariants],
            result_types=list(result_types),
            properties=properties,
        )

    @property
    def states(self) -> Sequence[SSAValue]:
        return self.inputs[: self.state_count.value.data]

    @property
    def sequences(self) -> Sequence[SSAValue]:
        first = self.state_count.value.data
        return self.inputs[first : first + self.sequence_count.value.data]

    @property
    def invariants(self) -> Sequence[SSAValue]:
        return self.inputs[self.state_count.value.data + self.sequence_count.value.data :]

    @property
    def is_reverse(self) -> bool:
        return self.reverse is not None and self.reverse.value.data

    @property
    def steps(self) -> int:
        return self.sequences[0].type.get_shape()[0]

    def step_function(self) -> func.FuncOp | None:
        """The step function, if the op is in a module that has it."""
        outermost = self
        while outermost.parent_op() is not None:
            outermost = outermost.parent_op()
        if outermost is self or not outermost.has_trait(SymbolTable):
            return None
        found = SymbolTable.lookup_symbol(self, self.body)
        return found if isinstance(found, func.FuncOp) else None

    def verify_(self) -> None:
        counts = (self.state_count.value.data, self.sequence_count.value.data)
        if min(counts) < 0 or sum(counts) > len(self.inputs):
            raise VerifyException(
                f"{counts[0]} states and {counts[1]} sequences, but {len(self.inputs)} operands"
            )
        if not self.sequences:
            raise VerifyException("needs at least one sequence (it sets the number of steps)")
        lengths = {s.type.get_shape()[0] if s.type.get_shape() else None for s in self.sequences}
        if len(lengths) != 1 or None in lengths:
            raise VerifyException(
                "the sequences must have a first axis of one length (the number of steps)"
            )
        if len(self.outputs) < len(self.states):
            raise VerifyException("gives the final states, then the output sequences")
        for state, final in zip(self.states, self.outputs, strict=False):
            if state.type != final.type:
                raise VerifyException(f"a final state has type {final.type}, not {state.type}")
        for output in self.outputs[len(self.states) :]:
            shape = output.type.get_shape()
            if not shape or shape[0] != self.steps:
                raise VerifyException(
                    f"an output sequence has type {output.type}: its first axis must be the "
                    f"{self.steps} steps"
                )
        step = self.step_function()
        if step is None:
            parent = self.parent_op()
            if parent is not None and parent.parent_op() is not None:
                raise VerifyException(f"no graph function {self.body} in the module")
            return  # not in a module yet (being built)
        self._verify_no_recursion(step)
        expected_inputs = [
            *(s.type for s in self.states),
            *(_slice_type(s.type) for s in self.sequences),
            *(i.type for i in self.invariants),
        ]
        expected_outputs = [
            *(s.type for s in self.states),
            *(_slice_type(o.type) for o in self.outputs[len(self.states) :]),
        ]
        signature = step.function_type
        if list(signature.inputs.data) != expected_inputs:
            raise VerifyException(
                f"{self.body} takes ({_types(signature.inputs.data)}), the loop passes "
                f"({_types(expected_inputs)}): the states, a slice of each sequence, the invariants"
            )
        if list(signature.outputs.data) != expected_outputs:
            raise VerifyException(
                f"{self.body} returns ({_types(signature.outputs.data)}), the loop needs "
                f"({_types(expected_outputs)}): the new states, a slice of each output sequence"
            )

    def _verify_no_recursion(self, step: func.FuncOp) -> None:
        """The step function, and those its loops call, must not loop back
        into the function holding this op (its code would call itself)."""
        enclosing = self.parent_op()
        pending, seen = [step], set()
        while pending:
            function = pending.pop()
            if function is enclosing:
                raise VerifyException(
                    f"{self.body} loops back into @{enclosing.sym_name.data}: recursion is not "
                    "supported"
                )
            if function in seen:
                continue
            seen.add(function)
            for inner in function.walk():
                if isinstance(inner, LoopOp) and (callee := inner.step_function()) is not None:
                    pending.append(callee)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        body = parser.parse_symbol_name()

        def group() -> list[UnresolvedOperand]:
            return parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )

        groups = [group()]
        parser.parse_keyword("over")
        groups.append(group())
        groups.append(group() if parser.parse_optional_keyword("with") is not None else [])
        reverse = parser.parse_optional_keyword("reverse") is not None
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        where = parser.pos
        function_type = parser.parse_function_type()
        types = list(function_type.inputs.data)
        if len(types) != sum(map(len, groups)):
            parser.raise_error(
                f"{sum(map(len, groups))} operands but {len(types)} operand types", where
            )
        resolved = []
        for operands in groups:
            resolved.append(
                [parser.resolve_operand(o, types.pop(0)) for o in operands]  # in order
            )
        op = cls.build(body.data, *resolved, function_type.outputs.data, reverse=reverse)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.body)
        for keyword, values in (("", self.states), (" over ", self.sequences)):
            printer.print_string(f"{keyword}(")
            printer.print_list(values, printer.print_operand)
            printer.print_string(")")
        if self.invariants:
            printer.print_string(" with (")
            printer.print_list(self.invariants, printer.print_operand)
            printer.print_string(")")
        if self.is_reverse:
            printer.print_string(" reverse")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list([o.type for o in self.operands], printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(")")


def _slice_type(type_: TensorType) -> TensorType:
    """One step's slice of a sequence type."""
    return TensorType(type_.element_type, type_.get_shape()[1:])


def _types(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)
