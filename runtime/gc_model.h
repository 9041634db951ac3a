/* The C API of a graphcompiler artifact: a compiled graph saved as a shared
 * library (`compiled.save("model.so")`, `gc-translate --emit-shared`).
 *
 * Arguments are dense, C-ordered buffers of the element types and shapes the
 * model's header lists (and `gc_model_metadata()` describes as JSON): a bf16
 * tensor is its uint16 bits, a float8 or float4 one its uint8 codes, an i4
 * or i2 one int8s, a rank-0 tensor one element. Outputs are written
 * in place. One gc_model runs one call at a time (it owns the intermediates'
 * memory); make one per thread that calls concurrently. Parallel loops run on
 * the library's own thread pool, started by the first gc_model_create.
 */
#ifndef GC_MODEL_H
#define GC_MODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_model gc_model;

/* A model ready to run, or NULL: the CPU lacks an instruction set extension
 * the code was compiled for (gc_model_missing_cpu_features names them), or
 * memory ran out. */
gc_model *gc_model_create(void);

/* Run once: inputs[i] and outputs[j] in the order of the entry's arguments. */
void gc_model_run(gc_model *model, const void *const *inputs, void *const *outputs);

/* Threads for parallel loops, for every model of this library: 1..4096, or 0
 * (the default) for every CPU the process may run on. */
void gc_model_set_num_threads(int count);

void gc_model_destroy(gc_model *model);

int gc_model_num_inputs(void);
int gc_model_num_outputs(void);

/* The bytes of input or output `index` (0 past the last). */
size_t gc_model_input_bytes(int index);
size_t gc_model_output_bytes(int index);

/* The signature and the build as JSON (names, shapes, dtypes, CPU features). */
const char *gc_model_metadata(void);

/* "" when this CPU runs the code, else the /proc/cpuinfo flags it lacks. */
const char *gc_model_missing_cpu_features(void);

/* Check the CPU and start the thread pool, once (gc_model_create does):
 * 0, or -1 when the CPU lacks features. */
int gc_model_init(void);

#ifdef __cplusplus
}
#endif

#endif /* GC_MODEL_H */
