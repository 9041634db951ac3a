"""gc-opt: graphcompiler's modular optimizer driver, spoken like `mlir-opt`.

gc-opt in.mlir --pass-pipeline='builtin.module(func.func(cse,canonicalize))'
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from graphcompiler.diagnostics import (
    DiagnosticError,
    ExpectedDiagnostics,
    Severity,
    SourceFile,
    collect_diagnostics,
)
from graphcompiler.parsing import SPLIT_MARKER, parse_module, split_input, verify_module
from graphcompiler.pass_manager import Instrumentation, Timer, run_pipeline
from graphcompiler.pipeline import OpPassManager, PipelineError, build_pass_manager
from graphcompiler.registry import Registry
from graphcompiler.statistics import StatisticsCollector, collect_statistics
from graphcompiler.tools.driver import (
    ToolError,
    add_flag,
    add_plugin_flag,
    load_registry,
    read_source,
    write_output,
)

TOOL = "gc-opt"


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description="graphcompiler modular optimizer driver (mlir-opt compatible flags)",
        allow_abbrev=False,
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    add_flag(
        parser,
        "output",
        "-o",
        dest="output",
        default="-",
        metavar="FILE",
        help="output file (default: stdout)",
    )
    add_flag(
        parser,
        "pass-pipeline",
        metavar="PIPELINE",
        help="textual pipeline, e.g. 'builtin.module(cse,func.func(canonicalize))'",
    )
    parser.add_argument(
        "-p",
        "--passes",
        metavar="PASSES",
        help="flat pass list anchored on builtin.module, e.g. 'cse,dce'",
    )
    add_flag(
        parser,
        "split-input-file",
        action="store_true",
        help=f"process each chunk separated by '{SPLIT_MARKER}' on its own",
    )
    add_flag(
        parser,
        "verify-diagnostics",
        action="store_true",
        help="check emitted diagnostics against 'expected-*' comments",
    )
    add_flag(
        parser,
        "mlir-print-ir-before-all",
        action="store_true",
        help="print the IR before every pass (stderr)",
    )
    add_flag(
        parser,
        "mlir-print-ir-after-all",
        action="store_true",
        help="print the IR after every pass (stderr)",
    )
    add_flag(
        parser,
        "mlir-timing",
        action="store_true",
        help="print a wall-time report per pass (stderr)",
    )
    add_flag(
        parser,
        "mlir-pass-statistics",
        action="store_true",
        help="print the statistics the passes recorded (stderr)",
    )
    add_flag(
        parser,
        "mlir-print-op-generic",
        action="store_true",
        help="print operations in the generic form",
    )
    add_flag(parser, "mlir-print-debuginfo", action="store_true", help="print source locations")
    add_flag(
        parser,
        "allow-unregistered-dialect",
        action="store_true",
        help="accept operations of unregistered dialects",
    )
    add_flag(
        parser, "show-dialects", action="store_true", help="print the registered dialects and exit"
    )
    add_flag(
        parser,
        "list-passes",
        action="store_true",
        help="print every pass and pipeline with its description and options, then exit",
    )
    add_flag(
        parser,
        "dump-pass-pipeline",
        action="store_true",
        help="print the resolved pass pipeline (stderr)",
    )
    add_plugin_flag(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _argument_parser().parse_args(argv)
    try:
        registry = load_registry(args.load_plugin)
        if args.show_dialects:
            print("Available Dialects: " + ", ".join(sorted(registry.dialects)))
            return 0
        if args.list_passes:
            sys.stdout.write(describe_passes(registry))
            return 0
        if args.pass_pipeline is not None and args.passes is not None:
            raise PipelineError("give either --pass-pipeline or -p, not both")
        manager = build_pass_manager(registry, args.pass_pipeline or args.passes or "")
        if args.dump_pass_pipeline:
            sys.stderr.write(f"Pass Manager with {manager.pass_count()} passes:\n{manager}\n")
        source = read_source(args.input)
    except (ToolError, PipelineError) as error:
        print(f"{TOOL}: error: {error}", file=sys.stderr)
        return 1

    timer = Timer() if args.mlir_timing else None
    instrumentation = Instrumentation(
        print_before_all=args.mlir_print_ir_before_all,
        print_after_all=args.mlir_print_ir_after_all,
        print_generic=args.mlir_print_op_generic,
        timer=timer,
    )
    ctx = registry.create_context(args.allow_unregistered_dialect)
    chunks = split_input(source) if args.split_input_file else [source]
    outputs: list[str] = []
    failed = False
    statistics = StatisticsCollector()
    for chunk in chunks:
        # Like mlir-opt, every chunk gets a place in the output, even a failed one.
        outputs.append("")
        with collect_diagnostics() as emitted:
            try:
                with collect_statistics(statistics):
                    module = _process(chunk, ctx, manager, instrumentation)
                with instrumentation.time("Output"):
                    outputs[-1] = _print_module(module, args)
            except DiagnosticError as error:
                emitted.append(error.diagnostic)
        if args.verify_diagnostics:
            reported = ExpectedDiagnostics.from_source(chunk).check(emitted)
        else:
            reported = emitted
        for diagnostic in reported:
            sys.stderr.write(diagnostic.render([chunk]))
        failed |= any(d.severity is Severity.ERROR for d in reported)

    write_output(args.output, f"{SPLIT_MARKER}\n".join(outputs))
    if args.mlir_pass_statistics:
        sys.stderr.write(statistics.report())
    if timer is not None:
        sys.stderr.write(timer.report())
    return 1 if failed else 0


def _process(
    chunk: SourceFile, ctx: Context, manager: OpPassManager, instrumentation: Instrumentation
) -> ModuleOp:
    with instrumentation.time("Parser"):
        module = parse_module(ctx, chunk)
    with instrumentation.time("Verifier"):
        verify_module(module)
    run_pipeline(manager, module, ctx, instrumentation)
    return module


def _print_module(module: ModuleOp, args: argparse.Namespace) -> str:
    text = StringIO()
    Printer(
        stream=text,
        print_generic_format=args.mlir_print_op_generic,
        print_debuginfo=args.mlir_print_debuginfo,
    ).print_op(module)
    return text.getvalue() + "\n"


def _first_doc_line(cls: type) -> str:
    """The class's own docstring, not an inherited one nor dataclass's
    generated signature."""
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    if doc.startswith(f"{cls.__name__}("):
        return ""
    return next((line.strip() for line in doc.splitlines() if line.strip()), "")


def _describe_options(pass_class: type[ModulePass]) -> list[str]:
    lines = []
    for option in dataclasses.fields(pass_class):
        if not option.init:
            continue
        type_name = getattr(option.type, "__name__", None) or str(option.type)
        default = (
            f" (default: {option.default})"
            if option.default is not dataclasses.MISSING
            else " (required)"
        )
        lines.append(f"      {option.name.replace('_', '-')}=<{type_name}>{default}")
    return lines


def describe_passes(registry: Registry) -> str:
    """The `--list-passes` text: every pass with description and options,
    then every named pipeline with its expansion."""
    lines = ["Passes:"]
    for name in sorted(registry.passes):
        try:
            pass_class = registry.pass_class(name)
        except Exception as error:  # a broken third-party pass must not hide the rest
            lines.append(f"  {name}  -  (failed to load: {error})")
            continue
        description = _first_doc_line(pass_class)
        lines.append(f"  {name}" + (f"  -  {description}" if description else ""))
        lines.extend(_describe_options(pass_class))
    lines.append("Pass Pipelines:")
    for name in sorted(registry.pipelines):
        definition = registry.pipelines[name]
        lines.append(f"  {name}  -  {definition.description}")
        lines.append(f"      expands to: {definition.pipeline}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
