"""gc-run: JIT-compile a module and run an entry function, like `mlir-runner`.

    gc-run program.mlir -e main --threads 2

For Tensor IR the entry takes no arguments; what it prints (print_int,
print_float, print_tensor) goes to stdout, and a returned value is printed
after it.
"""

from __future__ import annotations

import argparse
import sys

from graphcompiler.dialects import tir
from graphcompiler.runtime.program import TirProgram
from graphcompiler.tools.driver import (
    ToolError,
    add_flag,
    add_plugin_flag,
    load_registry,
    parse_source,
    read_source,
    run_tool,
)

TOOL = "gc-run"


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL, description="JIT-compile and run a module", allow_abbrev=False
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    add_flag(parser, "entry", "-e", default="main", help="the function to run (default: main)")
    add_flag(
        parser, "threads", type=int, default=None, metavar="N", help="threads for parallel loops"
    )
    add_plugin_flag(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _argument_parser().parse_args(argv)
    sources = []

    def run() -> int:
        registry = load_registry(args.load_plugin)
        source = read_source(args.input)
        sources.append(source)
        module = parse_source(registry, source)
        if not any(isinstance(op, tir.FuncOp) for op in module.ops):
            raise ToolError("the input has no tir.func to run")
        program = TirProgram(module, num_threads=args.threads)
        function = program.functions.get(args.entry)
        if function is None:
            raise ToolError(
                f"no function @{args.entry} (functions: {', '.join(sorted(program.functions))})"
            )
        if function.param_types:
            raise ToolError(
                f"@{args.entry} takes {len(function.param_types)} arguments; gc-run runs Tensor IR entries that take none"
            )
        result = function()
        sys.stdout.flush()
        if result is not None:
            print(result)
        return 0

    return run_tool(TOOL, run, sources)


if __name__ == "__main__":
    sys.exit(main())
