"""The package's import graph keeps the stage order docs/architecture.md
draws: a module imports only its own folder's modules or those of a lower
stage, and no modules import each other in a circle. Every import counts,
also one inside a function or under TYPE_CHECKING: each is a dependency a
reader has to know about."""

from __future__ import annotations

import ast
from pathlib import Path

import graphcompiler

PACKAGE = Path(graphcompiler.__file__).parent
NOT_SHIPPED = {"test", "bench", "examples", "docs", "build"}

LAYERS = (
    "ir",  # diagnostics, parsing, verifier, pass pipelines and manager, registry class
    "dialects",  # graph, tir, our llvm extensions
    "interpreters",  # numpy reference semantics
    "target",  # the target description
    "runtime",  # what generated code calls: thread pool, native routines, symbols, object cache
    "passes",  # graph and tir passes
    "lowering",  # graph -> tir -> llvm dialect -> LLVM IR text
    "runtime.jit",  # LLVM IR -> machine code
    "frontends",  # ONNX import
    "driver",  # registration, loading, compile cache, warm start, CompiledGraph
    "",  # graphcompiler/__init__.py: the public API
    "tools",  # the command-line tools: nothing in the library imports them
)


def _shipped_files(pattern: str) -> list[Path]:
    """The package's files named `pattern`, outside NOT_SHIPPED and hidden
    folders (a `.venv` made in the checkout, as the README's first line does)."""
    return [
        path
        for top in PACKAGE.iterdir()
        if top.name not in NOT_SHIPPED and not top.name.startswith(".")
        for path in ([top] if top.is_file() else top.rglob(pattern))
        if path.match(pattern)
        and not any(part.startswith(".") for part in path.relative_to(PACKAGE).parts)
    ]


def _module_names() -> dict[str, Path]:
    modules = {}
    for path in _shipped_files("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `path` imports (a name imported from a package
    counts as its submodule when there is one)."""

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == "graphcompiler" or name.startswith("graphcompiler."):
                found.add(known(name.removeprefix("graphcompiler").lstrip(".")))
    return found


def _layer(module: str) -> int:
    """The index of the most specific layer holding `module`."""
    best, depth = None, -1
    for index, prefix in enumerate(LAYERS):
        inside = module == prefix or module.startswith(prefix + ".") if prefix else module == ""
        if inside and len(prefix) > depth:
            best, depth = index, len(prefix)
    assert best is not None, f"graphcompiler.{module} is in no layer: add its folder to LAYERS"
    return best


def _graph() -> dict[str, set[str]]:
    modules = _module_names()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def test_every_import_points_down_the_stages():
    upward = [
        f"graphcompiler.{module} ({LAYERS[_layer(module)] or 'API'}) imports "
        f"graphcompiler.{target} ({LAYERS[_layer(target)] or 'API'})"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_modules_import_each_other_in_a_circle():
    graph = _graph()
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = lowlink[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                lowlink[module] = min(lowlink[module], lowlink[target])
            elif target in stack:
                lowlink[module] = min(lowlink[module], index[target])
        if lowlink[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_root_holds_no_module_but_the_public_api():
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert not loose, f"modules at the package root: {loose}; give each a stage folder"


def test_the_checker_sees_an_upward_import(tmp_path):
    """The layer test is only as good as `_imports`: it must see a function-
    local `from graphcompiler.x import y` and resolve it to the module."""
    modules = {"ir.parsing": Path(), "driver.compiler": Path(), "driver": Path()}
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from graphcompiler.driver.compiler import compile\n")
    assert _imports(source, modules) == {"driver.compiler"}
    assert _layer("driver.compiler") > _layer("ir.parsing")
    assert _layer("runtime.jit.engine") > _layer("lowering.llvm.split") > _layer("runtime.symbols")


def test_every_package_is_shipped():
    """pyproject.toml lists the packages the wheel holds: a folder missing
    there installs without its code (`pip install .` is the README's first
    command)."""
    import tomllib

    listed = set(tomllib.loads((PACKAGE / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {
        ".".join(("graphcompiler", *path.parent.relative_to(PACKAGE).parts))
        for path in _shipped_files("__init__.py")
    }
    assert packages == listed
