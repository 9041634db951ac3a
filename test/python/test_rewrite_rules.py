"""graph-rewrite-rules is extensible from Python: a registered Rule runs in
the pass, names are unique, and `rules=` selects among them."""

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.passes.graph.rewrite_rules import RULES, Rule, _forward_input, register_rule

GRAPH = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %n = graph.neg %x : tensor<4x8xf32>
  %nn = graph.neg %n : tensor<4x8xf32>
  %r = graph.relu %nn : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""


@pytest.fixture
def double_negation_rule():
    rule = Rule("double-negation", ("neg", "neg"), _forward_input, "neg(neg(x)) -> x")
    register_rule(rule)
    yield rule
    del RULES[rule.name]


def test_registered_rule_rewrites_its_chain(double_negation_rule):
    module = graphcompiler.parse(GRAPH)
    graphcompiler.apply_pipeline(
        module, "builtin.module(graph-rewrite-rules{rules=double-negation})"
    )
    text = str(module)
    assert "graph.neg" not in text
    assert "graph.relu %x" in text
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_array_equal(reference.run(module, x), reference.run(GRAPH, x))


def test_rule_not_selected_is_not_applied(double_negation_rule):
    module = graphcompiler.parse(GRAPH)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-rewrite-rules{rules=log-of-exp})")
    assert str(module).count("graph.neg") == 2


def test_rule_names_are_unique(double_negation_rule):
    with pytest.raises(ValueError, match="already registered"):
        register_rule(double_negation_rule)
