"""Diagnostic rendering and the --verify-diagnostics matcher."""

import pytest

import graphcompiler
from graphcompiler.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    ExpectedDiagnostics,
    Severity,
    SourceFile,
    SourceLocation,
)

SOURCE = SourceFile(
    "in.mlir",
    "line one\n"
    "  bad line // expected-error {{broken}}\n"
    "// expected-note @+1 {{because}}\n"
    "noted line\n"
    "// expected-error @unknown {{nowhere}}\n"
    "// expected-warning-re @above {{w{{[0-9]+}}rn}}\n",
)


def at(line: int, column: int = 1) -> SourceLocation:
    return SourceLocation("in.mlir", line, column)


def test_render_shows_line_and_caret():
    text = Diagnostic(Severity.ERROR, "broken", at(2, 3)).render([SOURCE])
    assert text == "in.mlir:2:3: error: broken\n  bad line // expected-error {{broken}}\n  ^\n"


def test_multiline_messages_become_one_line():
    assert Diagnostic(Severity.ERROR, "a:\n   b\n").message == "a: b"


def test_all_expectations_met():
    emitted = [
        Diagnostic(
            Severity.ERROR,
            "it is broken here",
            at(2, 3),
            [
                Diagnostic(Severity.NOTE, "because of this", at(4)),
            ],
        ),
        Diagnostic(Severity.ERROR, "nowhere to be found", None),
        Diagnostic(Severity.WARNING, "w42rn", at(4)),
    ]
    assert ExpectedDiagnostics.from_source(SOURCE).check(emitted) == []


def test_mismatches_are_reported():
    emitted = [
        Diagnostic(Severity.WARNING, "broken", at(2)),  # wrong severity
        Diagnostic(Severity.ERROR, "nowhere", at(1)),  # known location, not unknown
    ]
    problems = ExpectedDiagnostics.from_source(SOURCE).check(emitted)
    messages = [p.message for p in problems]
    assert messages[:2] == ["unexpected warning: broken", "unexpected error: nowhere"]
    assert 'expected error "broken" was not produced' in messages
    assert 'expected note "because" was not produced' in messages
    # The missing expectation points at its own comment.
    assert problems[2].location == at(2, 15)


def test_an_expectation_is_consumed_once():
    source = SourceFile("in.mlir", "x // expected-error {{dup}}\n")
    twice = [Diagnostic(Severity.ERROR, "dup", at(1))] * 2
    problems = ExpectedDiagnostics.from_source(source).check(twice)
    assert [p.message for p in problems] == ["unexpected error: dup"]


def test_parse_error_is_a_located_diagnostic():
    with pytest.raises(DiagnosticError) as caught:
        graphcompiler.parse("func.func @f() {\n  func.return %x : i32\n}\n", filename="t.mlir")
    assert caught.value.diagnostic.message == "use of undeclared SSA value name %x"
    assert str(caught.value.diagnostic.location) == "t.mlir:2:15"


def test_verifier_error_names_the_op():
    text = (
        'func.func @f(%a: i32) {\n  %0 = "arith.addi"(%a, %a) : (i32, i32) -> i64\n'
        "  func.return\n}\n"
    )
    with pytest.raises(DiagnosticError) as caught:
        graphcompiler.parse(text, filename="t.mlir")
    diagnostic = caught.value.diagnostic
    assert diagnostic.message.startswith("'arith.addi' op ")
    assert str(diagnostic.location) == "t.mlir:2:8"
