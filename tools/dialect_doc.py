"""A dialect's op reference in Markdown, generated from its definitions, as
mlir-tblgen's `-gen-dialect-doc` does for MLIR dialects.

`gc-opt --show-dialect-doc=graph` prints it; `docs/dialects/*.md` are its
output (test/python/test_surface_docs.py fails when they are stale). The
op's docstring is the single source of its prose: the first paragraph is
the summary, the rest the semantics, and an `Example:` section (indented
MLIR) the example. Ops defined as a family (`graph.relu`, `graph.add`, ...)
share their base class's description and example, in which `{op}` stands
for the op's name. Operands, results, properties (type and default),
regions, traits and syntax come from the IRDL definition.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    ArrayOfConstraint,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Dialect, Operation, TypeAttribute
from xdsl.irdl import (
    AllOf,
    AnyAttr,
    AnyOf,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OptOperandDef,
    OptPropertyDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
    VarConstraint,
    VarOperandDef,
    VarResultDef,
)

from graphcompiler.ir.diagnostics import did_you_mean
from graphcompiler.ir.registry import Registry

REGENERATE = "python -m graphcompiler.tools.dialect_doc"
"""Rewrites docs/dialects/*.md; the staleness test prints this command."""

DOCUMENTED_DIALECTS = ("graph", "tir")

NUMERICS = {"graph": "graphcompiler.interpreters.reference"}
"""Modules whose docstring states a dialect's numerics (NaN, inf, rounding):
the reference interpreter's for graph."""

_FRIENDLY_NAMES: dict[type, str] = {
    TensorType: "tensor",
    VectorType: "vector",
    FloatAttr: "float (`0.5 : f32`)",
    StringAttr: 'string (`"text"`)',
    DenseArrayBase: "`array<i64: ...>`",
    DenseIntOrFPElementsAttr: "elements (`dense<...> : tensor<...>`)",
    SymbolRefAttr: "symbol (`@name`)",
    FunctionType: "function type",
    UnitAttr: "unit (present or absent)",
}


def describe_constraint(constraint: object) -> str:
    """Words for an IRDL constraint, as a reader of the IR writes types."""
    match constraint:
        case RangeLengthConstraint():
            return describe_constraint(constraint.constraint)
        case RangeOf():
            return describe_constraint(constraint.constr)
        case ArrayOfConstraint():
            element = describe_constraint(constraint.elem_range_constraint)
            return f"list of {element.split(' (')[0]} (`[...]`)"
        case VarConstraint():
            return f"{describe_constraint(constraint.constraint)} `{constraint.name}` (all `{constraint.name}` are one type)"
        case AnyAttr():
            return "any type (checked by the verifier)"
        case SymbolNameConstraint():
            return "symbol name (`@name`)"
        case EqAttrConstraint():
            return f"`{constraint.attr}`"
        case AnyOf():
            return " or ".join(describe_constraint(c) for c in constraint.attr_constrs)
        case AllOf():
            return " and ".join(describe_constraint(c) for c in constraint.attr_constrs)
        case ParamAttrConstraint() if constraint.base_attr is IntegerAttr:
            width = str(constraint.param_constrs[1])
            if "IntegerType(1)" in width:
                return "bool (`true` / `false`)"
            return "integer (`1 : i64`)"
        case ParamAttrConstraint():  # e.g. !tir.var<T>: parameters by their variable's name
            params = ", ".join(
                p.name if isinstance(p, VarConstraint) else describe_constraint(p).strip("`")
                for p in constraint.param_constrs
            )
            sigil = "!" if issubclass(constraint.base_attr, TypeAttribute) else "#"
            return f"`{sigil}{constraint.base_attr.name}<{params}>`"
        case BaseAttr():
            cls = constraint.attr
            if cls in _FRIENDLY_NAMES:
                return _FRIENDLY_NAMES[cls]
            sigil = "!" if issubclass(cls, TypeAttribute) else "#"
            return f"`{sigil}{cls.name}`"
    return type(constraint).__name__


@dataclass
class OpDoc:
    """The prose of one op: summary, semantics and example."""

    summary: str
    description: str
    example: str

    @staticmethod
    def of(op: type[Operation], shared_bases: set[type]) -> OpDoc:
        """`shared_bases` (most of the dialect's ops derive from them) say
        how ops are implemented, not what they compute: their prose is left
        out. A family base's (`UnaryOp`) summary joins the description."""
        summary, description, example = _split(_docstring(op))
        family = [
            base
            for base in op.__mro__[1:]
            if base not in shared_bases and issubclass(base, Operation) and _docstring(base)
        ]
        for base in family:
            base_summary, _, base_example = _split(_docstring(base))
            if summary:
                description = f"{description}\n\n{base_summary}".strip()
            else:
                summary = base_summary
            example = example or base_example
        return OpDoc(summary or "(undocumented)", description, example.replace("{op}", op.name))


def shared_bases(operations: list[type[Operation]]) -> set[type]:
    """Base classes of more than half of `operations`."""
    counts: dict[type, int] = {}
    for op in operations:
        for base in op.__mro__[1:]:
            counts[base] = counts.get(base, 0) + 1
    return {base for base, count in counts.items() if 2 * count > len(operations)}


def _docstring(cls: type) -> str:
    return inspect.cleandoc(cls.__dict__.get("__doc__") or "")


def _split(doc: str) -> tuple[str, str, str]:
    """(summary paragraph, the other paragraphs, the `Example:` block)."""
    text, _, example = doc.partition("\nExample:")
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]
    summary = paragraphs[0] if paragraphs else ""
    return summary, "\n\n".join(paragraphs[1:]), inspect.cleandoc(example)


def _values_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    if not rows:
        return []
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _arity(definition: object) -> str:
    if isinstance(definition, VarOperandDef | VarResultDef):
        return "variadic"
    if isinstance(definition, OptOperandDef):
        return "optional"
    return "one"


def _default(prop: object) -> str:
    if prop.default_value is not None:
        return f"`{prop.default_value}`"
    return "optional" if isinstance(prop, OptPropertyDef) else "required"


def op_markdown(op: type[IRDLOperation], shared: set[type]) -> str:
    """The reference section of one op."""
    definition = op.get_irdl_definition()
    doc = OpDoc.of(op, shared)
    lines = [f"### `{op.name}`", "", doc.summary, ""]
    if doc.description:
        lines += [doc.description, ""]
    lines += _values_table(
        [(f"`{n}`", _arity(d), describe_constraint(d.constr)) for n, d in definition.operands],
        ("operand", "count", "type"),
    )
    lines += _values_table(
        [(f"`{n}`", _arity(d), describe_constraint(d.constr)) for n, d in definition.results],
        ("result", "count", "type"),
    )
    lines += _values_table(
        [
            (f"`{name}`", describe_constraint(prop.constr), _default(prop))
            for name, prop in definition.properties.items()
        ],
        ("property", "type", "default"),
    )
    if definition.regions:
        lines += ["Regions: " + ", ".join(f"`{name}`" for name, _ in definition.regions), ""]
    traits = sorted(type(trait).__name__ for trait in definition.traits)
    if traits:
        lines += ["Traits: " + ", ".join(traits), ""]
    if definition.assembly_format:
        lines += [f"Syntax: `` {op.name} {definition.assembly_format} ``", ""]
    if doc.example:
        lines += ["Example:", "", "```mlir", doc.example, "```", ""]
    return "\n".join(lines)


def _home(module: str, name: str) -> str:
    """The module whose docstring introduces the dialect: the package named
    after it when the dialect is split into one (`dialects/tir/`), else the
    module defining its first op."""
    parts = module.split(".")
    return ".".join(parts[: parts.index(name) + 1]) if name in parts else module


def dialect_markdown(dialect: Dialect) -> str:
    """The whole reference: the dialect's module docstring, an index, then
    every op in definition order."""
    operations = list(dialect.operations)
    home = _home(operations[0].__module__, dialect.name) if operations else None
    intro = inspect.cleandoc(sys.modules[home].__doc__ or "") if home else ""
    if dialect.name in NUMERICS:
        numerics = importlib.import_module(NUMERICS[dialect.name])
        intro += "\n\n## Numerics\n\n" + inspect.cleandoc(numerics.__doc__ or "")
    lines = [
        f"# The `{dialect.name}` dialect",
        "",
        f"<!-- Generated by `gc-opt --show-dialect-doc={dialect.name}` from the op "
        f"definitions; do not edit. Regenerate with `{REGENERATE}`. -->",
        "",
        intro,
        "",
        "## Operations",
        "",
        " ".join(f"[`{op.name}`](#{op.name.replace('.', '')})" for op in operations),
        "",
    ]
    shared = shared_bases(operations)
    return "\n".join(lines) + "\n" + "\n".join(op_markdown(op, shared) for op in operations)


def dialect_doc(registry: Registry, name: str) -> str:
    """`--show-dialect-doc=NAME`: the Markdown reference of a registered dialect."""
    from graphcompiler.tools.driver import ToolError

    if name not in registry.dialects:
        raise ToolError(f"no dialect named '{name}'{did_you_mean(name, registry.dialects)}")
    return dialect_markdown(registry.dialects[name]())


def main() -> None:
    """Regenerate docs/dialects/<name>.md for the documented dialects."""
    from pathlib import Path

    from graphcompiler.driver.registration import default_registry

    registry = default_registry(load_plugins=False)
    folder = Path(__file__).resolve().parent.parent / "docs" / "dialects"
    folder.mkdir(parents=True, exist_ok=True)
    for name in DOCUMENTED_DIALECTS:
        (folder / f"{name}.md").write_text(dialect_doc(registry, name), encoding="utf-8")
        print(f"wrote {folder / name}.md")


if __name__ == "__main__":
    main()
