/* The C API of a graphcompiler artifact (gc_model.h), built into each saved
 * library around the compiled entry (driver/artifact.py fills in the @...@
 * parts). It starts the library's thread pool (runtime/threadpool.ll) the way
 * runtime/threadpool.py does for the JIT, and checks the CPU first: code
 * compiled for extensions the CPU lacks would stop on an illegal instruction. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gc_model.h"

#define NUM_INPUTS @NUM_INPUTS@
#define NUM_OUTPUTS @NUM_OUTPUTS@
#define ARENA_BYTES @ARENA_BYTES@ /* the intermediates' memory; -1: none */

extern long gc_pool_futex_syscall;
extern int sc_num_threads;
void gc_pool_init(int default_threads);
void gc_pool_shutdown(void);
void gc_pool_after_fork(void);
void gc_model_entry(@ENTRY_PARAMETERS@);

struct gc_model {
    void *arena;
};

static const char metadata[] = "@METADATA@";
static const size_t input_bytes[] = {@INPUT_BYTES@ 0};
static const size_t output_bytes[] = {@OUTPUT_BYTES@ 0};
static const char *const required_flags[] = {@REQUIRED_FLAGS@ NULL};
static char missing[1024];
static pthread_once_t cpu_checked = PTHREAD_ONCE_INIT;
static pthread_once_t pool_started = PTHREAD_ONCE_INIT;
static int pool_running;

/* Whether `word` is one of the blank-separated words of `list`. */
static int has_word(const char *list, const char *word) {
    size_t length = strlen(word);
    for (const char *at = strstr(list, word); at; at = strstr(at + 1, word)) {
        char before = at == list ? ' ' : at[-1], after = at[length];
        if ((before == ' ' || before == '\t') && (after == ' ' || after == '\n' || after == '\0'))
            return 1;
    }
    return 0;
}

static void check_cpu(void) {
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (!cpuinfo)
        return; /* no way to tell: assume the build host's kind of CPU */
    char *line = NULL;
    size_t capacity = 0;
    int found = 0;
    while (getline(&line, &capacity, cpuinfo) > 0)
        if (strncmp(line, "flags", 5) == 0) {
            found = 1;
            break;
        }
    fclose(cpuinfo);
    for (int i = 0; found && required_flags[i]; i++)
        if (!has_word(strchr(line, ':') ? strchr(line, ':') + 1 : line, required_flags[i])) {
            size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s%s", used ? " " : "", required_flags[i]);
        }
    free(line);
}

const char *gc_model_missing_cpu_features(void) {
    pthread_once(&cpu_checked, check_cpu);
    return missing;
}

const char *gc_model_metadata(void) { return metadata; }
int gc_model_num_inputs(void) { return NUM_INPUTS; }
int gc_model_num_outputs(void) { return NUM_OUTPUTS; }

size_t gc_model_input_bytes(int index) {
    return index >= 0 && index < NUM_INPUTS ? input_bytes[index] : 0;
}

size_t gc_model_output_bytes(int index) {
    return index >= 0 && index < NUM_OUTPUTS ? output_bytes[index] : 0;
}

static void start_pool(void) {
    cpu_set_t set;
    int cpus = 1;
#if defined(__x86_64__) && defined(SYS_arch_prctl)
    /* Linux lends AMX's tile state to a process only once asked: int8 and
     * bf16 matmuls on AMX tiles would stop on their first tile instruction
     * (runtime/amx_tiles.py; refused harmlessly on CPUs without AMX). */
    syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */);
#endif
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
#ifdef SYS_futex
    gc_pool_futex_syscall = SYS_futex;
#else
    cpus = 1; /* without a futex the helpers could not sleep: run serially */
#endif
    gc_pool_init(cpus);
    pthread_atfork(NULL, NULL, gc_pool_after_fork);
    pool_running = 1;
}

/* The helpers are joined when the library is unloaded or the process exits. */
__attribute__((destructor)) static void stop_pool(void) {
    if (pool_running)
        gc_pool_shutdown();
}

/* 0 once the CPU is checked and the pool started; -1 if the CPU lacks features. */
int gc_model_init(void) {
    if (*gc_model_missing_cpu_features())
        return -1;
    pthread_once(&pool_started, start_pool);
    return 0;
}

gc_model *gc_model_create(void) {
    if (gc_model_init() != 0)
        return NULL;
    gc_model *model = calloc(1, sizeof *model);
    if (model && ARENA_BYTES >= 0) {
        model->arena = aligned_alloc(64, ((size_t)ARENA_BYTES + 64) / 64 * 64);
        if (!model->arena) {
            free(model);
            return NULL;
        }
    }
    return model;
}

void gc_model_run(gc_model *model, const void *const *inputs, void *const *outputs) {
    gc_model_entry(@ENTRY_ARGUMENTS@);
}

void gc_model_set_num_threads(int count) { sc_num_threads = count; }

void gc_model_destroy(gc_model *model) {
    if (model) {
        free(model->arena);
        free(model);
    }
}
