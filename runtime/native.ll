; graphcompiler's native runtime, JIT-compiled with the generated code.
;
; Every symbol here is declared in runtime/symbols.py (the one table the IR
; declarations and the JIT's symbol resolution both come from). It is LLVM IR
; rather than C so that nothing needs a C compiler at run time. Parallel
; loops run on the process's one thread pool (runtime/threadpool.ll).

@sc_num_threads = global i32 0          ; 0: the pool's default (the CPUs this process may use)

@fmt_int = private constant [4 x i8] c"%d\0A\00"
@fmt_float = private constant [4 x i8] c"%g\0A\00"
@fmt_element = private constant [4 x i8] c"%g \00"
@fmt_newline = private constant [2 x i8] c"\0A\00"

declare i32 @printf(ptr, ...)
declare i32 @fflush(ptr)
declare ptr @aligned_alloc(i64, i64)
declare void @free(ptr)
declare <8 x float> @llvm.fmuladd.v8f32(<8 x float>, <8 x float>, <8 x float>)

; --- printing (for executable tests) ---------------------------------------

define void @print_int(i32 %value) {
  call i32 (ptr, ...) @printf(ptr @fmt_int, i32 %value)
  call i32 @fflush(ptr null)
  ret void
}

define void @print_float(float %value) {
  %wide = fpext float %value to double
  call i32 (ptr, ...) @printf(ptr @fmt_float, double %wide)
  call i32 @fflush(ptr null)
  ret void
}

; print_tensor(data, count): `count` f32 values on one line.
define void @print_tensor(ptr %data, i64 %count) {
entry:
  %empty = icmp sle i64 %count, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %address = getelementptr float, ptr %data, i64 %i
  %value = load float, ptr %address
  %wide = fpext float %value to double
  call i32 (ptr, ...) @printf(ptr @fmt_element, double %wide)
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %count
  br i1 %more, label %loop, label %done
done:
  call i32 (ptr, ...) @printf(ptr @fmt_newline)
  call i32 @fflush(ptr null)
  ret void
}

; --- memory -------------------------------------------------------------------

define ptr @sc_aligned_alloc(i64 %bytes) {
  %padded = add i64 %bytes, 63
  %rounded = and i64 %padded, -64        ; aligned_alloc wants a multiple of 64
  %nonzero = icmp eq i64 %rounded, 0
  %size = select i1 %nonzero, i64 64, i64 %rounded
  %memory = call ptr @aligned_alloc(i64 64, i64 %size)
  ret ptr %memory
}

define void @sc_aligned_free(ptr %memory) {
  call void @free(ptr %memory)
  ret void
}

; --- parallel for ----------------------------------------------------------------
;
; sc_parallel_call_cpu(body, start, end, step, captures, capture_bytes) runs
; body(i, captures) for i = start, start + step, ... < end on the process's
; thread pool (runtime/threadpool.ll: grains claimed dynamically, the caller
; waits for the work, not for the threads), with this program's thread count.
; `captures` points at the packed values the outlined body needs. Between
; sc_region_begin and sc_region_end (around consecutive kernels made only
; of parallel loops, see passes/tir_parallel_regions.py) the loops are
; queued and run as the stages of one job at the region's end.

declare void @gc_pool_run_or_queue(ptr, i64, i64, i64, ptr, i64, i32)
declare void @gc_region_begin(i32)
declare void @gc_region_end(i32)
declare i32 @gc_pool_thread_index()

define void @sc_parallel_call_cpu(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i64 %capture_bytes) {
  %threads = load i32, ptr @sc_num_threads
  call void @gc_pool_run_or_queue(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i64 %capture_bytes, i32 %threads)
  ret void
}

define void @sc_region_begin() {
  %threads = load i32, ptr @sc_num_threads
  call void @gc_region_begin(i32 %threads)
  ret void
}

define void @sc_region_end() {
  %threads = load i32, ptr @sc_num_threads
  call void @gc_region_end(i32 %threads)
  ret void
}

define i32 @sc_thread_num() {
  %index = call i32 @gc_pool_thread_index()
  ret i32 %index
}

; --- batch-reduce GEMM ------------------------------------------------------------
;
; C[m, n] (+)= sum over b < batch, k < K of A[b*stride_a + m*lda + k] * B[b*stride_b + k*ldb + n]
;
; @sc_brgemm_f32 covers C with 4x16 register tiles (@sc_brgemm_tile_4x16_f32:
; eight <8 x float> accumulators held across the K loop, fmuladd on each A
; element broadcast against two B vectors); the rows and columns that do not
; fill a tile go to @sc_brgemm_rows_f32, a plain loop nest.

define void @sc_brgemm_f32(ptr noalias %A, ptr noalias %B, ptr noalias %C, i64 %batch,
                           i64 %M, i64 %N, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                           i64 %stride_a, i64 %stride_b, i1 %accumulate) {
entry:
  %m_main = and i64 %M, -4
  %n_main = and i64 %N, -16
  %has_rows = icmp sgt i64 %m_main, 0
  %has_cols = icmp sgt i64 %n_main, 0
  %has_batch = icmp sgt i64 %batch, 0
  %has_depth = icmp sgt i64 %K, 0
  %rows_cols = and i1 %has_rows, %has_cols
  %batch_depth = and i1 %has_batch, %has_depth
  %tiled = and i1 %rows_cols, %batch_depth
  br i1 %tiled, label %row_tiles, label %untiled
untiled:
  call void @sc_brgemm_rows_f32(ptr %A, ptr %B, ptr %C, i64 %batch, i64 %M, i64 %N, i64 %K,
                                i64 %lda, i64 %ldb, i64 %ldc, i64 %stride_a, i64 %stride_b,
                                i1 %accumulate)
  ret void
row_tiles:
  %m0 = phi i64 [ 0, %entry ], [ %m0_next, %row_tile_done ]
  %a_rows_offset = mul i64 %m0, %lda
  %a_rows = getelementptr float, ptr %A, i64 %a_rows_offset
  %c_rows_offset = mul i64 %m0, %ldc
  %c_rows = getelementptr float, ptr %C, i64 %c_rows_offset
  br label %col_tiles
col_tiles:
  %n0 = phi i64 [ 0, %row_tiles ], [ %n0_next, %col_tiles ]
  %b_cols = getelementptr float, ptr %B, i64 %n0
  %c_tile = getelementptr float, ptr %c_rows, i64 %n0
  call void @sc_brgemm_tile_4x16_f32(ptr %a_rows, ptr %b_cols, ptr %c_tile, i64 %batch, i64 %K,
                                     i64 %lda, i64 %ldb, i64 %ldc, i64 %stride_a, i64 %stride_b,
                                     i1 %accumulate)
  %n0_next = add i64 %n0, 16
  %n0_more = icmp slt i64 %n0_next, %n_main
  br i1 %n0_more, label %col_tiles, label %row_tile_done
row_tile_done:
  %m0_next = add i64 %m0, 4
  %m0_more = icmp slt i64 %m0_next, %m_main
  br i1 %m0_more, label %row_tiles, label %column_tail
column_tail:
  %n_rest = sub i64 %N, %n_main
  %has_n_rest = icmp sgt i64 %n_rest, 0
  br i1 %has_n_rest, label %do_column_tail, label %row_tail
do_column_tail:
  %b_tail = getelementptr float, ptr %B, i64 %n_main
  %c_column_tail = getelementptr float, ptr %C, i64 %n_main
  call void @sc_brgemm_rows_f32(ptr %A, ptr %b_tail, ptr %c_column_tail, i64 %batch,
                                i64 %m_main, i64 %n_rest, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                                i64 %stride_a, i64 %stride_b, i1 %accumulate)
  br label %row_tail
row_tail:
  %m_rest = sub i64 %M, %m_main
  %has_m_rest = icmp sgt i64 %m_rest, 0
  br i1 %has_m_rest, label %do_row_tail, label %done
do_row_tail:
  %a_tail_offset = mul i64 %m_main, %lda
  %a_tail = getelementptr float, ptr %A, i64 %a_tail_offset
  %c_row_tail_offset = mul i64 %m_main, %ldc
  %c_row_tail = getelementptr float, ptr %C, i64 %c_row_tail_offset
  call void @sc_brgemm_rows_f32(ptr %a_tail, ptr %B, ptr %c_row_tail, i64 %batch,
                                i64 %m_rest, i64 %N, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                                i64 %stride_a, i64 %stride_b, i1 %accumulate)
  br label %done
done:
  ret void
}

; One 4x16 tile of C; requires batch > 0 and K > 0. The accumulators start
; from C (or zero for the first batch when not accumulating) and are stored
; back after each batch.
define internal void @sc_brgemm_tile_4x16_f32(ptr noalias %A, ptr noalias %B, ptr noalias %C,
                                              i64 %batch, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                                              i64 %stride_a, i64 %stride_b, i1 %accumulate)
    alwaysinline {
entry:
  %ldc2 = shl i64 %ldc, 1
  %ldc3 = add i64 %ldc2, %ldc
  %lda2 = shl i64 %lda, 1
  %lda3 = add i64 %lda2, %lda
  %c00 = getelementptr float, ptr %C, i64 0
  %c01 = getelementptr float, ptr %c00, i64 8
  %c10 = getelementptr float, ptr %C, i64 %ldc
  %c11 = getelementptr float, ptr %c10, i64 8
  %c20 = getelementptr float, ptr %C, i64 %ldc2
  %c21 = getelementptr float, ptr %c20, i64 8
  %c30 = getelementptr float, ptr %C, i64 %ldc3
  %c31 = getelementptr float, ptr %c30, i64 8
  br label %batches
batches:
  %b = phi i64 [ 0, %entry ], [ %b_next, %batch_done ]
  %later_batch = icmp sgt i64 %b, 0
  %keep_c = or i1 %later_batch, %accumulate
  %a_offset = mul i64 %b, %stride_a
  %a0 = getelementptr float, ptr %A, i64 %a_offset
  %a1 = getelementptr float, ptr %a0, i64 %lda
  %a2 = getelementptr float, ptr %a0, i64 %lda2
  %a3 = getelementptr float, ptr %a0, i64 %lda3
  %b_offset = mul i64 %b, %stride_b
  %b_base = getelementptr float, ptr %B, i64 %b_offset
  %loaded00 = load <8 x float>, ptr %c00, align 4
  %init00 = select i1 %keep_c, <8 x float> %loaded00, <8 x float> zeroinitializer
  %loaded01 = load <8 x float>, ptr %c01, align 4
  %init01 = select i1 %keep_c, <8 x float> %loaded01, <8 x float> zeroinitializer
  %loaded10 = load <8 x float>, ptr %c10, align 4
  %init10 = select i1 %keep_c, <8 x float> %loaded10, <8 x float> zeroinitializer
  %loaded11 = load <8 x float>, ptr %c11, align 4
  %init11 = select i1 %keep_c, <8 x float> %loaded11, <8 x float> zeroinitializer
  %loaded20 = load <8 x float>, ptr %c20, align 4
  %init20 = select i1 %keep_c, <8 x float> %loaded20, <8 x float> zeroinitializer
  %loaded21 = load <8 x float>, ptr %c21, align 4
  %init21 = select i1 %keep_c, <8 x float> %loaded21, <8 x float> zeroinitializer
  %loaded30 = load <8 x float>, ptr %c30, align 4
  %init30 = select i1 %keep_c, <8 x float> %loaded30, <8 x float> zeroinitializer
  %loaded31 = load <8 x float>, ptr %c31, align 4
  %init31 = select i1 %keep_c, <8 x float> %loaded31, <8 x float> zeroinitializer
  br label %depth
depth:
  %k = phi i64 [ 0, %batches ], [ %k_next, %depth ]
  %acc00 = phi <8 x float> [ %init00, %batches ], [ %sum00, %depth ]
  %acc01 = phi <8 x float> [ %init01, %batches ], [ %sum01, %depth ]
  %acc10 = phi <8 x float> [ %init10, %batches ], [ %sum10, %depth ]
  %acc11 = phi <8 x float> [ %init11, %batches ], [ %sum11, %depth ]
  %acc20 = phi <8 x float> [ %init20, %batches ], [ %sum20, %depth ]
  %acc21 = phi <8 x float> [ %init21, %batches ], [ %sum21, %depth ]
  %acc30 = phi <8 x float> [ %init30, %batches ], [ %sum30, %depth ]
  %acc31 = phi <8 x float> [ %init31, %batches ], [ %sum31, %depth ]
  %pa0 = getelementptr float, ptr %a0, i64 %k
  %va0 = load float, ptr %pa0
  %one0 = insertelement <8 x float> poison, float %va0, i64 0
  %splat0 = shufflevector <8 x float> %one0, <8 x float> poison, <8 x i32> zeroinitializer
  %pa1 = getelementptr float, ptr %a1, i64 %k
  %va1 = load float, ptr %pa1
  %one1 = insertelement <8 x float> poison, float %va1, i64 0
  %splat1 = shufflevector <8 x float> %one1, <8 x float> poison, <8 x i32> zeroinitializer
  %pa2 = getelementptr float, ptr %a2, i64 %k
  %va2 = load float, ptr %pa2
  %one2 = insertelement <8 x float> poison, float %va2, i64 0
  %splat2 = shufflevector <8 x float> %one2, <8 x float> poison, <8 x i32> zeroinitializer
  %pa3 = getelementptr float, ptr %a3, i64 %k
  %va3 = load float, ptr %pa3
  %one3 = insertelement <8 x float> poison, float %va3, i64 0
  %splat3 = shufflevector <8 x float> %one3, <8 x float> poison, <8 x i32> zeroinitializer
  %b_row_offset = mul i64 %k, %ldb
  %pb0 = getelementptr float, ptr %b_base, i64 %b_row_offset
  %pb1 = getelementptr float, ptr %pb0, i64 8
  %vb0 = load <8 x float>, ptr %pb0, align 4
  %vb1 = load <8 x float>, ptr %pb1, align 4
  %sum00 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat0, <8 x float> %vb0, <8 x float> %acc00)
  %sum01 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat0, <8 x float> %vb1, <8 x float> %acc01)
  %sum10 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat1, <8 x float> %vb0, <8 x float> %acc10)
  %sum11 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat1, <8 x float> %vb1, <8 x float> %acc11)
  %sum20 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat2, <8 x float> %vb0, <8 x float> %acc20)
  %sum21 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat2, <8 x float> %vb1, <8 x float> %acc21)
  %sum30 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat3, <8 x float> %vb0, <8 x float> %acc30)
  %sum31 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %splat3, <8 x float> %vb1, <8 x float> %acc31)
  %k_next = add i64 %k, 1
  %k_more = icmp slt i64 %k_next, %K
  br i1 %k_more, label %depth, label %batch_done
batch_done:
  store <8 x float> %sum00, ptr %c00, align 4
  store <8 x float> %sum01, ptr %c01, align 4
  store <8 x float> %sum10, ptr %c10, align 4
  store <8 x float> %sum11, ptr %c11, align 4
  store <8 x float> %sum20, ptr %c20, align 4
  store <8 x float> %sum21, ptr %c21, align 4
  store <8 x float> %sum30, ptr %c30, align 4
  store <8 x float> %sum31, ptr %c31, align 4
  %b_next = add i64 %b, 1
  %b_more = icmp slt i64 %b_next, %batch
  br i1 %b_more, label %batches, label %done
done:
  ret void
}

; Any M, N (a tail of the tiled kernel, or everything when it does not apply):
; the innermost loop runs over n with unit stride in B and C, which LLVM
; vectorizes at O3.
define internal void @sc_brgemm_rows_f32(ptr noalias %A, ptr noalias %B, ptr noalias %C, i64 %batch,
                                         i64 %M, i64 %N, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                                         i64 %stride_a, i64 %stride_b, i1 %accumulate) {
entry:
  br i1 %accumulate, label %compute, label %zero_rows
zero_rows:
  %zm = phi i64 [ 0, %entry ], [ %zm_next, %zero_row_done ]
  %zrow = mul i64 %zm, %ldc
  br label %zero_cols
zero_cols:
  %zn = phi i64 [ 0, %zero_rows ], [ %zn_next, %zero_cols ]
  %zindex = add i64 %zrow, %zn
  %zaddress = getelementptr float, ptr %C, i64 %zindex
  store float 0.0, ptr %zaddress
  %zn_next = add i64 %zn, 1
  %zn_more = icmp slt i64 %zn_next, %N
  br i1 %zn_more, label %zero_cols, label %zero_row_done
zero_row_done:
  %zm_next = add i64 %zm, 1
  %zm_more = icmp slt i64 %zm_next, %M
  br i1 %zm_more, label %zero_rows, label %compute
compute:
  %has_batch = icmp sgt i64 %batch, 0
  br i1 %has_batch, label %batches, label %done
batches:
  %b = phi i64 [ 0, %compute ], [ %b_next, %batch_done ]
  %a_base_offset = mul i64 %b, %stride_a
  %a_base = getelementptr float, ptr %A, i64 %a_base_offset
  %b_base_offset = mul i64 %b, %stride_b
  %b_base = getelementptr float, ptr %B, i64 %b_base_offset
  br label %rows
rows:
  %m = phi i64 [ 0, %batches ], [ %m_next, %row_done ]
  %a_row_offset = mul i64 %m, %lda
  %c_row_offset = mul i64 %m, %ldc
  %c_row = getelementptr float, ptr %C, i64 %c_row_offset
  br label %depth
depth:
  %k = phi i64 [ 0, %rows ], [ %k_next, %depth_done ]
  %a_index = add i64 %a_row_offset, %k
  %a_address = getelementptr float, ptr %a_base, i64 %a_index
  %a_value = load float, ptr %a_address
  %b_row_offset = mul i64 %k, %ldb
  %b_row = getelementptr float, ptr %b_base, i64 %b_row_offset
  br label %cols
cols:
  %n = phi i64 [ 0, %depth ], [ %n_next, %cols ]
  %b_address = getelementptr float, ptr %b_row, i64 %n
  %b_value = load float, ptr %b_address
  %c_address = getelementptr float, ptr %c_row, i64 %n
  %c_value = load float, ptr %c_address
  %product = fmul float %a_value, %b_value
  %sum = fadd float %c_value, %product
  store float %sum, ptr %c_address
  %n_next = add i64 %n, 1
  %n_more = icmp slt i64 %n_next, %N
  br i1 %n_more, label %cols, label %depth_done
depth_done:
  %k_next = add i64 %k, 1
  %k_more = icmp slt i64 %k_next, %K
  br i1 %k_more, label %depth, label %row_done
row_done:
  %m_next = add i64 %m, 1
  %m_more = icmp slt i64 %m_next, %M
  br i1 %m_more, label %rows, label %batch_done
batch_done:
  %b_next = add i64 %b, 1
  %b_more = icmp slt i64 %b_next, %batch
  br i1 %b_more, label %batches, label %done
done:
  ret void
}

; list_brgemm: the b-th blocks of A and B are at a_list[b] and b_list[b].
define void @sc_list_brgemm_f32(ptr %a_list, ptr %b_list, ptr noalias %C, i64 %batch,
                                i64 %M, i64 %N, i64 %K, i64 %lda, i64 %ldb, i64 %ldc,
                                i1 %accumulate) {
entry:
  %has_batch = icmp sgt i64 %batch, 0
  br i1 %has_batch, label %first, label %empty
empty:
  br i1 %accumulate, label %done, label %zero
zero:
  call void @sc_brgemm_f32(ptr null, ptr null, ptr %C, i64 0, i64 %M, i64 %N, i64 %K,
                           i64 %lda, i64 %ldb, i64 %ldc, i64 0, i64 0, i1 false)
  br label %done
first:
  %a0 = load ptr, ptr %a_list
  %b0 = load ptr, ptr %b_list
  call void @sc_brgemm_f32(ptr %a0, ptr %b0, ptr %C, i64 1, i64 %M, i64 %N, i64 %K,
                           i64 %lda, i64 %ldb, i64 %ldc, i64 0, i64 0, i1 %accumulate)
  %more_batches = icmp sgt i64 %batch, 1
  br i1 %more_batches, label %rest, label %done
rest:
  %b = phi i64 [ 1, %first ], [ %b_next, %rest ]
  %a_slot = getelementptr ptr, ptr %a_list, i64 %b
  %a_block = load ptr, ptr %a_slot
  %b_slot = getelementptr ptr, ptr %b_list, i64 %b
  %b_block = load ptr, ptr %b_slot
  call void @sc_brgemm_f32(ptr %a_block, ptr %b_block, ptr %C, i64 1, i64 %M, i64 %N, i64 %K,
                           i64 %lda, i64 %ldb, i64 %ldc, i64 0, i64 0, i1 true)
  %b_next = add i64 %b, 1
  %b_more = icmp slt i64 %b_next, %batch
  br i1 %b_more, label %rest, label %done
done:
  ret void
}
