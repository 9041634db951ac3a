"""A program's LLVM IR split into modules built at once (lowering/llvm_split.py)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

import graphcompiler
from graphcompiler.lowering.llvm import split as llvm_split
from graphcompiler.lowering.llvm.split import LlvmProgram
from graphcompiler.runtime.jit import engine as jit
from graphcompiler.runtime.object_cache import unpack_objects

VOID, I64, F32, PTR = ir.VoidType(), ir.IntType(64), ir.FloatType(), ir.PointerType()


def _function(module, name, arguments=(PTR,)):
    function = ir.Function(module, ir.FunctionType(VOID, list(arguments)), name)
    return function, ir.IRBuilder(function.append_basic_block())


def _program() -> ir.Module:
    """main calls k1 (which runs `body` in parallel through the runtime),
    k2 and k3 (which both call `shared`); k1 and k2 read `table`."""
    module = ir.Module()
    module.triple = llvm.get_default_triple()
    table = ir.GlobalVariable(module, ir.ArrayType(F32, 4), "table")
    table.initializer = ir.Constant(ir.ArrayType(F32, 4), [1.0, 2.0, 3.0, 4.0])
    table.global_constant = True
    parallel = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR]), "sc_parallel")

    def store_from_table(builder, pointer, index):
        element = builder.gep(table, [ir.Constant(I64, 0), ir.Constant(I64, index)])
        builder.store(builder.load(element, typ=F32), pointer)

    body, builder = _function(module, "body", (I64, PTR))
    store_from_table(builder, body.args[1], 1)
    builder.ret_void()
    shared, builder = _function(module, "shared")
    builder.store(ir.Constant(F32, 5.0), shared.args[0])
    builder.ret_void()
    kernels = []
    for name in ("k1", "k2", "k3"):
        kernel, builder = _function(module, name)
        if name == "k1":
            builder.call(parallel, [body, kernel.args[0]])
        else:
            if name == "k2":
                store_from_table(builder, kernel.args[0], 2)
            builder.call(shared, [kernel.args[0]])
        builder.ret_void()
        kernels.append(kernel)
    main, builder = _function(module, "main")
    for kernel in kernels:
        builder.call(kernel, [main.args[0]])
    builder.ret_void()
    return module


def _defined(text: str) -> set[str]:
    return set(re.findall(r'^define [^@]*@"([^"]+)"', text, re.M))


def test_the_whole_text_is_the_modules():
    module = _program()
    assert LlvmProgram(module).text == str(module)


def test_parts_define_each_function_once_and_declare_what_they_use(monkeypatch):
    monkeypatch.setattr(llvm_split, "MIN_PART_LINES", 1)
    parts = LlvmProgram(_program()).split("main", 3)
    assert len(parts) == 3
    definitions = [_defined(part.text) for part in parts]
    assert "main" in definitions[0]
    assert sorted(n for d in definitions for n in d) == sorted(
        ["main", "k1", "k2", "k3", "body", "shared"]
    )
    assert {"k1", "body"} in [d & {"k1", "body"} for d in definitions], "a kernel keeps its body"
    for part, defined in zip(parts, definitions, strict=True):
        module = llvm.parse_assembly(part.text)
        module.verify()
        used_elsewhere = {
            name for other in parts if other is not part
            for name in re.findall(r'@"(\w+)"', other.text)
        }  # fmt: skip
        defined_globals = set(re.findall(r'^@"(\w+)" = (?!external)', part.text, re.M))
        assert part.exported == (defined | defined_globals) & used_elsewhere
    assert sum(bool(re.search(r'^@"table" = constant', p.text, re.M)) for p in parts) == 1
    linked = llvm.parse_assembly(parts[0].text)
    for part in parts[1:]:  # a name defined twice or not at all would fail here
        linked.link_in(llvm.parse_assembly(part.text))
    linked.verify()
    assert {f.name for f in linked.functions if not f.is_declaration} == {
        "main",
        "k1",
        "k2",
        "k3",
        "body",
        "shared",
    }


@pytest.mark.parametrize("entry, count", [("main", 1), ("absent", 3)])
def test_no_split_gives_the_whole_module(monkeypatch, entry, count):
    monkeypatch.setattr(llvm_split, "MIN_PART_LINES", 1)
    program = LlvmProgram(_program())
    assert [p.text for p in program.split(entry, count)] == [program.text]


def test_the_module_built_beside_counts_in_the_last_part(monkeypatch):
    """`beside` lines (the runtime) weigh on the last part: a heavy one
    leaves it no kernel, so it is not made and no part builds beside; a
    light one takes the last part, which says so."""
    monkeypatch.setattr(llvm_split, "MIN_PART_LINES", 1)
    program = LlvmProgram(_program())
    heavy = program.split("main", 2, beside=10_000)
    assert len(heavy) == 1 and not heavy[0].builds_beside
    light = program.split("main", 3, beside=1)
    assert [part.builds_beside for part in light] == [False, False, True]


def test_small_programs_are_not_split():
    program = LlvmProgram(_program())
    assert len(program.split("main", 4)) == 1


CHAIN = """
func.func @main(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0 = graph.matmul %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %1 = graph.softmax %0 {axis = -1 : i64} : tensor<64x256xf32>
  %2 = graph.tanh %1 : tensor<64x256xf32>
  %3 = graph.mul %2, %0 : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %4 = graph.softmax %3 {axis = -1 : i64} : tensor<64x256xf32>
  func.return %4 : tensor<64x256xf32>
}
"""


def _chain_expected(x, w):
    def softmax(v):
        e = np.exp(v - v.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    y = x.astype(np.float64) @ w
    return softmax(np.tanh(softmax(y)) * y)


def test_a_split_program_computes_what_the_whole_one_does(monkeypatch, tmp_path):
    monkeypatch.setattr(llvm_split, "MIN_PART_LINES", 1)
    monkeypatch.setattr(jit, "program_parts", lambda: 3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256), dtype=np.float32)
    w = rng.standard_normal((256, 256), dtype=np.float32) / 16
    compiled = graphcompiler.compile(CHAIN, cache=tmp_path)
    # three parts, the runtime linked into the last (sized to take it)
    assert len(unpack_objects(compiled.engine.object_code)) == 3
    np.testing.assert_allclose(compiled(x, w), _chain_expected(x, w), rtol=1e-4, atol=1e-6)
    again = graphcompiler.compile(CHAIN, cache=tmp_path)
    assert again.cache_hit
    np.testing.assert_array_equal(again(x, w), compiled(x, w))


def test_names_llvm_escapes_are_followed_across_parts(monkeypatch):
    """main calls `plain`, which calls `odd "name\\` (printed @"odd \\22name\\5c"):
    wherever `plain` goes, `odd` goes with it or is declared there."""
    monkeypatch.setattr(llvm_split, "MIN_PART_LINES", 1)
    module = ir.Module()
    module.triple = llvm.get_default_triple()
    odd, builder = _function(module, 'odd "name\\')
    builder.store(ir.Constant(F32, 1.0), odd.args[0])
    builder.ret_void()
    plain, builder = _function(module, "plain")
    builder.call(odd, [plain.args[0]])
    builder.ret_void()
    main, builder = _function(module, "main")
    builder.call(plain, [main.args[0]])
    for _ in range(8):  # main outweighs plain: plain goes to the other part
        builder.store(ir.Constant(F32, 2.0), main.args[0])
    builder.ret_void()
    parts = LlvmProgram(module).split("main", 2)
    assert len(parts) == 2
    for part in parts:
        llvm.parse_assembly(part.text).verify()
    linked = llvm.parse_assembly(parts[0].text)
    linked.link_in(llvm.parse_assembly(parts[1].text))
    linked.verify()
    assert {f.name for f in linked.functions if not f.is_declaration} == {
        "main",
        'odd "name\\',
        "plain",
    }


def test_the_entry_is_built_as_it_is_and_calls_its_kernels():
    """The entry, a list of kernel calls, is optnone: LLVM no longer inlines
    every kernel into it (one huge function, optimized and compiled again);
    optimized, it still calls k1, k2 and k3, whatever their size."""
    from graphcompiler.runtime.jit import optimizer

    context = llvm.create_context()
    (module, *runtime) = jit.program_and_runtime(str(_program()), context, "main", None, ())
    try:
        main = module.get_function("main")
        assert {"noinline", "optnone"} <= set(b" ".join(main.attributes).decode().split())
        optimizer.optimize_here(module, jit._target_machine())
        body = str(module.get_function("main"))
        assert all(f"@{kernel}(" in body for kernel in ("k1", "k2", "k3"))
    finally:
        for each in (module, *runtime):
            each.close()
