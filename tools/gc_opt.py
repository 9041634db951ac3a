"""gc-opt: graphcompiler's modular optimizer driver, spoken like `mlir-opt`.

gc-opt in.mlir --pass-pipeline='builtin.module(func.func(cse,canonicalize))'
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from graphcompiler.ir.diagnostics import (
    DiagnosticError,
    ExpectedDiagnostics,
    Severity,
    SourceFile,
    collect_diagnostics,
    did_you_mean,
)
from graphcompiler.ir.parsing import SPLIT_MARKER, parse_module, split_input
from graphcompiler.ir.pass_manager import (
    ALL_PASSES,
    Instrumentation,
    PrintOptions,
    Timer,
    run_pipeline,
)
from graphcompiler.ir.pass_statistics import StatisticsCollector, collect_statistics
from graphcompiler.ir.pipeline import (
    OpPassManager,
    PipelineError,
    build_pass_manager,
    option_help,
)
from graphcompiler.ir.registry import Registry
from graphcompiler.ir.verifier import verify_module
from graphcompiler.passes.view_op_graph import ViewOpGraphPass
from graphcompiler.tools.dialect_doc import dialect_doc
from graphcompiler.tools.driver import (
    ToolArgumentParser,
    ToolError,
    add_flag,
    add_plugin_flag,
    load_registry,
    read_source,
    write_output,
)

TOOL = "gc-opt"


def _argument_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(
        TOOL, "graphcompiler modular optimizer driver (mlir-opt compatible flags)"
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
    add_flag(parser, "mlir-print-ir-before", action="append", default=[], metavar="PASS[,PASS]",
             help="print the IR before the named passes (stderr)")  # fmt: skip
    add_flag(parser, "mlir-print-ir-after", action="append", default=[], metavar="PASS[,PASS]",
             help="print the IR after the named passes (stderr)")  # fmt: skip
    add_flag(parser, "mlir-print-ir-after-change", action="store_true",
             help="with the -after flags: print only when the pass changed the IR")  # fmt: skip
    add_flag(parser, "mlir-print-ir-after-failure", action="store_true",
             help="print the IR a failing pass left (stderr)")  # fmt: skip
    add_flag(parser, "mlir-elide-elementsattrs-if-larger", type=_count, metavar="N",
             help="print dense elements attributes of more than N elements as dense_resource<__elided__>")  # fmt: skip
    add_flag(parser, "verify-each", type=_boolean, nargs="?", const=True, default=True,
             metavar="BOOL", help="run the verifier after each pass (default: true; =0 to skip)")  # fmt: skip
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
    add_flag(parser, "show-dialect-doc", metavar="DIALECT",
             help="print the Markdown reference of a dialect's ops and exit")  # fmt: skip
    add_flag(parser, "view-op-graph", nargs="?", const="-", metavar="FILE",
             help="after the pipeline, write each function's op graph as Graphviz DOT (stderr, or FILE)")  # fmt: skip
    add_plugin_flag(parser)
    return parser


def _boolean(text: str) -> bool:
    """LLVM's cl::opt<bool> spellings."""
    value = {"1": True, "true": True, "0": False, "false": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true/false or 1/0, got '{text}'")
    return value


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a count >= 0, got '{text}'")
    return int(text)


def _pass_names(registry: Registry, options: list[str]) -> frozenset[str]:
    """The comma-separated pass names of `--mlir-print-ir-before/after`,
    each a registered pass (a typo would silently print nothing)."""
    names = frozenset(
        name.strip() for option in options for name in option.split(",") if name.strip()
    )
    for name in sorted(names):
        if name not in registry.passes:
            raise ToolError(
                f"'{name}' is not a registered pass{did_you_mean(name, registry.passes)}"
            )
    return names


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
        if args.show_dialect_doc is not None:
            sys.stdout.write(dialect_doc(registry, args.show_dialect_doc))
            return 0
        if args.pass_pipeline is not None and args.passes is not None:
            raise PipelineError("give either --pass-pipeline or -p, not both")
        manager = build_pass_manager(registry, args.pass_pipeline or args.passes or "")
        if args.view_op_graph is not None:
            manager.elements.append(ViewOpGraphPass(output=args.view_op_graph))
        print_before = _pass_names(registry, args.mlir_print_ir_before)
        print_after = _pass_names(registry, args.mlir_print_ir_after)
        if args.dump_pass_pipeline:
            sys.stderr.write(f"Pass Manager with {manager.pass_count()} passes:\n{manager}\n")
        source = read_source(args.input)
    except (ToolError, PipelineError) as error:
        print(f"{TOOL}: error: {error}", file=sys.stderr)
        return 1

    timer = Timer() if args.mlir_timing else None
    print_options = PrintOptions(
        generic=args.mlir_print_op_generic,
        debuginfo=args.mlir_print_debuginfo,
        elide_elements_above=args.mlir_elide_elementsattrs_if_larger,
    )
    instrumentation = Instrumentation(
        print_before=print_before | ({ALL_PASSES} if args.mlir_print_ir_before_all else set()),
        print_after=print_after | ({ALL_PASSES} if args.mlir_print_ir_after_all else set()),
        print_after_change=args.mlir_print_ir_after_change,
        print_after_failure=args.mlir_print_ir_after_failure,
        verify_each=args.verify_each,
        print_options=print_options,
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
                    outputs[-1] = print_options.text(module) + "\n"
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
        help_text = option_help(option)
        lines.append(
            f"      {option.name.replace('_', '-')}=<{type_name}>{default}"
            + (f"  -  {help_text}" if help_text else "")
        )
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
