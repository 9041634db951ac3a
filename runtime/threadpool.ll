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
; Claiming: a stage's `next` word holds (generation << 32) | grains left.
; A helper claims a grain with a compare-and-swap that checks the
; generation, and reads the stage only after the claim succeeds: a job
; cannot end, nor its fields change, while one of its grains is claimed and
; not done.
;
; Stages (fewer fork-joins): a job is up to MAX_STAGES parallel loops run
; in order, each thread moving to stage s+1 once every grain of stage s is
; done (the loops of consecutive kernels, which read what the previous one
; wrote). A thread still waits for the work, not for the other threads: a
; late helper finds the stages done and skips them. A program opens a
; *region* around consecutive kernels made only of parallel loops
; (tir-parallel-regions): the loops started inside it are queued, with a
; copy of their captures, and run as the stages of one job when the region
; ends (or its queue fills): one fork and one join for the whole run.

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
@region_key = internal global i32 0       ; pthread key: the calling thread's %Region

; %Loop: one parallel loop as a program hands it over: body, start, end, step, captures.
%Loop = type { ptr, i64, i64, i64, ptr }

; A stage of the running job, 128 bytes (two cache lines, `next` and
; `remaining` on the first): next (gen << 32 | grains left), remaining
; (grains not done), body, captures, start, step, iterations, grain, grains.
%Stage = type { i64, i64, ptr, ptr, i64, i64, i64, i64, i64, [7 x i64] }

@job_stages = internal global i64 0       ; stages of the running job (<= MAX_STAGES = 32)
@job_helpers = internal global i32 0      ; helpers 1..job_helpers may claim grains
@stages = internal global [32 x %Stage] zeroinitializer, align 64
@stage_taken = internal global [32 x [256 x i64]] zeroinitializer  ; a bit per grain (4 per thread, 4096 threads)

; A thread's queue of loops while a region is open: regions open (they
; nest), queued loops, capture bytes used, the loops, their captures
; (64-byte slots).
%Region = type { i64, i64, i64, [32 x %Loop], [16384 x i8] }

declare i64 @syscall(i64, ...)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @pthread_key_create(ptr, ptr)
declare ptr @calloc(i64, i64)
declare void @free(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
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

; Claim and run grains of %stage (of job %gen) until none is left. A claim
; takes a ticket from the stage's `next` (which keeps a finished job from
; being touched), then a grain: the first free one in %taken from the
; thread's home position, its share of a static schedule (thread `slot` of
; `threads` starts at slot * grains / threads, then goes on from its last
; grain). So a loop's grains go to the same threads from one op to the
; next (and one call to the next) while no thread lags, and data stays in
; that core's cache.
define internal void @run_grains(i32 %gen, i64 %slot, ptr %stage, ptr %taken) {
entry:
  %gen64 = zext i32 %gen to i64
  %tag = shl i64 %gen64, 32
  %next_word = getelementptr %Stage, ptr %stage, i64 0, i32 0
  %remaining = getelementptr %Stage, ptr %stage, i64 0, i32 1
  br label %claim
claim:
  %cursor = phi i64 [ -1, %entry ], [ %next_cursor, %finished ], [ %cursor, %try ]
  %word = load atomic i64, ptr %next_word monotonic, align 8
  %word_tag = and i64 %word, -4294967296
  %same = icmp eq i64 %word_tag, %tag
  %left = and i64 %word, 4294967295
  %some = icmp ne i64 %left, 0
  %claimable = and i1 %same, %some
  br i1 %claimable, label %try, label %done
try:
  %claimed = sub i64 %word, 1
  %pair = cmpxchg ptr %next_word, i64 %word, i64 %claimed acquire monotonic
  %won = extractvalue { i64, i1 } %pair, 1
  br i1 %won, label %run, label %claim
run:
  %body_field = getelementptr %Stage, ptr %stage, i64 0, i32 2
  %captures_field = getelementptr %Stage, ptr %stage, i64 0, i32 3
  %start_field = getelementptr %Stage, ptr %stage, i64 0, i32 4
  %step_field = getelementptr %Stage, ptr %stage, i64 0, i32 5
  %iterations_field = getelementptr %Stage, ptr %stage, i64 0, i32 6
  %grain_field = getelementptr %Stage, ptr %stage, i64 0, i32 7
  %grains_field = getelementptr %Stage, ptr %stage, i64 0, i32 8
  %body = load atomic ptr, ptr %body_field monotonic, align 8
  %captures = load atomic ptr, ptr %captures_field monotonic, align 8
  %start = load atomic i64, ptr %start_field monotonic, align 8
  %step = load atomic i64, ptr %step_field monotonic, align 8
  %iterations = load atomic i64, ptr %iterations_field monotonic, align 8
  %grain = load atomic i64, ptr %grain_field monotonic, align 8
  %grains = load atomic i64, ptr %grains_field monotonic, align 8
  %helpers = load atomic i32, ptr @job_helpers monotonic, align 4
  %helpers64 = zext i32 %helpers to i64
  %threads = add i64 %helpers64, 1
  %first_claim = icmp slt i64 %cursor, 0
  %home_scaled = mul i64 %slot, %grains
  %home = udiv i64 %home_scaled, %threads
  %from = select i1 %first_claim, i64 %home, i64 %cursor
  br label %scan
scan:
  %candidate_raw = phi i64 [ %from, %run ], [ %candidate_next, %occupied ]
  %wraps = icmp uge i64 %candidate_raw, %grains
  %candidate = select i1 %wraps, i64 0, i64 %candidate_raw
  %word_index = lshr i64 %candidate, 6
  %bit_index = and i64 %candidate, 63
  %bit = shl i64 1, %bit_index
  %slot_word = getelementptr [256 x i64], ptr %taken, i64 0, i64 %word_index
  %before = atomicrmw or ptr %slot_word, i64 %bit monotonic
  %was = and i64 %before, %bit
  %free = icmp eq i64 %was, 0
  br i1 %free, label %chosen, label %occupied
occupied:
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
  atomicrmw sub ptr %remaining, i64 1 release
  br label %claim
done:
  ret void
}

; Until every grain of %stage is done: spin, then yield the core (the
; thread still running a grain may be waiting for it).
define internal void @wait_stage_done(ptr %stage) {
entry:
  %remaining = getelementptr %Stage, ptr %stage, i64 0, i32 1
  br label %check
check:
  %spins = phi i64 [ 0, %entry ], [ %spins_next, %hint ], [ %spins_next, %yield ]
  %left = load atomic i64, ptr %remaining acquire, align 8
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

; Work on job %gen stage by stage. The caller (%wait_last) returns when the
; last stage is done; a helper when it has nothing left to claim, or as
; soon as a newer job is published (it was late: this one has ended).
define internal void @run_job(i32 %gen, i64 %slot, i1 %wait_last) {
entry:
  %count = load atomic i64, ptr @job_stages monotonic, align 8
  br label %stage_loop
stage_loop:
  %s = phi i64 [ 0, %entry ], [ %s_next, %next_stage ]
  %in_range = icmp ult i64 %s, %count
  br i1 %in_range, label %current, label %return
current:
  %now = load atomic i32, ptr @generation acquire, align 4
  %ended = icmp ne i32 %now, %gen
  br i1 %ended, label %return, label %work
work:
  %stage = getelementptr [32 x %Stage], ptr @stages, i64 0, i64 %s
  %taken = getelementptr [32 x [256 x i64]], ptr @stage_taken, i64 0, i64 %s
  call void @run_grains(i32 %gen, i64 %slot, ptr %stage, ptr %taken)
  %s_next = add i64 %s, 1
  %last = icmp eq i64 %s_next, %count
  %helper_last = xor i1 %wait_last, true
  %no_wait = and i1 %last, %helper_last
  br i1 %no_wait, label %return, label %wait
wait:
  call void @wait_stage_done(ptr %stage)
  br label %next_stage
next_stage:
  br label %stage_loop
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
  call void @run_job(i32 %gen, i64 %slot, i1 false)
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
; threads (0: @gc_pool_default_threads): a job of one stage.
define void @gc_pool_run(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i32 %requested) {
  %loop = alloca %Loop
  store %Loop poison, ptr %loop
  %body_field = getelementptr %Loop, ptr %loop, i64 0, i32 0
  store ptr %body, ptr %body_field
  %start_field = getelementptr %Loop, ptr %loop, i64 0, i32 1
  store i64 %start, ptr %start_field
  %end_field = getelementptr %Loop, ptr %loop, i64 0, i32 2
  store i64 %end, ptr %end_field
  %step_field = getelementptr %Loop, ptr %loop, i64 0, i32 3
  store i64 %step, ptr %step_field
  %captures_field = getelementptr %Loop, ptr %loop, i64 0, i32 4
  store ptr %captures, ptr %captures_field
  call void @gc_pool_run_stages(ptr %loop, i64 1, i32 %requested)
  ret void
}

; The %count loops at %loops, in order, each finished before the next
; starts: one job of up to 32 stages at a time.
define void @gc_pool_run_stages(ptr %loops, i64 %count, i32 %requested) {
entry:
  br label %batch
batch:
  %first = phi i64 [ 0, %entry ], [ %after, %batch_done ]
  %left = sub i64 %count, %first
  %any = icmp sgt i64 %left, 0
  br i1 %any, label %run, label %return
run:
  %many = icmp sgt i64 %left, 32
  %size = select i1 %many, i64 32, i64 %left
  %batch_loops = getelementptr %Loop, ptr %loops, i64 %first
  call void @run_batch(ptr %batch_loops, i64 %size, i32 %requested)
  br label %batch_done
batch_done:
  %after = add i64 %first, %size
  br label %batch
return:
  ret void
}

define internal i64 @iterations_of(ptr %loop) {
  %start_field = getelementptr %Loop, ptr %loop, i64 0, i32 1
  %end_field = getelementptr %Loop, ptr %loop, i64 0, i32 2
  %step_field = getelementptr %Loop, ptr %loop, i64 0, i32 3
  %start = load i64, ptr %start_field
  %end = load i64, ptr %end_field
  %step = load i64, ptr %step_field
  %empty = icmp sge i64 %start, %end
  %span = sub i64 %end, %start
  %span_up = add i64 %span, %step
  %span_up1 = sub i64 %span_up, 1
  %iterations = sdiv i64 %span_up1, %step
  %result = select i1 %empty, i64 0, i64 %iterations
  ret i64 %result
}

; The loops one after the other on this thread.
define internal void @run_serially(ptr %loops, i64 %count) {
entry:
  br label %stage_loop
stage_loop:
  %s = phi i64 [ 0, %entry ], [ %s_next, %stage_done ]
  %in_range = icmp ult i64 %s, %count
  br i1 %in_range, label %stage, label %return
stage:
  %loop = getelementptr %Loop, ptr %loops, i64 %s
  %iterations = call i64 @iterations_of(ptr %loop)
  %body_field = getelementptr %Loop, ptr %loop, i64 0, i32 0
  %body = load ptr, ptr %body_field
  %start_field = getelementptr %Loop, ptr %loop, i64 0, i32 1
  %start = load i64, ptr %start_field
  %step_field = getelementptr %Loop, ptr %loop, i64 0, i32 3
  %step = load i64, ptr %step_field
  %captures_field = getelementptr %Loop, ptr %loop, i64 0, i32 4
  %captures = load ptr, ptr %captures_field
  br label %iteration
iteration:
  %k = phi i64 [ 0, %stage ], [ %k_next, %body_call ]
  %more = icmp slt i64 %k, %iterations
  br i1 %more, label %body_call, label %stage_done
body_call:
  %offset = mul i64 %k, %step
  %i = add i64 %start, %offset
  call void %body(i64 %i, ptr %captures)
  %k_next = add i64 %k, 1
  br label %iteration
stage_done:
  %s_next = add i64 %s, 1
  br label %stage_loop
return:
  ret void
}

; Up to 32 loops as the stages of one job (or serially: one thread, no
; loop with more than one iteration, or the pool busy with another job).
define internal void @run_batch(ptr %loops, i64 %count, i32 %requested) {
entry:
  %zero = icmp eq i32 %requested, 0
  %default = load i32, ptr @gc_pool_default_threads
  %threads_any = select i1 %zero, i32 %default, i32 %requested
  %over_limit = icmp sgt i32 %threads_any, 4096
  %threads = select i1 %over_limit, i32 4096, i32 %threads_any
  %single = icmp sle i32 %threads, 1
  br i1 %single, label %serial, label %widest
widest:
  %w = phi i64 [ 0, %entry ], [ %w_next, %widest_next ]
  %widest_so_far = phi i64 [ 0, %entry ], [ %widest_now, %widest_next ]
  %w_in = icmp ult i64 %w, %count
  br i1 %w_in, label %widest_next, label %widest_done
widest_next:
  %w_loop = getelementptr %Loop, ptr %loops, i64 %w
  %w_iterations = call i64 @iterations_of(ptr %w_loop)
  %wider = icmp sgt i64 %w_iterations, %widest_so_far
  %widest_now = select i1 %wider, i64 %w_iterations, i64 %widest_so_far
  %w_next = add i64 %w, 1
  br label %widest
widest_done:
  %trivial = icmp sle i64 %widest_so_far, 1
  br i1 %trivial, label %serial, label %lock
lock:
  %pair = cmpxchg ptr @lock, i32 0, i32 1 acquire monotonic
  %got = extractvalue { i32, i1 } %pair, 1
  br i1 %got, label %parallel, label %serial
serial:
  call void @run_serially(ptr %loops, i64 %count)
  ret void
parallel:
  %helpers = sub i32 %threads, 1
  call void @ensure_helpers(i32 %helpers)
  %threads64 = zext i32 %threads to i64
  %target = mul i64 %threads64, 4                 ; grains per thread: a late or slow thread holds back 1/4 of its share at most
  %old_gen = load atomic i32, ptr @generation monotonic, align 4
  %gen = add i32 %old_gen, 1
  %gen64 = zext i32 %gen to i64
  %tag = shl i64 %gen64, 32
  br label %fill
fill:
  %s = phi i64 [ 0, %parallel ], [ %s_next, %cleared ]
  %fill_more = icmp ult i64 %s, %count
  br i1 %fill_more, label %fill_stage, label %publish
fill_stage:
  %loop = getelementptr %Loop, ptr %loops, i64 %s
  %stage = getelementptr [32 x %Stage], ptr @stages, i64 0, i64 %s
  %iterations = call i64 @iterations_of(ptr %loop)
  %few = icmp slt i64 %iterations, %target
  %grains_wanted_raw = select i1 %few, i64 %iterations, i64 %target
  %no_work = icmp eq i64 %grains_wanted_raw, 0
  %grains_wanted = select i1 %no_work, i64 1, i64 %grains_wanted_raw
  %grain_up = add i64 %iterations, %grains_wanted
  %grain_up1 = sub i64 %grain_up, 1
  %grain_raw = sdiv i64 %grain_up1, %grains_wanted
  %grain = select i1 %no_work, i64 1, i64 %grain_raw
  %grains_up = add i64 %iterations, %grain
  %grains_up1 = sub i64 %grains_up, 1
  %grains = sdiv i64 %grains_up1, %grain
  %body_in = getelementptr %Loop, ptr %loop, i64 0, i32 0
  %body = load ptr, ptr %body_in
  %start_in = getelementptr %Loop, ptr %loop, i64 0, i32 1
  %start = load i64, ptr %start_in
  %step_in = getelementptr %Loop, ptr %loop, i64 0, i32 3
  %step = load i64, ptr %step_in
  %captures_in = getelementptr %Loop, ptr %loop, i64 0, i32 4
  %captures = load ptr, ptr %captures_in
  %body_field = getelementptr %Stage, ptr %stage, i64 0, i32 2
  store atomic ptr %body, ptr %body_field monotonic, align 8
  %captures_field = getelementptr %Stage, ptr %stage, i64 0, i32 3
  store atomic ptr %captures, ptr %captures_field monotonic, align 8
  %start_field = getelementptr %Stage, ptr %stage, i64 0, i32 4
  store atomic i64 %start, ptr %start_field monotonic, align 8
  %step_field = getelementptr %Stage, ptr %stage, i64 0, i32 5
  store atomic i64 %step, ptr %step_field monotonic, align 8
  %iterations_field = getelementptr %Stage, ptr %stage, i64 0, i32 6
  store atomic i64 %iterations, ptr %iterations_field monotonic, align 8
  %grain_field = getelementptr %Stage, ptr %stage, i64 0, i32 7
  store atomic i64 %grain, ptr %grain_field monotonic, align 8
  %grains_field = getelementptr %Stage, ptr %stage, i64 0, i32 8
  store atomic i64 %grains, ptr %grains_field monotonic, align 8
  %remaining_field = getelementptr %Stage, ptr %stage, i64 0, i32 1
  store atomic i64 %grains, ptr %remaining_field monotonic, align 8
  %bitmap_words = add i64 %grains, 63
  %words = lshr i64 %bitmap_words, 6
  %taken = getelementptr [32 x [256 x i64]], ptr @stage_taken, i64 0, i64 %s
  br label %clear
clear:
  %c = phi i64 [ 0, %fill_stage ], [ %c_next, %clear_more ]
  %clear_in = icmp ult i64 %c, %words
  br i1 %clear_in, label %clear_more, label %cleared
clear_more:
  %bitmap_word = getelementptr [256 x i64], ptr %taken, i64 0, i64 %c
  store atomic i64 0, ptr %bitmap_word monotonic, align 8
  %c_next = add i64 %c, 1
  br label %clear
cleared:
  %word = or i64 %tag, %grains
  %next_field = getelementptr %Stage, ptr %stage, i64 0, i32 0
  store atomic i64 %word, ptr %next_field release, align 8
  %s_next = add i64 %s, 1
  br label %fill
publish:
  store atomic i64 %count, ptr @job_stages monotonic, align 8
  store atomic i32 %helpers, ptr @job_helpers monotonic, align 4
  store atomic i32 %gen, ptr @generation seq_cst, align 4
  %sleeping = load atomic i32, ptr @sleepers seq_cst, align 4
  %wake = icmp ne i32 %sleeping, 0
  br i1 %wake, label %wake_up, label %work
wake_up:
  call void @futex_wake_all(ptr @generation)
  br label %work
work:
  call void @run_job(i32 %gen, i64 0, i1 true)
  store atomic i32 0, ptr @lock release, align 4
  ret void
}

; --- regions ----------------------------------------------------------------------

; The calling thread's region record (made on first use; freed with the thread).
define internal ptr @region(i1 %make) {
entry:
  %key = load i32, ptr @region_key
  %existing = call ptr @pthread_getspecific(i32 %key)
  %have = icmp ne ptr %existing, null
  %dont_make = xor i1 %make, true
  %done = or i1 %have, %dont_make
  br i1 %done, label %return_existing, label %allocate
allocate:
  %size = ptrtoint ptr getelementptr (%Region, ptr null, i64 1) to i64
  %fresh = call ptr @calloc(i64 1, i64 %size)
  call i32 @pthread_setspecific(i32 %key, ptr %fresh)
  ret ptr %fresh
return_existing:
  ret ptr %existing
}

; From now on, this thread's parallel loops are queued (gc_pool_run_or_queue),
; unless they would run on one thread anyway. Regions nest: the first field
; counts the open ones.
define void @gc_region_begin(i32 %requested) {
entry:
  %zero = icmp eq i32 %requested, 0
  %default = load i32, ptr @gc_pool_default_threads
  %threads = select i1 %zero, i32 %default, i32 %requested
  %parallel = icmp sgt i32 %threads, 1
  br i1 %parallel, label %find, label %return
find:
  %region = call ptr @region(i1 true)
  %ok = icmp ne ptr %region, null
  br i1 %ok, label %open, label %return
open:
  %depth_field = getelementptr %Region, ptr %region, i64 0, i32 0
  %depth = load i64, ptr %depth_field
  %deeper = add i64 %depth, 1
  store i64 %deeper, ptr %depth_field
  br label %return
return:
  ret void
}

; Run the queued loops as one job. The region is closed meanwhile: a loop
; nested in a queued body (run on this thread) runs at once.
define internal void @flush(ptr %region, i32 %threads) {
entry:
  %depth_field = getelementptr %Region, ptr %region, i64 0, i32 0
  %count_field = getelementptr %Region, ptr %region, i64 0, i32 1
  %used_field = getelementptr %Region, ptr %region, i64 0, i32 2
  %count = load i64, ptr %count_field
  %depth = load i64, ptr %depth_field
  store i64 0, ptr %depth_field
  %loops = getelementptr %Region, ptr %region, i64 0, i32 3
  call void @gc_pool_run_stages(ptr %loops, i64 %count, i32 %threads)
  store i64 0, ptr %count_field
  store i64 0, ptr %used_field
  store i64 %depth, ptr %depth_field
  ret void
}

; Close the innermost region; closing the outermost runs what was queued.
define void @gc_region_end(i32 %threads) {
entry:
  %region = call ptr @region(i1 false)
  %have = icmp ne ptr %region, null
  br i1 %have, label %close, label %return
close:
  %depth_field = getelementptr %Region, ptr %region, i64 0, i32 0
  %depth = load i64, ptr %depth_field
  %open = icmp sgt i64 %depth, 0
  br i1 %open, label %decrement, label %return
decrement:
  %shallower = sub i64 %depth, 1
  store i64 %shallower, ptr %depth_field
  %outermost = icmp eq i64 %shallower, 0
  br i1 %outermost, label %flush, label %return
flush:
  call void @flush(ptr %region, i32 %threads)
  br label %return
return:
  ret void
}

; gc_pool_run, or, in an open region, queue the loop with a copy of its
; `bytes` of captures (the caller's copy dies with its frame).
define void @gc_pool_run_or_queue(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i64 %bytes, i32 %threads) {
entry:
  %region = call ptr @region(i1 false)
  %have = icmp ne ptr %region, null
  br i1 %have, label %check_open, label %now
check_open:
  %depth_field = getelementptr %Region, ptr %region, i64 0, i32 0
  %depth = load i64, ptr %depth_field
  %is_open = icmp ne i64 %depth, 0
  br i1 %is_open, label %queue, label %now
now:
  call void @gc_pool_run(ptr %body, i64 %start, i64 %end, i64 %step, ptr %captures, i32 %threads)
  ret void
queue:
  %too_big = icmp ugt i64 %bytes, 16384
  %count_field = getelementptr %Region, ptr %region, i64 0, i32 1
  %used_field = getelementptr %Region, ptr %region, i64 0, i32 2
  %count = load i64, ptr %count_field
  %used = load i64, ptr %used_field
  %slots = add i64 %bytes, 63
  %rounded = and i64 %slots, -64
  %would_use = add i64 %used, %rounded
  %no_room = icmp ugt i64 %would_use, 16384
  %full = icmp uge i64 %count, 32
  %must_flush_some = or i1 %no_room, %full
  %must_flush = or i1 %must_flush_some, %too_big
  br i1 %must_flush, label %flush_first, label %append
flush_first:
  call void @flush(ptr %region, i32 %threads)
  br i1 %too_big, label %now, label %append
append:
  %count_now = load i64, ptr %count_field
  %used_now = load i64, ptr %used_field
  %bytes_area = getelementptr %Region, ptr %region, i64 0, i32 4
  %copy = getelementptr i8, ptr %bytes_area, i64 %used_now
  call void @llvm.memcpy.p0.p0.i64(ptr %copy, ptr %captures, i64 %bytes, i1 false)
  %loop = getelementptr %Region, ptr %region, i64 0, i32 3, i64 %count_now
  %body_field = getelementptr %Loop, ptr %loop, i64 0, i32 0
  store ptr %body, ptr %body_field
  %start_field = getelementptr %Loop, ptr %loop, i64 0, i32 1
  store i64 %start, ptr %start_field
  %end_field = getelementptr %Loop, ptr %loop, i64 0, i32 2
  store i64 %end, ptr %end_field
  %step_field = getelementptr %Loop, ptr %loop, i64 0, i32 3
  store i64 %step, ptr %step_field
  %captures_field = getelementptr %Loop, ptr %loop, i64 0, i32 4
  store ptr %copy, ptr %captures_field
  %count_next = add i64 %count_now, 1
  store i64 %count_next, ptr %count_field
  %used_next = add i64 %used_now, %rounded
  store i64 %used_next, ptr %used_field
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
  call i32 @pthread_key_create(ptr @region_key, ptr @free)
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
