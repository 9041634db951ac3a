"""gc-translate: a module to LLVM IR or host assembly, like `mlir-translate`.

    gc-translate kernel.mlir --mlir-to-llvmir     # LLVM IR
    gc-translate kernel.mlir --emit-asm           # optimized host assembly
    gc-translate --import-onnx model.onnx -o model.mlir   # an ONNX model as a graph
    gc-translate model.onnx --emit-shared -o model.so     # an ahead-of-time artifact

The input is a graph (lowered with gc-cpu-pipeline first), Tensor IR
(lowered with tir-to-llvm first) or already the `llvm` dialect; an `.onnx`
input is imported first (graphcompiler.frontends.onnx; `--input-shape` fixes symbolic
dims). `--emit-shared` compiles a graph as `graphcompiler.compile` does and
saves the artifact (driver/artifact.py): a shared library that
`graphcompiler.runtime.load` or C (the header written beside it) runs
without the compiler.
"""

from __future__ import annotations

import argparse
import sys

from graphcompiler.driver.program import TIR_TO_LLVM
from graphcompiler.ir.pass_manager import PrintOptions, run_pipeline
from graphcompiler.ir.pipeline import build_pass_manager
from graphcompiler.lowering.llvm.translate import translate_program
from graphcompiler.tools.driver import (
    ToolArgumentParser,
    ToolError,
    add_flag,
    add_input_shape_flag,
    add_plugin_flag,
    run_on_input,
    write_output,
)

TOOL = "gc-translate"
GRAPH_TO_LLVM = "builtin.module(gc-cpu-pipeline)"


def _argument_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(TOOL, "translate a module to LLVM IR or assembly")
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    mode = parser.add_mutually_exclusive_group(required=True)
    add_flag(mode, "mlir-to-llvmir", action="store_true", help="print LLVM IR")
    add_flag(mode, "emit-asm", action="store_true", help="print optimized host assembly")
    add_flag(
        mode, "import-onnx", action="store_true", help="print an .onnx model as a graph module"
    )
    add_flag(mode, "emit-shared", action="store_true",
             help="write the compiled graph as a shared library (-o FILE.so; FILE.h beside it)")  # fmt: skip
    add_flag(parser, "entry", default="main", help="--emit-shared: the graph function (default: main)")
    add_flag(parser, "output", "-o", dest="output", default="-", metavar="FILE", help="output file")
    add_input_shape_flag(parser)
    add_flag(parser, "mlir-print-debuginfo", action="store_true",
             help="--import-onnx: print locations (loc(\"node name\"))")  # fmt: skip
    add_flag(parser, "mlir-elide-elementsattrs-if-larger", type=int, metavar="N",
             help="--import-onnx: print constants of more than N elements as dense_resource<__elided__>")  # fmt: skip
    add_plugin_flag(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _argument_parser().parse_args(argv)

    def translate(module, registry) -> int:
        if args.import_onnx:
            if not args.input.endswith(".onnx"):
                raise ToolError(f"--import-onnx reads an .onnx file, got '{args.input}'")
            options = PrintOptions(
                debuginfo=args.mlir_print_debuginfo,
                elide_elements_above=args.mlir_elide_elementsattrs_if_larger,
            )
            write_output(args.output, options.text(module) + "\n")
            return 0
        if args.emit_shared:
            return _emit_shared(module, registry, args)
        dialects = {op.dialect_name() for op in module.walk()}
        pipeline = (
            GRAPH_TO_LLVM if "graph" in dialects else TIR_TO_LLVM if "tir" in dialects else None
        )
        if pipeline is not None:
            run_pipeline(build_pass_manager(registry, pipeline), module, registry.create_context())
        program = translate_program(module)
        llvm_ir = program.text
        if args.emit_asm:
            from graphcompiler.runtime.jit.engine import assembly

            llvm_ir = assembly(llvm_ir, program.microkernels)
        write_output(args.output, llvm_ir)
        return 0

    return run_on_input(TOOL, args, translate)


def _emit_shared(module, registry, args) -> int:
    if args.output == "-":
        raise ToolError("--emit-shared writes a library: give its path with -o FILE.so")
    import graphcompiler
    from graphcompiler.runtime.artifact import ArtifactError

    try:
        compiled = graphcompiler.compile(module, entry=args.entry, registry=registry, cache=False)
        compiled.save(args.output)
    except (ArtifactError, ValueError) as error:
        raise ToolError(str(error)) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
