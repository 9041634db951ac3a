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

; --- profiling (tir-profile-kernels) ----------------------------------------

declare i32 @clock_gettime(i32, ptr)

define i64 @sc_clock_ns() {
  %time = alloca { i64, i64 }                 ; struct timespec
  call i32 @clock_gettime(i32 1, ptr %time)   ; CLOCK_MONOTONIC
  %seconds = load i64, ptr %time
  %field = getelementptr { i64, i64 }, ptr %time, i32 0, i32 1
  %nanoseconds = load i64, ptr %field
  %scaled = mul i64 %seconds, 1000000000
  %total = add i64 %scaled, %nanoseconds
  ret i64 %total
}

define i32 @sc_thread_num() {
  %index = call i32 @gc_pool_thread_index()
  ret i32 %index
}
