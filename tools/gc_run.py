"""gc-run: JIT-compile a module and run an entry function, like `mlir-runner`.

Graph modules (func.func over graph ops) go through gc-cpu-pipeline:

    gc-run examples/mlp.mlir --random-inputs --check-reference --bench 20
    gc-run model.mlir --input x=x.npy --input w=w.npy --print-output
    gc-run model.onnx --input-shape x=1x3x224x224 --random-inputs --check-reference

Tensor IR modules run an entry that takes no arguments; what it prints goes
to stdout, then its return value if it has one.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from xdsl.dialects import func

from graphcompiler.dialects import tir
from graphcompiler.runtime.jit.engine import MAX_THREADS, check_num_threads, default_num_threads
from graphcompiler.tools.driver import (
    ToolArgumentParser,
    ToolError,
    add_flag,
    add_input_shape_flag,
    add_plugin_flag,
    run_on_input,
)

TOOL = "gc-run"


def _argument_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(TOOL, "JIT-compile and run a module")
    parser.add_argument(
        "input", nargs="?", default="-", help="input .mlir or .onnx file (default: stdin)"
    )
    add_flag(parser, "entry", "-e", default="main", help="the function to run (default: main)")
    add_flag(parser, "threads", type=_thread_count, default=None, metavar="N",
             help=f"threads for parallel loops: 1..{MAX_THREADS}, 0 for all cores (default: GC_NUM_THREADS, OMP_NUM_THREADS or all)")  # fmt: skip
    add_flag(parser, "pass-pipeline", default=None, metavar="PIPELINE",
             help="graphs: compile with this pipeline instead of gc-cpu-pipeline (it must end in the llvm dialect)")  # fmt: skip
    parser.add_argument("--input", "-input", dest="inputs", action="append", default=[], metavar="NAME=FILE.npy",
                        help="a graph input (by argument name or index) from a .npy file")  # fmt: skip
    add_flag(
        parser,
        "random-inputs",
        action="store_true",
        help="fill the other graph inputs with random data",
    )
    add_flag(
        parser, "seed", type=int, default=0, help="random seed for --random-inputs (default: 0)"
    )
    add_flag(parser, "check-reference", action="store_true",
             help="compare with the reference interpreter: NaN and inf in the same places, the other elements within atol + rtol * max|finite reference|; exit 1 on mismatch")  # fmt: skip
    add_flag(parser, "rtol", type=float, default=1e-4, help="relative tolerance (default: 1e-4)")
    add_flag(parser, "atol", type=float, default=1e-5, help="absolute tolerance (default: 1e-5)")
    add_flag(
        parser,
        "bench",
        type=_positive,
        default=None,
        metavar="N",
        help="time N calls; print median and min",
    )
    add_flag(parser, "profile", action="store_true",
             help="time each kernel over the --bench calls (else one more call) and print them: share, ms per call, calls, shapes")  # fmt: skip
    add_flag(parser, "precision", choices=("f32", "bf16"), default="f32",
             help="bf16: matmuls and convolutions with constant weights on bf16 operands, f32 sums (oneDNN's fpmath mode; default: f32)")  # fmt: skip
    add_flag(parser, "tune", action="store_true",
             help="first time the candidate kernels of the graph's convolutions on this machine and keep the fastest (in the cache directory; measured once per machine and shape)")  # fmt: skip
    add_flag(parser, "print-output", action="store_true", help="print the outputs")
    add_flag(parser, "graph-svg", metavar="FILE",
             help="draw the graph after the graph passes to FILE (needs Graphviz's dot)")  # fmt: skip
    add_input_shape_flag(parser)
    add_plugin_flag(parser)
    return parser


def _thread_count(text: str) -> int:
    try:
        return check_num_threads(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 1..{MAX_THREADS} (or 0 for all cores), got '{text}'"
        ) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a count >= 1, got '{text}'")
    return value


def _threads(args: argparse.Namespace) -> int:
    """--threads, else the environment's count (a bad one is a tool error)."""
    if args.threads is not None:
        return args.threads
    try:
        return default_num_threads()
    except ValueError as error:
        raise ToolError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    args = _argument_parser().parse_args(argv)

    def run(module, registry) -> int:
        if any(isinstance(op, tir.FuncOp) for op in module.ops):
            return _run_tir(module, args)
        return _run_graph(module, registry, args)

    return run_on_input(TOOL, args, run)


def _run_tir(module, args: argparse.Namespace) -> int:
    from graphcompiler.driver.program import TirProgram

    program = TirProgram(module, num_threads=_threads(args))
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


def _graph_inputs(function: func.FuncOp, args: argparse.Namespace) -> list[np.ndarray]:
    from graphcompiler.interpreters.reference import random_input

    block = function.body.block
    names = {arg.name_hint: index for index, arg in enumerate(block.args) if arg.name_hint}
    given: dict[int, np.ndarray] = {}
    for spec in args.inputs:
        name, _, path = spec.partition("=")
        if not path:
            raise ToolError(f"--input wants NAME=FILE.npy, got '{spec}'")
        index = names.get(name.lstrip("%"), int(name) if name.isdigit() else None)
        if index is None or index >= len(block.args):
            raise ToolError(
                f"@{args.entry} has no input '{name}' (inputs: {', '.join('%' + n for n in names) or 'by index'})"
            )
        try:
            given[index] = np.load(path)
        except (OSError, ValueError) as error:
            raise ToolError(f"cannot read '{path}': {error}") from None
    missing = [f"#{i} ('%{a.name_hint}')" for i, a in enumerate(block.args) if i not in given]
    if missing and not args.random_inputs:
        raise ToolError(
            f"@{args.entry} has inputs without a value: {', '.join(missing)}; give "
            "--input NAME=FILE.npy for each, or --random-inputs for the rest"
        )
    rng = np.random.default_rng(args.seed)
    inputs = []
    for index, arg in enumerate(block.args):
        if index in given:
            inputs.append(given[index])
            continue
        inputs.append(random_input(arg.type, rng))
    return inputs


def _tune(module, args: argparse.Namespace) -> None:
    """--tune: measure what this machine's table lacks (on one thread, as
    tune does by default), saying what it chose."""
    from graphcompiler.driver.tuning import tune

    try:
        rows = tune(module, log=lambda line: print(f"{TOOL}: tune: {line}", file=sys.stderr))
    except ValueError as error:
        raise ToolError(str(error)) from None
    known = sum(not row["measured"] for row in rows)
    print(f"{TOOL}: tune: {len(rows)} convolutions, {len(rows) - known} measured now, "
          f"{known} known", file=sys.stderr)  # fmt: skip


def _run_graph(module, registry, args: argparse.Namespace) -> int:
    import graphcompiler
    from graphcompiler.driver.compiler import check_pipeline_ends_in_llvm
    from graphcompiler.interpreters import reference
    from graphcompiler.ir.pipeline import PipelineError
    from graphcompiler.passes.view_op_graph import dot_executable, dot_to_svg
    from graphcompiler.tools.progress import CompileProgress

    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if args.entry not in functions:
        raise ToolError(
            f"no function @{args.entry} (functions: {', '.join(sorted(functions)) or 'none'})"
        )
    try:  # what the flags get wrong is said before compiling
        if args.pass_pipeline is not None:
            if args.profile:
                raise ValueError(
                    "--profile times the default pipeline's kernels: drop --pass-pipeline"
                )
            check_pipeline_ends_in_llvm(registry, args.pass_pipeline)
        if args.graph_svg is not None:
            dot_executable()
    except (ValueError, FileNotFoundError, PipelineError) as error:
        raise ToolError(str(error)) from None
    if args.tune:
        _tune(module, args)
    # then compile: what cannot be compiled is a located diagnostic
    progress = CompileProgress()
    try:
        compiled = graphcompiler.compile(
            module,
            entry=args.entry,
            pipeline=args.pass_pipeline,
            num_threads=_threads(args),
            registry=registry,
            progress=progress,
            profile=args.profile,
            precision=args.precision,
        )
    finally:
        progress.done()
    if args.graph_svg is not None:
        dot_to_svg(compiled.graph_dot(), args.graph_svg)
    inputs = _graph_inputs(functions[args.entry], args)
    try:  # bad inputs (shape, dtype) are reported by the call boundary
        outputs = compiled(*inputs)
        expected = (
            reference.run(module, *inputs, entry=args.entry) if args.check_reference else None
        )
    except ValueError as error:
        raise ToolError(str(error)) from None
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if args.print_output:
        for index, output in enumerate(outputs):
            print(f"output #{index}: {output.dtype}{list(output.shape)}")
            print(np.array2string(output, threshold=64, precision=6))
    elif not (args.check_reference or args.bench or args.graph_svg):
        for index, output in enumerate(outputs):  # a run that asked for nothing else
            checksum = float(np.sum(output, dtype=np.float64))
            print(f"output #{index}: {output.dtype}{list(output.shape)} sum {checksum:.6g}")
    status = 0
    if expected is not None:
        expected = expected if isinstance(expected, tuple) else (expected,)
        for index, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            # relative to the output's scale: summation order differs from numpy's
            matches, error = reference.compare_to_reference(got, want, args.atol, args.rtol)
            print(
                f"output #{index}: {'matches' if matches else 'MISMATCH with'} the reference (max abs error {error:.3g})"
            )
            status |= 0 if matches else 1
    if args.profile:
        compiled.profile(reset=True)  # the calls below, not the first
    if args.bench:
        times = []
        for _ in range(args.bench):
            start = time.perf_counter()
            compiled(*inputs)
            times.append(time.perf_counter() - start)
        print(
            f"bench: {args.bench} calls, median {float(np.median(times)) * 1e3:.3f} ms, min {min(times) * 1e3:.3f} ms"
        )
    if args.profile:
        from graphcompiler.runtime import kernel_profile

        if not args.bench:
            compiled(*inputs)
        print(kernel_profile.table(compiled.profile()))
    return status


if __name__ == "__main__":
    sys.exit(main())
