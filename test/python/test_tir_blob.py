"""`#tir.blob` (dialects/tir/blob.py): big packed weights reach the JIT as
the packer's own aligned array, with no bytes copy on the way; the IR text
names a blob, parses back in the process holding it, and is a located
error elsewhere; translated without external data, a blob is printed."""

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import graphcompiler
from graphcompiler.dialects import tir
from graphcompiler.driver.loading import bind_constants, parse
from graphcompiler.driver.registration import GRAPH_STAGE, apply_pipeline, default_registry
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.lowering.llvm.translate import translate_to_llvm_ir
from graphcompiler.lowering.tir_to_llvm.memory import convert_global
from graphcompiler.runtime.jit import shared_data

K, N = 1024, 768
MATMUL = f"""
func.func @main(%x: tensor<8x{K}xf32>, %w: tensor<{K}x{N}xf32>) -> tensor<8x{N}xf32> {{
  %y = graph.matmul %x, %w : (tensor<8x{K}xf32>, tensor<{K}x{N}xf32>) -> tensor<8x{N}xf32>
  func.return %y : tensor<8x{N}xf32>
}}
"""


def test_the_blob_module_and_the_jit_agree_on_the_alignment():
    assert tir.blob.DATA_ALIGNMENT == shared_data.DATA_ALIGNMENT


@pytest.mark.parametrize(
    "shape, dtype", [((3, 5, 7), np.float32), ((1,), np.int32), ((1, 4096), np.float32)]
)
def test_aligned_zeros_is_zeros_on_a_cache_line(shape, dtype):
    array = tir.aligned_zeros(shape, dtype)
    assert array.shape == shape and array.dtype == dtype and not array.any()
    assert array.ctypes.data % tir.blob.DATA_ALIGNMENT == 0 and array.flags.c_contiguous


def test_a_blob_holds_an_aligned_array_in_place_and_copies_any_other():
    aligned = tir.aligned_zeros((4, 16), np.float32)
    assert np.shares_memory(tir.ConstantBlob(aligned).array, aligned)
    transposed = np.arange(64, dtype=np.float32).reshape(16, 4).T  # not contiguous
    blob = tir.ConstantBlob(transposed)
    assert not np.shares_memory(blob.array, transposed)
    assert np.array_equal(blob.array, transposed) and blob.array.flags.c_contiguous
    assert blob.array.ctypes.data % tir.blob.DATA_ALIGNMENT == 0
    assert not blob.array.flags.writeable and aligned.flags.writeable  # the caller's view unchanged
    assert bytes(blob.data) == np.ascontiguousarray(transposed).tobytes()


def test_the_jit_binds_the_packed_weights_where_the_packer_wrote_them(monkeypatch):
    packed = []

    def recording_zeros(shape, dtype):
        packed.append(tir.blob.aligned_zeros(shape, dtype))
        return packed[-1]

    monkeypatch.setattr(tir, "aligned_zeros", recording_zeros)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((K, N), np.float32)
    compiled = graphcompiler.compile(MATMUL, constants={"w": w}, cache=False)
    assert '#tir.blob<"' in compiled.tir
    x = rng.standard_normal((8, K), np.float32)
    np.testing.assert_allclose(compiled(x), x @ w, rtol=1e-4, atol=1e-3)
    big = [b for b in compiled.engine.external_data.values() if b.nbytes >= tir.BLOB_MIN_BYTES]
    assert len(packed) == 1 and len(big) == 1
    assert np.shares_memory(big[0], packed[0])  # bound in place: no copy on the way


def _global_module(blob_name: str, shape: str = "512x512") -> str:
    return f'builtin.module {{\n  tir.global @w : !tir.tensor<{shape}xf32> = #tir.blob<"{blob_name}">\n}}'


def test_a_blob_prints_and_parses_back_in_its_process():
    blob = tir.ConstantBlob(tir.aligned_zeros((512, 512), np.float32))
    module = parse(_global_module(blob.name))
    (global_,) = module.ops
    assert global_.initial_value.data is blob
    assert f'#tir.blob<"{blob.name}">' in str(module)


def test_an_unknown_blob_is_a_located_parse_error():
    with pytest.raises(
        DiagnosticError, match=r'2:56: error: #tir.blob<"blob-gone">: no such constant'
    ):
        parse(_global_module("blob-gone"))


def test_a_blob_of_another_shape_is_refused_by_the_verifier():
    blob = tir.ConstantBlob(tir.aligned_zeros((512, 512), np.float32))
    with pytest.raises(DiagnosticError, match="2:3: error: .* must hold an array of its shape"):
        parse(_global_module(blob.name, "512x256"))


def test_a_blob_translated_without_external_data_is_printed_in_the_ir():
    values = np.arange(512 * 512, dtype=np.float32).reshape(512, 512)
    blob = tir.ConstantBlob(values)  # held here: the text names it
    global_ = parse(_global_module(blob.name)).ops.first
    module = ModuleOp([convert_global(global_)])
    text = translate_to_llvm_ir(module)
    assert re.search(
        r'@"w" = global \[262144 x float\] \[float\s+0x0, float 0x3ff0000000000000,', text
    )
    data = {}
    module = ModuleOp([convert_global(global_)])
    assert "external global" in translate_to_llvm_ir(module, data)
    (bound,) = data.values()
    assert bytes(bound) == values.tobytes()


@pytest.mark.parametrize("option, blobs", [("", False), ("{blob-constants=true}", True)])
def test_only_compile_asks_for_blobs_so_gc_opt_output_parses_anywhere(option, blobs):
    registry = default_registry()
    module = parse(MATMUL, registry=registry)
    w = np.random.default_rng(1).standard_normal((K, N), np.float32)
    bind_constants(next(iter(module.ops)), {"w": w})
    pipeline = f"builtin.module({GRAPH_STAGE},convert-graph-to-tir{option})"
    apply_pipeline(module, pipeline, registry=registry, verify_each=False)
    text = str(module)
    assert ("#tir.blob<" in text) == blobs
    if not blobs:  # dense literals: the text stands alone
        assert parse(text, registry=registry).is_structurally_equivalent(module)
