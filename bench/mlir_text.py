"""A bench Graph as graph-dialect MLIR text, for `graphcompiler.compile`.

Inputs (weights included) become arguments of @main, so the text stays a
few lines even for models with 100 MiB of weights (the runner binds the
weights with `compile(constants=...)`); scalars become `graph.constant`s.
"""

from __future__ import annotations

from bench.graph import Graph, Node, Value


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


def _float(value: float) -> str:
    return f"{value:.9e}"  # MLIR float literals need the '.'


def _array(values: list[int]) -> str:
    return f"array<i64: {', '.join(str(v) for v in values)}>"


def _line(node: Node) -> str:
    out, args = node.output, node.inputs
    operands = ", ".join(f"%{v.name}" for v in args)
    functional = f"({', '.join(tensor(v.shape) for v in args)}) -> {tensor(out.shape)}"
    op = node.op
    if op == "constant":
        return f"%{out.name} = graph.constant dense<{_float(node.attrs['value'])}> : {tensor(out.shape)}"
    if op in ("relu", "exp", "gelu"):
        return f"%{out.name} = graph.{op} {operands} : {tensor(out.shape)}"
    if op == "softmax":
        return f"%{out.name} = graph.softmax {operands} {{axis = -1 : i64}} : {tensor(out.shape)}"
    if op in ("add", "sub", "mul", "batch_norm"):
        attrs = (
            f" {{epsilon = {_float(node.attrs['epsilon'])} : f32}}" if op == "batch_norm" else ""
        )
        return f"%{out.name} = graph.{op} {operands}{attrs} : {functional}"
    if op == "layer_norm":
        attrs = f"{{axis = {len(out.shape) - 1} : i64, epsilon = {_float(node.attrs['epsilon'])} : f32}}"
        return f"%{out.name} = graph.layer_norm {operands} {attrs} : {functional}"
    if op == "matmul":
        attrs = " {transpose_b = true}" if node.attrs["transpose_b"] else ""
        return f"%{out.name} = graph.matmul {operands}{attrs} : {functional}"
    if op == "reshape":
        return f"%{out.name} = graph.reshape {operands} : {tensor(args[0].shape)} -> {tensor(out.shape)}"
    if op == "transpose":
        attrs = f"{{perm = {_array(node.attrs['perm'])}}}"
        return f"%{out.name} = graph.transpose {operands} {attrs} : {tensor(args[0].shape)} -> {tensor(out.shape)}"
    if op == "conv2d":
        attrs = f"{{padding = {_array([node.attrs['padding']] * 4)}}}"
        return f"%{out.name} = graph.conv2d {operands} {attrs} : {functional}"
    raise ValueError(f"no MLIR form for bench op '{op}'")


def to_mlir(graph: Graph, name: str = "main") -> str:
    """The graph as one `func.func @name` taking every input."""
    params = ", ".join(f"%{spec.value.name}: {tensor(spec.value.shape)}" for spec in graph.inputs)
    result: Value = graph.output
    lines = [f"func.func @{name}({params}) -> {tensor(result.shape)} {{"]
    lines += [f"  {_line(node)}" for node in graph.nodes]
    lines += [f"  func.return %{result.name} : {tensor(result.shape)}", "}"]
    return "\n".join(lines) + "\n"
