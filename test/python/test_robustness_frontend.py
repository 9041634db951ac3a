"""Front-end robustness (issue 10): thread counts, the lexer's running time,
located messages, and that every pipeline stage's output parses back."""

import time
from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver.registration import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE, default_registry
from graphcompiler.interpreters import reference
from graphcompiler.ir.diagnostics import DiagnosticError, SourceFile
from graphcompiler.ir.parsing import parse_module, split_input
from graphcompiler.ir.verifier import verify_module
from graphcompiler.runtime.jit.engine import MAX_THREADS, JitEngine, default_num_threads
from graphcompiler.tools import gc_run

RELU = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def ctx():
    return default_registry().create_context()


# --- thread counts ------------------------------------------------------------


@pytest.mark.parametrize("count", [2**31, 2**32 + 1, MAX_THREADS + 1, -1, 1.5, "2", True])
def test_engine_rejects_bad_thread_counts(count):
    engine = JitEngine("")
    with pytest.raises(ValueError, match=f"from 1 to {MAX_THREADS}, or 0 for all cores"):
        engine.set_num_threads(count)


def test_engine_accepts_thread_counts_in_range():
    engine = JitEngine("")
    for count in (0, 1, 2, MAX_THREADS):
        engine.set_num_threads(count)


def test_compile_rejects_bad_thread_count_before_compiling():
    with pytest.raises(ValueError, match="got -1"):
        graphcompiler.compile(RELU, num_threads=-1)
    compiled = graphcompiler.compile(RELU, num_threads=1)
    with pytest.raises(ValueError, match="got 2147483648"):
        compiled.set_num_threads(2**31)


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [("GC_NUM_THREADS", "3", 3), ("OMP_NUM_THREADS", "4,2", 4), ("OMP_NUM_THREADS", "", 0)],
)
def test_thread_count_from_environment(monkeypatch, variable, value, expected):
    monkeypatch.delenv("GC_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv(variable, value)
    assert default_num_threads() == expected


@pytest.mark.parametrize("value", ["abc", "-2", "100000", "2147483648"])
def test_bad_thread_count_in_environment_is_named(monkeypatch, value):
    monkeypatch.setenv("GC_NUM_THREADS", value)
    with pytest.raises(ValueError, match="environment variable GC_NUM_THREADS must be"):
        default_num_threads()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--threads", "100000"], "--threads/-threads: expected 1..4096"),
        (["--threads", "-1"], "--threads/-threads: expected 1..4096"),
        (["--threads", "2147483648"], "--threads/-threads: expected 1..4096"),
        (["--bench", "-5"], "--bench/-bench: expected a count >= 1, got '-5'"),
    ],
)
def test_gc_run_rejects_bad_counts(tmp_path, capsys, flags, message):
    path = tmp_path / "relu.mlir"
    path.write_text(RELU)
    with pytest.raises(SystemExit) as exited:
        gc_run.main([str(path), "--random-inputs", *flags])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_gc_run_reports_bad_environment(tmp_path, capsys, monkeypatch):
    path = tmp_path / "relu.mlir"
    path.write_text(RELU)
    monkeypatch.setenv("GC_NUM_THREADS", "100000")
    assert gc_run.main([str(path), "--random-inputs"]) == 1
    assert "gc-run: error: environment variable GC_NUM_THREADS" in capsys.readouterr().err


# --- the lexer ----------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "func.func @", 'module attributes {a = "ok", b = '])
def test_unterminated_string_is_rejected_in_linear_time(ctx, prefix):
    text = prefix + '"abc' + "a" * 2000 + "\n" + "b" * 2000
    start = time.perf_counter()
    with pytest.raises(DiagnosticError) as caught:
        parse_module(ctx, SourceFile("s.mlir", text))
    assert time.perf_counter() - start < 1.0
    assert str(caught.value).startswith(f"s.mlir:1:{text.index(chr(34) + 'abc') + 1}: error:")
    assert "unterminated string literal" in str(caught.value)


def test_unknown_escape_is_located(ctx):
    with pytest.raises(DiagnosticError, match=r"s.mlir:1:15: error: unknown escape"):
        parse_module(ctx, SourceFile("s.mlir", 'func.func @"ab\\qc"() {\n}'))


def test_strings_with_escapes_still_parse(ctx):
    module = parse_module(
        ctx, SourceFile("s.mlir", 'module attributes {a = "x\\"y\\n\\\\z\\41"} {}')
    )
    assert module.attributes["a"].data == 'x"y\n\\zA'


# --- messages -------------------------------------------------------------------


def test_diagnostic_error_str_has_location():
    source = RELU.replace("graph.relu %x", "graph.softmax %x {axis = 3 : i64}")
    with pytest.raises(DiagnosticError) as caught:
        graphcompiler.compile(source)
    assert str(caught.value) == (
        "<string>:2:8: error: 'graph.softmax' op axis 3 is out of range for rank 1"
    )


def test_gc_run_reports_a_declaration_at_its_line(tmp_path, capsys):
    path = tmp_path / "declared.mlir"
    path.write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32>\n")
    assert gc_run.main([str(path), "--random-inputs"]) == 1
    assert capsys.readouterr().err.startswith(
        f"{path}:1:1: error: 'func.func' op a graph function needs a body of exactly one block"
    )


def test_out_of_memory_is_a_tool_error(capsys):
    from graphcompiler.tools.driver import run_tool

    def body() -> int:
        raise MemoryError()

    assert run_tool("gc-run", body, []) == 1
    assert capsys.readouterr().err == "gc-run: error: out of memory: allocation failed\n"


# --- every stage's output parses back ---------------------------------------------

TESTS = Path(__file__).resolve().parent.parent
LIT_INPUTS = sorted(
    path
    for path in TESTS.rglob("*.mlir")
    if not {"Output", "plugins", "python", "Inputs", "fuzz"} & set(path.relative_to(TESTS).parts)
)
STAGES = [*GRAPH_PASSES, *TIR_STAGE.split(","), *LLVM_STAGE.split(",")]


def _reparsed(registry, text: str) -> str:
    module = parse_module(registry.create_context(), SourceFile("printed.mlir", text))
    verify_module(module)
    return str(module)


@pytest.mark.parametrize("path", LIT_INPUTS, ids=lambda p: str(p.relative_to(TESTS)))
def test_each_stage_prints_what_parses_back(path):
    """For every input gc-opt accepts, the text printed after each pass of
    gc-cpu-pipeline parses, verifies and prints the same again. A stage that
    left the text as it was is not parsed again (three in four of them: the
    parse was three quarters of this test's time). The passes run without
    the verifier between them: the reparsed module is verified, and it is
    the pass's output, so a pass that broke the IR still fails here."""
    registry = default_registry()
    for chunk in split_input(SourceFile(str(path), path.read_text())):
        try:
            module = parse_module(registry.create_context(), chunk)
            verify_module(module)
        except DiagnosticError:
            continue  # a negative test's input
        checked = None
        for stage in STAGES:
            try:
                graphcompiler.apply_pipeline(
                    module, f"builtin.module({stage})", registry=registry, verify_each=False
                )
            except DiagnosticError:
                break  # an input this stage rejects (tested elsewhere)
            text = str(module)
            if text != checked:
                assert _reparsed(registry, text) == text, f"after {stage}"
                checked = text


def test_vector_compare_and_select_parse_back():
    text = """func.func @f(%a: vector<8xf32>, %b: vector<8xf32>) -> vector<8xf32> {
  %0 = llvm.fcmp "olt" %a, %b : vector<8xf32>
  %1 = llvm.select %0, %a, %b : vector<8xi1>, vector<8xf32>
  func.return %1 : vector<8xf32>
}"""
    registry = default_registry()
    printed = _reparsed(registry, text)
    assert 'llvm.fcmp "olt" %a, %b : vector<8xf32>' in printed
    assert "llvm.select %0, %a, %b : vector<8xi1>, vector<8xf32>" in printed
    bad = text.replace("%b: vector<8xf32>)", "%b: vector<8xf32>, %c: vector<4xi1>)").replace(
        "llvm.select %0, %a, %b : vector<8xi1>", "llvm.select %c, %a, %b : vector<4xi1>"
    )
    with pytest.raises(DiagnosticError, match="condition must be i1 or a vector of i1"):
        _reparsed(registry, bad)


@pytest.mark.parametrize(
    ("literal", "element_type", "expected"),
    [
        ("0xff800000", "f32", -np.inf),
        ("0x7F800000", "f32", np.inf),
        ("0xff80", "bf16", -np.inf),
        ("0x7c00", "f16", np.inf),
    ],
)
def test_hex_float_literals_are_bit_patterns(literal, element_type, expected):
    text = f"""func.func @main() -> tensor<2x{element_type}> {{
  %0 = graph.constant dense<{literal}> : tensor<2x{element_type}>
  func.return %0 : tensor<2x{element_type}>
}}"""
    module = graphcompiler.parse(text)
    assert str(module) == _reparsed(default_registry(), str(module))
    np.testing.assert_array_equal(reference.run(module), [expected, expected])


@pytest.mark.parametrize(
    ("literal", "element_type", "expected"),
    [
        ("(0x7f80,0.000000e+00)", "bf16", (np.inf, 0.0)),
        ("(1.500000e+00,0xffc00000)", "f32", (1.5, np.nan)),
        ("(0x7ff0000000000000,0xfff0000000000000)", "f64", (np.inf, -np.inf)),
        ("(0x10,-2)", "i32", (16, -2)),
    ],
)
def test_complex_literal_parts_in_hex_are_bit_patterns(literal, element_type, expected):
    """MLIR and xDSL print a non-finite complex part as its bits beside a
    decimal part; that text parses back to the same values."""
    text = f"""func.func @f() attributes {{c = dense<{literal}> : tensor<2xcomplex<{element_type}>>}} {{
  func.return
}}"""
    module = graphcompiler.parse(text)
    assert str(module) == _reparsed(default_registry(), str(module))
    values = module.ops.first.attributes["c"].get_values()
    np.testing.assert_array_equal(np.array(values, dtype=np.float64), [expected, expected])


@pytest.mark.parametrize(
    ("literal", "element_type", "expected"),
    [("-3", "i8", -3), ("0x7fc00000", "f32", np.nan), ("true", "i1", True), ("-2.5", "bf16", -2.5)],
)
def test_a_big_splat_literal_is_held_as_one_value(literal, element_type, expected):
    """xDSL lists a splat's value once per element (12 s for 8.5M);
    a big one is held as its value, printed and read as before."""
    shape = "16x8x257x257"
    text = f"""func.func @main() -> tensor<{shape}x{element_type}> {{
  %0 = graph.constant dense<{literal}> : tensor<{shape}x{element_type}>
  func.return %0 : tensor<{shape}x{element_type}>
}}"""
    module = graphcompiler.parse(text)
    constant = next(op for op in module.walk() if op.name == "graph.constant")
    assert len(constant.value) == 1
    assert f"dense<{literal if element_type != 'bf16' else '-2.500000e+00'}>" in str(module)
    values = reference.run(_reparsed(default_registry(), str(module)))
    assert values.shape == (16, 8, 257, 257)
    np.testing.assert_array_equal(values[::7, ::3, ::50, ::50], expected)


def test_a_big_splat_out_of_range_is_located():
    text = """func.func @main() -> tensor<256x256xi8> {
  %0 = graph.constant dense<300> : tensor<256x256xi8>
  func.return %0 : tensor<256x256xi8>
}"""
    with pytest.raises(
        DiagnosticError, match=r"s.mlir:2:23: error: Integer value 300 is out of range for type i8"
    ):
        parse_module(default_registry().create_context(), SourceFile("s.mlir", text))


def test_a_reader_that_stops_early_is_not_an_error():
    """`gc-opt ... | head -1`: the closed pipe ends the output quietly."""
    import shutil
    import subprocess

    example = Path(__file__).parents[2] / "examples" / "transformer.mlir"
    gc_opt = shutil.which("gc-opt")
    command = f"'{gc_opt}' '{example}' --pass-pipeline='builtin.module(gc-cpu-pipeline)' | head -1"
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"], capture_output=True, text=True
    )
    assert result.stdout.startswith("builtin.module")
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
