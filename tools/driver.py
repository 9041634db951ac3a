"""What the command-line tools share: plugin loading, reading the input,
and turning failures into diagnostics on stderr with exit code 1."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.diagnostics import DiagnosticError, SourceFile, did_you_mean
from graphcompiler.ir.parsing import parse_module
from graphcompiler.ir.registry import Registry, RegistryError
from graphcompiler.ir.verifier import verify_module


class ToolError(Exception):
    """A one-line `tool: error: ...` failure (bad flags, missing file, plugin)."""


_NUMBER = re.compile(r"^-\d*\.?\d+(e[-+]?\d+)?$")


class ToolArgumentParser(argparse.ArgumentParser):
    """argparse with MLIR tools' manners: `-flag` and `--flag` alike, no
    abbreviations, `--version`, and an unknown flag answered with the
    closest known ones instead of the whole usage text."""

    def __init__(self, prog: str, description: str):
        super().__init__(prog=prog, description=description, allow_abbrev=False)
        from graphcompiler import __version__

        add_flag(self, "version", action="version", version=f"{prog} (graphcompiler) {__version__}",
                 help="print the version and exit")  # fmt: skip

    def parse_args(self, args=None, namespace=None):
        # unknown flags first: a typo must not read as a missing required flag
        for argument in sys.argv[1:] if args is None else args:
            if argument == "--":
                break
            name = argument.split("=", 1)[0]
            if argument.startswith("-") and not _NUMBER.match(argument) and len(argument) > 1:
                if name not in self._option_string_actions:
                    self.error(f"unknown argument '{argument}'{self.suggest(argument)}")
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self.error(f"unknown argument '{unknown[0]}'")
        return parsed

    def suggest(self, argument: str) -> str:
        """`; did you mean '--x'?` for a misspelled flag, or nothing."""
        if not argument.startswith("-"):
            return ""
        name = "--" + argument.split("=", 1)[0].lstrip("-")
        flags = [flag for flag in self._option_string_actions if flag.startswith("--")]
        return did_you_mean(name, flags, cutoff=0.7)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_flag(parser: argparse.ArgumentParser, name: str, *short: str, **kwargs) -> None:
    """MLIR tools accept `-flag` as well as `--flag`; so do we."""
    parser.add_argument(f"--{name}", f"-{name}", *short, **kwargs)


def add_plugin_flag(parser: argparse.ArgumentParser) -> None:
    add_flag(parser, "load-plugin", action="append", default=[], metavar="MODULE",
             help="load a plugin (Python module name or .py file) exposing register(registry)")  # fmt: skip


def load_registry(plugins: list[str]) -> Registry:
    try:
        registry = default_registry()
        for plugin in plugins:
            registry.load_plugin(plugin)
    except RegistryError as error:
        raise ToolError(str(error)) from None
    return registry


def read_source(path: str) -> SourceFile:
    if path == "-":
        return SourceFile("<stdin>", sys.stdin.read())
    try:
        with open(path, encoding="utf-8") as file:
            return SourceFile(path, file.read())
    except OSError as error:
        raise ToolError(f"cannot open input file '{path}': {error.strerror}") from None


def parse_source(
    registry: Registry, source: SourceFile, allow_unregistered: bool = False
) -> ModuleOp:
    module = parse_module(registry.create_context(allow_unregistered), source)
    verify_module(module)
    return module


def run_tool(name: str, body, sources: list[SourceFile]) -> int:
    """Run `body()`; diagnostics and tool errors go to stderr and give exit 1."""
    try:
        return body()
    except ToolError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
    except DiagnosticError as error:
        sys.stderr.write(error.diagnostic.render(sources))
    except MemoryError as error:
        print(f"{name}: error: out of memory: {str(error) or 'allocation failed'}", file=sys.stderr)
    except Exception as error:  # a bug of ours: one line, not a traceback
        print(f"{name}: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    return 1


def add_input_shape_flag(parser: argparse.ArgumentParser) -> None:
    add_flag(parser, "input-shape", action="append", default=[], metavar="NAME=1x3x224x224",
             help="an .onnx input: the static shape of graph input NAME (fixes symbolic dims)")  # fmt: skip


def import_onnx_file(path: str, shape_specs: list[str], input_specs: list[str] = ()) -> ModuleOp:
    """An .onnx model as a graph module (`--input-shape` specs applied, and
    for the other inputs the shape of their `--input NAME=FILE.npy` array);
    what cannot be imported is a one-line tool error naming the node."""
    shapes = {}
    for spec in shape_specs:
        name, _, dims = spec.partition("=")
        try:
            shapes[name] = [int(d) for d in dims.split("x")]
        except ValueError:
            raise ToolError(f"--input-shape wants NAME=1x3x224x224, got '{spec}'") from None
    try:
        from graphcompiler.frontends.onnx import (
            OnnxImportError,
            graph_input_dims,
            import_onnx,
            load_model,
        )
    except ImportError:
        raise ToolError(
            f"reading '{path}' needs the onnx package: pip install 'graphcompiler[onnx]'"
        ) from None
    try:
        model = load_model(path)
        for spec in input_specs:
            name, _, array_path = spec.partition("=")
            if name in graph_input_dims(model) and name not in shapes:
                try:
                    shapes[name] = np.load(array_path, mmap_mode="r").shape
                except (OSError, ValueError):
                    continue  # gc-run names the unreadable file when it reads the inputs
        return import_onnx(model, input_shapes=shapes)
    except OnnxImportError as error:
        raise ToolError(f"{path}: {error}") from None


def run_on_input(name: str, args, body: Callable[[ModuleOp, Registry], int]) -> int:
    """Load the plugins, read and parse `args.input`, then `body(module,
    registry)`; failures become diagnostics (see run_tool)."""
    sources: list[SourceFile] = []

    def run() -> int:
        registry = load_registry(args.load_plugin)
        if args.input.endswith(".onnx"):
            shapes, arrays = getattr(args, "input_shape", []), getattr(args, "inputs", [])
            return body(import_onnx_file(args.input, shapes, arrays), registry)
        sources.append(read_source(args.input))
        return body(parse_source(registry, sources[0]), registry)

    return run_tool(name, run, sources)


def write_output(path: str, text: str) -> None:
    if path == "-":
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (`| head`): not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    else:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
