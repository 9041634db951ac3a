"""A picture of the IR: each function's ops as a Graphviz DOT graph, like
MLIR's `-view-op-graph` (`gc-opt --view-op-graph`, `compiled.graph_dot()`,
`gc-run --graph-svg`).

Nodes are ops labelled with their name, properties (large constants elided)
and result types; block arguments (graph inputs) are nodes of their own;
an edge runs from a value's definition to each use, labelled with the
value's type. Ops with regions (`func.func`, `graph.fused`) are clusters
holding their body.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from graphcompiler.ir.pass_manager import ElidingPrinter
from graphcompiler.ir.pipeline import pass_option

MAX_LABEL_LENGTH = 60
"""Longer property values are cut (MLIR's `max-label-len`)."""

ELIDE_ELEMENTS_ABOVE = 16
"""Constants with more elements show as `dense_resource<__elided__>`."""


def _text(attribute: Attribute) -> str:
    stream = StringIO()
    ElidingPrinter(stream=stream, elide_elements_above=ELIDE_ELEMENTS_ABOVE).print_attribute(
        attribute
    )
    text = stream.getvalue()
    return text if len(text) <= MAX_LABEL_LENGTH else text[: MAX_LABEL_LENGTH - 3] + "..."


def _quote(text: str) -> str:
    """A DOT string literal; lines are left-aligned (`\\l`)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "\\l".join(escaped.split("\n")) + '\\l"'


def _symbol(op: Operation) -> str:
    symbol = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return f" @{symbol.data}" if symbol is not None and hasattr(symbol, "data") else ""


def _non_default_properties(op: Operation) -> dict[str, Attribute]:
    """The properties a reader needs: those not at their declared default."""
    definitions = op.get_irdl_definition().properties if isinstance(op, IRDLOperation) else {}
    return {
        name: value
        for name, value in op.properties.items()
        if name not in definitions or definitions[name].default_value != value
    }


def _op_label(op: Operation) -> str:
    lines = [op.name]
    lines += [f"{name} = {_text(value)}" for name, value in _non_default_properties(op).items()]
    if op.results:
        lines.append("-> " + ", ".join(_text(result.type) for result in op.results))
    return "\n".join(lines)


class _DotWriter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.node_of: dict[SSAValue, str] = {}
        self.edges: list[str] = []
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def block(self, block: Block, indent: str) -> None:
        for index, argument in enumerate(block.args):
            node = self.fresh("arg")
            name = f"%{argument.name_hint}" if argument.name_hint else f"arg #{index}"
            self.lines.append(
                f"{indent}{node} [label = {_quote(name + chr(10) + _text(argument.type))}, "
                "shape = invhouse, style = filled, fillcolor = lightblue];"
            )
            self.node_of[argument] = node
        for op in block.ops:
            self.op(op, indent)

    def op(self, op: Operation, indent: str) -> None:
        inner = indent
        if op.regions:
            inner = indent + "  "
            self.lines.append(f"{indent}subgraph {self.fresh('cluster_')} {{")
            self.lines.append(f"{inner}label = {_quote(op.name + _symbol(op))};")
            for region in op.regions:
                for block in region.blocks:
                    self.block(block, inner)
        if op.operands or op.results or not op.regions:
            node = self.fresh("op")
            shape = "ellipse" if op.has_trait(IsTerminator) else "box"
            self.lines.append(f"{inner}{node} [label = {_quote(_op_label(op))}, shape = {shape}];")
            for operand in op.operands:
                source = self.node_of.get(operand)
                if source is not None:
                    self.edges.append(
                        f"  {source} -> {node} [label = {_quote(_text(operand.type))}];"
                    )
            for result in op.results:
                self.node_of[result] = node
        if op.regions:
            self.lines.append(f"{indent}}}")


def graph_dot(op: Operation) -> str:
    """Graphviz DOT of `op` (usually a module): one cluster per function."""
    writer = _DotWriter()
    for region in op.regions:
        for block in region.blocks:
            writer.block(block, "  ")
    header = ["digraph G {", "  compound = true;", '  node [fontname = "monospace"];']
    return "\n".join([*header, *writer.lines, *writer.edges, "}"]) + "\n"


def dot_executable() -> str:
    """The path of Graphviz's `dot`, or FileNotFoundError saying what to do."""
    executable = shutil.which("dot")
    if executable is None:
        raise FileNotFoundError(
            "the Graphviz 'dot' executable is not on PATH (install graphviz, e.g. "
            "'apt-get install graphviz'); gc-opt --view-op-graph prints the DOT text instead"
        )
    return executable


def dot_to_svg(dot: str, path: str) -> None:
    """Render `dot` to an SVG file with Graphviz's `dot` executable."""
    subprocess.run([dot_executable(), "-Tsvg", "-o", path], input=dot, text=True, check=True)


@dataclass(frozen=True)
class ViewOpGraphPass(ModulePass):
    """Write the module's op graph as Graphviz DOT to stderr (or `output`);
    the IR is left as it is."""

    name = "view-op-graph"
    output: str = pass_option("-", "file to write the Graphviz text to ('-': stderr)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dot = graph_dot(op)
        if self.output == "-":
            sys.stderr.write(dot)
        else:
            with open(self.output, "w", encoding="utf-8") as file:
                file.write(dot)
