"""tir.brgemm / tir.list_brgemm run as generated routines of register-tile
microkernels (runtime/brgemm_routines.py): every tiling (full tiles, row and
column tails), batch 0 (C zeroed unless accumulating), 1 and several,
strided and listed blocks, against a float64 numpy product."""

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

from graphcompiler.runtime.brgemm_routines import BrgemmRoutine
from graphcompiler.runtime.microkernels import microkernel_module
from graphcompiler.target import description as targets

LANES = [lanes for name, lanes in (("avx512", 16), ("avx2", 8), ("generic", 4)) if targets.supported(name)]
SHAPES = [(2, 2, 3, 4, 1), (13, 37, 5, 4, 2), (8, 32, 16, 4, 2), (1, 1, 1, 1, 1), (7, 9, 2, 3, 3)]


def _routine_function(routine: BrgemmRoutine, lanes: int):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(microkernel_module([routine]))
    module.verify()
    features = targets.get_target({16: "avx512", 8: "avx2", 4: "generic"}[lanes]).llvm_features
    machine = llvm.Target.from_default_triple().create_target_machine(features=features)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64, ctypes.c_bool)
    return engine, signature(engine.get_function_address(routine.name))


def _blocks(data, offset, rows, columns, lead):
    flat = data[offset : offset + (rows - 1) * lead + columns]
    return np.lib.stride_tricks.as_strided(flat, (rows, columns), (lead * 4, 4)).astype(np.float64)


@pytest.mark.parametrize("lanes", LANES)
@pytest.mark.parametrize("listed", [False, True])
@pytest.mark.parametrize("m, n, k, rows, vectors", SHAPES)
def test_routines_match_numpy(lanes, listed, m, n, k, rows, vectors):
    lda, ldb, ldc = k + 1, n + 3, n + 2
    routine = BrgemmRoutine(m, n, k, lda, ldb, ldc, m * lda + 5, k * ldb + 7, lanes, rows, vectors, listed)
    assert {kernel.lanes for kernel in routine.microkernels()} == {lanes}
    engine, function = _routine_function(routine, lanes)
    rng = np.random.default_rng(m * n * k)
    for batch in (0, 1, 3):
        for accumulate in (False, True):
            blocks = max(batch, 1)
            a = rng.standard_normal(blocks * routine.stride_a + m * lda).astype(np.float32)
            b = rng.standard_normal(blocks * routine.stride_b + k * ldb).astype(np.float32)
            c = rng.standard_normal(m * ldc).astype(np.float32)
            expected = c.reshape(m, ldc).astype(np.float64)
            if not accumulate:
                expected[:, :n] = 0
            for index in range(batch):
                expected[:, :n] += _blocks(a, index * routine.stride_a, m, k, lda) @ _blocks(
                    b, index * routine.stride_b, k, n, ldb
                )
            if listed:
                a_list = (ctypes.c_void_p * blocks)(*[a.ctypes.data + i * routine.stride_a * 4 for i in range(blocks)])
                b_list = (ctypes.c_void_p * blocks)(*[b.ctypes.data + i * routine.stride_b * 4 for i in range(blocks)])
                function(ctypes.addressof(a_list), ctypes.addressof(b_list), c.ctypes.data, batch, accumulate)
            else:
                function(a.ctypes.data, b.ctypes.data, c.ctypes.data, batch, accumulate)
            np.testing.assert_allclose(c.reshape(m, ldc), expected, rtol=1e-5, atol=1e-5)
    del engine
