"""ONNX ops that no converter takes but whose schema defines them as a
function of other ops (opset 23's Attention, RMSNormalization and
RotaryEmbedding, opset 24's Swish, ...): each such node is replaced by its
function body before the import, as onnx's own `_expanded` test cases are,
and the body's ops are imported instead. The graph passes then see what
they would see in a model exported op by op: the `attention` rule fuses an
expanded Attention back into one `graph.attention`.

A context-dependent body (most of them) is built by onnx for the node's
attributes and its inputs' types, which shape inference gives; the bodies
become model-local functions and onnx's inliner puts their nodes in place
(fresh value names, attribute references resolved).
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
import onnx.inliner
from onnx import shape_inference

from graphcompiler.frontends.onnx.importer import OnnxImportError

EXPANDED_DOMAIN = "graphcompiler.expanded"
"""The domain of the local functions the expanded nodes call until inlined."""

MAX_ROUNDS = 4
"""Expansions of expansions: a body may hold function ops of its own."""

_DEFAULT_DOMAINS = ("", "ai.onnx")
_FUNCTION_DOMAINS = (*_DEFAULT_DOMAINS, "ai.onnx.preview")
"""Domains whose ops onnx may define by a function body (the preview
domain's FlexAttention has one; com.microsoft's ops are converted)."""


def expand_function_ops(
    model: onnx.ModelProto,
    converted: Callable[[str], bool],
    types_only: Callable[[onnx.ModelProto], onnx.ModelProto],
) -> onnx.ModelProto:
    """`model` with every node of onnx's own domains whose op type
    `converted` rejects (`domain:op_type` outside the default domain) and
    whose schema has a function body replaced by that body.
    `types_only(model)` is the model without its weights' bytes (what
    shape inference needs, fast)."""
    version = next((o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS), None)
    versions = {o.domain: o.version for o in model.opset_import}
    for round_ in range(MAX_ROUNDS):
        wanted = [
            (node, schema)
            for node in model.graph.node
            if node.domain in _FUNCTION_DOMAINS and not converted(_key(node))
            if (schema := _function_schema(node, version, versions)) is not None
        ]
        if not wanted:
            break
        types = (
            _value_types(types_only(model))
            if any(s.has_context_dependent_function for _, s in wanted)
            else {}
        )
        expanded = 0
        for index, (node, schema) in enumerate(wanted):
            own = version if node.domain in _DEFAULT_DOMAINS else versions.get(node.domain)
            body = _body(node, schema, own, version, types)
            if body is None:
                continue
            expanded += 1
            body.domain, body.name = EXPANDED_DOMAIN, f"{node.op_type}_{round_}_{index}"
            node.domain, node.op_type = EXPANDED_DOMAIN, body.name
            model.functions.append(body)
        if not expanded:
            break
        if all(o.domain != EXPANDED_DOMAIN for o in model.opset_import):
            model.opset_import.append(onnx.helper.make_opsetid(EXPANDED_DOMAIN, 1))
        try:
            model = onnx.inliner.inline_local_functions(model)
        except Exception as error:  # noqa: BLE001 - the inliner raises RuntimeError and kin
            names = ", ".join(sorted({f.name.rsplit("_", 2)[0] for f in model.functions}))
            reason = " ".join(str(error).split())
            raise OnnxImportError(
                f"cannot expand {names} into their function bodies: {reason}"
            ) from None
    return model


def _key(node: onnx.NodeProto) -> str:
    """The node's key among the converters (ops.CONVERTERS)."""
    return node.op_type if node.domain in _DEFAULT_DOMAINS else f"{node.domain}:{node.op_type}"


def _function_schema(
    node: onnx.NodeProto, version: int | None, versions: dict[str, int]
) -> onnx.defs.OpSchema | None:
    """The schema of `node`'s op at the model's opset of its domain (the
    default one's `version`), if it defines a body."""
    default = node.domain in _DEFAULT_DOMAINS
    at = version if default else versions.get(node.domain)
    try:
        schema = onnx.defs.get_schema(
            node.op_type, at or onnx.defs.onnx_opset_version(), "" if default else node.domain
        )
    except onnx.defs.SchemaError:
        return None
    return schema if schema.has_function or schema.has_context_dependent_function else None


def _body(
    node: onnx.NodeProto,
    schema: onnx.defs.OpSchema,
    own_version: int | None,
    version: int | None,
    types: dict[str, onnx.TypeProto],
) -> onnx.FunctionProto | None:
    """The function body of `node` for the model's opset of its domain,
    `own_version` (None if every body is written for a newer one; the
    body's default-domain ops are read at `version`, the model's), its
    omitted attributes given their
    schema defaults first (a body refers to the caller's attributes, and an
    omitted one would fall back to the inner op's default instead)."""
    dependent = schema.has_context_dependent_function
    listed = (
        schema.context_dependent_function_opset_versions
        if dependent
        else schema.function_opset_versions
    )
    versions = [v for v in listed if own_version is None or v <= own_version]
    if not versions:
        return None
    given = {a.name for a in node.attribute}
    for name, attribute in schema.attributes.items():
        if name not in given and attribute.default_value.type != onnx.AttributeProto.UNDEFINED:
            default = onnx.AttributeProto()
            default.CopyFrom(attribute.default_value)
            default.name = name
            node.attribute.append(default)
    body = onnx.FunctionProto()
    try:
        if dependent:
            inputs = [types.get(name, onnx.TypeProto()).SerializeToString() for name in node.input]
            text = schema.get_context_dependent_function_with_opset_version(
                max(versions), node.SerializeToString(), inputs
            )
        else:
            text = schema.get_function_with_opset_version(max(versions))
        body.ParseFromString(text)
    except Exception:  # noqa: BLE001 - onnx cannot build it (an input's type unknown, ...)
        return None  # the node stays: "operator is not supported"
    for opset in body.opset_import:
        # onnx's inliner leaves a call whose body imports another version of
        # a domain than the model: the body's ops are read at the model's
        if opset.domain in _DEFAULT_DOMAINS and version is not None:
            opset.version = version
    return body if body.node else None


def _value_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Every value's type that shape inference finds, the inputs' and the
    initializers' included."""
    try:
        inferred = shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - the importer's own check reports what is wrong
        inferred = model
    graph = inferred.graph
    types = {i.name: i.type for i in (*graph.input, *graph.value_info, *graph.output)}
    for tensor in model.graph.initializer:
        types.setdefault(
            tensor.name, onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        )
    return types
