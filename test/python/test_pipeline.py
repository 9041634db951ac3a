"""Textual pipelines: parsing, option typing, printing, and nested execution."""

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import graphcompiler
from graphcompiler.ir.pipeline import (
    NestedElement,
    PassElement,
    PipelineError,
    build_pass_manager,
    parse_pipeline_text,
)


@dataclass(frozen=True)
class TypedOptionsPass(ModulePass):
    """Has one option of each supported kind."""

    name = "typed-options"
    count: int = 1
    scale: float = 1.0
    enabled: bool = False
    label: str = "none"
    sizes: tuple[int, ...] = ()
    limit: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@dataclass(frozen=True)
class RecordTopLevelOpsPass(ModulePass):
    """Records the names of the top-level ops of every module it runs on."""

    name = "record-top-level-ops"
    seen = []

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.seen.append([nested.name for nested in op.ops])


@pytest.fixture
def test_registry(registry):
    registry.register_pass(TypedOptionsPass)
    registry.register_pass(RecordTopLevelOpsPass)
    return registry


def test_nested_syntax_tree():
    tree = parse_pipeline_text(
        "builtin.module(cse,func.func(canonicalize,cse),some-pass{opt=1 other=abc})"
    )
    assert tree == NestedElement(
        "builtin.module",
        [
            PassElement("cse", {}),
            NestedElement("func.func", [PassElement("canonicalize", {}), PassElement("cse", {})]),
            PassElement("some-pass", {"opt": ("1",), "other": ("abc",)}),
        ],
    )


def test_flat_list_is_anchored_on_module():
    assert parse_pipeline_text("a,b{x=1,2}") == NestedElement(
        "builtin.module", [PassElement("a", {}), PassElement("b", {"x": ("1", "2")})]
    )


def test_options_are_typed(test_registry):
    manager = build_pass_manager(
        test_registry,
        'typed-options{count=3 scale=2 enabled=true label="a b" sizes=4,5,6 limit=7}',
    )
    (created,) = manager.elements
    assert created == TypedOptionsPass(3, 2.0, True, "a b", (4, 5, 6), 7)
    assert isinstance(created.scale, float)


def test_bare_flags_and_empty_lists(test_registry):
    (created,) = build_pass_manager(test_registry, "typed-options{enabled sizes= limit}").elements
    assert (created.enabled, created.sizes, created.limit) == (True, (), None)


@pytest.mark.parametrize(
    "text, message",
    [
        ("typed-options{count=x}", "invalid value 'x' for option 'count'"),
        ("typed-options{count}", "invalid value '' for option 'count'"),
        ("typed-options{cuont=1}", "did you mean 'count'"),
        ("typed-option", "did you mean 'typed-options'"),
        ("builtin.module(cse", "expected ')'"),
        ("cse,", "expected a pass or pipeline name"),
        ("cse)", "unexpected ')'"),
        ('typed-options{label="abc}', "unterminated string"),
    ],
)
def test_errors_explain_themselves(test_registry, text, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_pass_manager(test_registry, text)


def test_named_pipeline_cannot_include_itself(registry):
    registry.register_pipeline("loop", "cse,loop", "recursive")
    with pytest.raises(PipelineError, match="includes itself"):
        build_pass_manager(registry, "loop")


_names = st.sampled_from(["cse", "canonicalize", "dce", "typed-options"])


def _pipelines(depth: int):
    pass_text = st.one_of(
        _names,
        st.builds(
            lambda count, enabled, sizes: (
                f"typed-options{{count={count} enabled={str(enabled).lower()}"
                + (f" sizes={','.join(map(str, sizes))}" if sizes else "")
                + "}"
            ),
            st.integers(-5, 50),
            st.booleans(),
            st.lists(st.integers(0, 9), max_size=3),
        ),
    )
    if depth == 0:
        return pass_text
    nested = st.builds(
        lambda anchor, items: f"{anchor}({','.join(items)})",
        st.sampled_from(["func.func", "builtin.module", "any"]),
        st.lists(_pipelines(depth - 1), min_size=1, max_size=3),
    )
    return st.one_of(pass_text, nested)


@given(st.lists(_pipelines(2), min_size=1, max_size=4))
def test_printed_pipeline_parses_back_to_itself(elements):
    from graphcompiler.driver.registration import default_registry

    registry = default_registry(load_plugins=False)
    registry.register_pass(TypedOptionsPass)
    manager = build_pass_manager(registry, ",".join(elements))
    printed = str(manager)
    assert str(build_pass_manager(registry, printed)) == printed
    assert manager.pass_count() == str(elements).count("typed-options") + sum(
        str(elements).count(name) for name in ("cse", "canonicalize", "dce")
    )


TWO_FUNCTIONS = """
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
func.func @g(%a: i32) -> i32 {
  func.return %a : i32
}
"""


def test_nested_pass_sees_one_function_at_a_time(test_registry):
    RecordTopLevelOpsPass.seen.clear()
    module = graphcompiler.parse(TWO_FUNCTIONS, registry=test_registry)
    graphcompiler.apply_pipeline(
        module,
        "builtin.module(record-top-level-ops,func.func(record-top-level-ops))",
        registry=test_registry,
    )
    assert RecordTopLevelOpsPass.seen == [
        ["func.func", "func.func"],
        ["func.func"],
        ["func.func"],
    ]
    # The functions are back in place, in their order.
    assert [op.sym_name.data for op in module.ops] == ["f", "g"]


def test_nested_cse_changes_each_function(test_registry):
    module = graphcompiler.parse(TWO_FUNCTIONS, registry=test_registry)
    graphcompiler.apply_pipeline(module, "builtin.module(func.func(cse))", registry=test_registry)
    first = next(iter(module.ops))
    assert [op.name for op in first.body.ops] == ["arith.addi", "arith.muli", "func.return"]
