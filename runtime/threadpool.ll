; graphcompiler's thread pool: one per process, shared by every compiled
; program (runtime/threadpool.py compiles this module once and publishes
; gc_pool_run and gc_pool_thread_index to the programs' linker).
;
; Why not libgomp: GOMP_parallel ends with a barrier that every thread of
; the team must reach, so one descheduled thread stalls each parallel op
; for a scheduler tick (4 ms) when other programs share the cores.
;
; How: a parallel loop is cut into grains (about 4 per thread). The caller
; publishes the job and claims grains itself; helper threads claim grains
; as they arrive. The caller waits for the grains to be *done*, not for the
; helpers to arrive: a helper that is descheduled, or late, finds the job
; finished and claims nothing. Helpers spin briefly after each job (the
; next op of a graph call follows within microseconds), then sleep on a
; futex. One job runs at a time: a parallel loop started while the pool is
; busy (a nested loop, or a call from a second Python thread) runs
; serially in its caller, which is always correct.
;
; Claiming: @job_next holds (generation << 32) | grains left. A helper
; claims a grain with a compare-and-swap that checks the generation, and
; reads the job only after the claim succeeds: a job cannot end, nor its
; fields change, while one of its grains is claimed and not done.

@gc_pool_futex_syscall = global i64 202   ; SYS_futex (set per machine at load)
@gc_pool_default_threads = global i32 1   ; what a thread count of 0 means
@gc_pool_spin_cycles = global i64 200000  ; cycle-counter ticks a helper spins before sleeping

@lock = internal global i32 0             ; 1 while a parallel loop owns the pool
@generation = internal global i32 0       ; the futex word: bumped per job and at shutdown
@sleepers = internal global i32 0
@stop = internal global i32 0
@workers = internal global i32 0          ; helper threads created
@handles = internal global [4096 x i64] zeroinitializer
@index_key = internal global i32 0        ; pthread key: a helper's 1-based index

@job_next = internal global i64 0
@job_remaining = internal global i64 0    ; grains not done yet
@job_helpers = internal global i32 0      ; helpers 1..job_helpers may claim grains
@job_body = internal global ptr null
@job_captures = internal global ptr null
@job_start = internal global i64 0
@job_step = internal global i64 0
@job_iterations = internal global i64 0
@job_grain = internal global i64 0
@job_grains = internal global i64 0
@job_taken = internal global [256 x i64] zeroinitializer  ; a bit per grain (4 per thread, 4096 threads)

declare i64 @syscall(i64, ...)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @pthread_key_create(ptr, ptr)
declare i32 @pthread_setspecific(i32, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @sched_yield()
declare i64 @llvm.readcyclecounter()

; --- waiting ----------------------------------------------------------------------

define internal void @spin_hint() alwaysinline {
  call void asm sideeffect "SPIN_HINT", ""()
  ret void
}

define internal void @futex_wait(ptr %word, i32 %expected) {
  %timeout = alloca { i64, i64 }               ; 50 ms: a lost wake-up costs no more
  store { i64, i64 } { i64 0, i64 50000000 }, ptr %timeout
  %number = load i64, ptr @gc_pool_futex_syscall
  %value = zext i32 %expected to i64
  call i64 (i64, ...) @syscall(i64 %number, ptr %word, i64 128, i64 %value, ptr %timeout)  ; FUTEX_WAIT_PRIVATE
  ret void
}

define internal void @futex_wake_all(ptr %word) {
  %number = load i64, ptr @gc_pool_futex_syscall
  call i64 (i64, ...) @syscall(i64 %number, ptr %word, i64 129, i64 2147483647)  ; FUTEX_WAKE_PRIVATE
  ret void
}

; The first generation other than %seen: spin, then sleep until it changes.
define internal i32 @next_generation(i32 %seen) {
entry:
  %t0 = call i64 @llvm.readcyclecounter()
  %budget = load i64, ptr @gc_pool_spin_cycles
  br label %spin
spin:
  %gen = load atomic i32, ptr @generation acquire, align 4
  %changed = icmp ne i32 %gen, %seen
  br i1 %changed, label %return, label %keep
keep:
  %now = call i64 @llvm.readcyclecounter()
  %elapsed = sub i64 %now, %t0
  %long = icmp ugt i64 %elapsed, %budget
  br i1 %long, label %sleep, label %hint
hint:
  call void @spin_hint()
  br label %spin
sleep:
  atomicrmw add ptr @sleepers, i32 1 seq_cst
  %again = load atomic i32, ptr @generation seq_cst, align 4
  %unchanged = icmp eq i32 %again, %seen
  br i1 %unchanged, label %futex, label %awake
futex:
  call void @futex_wait(ptr @generation, i32 %seen)
  br label %awake
awake:
  atomicrmw sub ptr @sleepers, i32 1 seq_cst
  br label %spin
return:
  ret i32 %gen
}

; --- running a job ----------------------------------------------------------------

; Claim and run grains of job %gen until none is left. A claim takes a
; ticket from @job_next (which keeps a finished job from being touched),
; then a grain: the first free one from the thread's home position, its
; share of a static schedule (thread `slot` of `threads` starts at
; slot * grains / threads, then goes on from its last grain). So a loop's
; grains go to the same threads from one op to the next (and one call to
; the next) while no thread lags, and data stays in that core's cache.
define internal void @run_grains(i32 %gen, i64 %slot) {
entry:
  %gen64 = zext i32 %gen to i64
  %tag = shl i64 %gen64, 32
  br label %claim
claim:
  %cursor = phi i64 [ -1, %entry ], [ %next_cursor, %finished ], [ %cursor, %try ]
  %word = load atomic i64, ptr @job_next monotonic, align 8
  %word_tag = and i64 %word, -4294967296
  %same = icmp eq i64 %word_tag, %tag
  %left = and i64 %word, 4294967295
  %some = icmp ne i64 %left, 0
  %claimable = and i1 %same, %some
  br i1 %claimable, label %try, label %done
try:
  %claimed = sub i64 %word, 1
  %pair = cmpxchg ptr @job_next, i64 %word, i64 %claimed acquire monotonic
  %won = extractvalue { i64, i1 } %pair, 1
  br i1 %won, label %run, label %claim
run:
  %grains = load atomic i64, ptr @job_grains monotonic, align 8
  %grain = load atomic i64, ptr @job_grain monotonic, align 8
  %iterations = load atomic i64, ptr @job_iterations monotonic, align 8
  %start = load atomic i64, ptr @job_start monotonic, align 8
  %step = load atomic i64, ptr @job_step monotonic, align 8
  %body = load atomic ptr, ptr @job_body monotonic, align 8
  %captures = load atomic ptr, ptr @job_captures monotonic, align 8
  %helpers = load atomic i32, ptr @job_helpers monotonic, align 4
  %helpers64 = zext i32 %helpers to i64
  %threads = add i64 %helpers64, 1
  %first_claim = icmp slt i64 %cursor, 0
  %home_scaled = mul i64 %slot, %grains
  %home = udiv i64 %home_scaled, %threads
  %from = select i1 %first_claim, i64 %home, i64 %cursor
  br label %scan
scan:
  %candidate_raw = phi i64 [ %from, %run ], [ %candidate_next, %taken ]
  %wraps = icmp uge i64 %candidate_raw, %grains
  %candidate = select i1 %wraps, i64 0, i64 %candidate_raw
  %word_index = lshr i64 %candidate, 6
  %bit_index = and i64 %candidate, 63
  %bit = shl i64 1, %bit_index
  %slot_word = getelementptr [256 x i64], ptr @job_taken, i64 0, i64 %word_index
  %before = atomicrmw or ptr %slot_word, i64 %bit monotonic
  %was = and i64 %before, %bit
  %free = icmp eq i64 %was, 0
  br i1 %free, label %chosen, label %taken
taken:
  %candidate_next = add i64 %candidate, 1
  br label %scan
chosen:
  %first = mul i64 %candidate, %grain
  %end_unclamped = add i64 %first, %grain
  %over = icmp sgt i64 %end_unclamped, %iterations
  %end = select i1 %over, i64 %iterations, i64 %end_unclamped
  br label %loop
loop:
  %k = phi i64 [ %first, %chosen ], [ %k_next, %loop ]
  %offset = mul i64 %k, %step
  %i = add i64 %start, %offset
  call void %body(i64 %i, ptr %captures)
  %k_next = add i64 %k, 1
  %more = icmp slt i64 %k_next, %end
  br i1 %more, label %loop, label %finished
finished:
  %next_cursor = add i64 %candidate, 1
  atomicrmw sub ptr @job_remaining, i64 1 release
  br label %claim
done:
  ret void
}

; Until every grain of the job is done: spin, then yield the core (the
; helper still running a grain may be waiting for it).
define internal void @wait_until_done() {
entry:
  br label %check
check:
  %spins = phi i64 [ 0, %entry ], [ %spins_next, %hint ], [ %spins_next, %yield ]
  %left = load atomic i64, ptr @job_remaining acquire, align 8
  %done = icmp eq i64 %left, 0
  br i1 %done, label %return, label %wait
wait:
  %spins_next = add i64 %spins, 1
  %long = icmp ugt i64 %spins_next, 4000
  br i1 %long, label %yield, label %hint
hint:
  call void @spin_hint()
  br label %check
yield:
  call i32 @sched_yield()
  br label %check
return:
  ret void
}

define internal ptr @helper(ptr %arg) {
entry:
  %slot = ptrtoint ptr %arg to i64
  %key = load i32, ptr @index_key
  call i32 @pthread_setspecific(i32 %key, ptr %arg)
  %first_seen = load atomic i32, ptr @generation acquire, align 4
  br label %loop
loop:
  ; stop is checked before each wait: a helper that starts after the
  ; shutdown's generation bump sees the stop flag set before it
  %seen = phi i32 [ %first_seen, %entry ], [ %gen, %loop_end ]
  %stopping = load atomic i32, ptr @stop seq_cst, align 4
  %stop_now = icmp ne i32 %stopping, 0
  br i1 %stop_now, label %exit, label %wait
wait:
  %gen = call i32 @next_generation(i32 %seen)
  %helpers = load atomic i32, ptr @job_helpers monotonic, align 4
  %helpers64 = zext i32 %helpers to i64
  %wanted = icmp ule i64 %slot, %helpers64
  br i1 %wanted, label %help, label %loop_end
help:
  call void @run_grains(i32 %gen, i64 %slot)
  br label %loop_end
loop_end:
  br label %loop
exit:
  ret ptr null
}

; Create helpers until there are %wanted (fewer if the system refuses).
define internal void @ensure_helpers(i32 %wanted) {
entry:
  br label %check
check:
  %count = load i32, ptr @workers
  %enough = icmp sge i32 %count, %wanted
  br i1 %enough, label %return, label %create
create:
  %index = sext i32 %count to i64
  %handle = getelementptr [4096 x i64], ptr @handles, i64 0, i64 %index
  %slot = add i64 %index, 1
  %arg = inttoptr i64 %slot to ptr
  %failed = call i32 @pthread_create(ptr %handle, ptr null, ptr @helper, ptr %arg)
  %ok = icmp eq i32 %failed, 0
  br i1 %ok, label %created, label %return
created:
  %next = add i32 %count, 1
  store i32 %next, ptr @workers
  br label %check
return:
  ret void
}

; --- the interface ----------------------------------------------------------------

; body(i, captures) for i = start, start + step, ... < end on `threads`
; threads (0: @gc_pool_default_threads).
define void @gc_pool_run(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i32 %requested) {
entry:
  %empty = icmp sge i64 %start, %end
  br i1 %empty, label %return, label %count
count:
  %span = sub i64 %end, %start
  %span_up = add i64 %span, %step
  %span_up1 = sub i64 %span_up, 1
  %iterations = sdiv i64 %span_up1, %step
  %zero = icmp eq i32 %requested, 0
  %default = load i32, ptr @gc_pool_default_threads
  %threads_any = select i1 %zero, i32 %default, i32 %requested
  %over_limit = icmp sgt i32 %threads_any, 4096
  %threads = select i1 %over_limit, i32 4096, i32 %threads_any
  %single = icmp sle i32 %threads, 1
  %one = icmp eq i64 %iterations, 1
  %serial_now = or i1 %single, %one
  br i1 %serial_now, label %serial, label %lock
lock:
  %pair = cmpxchg ptr @lock, i32 0, i32 1 acquire monotonic
  %got = extractvalue { i32, i1 } %pair, 1
  br i1 %got, label %parallel, label %serial
serial:
  br label %serial_loop
serial_loop:
  %k = phi i64 [ 0, %serial ], [ %k_next, %serial_loop ]
  %offset = mul i64 %k, %step
  %i = add i64 %start, %offset
  call void %body(i64 %i, ptr %captures)
  %k_next = add i64 %k, 1
  %more = icmp slt i64 %k_next, %iterations
  br i1 %more, label %serial_loop, label %return
parallel:
  %helpers = sub i32 %threads, 1
  call void @ensure_helpers(i32 %helpers)
  %threads64 = zext i32 %threads to i64
  %target = mul i64 %threads64, 4                 ; grains per thread: a late or slow thread holds back 1/4 of its share at most
  %few = icmp slt i64 %iterations, %target
  %grains_wanted = select i1 %few, i64 %iterations, i64 %target
  %grain_up = add i64 %iterations, %grains_wanted
  %grain_up1 = sub i64 %grain_up, 1
  %grain = sdiv i64 %grain_up1, %grains_wanted
  %grains_up = add i64 %iterations, %grain
  %grains_up1 = sub i64 %grains_up, 1
  %grains = sdiv i64 %grains_up1, %grain
  store atomic ptr %body, ptr @job_body monotonic, align 8
  store atomic ptr %captures, ptr @job_captures monotonic, align 8
  store atomic i64 %start, ptr @job_start monotonic, align 8
  store atomic i64 %step, ptr @job_step monotonic, align 8
  store atomic i64 %iterations, ptr @job_iterations monotonic, align 8
  store atomic i64 %grain, ptr @job_grain monotonic, align 8
  store atomic i64 %grains, ptr @job_grains monotonic, align 8
  store atomic i32 %helpers, ptr @job_helpers monotonic, align 4
  store atomic i64 %grains, ptr @job_remaining monotonic, align 8
  %bitmap_words = add i64 %grains, 63
  %words = lshr i64 %bitmap_words, 6
  br label %clear
clear:
  %w = phi i64 [ 0, %parallel ], [ %w_next, %clear ]
  %bitmap_word = getelementptr [256 x i64], ptr @job_taken, i64 0, i64 %w
  store atomic i64 0, ptr %bitmap_word monotonic, align 8
  %w_next = add i64 %w, 1
  %cleared = icmp uge i64 %w_next, %words
  br i1 %cleared, label %publish, label %clear
publish:
  %old_gen = load atomic i32, ptr @generation monotonic, align 4
  %gen = add i32 %old_gen, 1
  %gen64 = zext i32 %gen to i64
  %tag = shl i64 %gen64, 32
  %word = or i64 %tag, %grains
  store atomic i64 %word, ptr @job_next release, align 8
  store atomic i32 %gen, ptr @generation seq_cst, align 4
  %sleeping = load atomic i32, ptr @sleepers seq_cst, align 4
  %wake = icmp ne i32 %sleeping, 0
  br i1 %wake, label %wake_up, label %work
wake_up:
  call void @futex_wake_all(ptr @generation)
  br label %work
work:
  call void @run_grains(i32 %gen, i64 0)
  call void @wait_until_done()
  store atomic i32 0, ptr @lock release, align 4
  br label %return
return:
  ret void
}

; 0 on the thread that started the parallel loop, 1.. on helpers.
define i32 @gc_pool_thread_index() {
  %key = load i32, ptr @index_key
  %value = call ptr @pthread_getspecific(i32 %key)
  %index = ptrtoint ptr %value to i32
  ret i32 %index
}

define void @gc_pool_init(i32 %default_threads) {
  store i32 %default_threads, ptr @gc_pool_default_threads
  call i32 @pthread_key_create(ptr @index_key, ptr null)
  ret void
}

; Stop and join the helpers (before the interpreter unloads their code).
define void @gc_pool_shutdown() {
entry:
  store atomic i32 1, ptr @stop seq_cst, align 4
  atomicrmw add ptr @generation, i32 1 seq_cst
  call void @futex_wake_all(ptr @generation)
  br label %check
check:
  %count = load i32, ptr @workers
  %any = icmp sgt i32 %count, 0
  br i1 %any, label %join, label %done
join:
  %last = sub i32 %count, 1
  %index = sext i32 %last to i64
  %slot = getelementptr [4096 x i64], ptr @handles, i64 0, i64 %index
  %handle = load i64, ptr %slot
  call i32 @pthread_join(i64 %handle, ptr null)
  store i32 %last, ptr @workers
  br label %check
done:
  store atomic i32 0, ptr @stop seq_cst, align 4
  ret void
}

; In a forked child: the helpers were not copied, and a lock held by
; another thread of the parent would never be released.
define void @gc_pool_after_fork() {
  store i32 0, ptr @workers
  store atomic i32 0, ptr @lock seq_cst, align 4
  store atomic i32 0, ptr @sleepers seq_cst, align 4
  ret void
}
