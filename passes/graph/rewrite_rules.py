"""Sub-graph substitution (seed 003): a registry of declarative rules, each
a chain of op names and the replacement for a match, applied by the
`graph-rewrite-rules` pass.

A chain matches ops op_0 -> op_1 -> ... where each op uses the previous
op's result and that result has no other use. Users and plugins add rules:

    from graphcompiler.passes.graph.rewrite_rules import Rule, register_rule
    register_rule(Rule("my-rule", ("exp", "log"), my_rewrite, "log(exp x) -> x"))

`rewrite(ops)` replaces the matched ops (in chain order) however it likes;
it may decline by returning False.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, Float32Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.normalization import (
    ATTENTION_ROLES,
    head_groups,
    swap_heads_and_sequence,
)
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass
from graphcompiler.passes.graph.fuse import Group, fuse


@dataclass(frozen=True)
class Rule:
    name: str
    chain: tuple[str, ...]
    rewrite: Callable[[list[Operation]], bool | None]
    description: str


RULES: dict[str, Rule] = {}

FLOAT32_MAX = 3.4028234663852886e38


def register_rule(rule: Rule) -> None:
    if rule.name in RULES:
        raise ValueError(f"a rewrite rule named '{rule.name}' is already registered")
    RULES[rule.name] = rule


def match(op: Operation, chain: tuple[str, ...]) -> list[Operation] | None:
    """The ops of `chain` starting at `op`, each the single user of the previous."""
    if op.name != f"graph.{chain[0]}":
        return None
    matched = [op]
    for _name in chain[1:]:
        uses = list(matched[-1].results[0].uses) if matched[-1].results else []
        if len(uses) != 1:
            return None
        matched.append(uses[0].operation)
    if [m.name.removeprefix("graph.") for m in matched] != list(chain):
        return None
    return matched


def _fuse_chain(ops: list[Operation]) -> bool:
    """Replace the chain by one graph.fused (its first op is the anchor)."""
    fuse(Group(list(ops)))
    return True


def _forward_input(ops: list[Operation]) -> bool:
    """The chain computes the identity: its users take its input instead."""
    ops[-1].results[0].replace_all_uses_with(ops[0].operands[0])
    for op in reversed(ops):
        Rewriter.erase_op(op)
    return True


register_rule(
    Rule(
        "conv2d-bias-relu",
        ("conv2d", "add", "relu"),
        _fuse_chain,
        "conv2d + bias add + relu -> one fused kernel",
    )
)
register_rule(
    Rule(
        "matmul-bias-gelu",
        ("matmul", "add", "gelu"),
        _fuse_chain,
        "matmul + bias add + gelu -> one fused kernel",
    )
)
register_rule(Rule("log-of-exp", ("exp", "log"), _forward_input, "log(exp(x)) -> x"))


def _splat_constant(value: SSAValue) -> float | None:
    """The one value of a constant whose elements are all equal."""
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp):
        return None
    values = set(owner.value.get_values())
    return float(values.pop()) if len(values) == 1 else None


def _other(op: Operation, value: SSAValue) -> SSAValue:
    """The operand of binary `op` that is not `value`."""
    return op.operands[1] if op.operands[0] is value else op.operands[0]


def _prescaled(value: SSAValue, user: Operation) -> tuple[SSAValue, float, list[Operation]]:
    """`value` as (source, factor, the ops to erase: the scaling and its
    constant): x * c, c * x or x / c by a splat constant, feeding only
    `user` (torch's exported attention scales q and k by sqrt(scale) each),
    else (value, 1, [])."""
    op = value.owner
    if not isinstance(op, graph.MulOp | graph.DivOp) or not op.result.has_one_use():
        return value, 1.0, []
    if op.result.get_user_of_unique_use() is not user:
        return value, 1.0, []
    sides = [(0, 1), (1, 0)] if isinstance(op, graph.MulOp) else [(0, 1)]
    for source, constant in sides:
        factor = _splat_constant(op.operands[constant])
        if factor is None or op.operands[source].type != op.result.type:
            continue
        if isinstance(op, graph.DivOp):
            if factor == 0:  # leave x / 0 (inf, NaN) to the ops
                break
            factor = 1 / factor
        return op.operands[source], factor, [op, op.operands[constant].owner]
    return value, 1.0, []


def _attention(ops: list[Operation]) -> bool:
    """matmul(q, k) -> [scale] -> [+ mask] -> softmax -> matmul(., v) becomes
    one graph.attention; declines whatever it cannot express exactly."""
    scores, *middle, softmax, context = ops
    if context.operands[0] is not softmax.result:
        return False
    return _replace_by_attention(scores, middle, softmax, context, [], zero_nan=False)


def _attention_zeroing_nan(ops: list[Operation]) -> bool:
    """As `_attention`, where the softmax's NaN probabilities become 0 before
    the second matmul: p -> select(p != p, 0, p) -> matmul(., v), as torch's
    scaled_dot_product_attention exports."""
    scores, *middle, softmax = ops
    users = {use.operation for use in softmax.result.uses}  # not_equal(p, p) uses it twice
    is_nan = next((u for u in users if isinstance(u, graph.NotEqualOp)), None)
    select = next((u for u in users if isinstance(u, graph.SelectOp)), None)
    if len(users) != 2 or is_nan is None or select is None:
        return False
    if list(is_nan.operands) != [softmax.result] * 2 or not is_nan.result.has_one_use():
        return False
    cond, zero, kept = select.operands
    if cond is not is_nan.result or kept is not softmax.result or _splat_constant(zero) != 0.0:
        return False
    if select.result.type != softmax.result.type or not select.result.has_one_use():
        return False
    context = select.result.get_user_of_unique_use()
    if not isinstance(context, graph.MatmulOp) or context.operands[0] is not select.result:
        return False
    tail = [is_nan, select]
    return _replace_by_attention(scores, middle, softmax, context, tail, zero_nan=True)


def _key_rows(key: SSAValue, transposed: bool) -> tuple[SSAValue, bool, Operation | None]:
    """The key as graph.attention takes it, and whether it is transposed, and
    the transpose to insert, if any. Exporters write kᵀ [.., D, Sk] as a
    transpose of the projection's [b, Sk, h, D] (perm 0, 2, 3, 1), which
    moves every element alone; the same transpose with the last two dims
    kept (0, 2, 1, 3) moves rows of D and gives the attention its keys as
    rows, read in place (BERT-base's key transposes: 2.0 -> 0.5 ms an inference)."""
    owner = key.owner
    if not transposed or not isinstance(owner, graph.TransposeOp) or not key.has_one_use():
        return key, transposed, None
    perm = list(owner.permutation)
    rows = [*perm[:-2], perm[-1], perm[-2]]
    if rows == list(range(len(rows))):
        return owner.input, False, None
    copy = graph.TransposeOp.build_from([owner.input], perm=rows)
    return copy.result, False, copy


def _is_head_swap(op: Operation, key_transposed: bool = False) -> bool:
    """Is `op` exporters' head split or merge: a transpose swapping
    [..., S, H, D] and [..., H, S, D] (to [..., H, D, S] for a transposed key)?"""
    if not isinstance(op, graph.TransposeOp) or len(op.permutation) < 3:
        return False
    n = len(op.permutation)
    order = [n - 2, n - 1, n - 3] if key_transposed else [n - 2, n - 3, n - 1]
    return list(op.permutation) == [*range(n - 3), *order]


def _head_split(value: SSAValue, key_transposed: bool = False) -> SSAValue | None:
    """The [..., S, H, D] tensor `value` is the head split of, or None:
    graph.attention reads it in place as a sequence-major operand."""
    return value.owner.input if _is_head_swap(value.owner, key_transposed) else None


def _head_merge(value: SSAValue) -> Operation | None:
    """The head merge that is `value`'s only use, or None: graph.attention
    writes its result sequence-major instead."""
    if not value.has_one_use():
        return None
    user = value.get_user_of_unique_use()
    return user if _is_head_swap(user) else None


def _repeated_heads(value: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """The [..., Hkv, S, D] tensor whose heads `value` repeats g times each,
    and the repeat's ops, as exporters write repeat_kv (reshape to
    [..., Hkv, 1, S, D], expand to [..., Hkv, g, S, D], reshape to
    [..., Hkv * g, S, D]); graph.attention reads it grouped. Else (value, [])."""
    merge = value.owner
    expand = merge.input.owner if isinstance(merge, graph.ReshapeOp) else None
    split = expand.input.owner if isinstance(expand, graph.BroadcastToOp) else None
    if not isinstance(split, graph.ReshapeOp):
        return value, []
    shape, expanded = list(value.type.get_shape()), list(expand.result.type.get_shape())
    if len(shape) < 3 or len(expanded) != len(shape) + 1:
        return value, []
    batch, heads, groups, rows = shape[:-3], expanded[-4], expanded[-3], shape[-2:]
    source = list(split.input.type.get_shape())
    if expanded != [*batch, heads, groups, *rows] or source != [*batch, heads, *rows]:
        return value, []
    if list(split.result.type.get_shape()) != [*batch, heads, 1, *rows]:
        return value, []
    return split.input, [merge, expand, split]


def _replace_by_attention(
    scores, middle: list[Operation], softmax, context, tail: list[Operation], zero_nan: bool
) -> bool:
    """graph.attention for scores -> middle (scale, mask) -> softmax -> tail
    -> context, with the query's and key's own splat scale factors folded
    into its scale."""
    if scores.a_transposed or context.is_transposed:
        return False
    rank = len(softmax.result.type.get_shape())
    if softmax.normalized_axis(rank) != rank - 1:
        return False
    if not isinstance(scores.result.type.element_type, Float32Type):
        return False
    scale, mask, value, factors = 1.0, None, scores.result, []
    for op in middle:
        if op.results[0].type != scores.result.type:  # the operand broadcast the scores
            return False
        other = _other(op, value)
        if isinstance(op, graph.AddOp) and mask is None:
            mask = other
        elif isinstance(op, graph.MulOp | graph.DivOp) and mask is None:
            factor = _splat_constant(other)
            if factor is None or (isinstance(op, graph.DivOp) and op.operands[0] is not value):
                return False
            if isinstance(op, graph.DivOp) and factor == 0:  # leave x / 0 (inf, NaN) to the ops
                return False
            scale = scale * factor if isinstance(op, graph.MulOp) else scale / factor
            factors.append(other.owner)
        else:
            return False
        value = op.results[0]
    query, query_factor, query_scaling = _prescaled(scores.operands[0], scores)
    key, key_factor, key_scaling = _prescaled(scores.operands[1], scores)
    scale = scale * query_factor * key_factor
    scalings = [*query_scaling[:1], *key_scaling[:1]]
    constants = [*factors, *query_scaling[1:], *key_scaling[1:]]
    if not math.isfinite(scale) or abs(scale) > FLOAT32_MAX:  # the scale is an f32 property
        return False
    # the ops attention reads through, users before their operands (erased if unused after)
    copies = [x.owner for x in (query, key) if isinstance(x.owner, graph.TransposeOp)]
    value, value_repeat = _repeated_heads(context.operands[1])
    sequence_major = {}
    for role, operand, transposed in (
        ("query", query, False),
        ("key", key, not scores.b_transposed),
        ("value", value, False),
    ):
        source = _head_split(operand, transposed)
        if source is not None:
            sequence_major[role] = source
    key_copy, key_transposed = None, False
    if "key" not in sequence_major:
        key, key_transposed, key_copy = _key_rows(key, not scores.b_transposed)
        if key_copy is None:  # the key behind a repeat, maybe a head split
            key, key_repeat = _repeated_heads(key)
            copies += key_repeat
            if key_repeat and not key_transposed and _head_split(key) is not None:
                sequence_major["key"] = _head_split(key)
                copies.append(key.owner)
    copies += value_repeat
    if isinstance(value.owner, graph.TransposeOp):
        copies.append(value.owner)
    query = sequence_major.get("query", query)
    key = sequence_major.get("key", key)
    value = sequence_major.get("value", value)
    merge = _head_merge(context.result)
    if merge is not None:
        sequence_major["result"] = merge.result
    replaced = merge or context
    operands = [query, key, value, *([mask] if mask is not None else [])]
    try:
        attention = graph.AttentionOp.build_from(
            operands,
            scale=scale,
            key_transposed=key_transposed,
            zero_nan_probabilities=zero_nan,
            sequence_major=ArrayAttr(
                [StringAttr(r) for r in ATTENTION_ROLES if r in sequence_major]
            ),
        )
    except VerifyException:
        return False
    if attention.result.type != replaced.results[0].type:
        return False
    if key_copy is not None:
        Rewriter.insert_op(key_copy, InsertPoint.before(context))
    Rewriter.insert_op(attention, InsertPoint.before(context))
    replaced.results[0].replace_all_uses_with(attention.result)
    merges = [merge] if merge is not None else []
    for op in [*merges, context, *reversed(tail), softmax, *reversed(middle), scores, *scalings]:
        Rewriter.erase_op(op)
    for copy in dict.fromkeys(copies):  # read in place now, unless used elsewhere
        if not copy.result.uses:
            Rewriter.erase_op(copy)
    zeros = [tail[1].operands[1].owner] if tail else []
    for constant in dict.fromkeys(constants + zeros):  # q's and k's factor may be one constant
        if isinstance(constant, graph.ConstantOp) and not constant.result.uses:
            Rewriter.erase_op(constant)
    _decode_step_groups([attention])
    return True


def _logical_shape(attention: graph.AttentionOp, role: str, value: SSAValue) -> list[int]:
    """`value`'s shape as [..., H, S, D] (a sequence-major one swapped)."""
    shape = list(value.type.get_shape())
    return swap_heads_and_sequence(shape) if attention.is_sequence_major(role) else shape


def _sharing(query: list[int], operand: list[int]) -> int:
    """How many query heads read each head of a key or value: grouped
    heads, or all of them for a single (multi-query) head."""
    if len(operand) >= 3 and operand[-3] > 1:
        return head_groups(query, operand)
    return query[-3]


def _decode_step_groups(ops: list[Operation]) -> bool:
    """A decode step (one query) of grouped- or multi-query attention: each
    group's g query heads become g queries of its one key/value head. With one query
    per head both are the same memory (reshapes are views), and the kernel
    then fills g of its query lanes instead of one and reads each key and
    value head once instead of g times (3.3x at 32 / 8 heads, 2048 keys)."""
    (attention,) = ops
    query = _logical_shape(attention, "query", attention.query)
    if len(query) < 3 or query[-2] != 1:
        return False
    groups = _sharing(query, _logical_shape(attention, "key", attention.key))
    if groups == 1 or groups != _sharing(
        query, _logical_shape(attention, "value", attention.value)
    ):
        return False
    heads = query[-3] // groups
    mask = attention.mask
    mask_shape = list(mask.type.get_shape()) if mask is not None else []
    per_head_mask = len(mask_shape) >= 3 and mask_shape[-3] != 1
    if per_head_mask and (mask_shape[-3] != query[-3] or mask_shape[-2] != 1):
        return False
    views = []

    def view(value: SSAValue, shape: list[int]) -> SSAValue:
        views.append(
            graph.ReshapeOp.build_from([value], TensorType(value.type.element_type, shape))
        )
        return views[-1].result

    operands = [view(attention.query, [*query[:-3], heads, groups, query[-1]]),
                attention.key, attention.value]  # fmt: skip
    if mask is not None:
        operands.append(
            view(mask, [*mask_shape[:-3], heads, groups, mask_shape[-1]]) if per_head_mask else mask
        )
    kept = [r for r in ("key", "value") if attention.is_sequence_major(r)]
    grouped = graph.AttentionOp.build_from(
        operands,
        scale=attention.scale,
        key_transposed=attention.key_transposed,
        zero_nan_probabilities=attention.zero_nan_probabilities,
        sequence_major=ArrayAttr([StringAttr(r) for r in kept]),
    )
    result = graph.ReshapeOp.build_from([grouped.result], attention.result.type)
    for op in (*views, grouped, result):
        Rewriter.insert_op(op, InsertPoint.before(attention))
    attention.result.replace_all_uses_with(result.result)
    Rewriter.erase_op(attention)
    return True


_ATTENTION_CHAINS = [
    ("matmul", *scaling, *masking, "softmax", "matmul")
    for scaling in ((), ("mul",), ("div",))
    for masking in ((), ("add",))
]
for _chain in _ATTENTION_CHAINS:
    register_rule(
        Rule(
            "attention" + "".join(f"-{n}" for n in _chain[1:-2]),
            _chain,
            _attention,
            f"{' -> '.join(_chain)} -> graph.attention (online softmax, scores never stored)",
        )
    )
register_rule(
    Rule(
        "attention-decode-groups",
        ("attention",),
        _decode_step_groups,
        "one query of grouped heads -> each group's heads as queries of one head",
    )
)
for _chain in _ATTENTION_CHAINS:
    register_rule(
        Rule(
            "attention-zeroing-nan" + "".join(f"-{n}" for n in _chain[1:-2]),
            _chain[:-1],
            _attention_zeroing_nan,
            f"{' -> '.join(_chain[:-1])} -> select(isnan, 0, .) -> matmul -> graph.attention",
        )
    )


@dataclass(frozen=True)
class GraphRewriteRulesPass(FunctionPass):
    """Apply the registered sub-graph rewrite rules (all, or those named)."""

    name = "graph-rewrite-rules"
    rules: tuple[str, ...] = pass_option(
        (), "the rules to apply, by name (default: all registered)"
    )
    STATISTICS = {"rules-applied": "sub-graphs rewritten"}

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unknown = [name for name in self.rules if name not in RULES]
        if unknown:
            raise DiagnosticException(
                f"unknown rewrite rule(s) {', '.join(unknown)} (known: {', '.join(RULES)})"
            )
        super().apply(ctx, op)

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        active = [RULES[name] for name in self.rules] if self.rules else list(RULES.values())
        applied = 0
        for candidate in list(function.body.block.ops):
            if candidate.parent is None:  # consumed by an earlier rewrite
                continue
            for rule in active:
                matched = match(candidate, rule.chain)
                if matched and rule.rewrite(matched) is not False:
                    applied += 1
                    break
        return {"rules-applied": applied}
