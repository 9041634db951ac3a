"""The generated op reference (docs/dialects/*.md) is current, and every
example in it parses and verifies: the docstrings are the single source."""

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind

from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.verifier import verify_module
from graphcompiler.tools.dialect_doc import (
    DOCUMENTED_DIALECTS,
    REGENERATE,
    OpDoc,
    dialect_doc,
    shared_bases,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dialects"
REGISTRY = default_registry(load_plugins=False)


@pytest.mark.parametrize("name", DOCUMENTED_DIALECTS)
def test_generated_reference_is_current(name):
    stored = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    assert stored == dialect_doc(REGISTRY, name), (
        f"docs/dialects/{name}.md is stale: run `{REGENERATE}` and commit the result"
    )


@pytest.mark.parametrize("name", DOCUMENTED_DIALECTS)
def test_every_type_is_written_as_the_ir_writes_it(name):
    """No operand, result or property falls back to an IRDL class name
    (ParamAttrConstraint, ...): the reader sees `!tir.var<T>`."""
    text = dialect_doc(REGISTRY, name)
    assert "Constraint" not in text.replace("VarConstraint", "")


def _parse_example(text: str) -> list:
    """Parse the example's ops one by one; values it uses without defining
    them are forward references typed by the op's syntax, so each op can
    be verified on its own."""
    ctx = REGISTRY.create_context()
    parser = Parser(ctx, text)
    ops = []
    while parser._current_token.kind != MLIRTokenKind.EOF:
        ops.append(parser.parse_operation())
    return ops


def _examples(name: str):
    operations = list(REGISTRY.dialects[name]().operations)
    shared = shared_bases(operations)
    return [(op.name, OpDoc.of(op, shared)) for op in operations]


@pytest.mark.parametrize("name", DOCUMENTED_DIALECTS)
def test_examples_parse_and_verify(name):
    checked = 0
    for op_name, doc in _examples(name):
        if not doc.example:
            continue
        ops = _parse_example(doc.example)
        assert op_name in {o.name for top in ops for o in top.walk()}, (op_name, doc.example)
        for op in ops:
            verify_module(op)
        checked += 1
    assert checked > 0


def test_every_graph_op_is_documented_with_an_example():
    missing = [
        op for op, doc in _examples("graph") if not doc.example or doc.summary == "(undocumented)"
    ]
    assert not missing, f"graph ops without a docstring example: {missing}"
