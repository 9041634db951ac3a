/* Runs a graphcompiler artifact from C: the inputs from raw files, the
 * outputs to raw files, each a dense C-ordered buffer of the entry's argument
 * (see the model's header for their element types and shapes).
 *
 *     gc-translate model.onnx --emit-shared -o model.so     # model.so, model.h
 *     cc -O2 -I. run_model.c model.so -Wl,-rpath,'$ORIGIN' -o run_model
 *     ./run_model input0.bin ... output0.bin ...
 *
 * With GC_NUM_THREADS set, parallel loops use that many threads.
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef GC_MODEL_HEADER
#define GC_MODEL_HEADER "model.h" /* written beside model.so; -DGC_MODEL_HEADER='"x.h"' for x.so */
#endif
#include GC_MODEL_HEADER

static void *read_file(const char *path, size_t bytes) {
    void *data = malloc(bytes ? bytes : 1);
    FILE *file = fopen(path, "rb");
    if (!data || !file || fread(data, 1, bytes, file) != bytes) {
        fprintf(stderr, "run_model: cannot read %zu bytes from %s\n", bytes, path);
        exit(1);
    }
    fclose(file);
    return data;
}

static void write_file(const char *path, const void *data, size_t bytes) {
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, bytes, file) != bytes || fclose(file) != 0) {
        fprintf(stderr, "run_model: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int inputs = gc_model_num_inputs(), outputs = gc_model_num_outputs();
    if (argc != 1 + inputs + outputs) {
        fprintf(stderr, "usage: %s %d input files, then %d output files\n", argv[0], inputs, outputs);
        return 2;
    }
    gc_model *model = gc_model_create();
    if (!model) {
        fprintf(stderr, "run_model: this CPU lacks: %s\n", gc_model_missing_cpu_features());
        return 1;
    }
    const char *threads = getenv("GC_NUM_THREADS");
    if (threads)
        gc_model_set_num_threads(atoi(threads));
    void **in = calloc(inputs + 1, sizeof *in), **out = calloc(outputs + 1, sizeof *out);
    for (int i = 0; i < inputs; i++)
        in[i] = read_file(argv[1 + i], gc_model_input_bytes(i));
    for (int i = 0; i < outputs; i++)
        out[i] = malloc(gc_model_output_bytes(i) ? gc_model_output_bytes(i) : 1);
    gc_model_run(model, (const void *const *)in, out);
    for (int i = 0; i < outputs; i++)
        write_file(argv[1 + inputs + i], out[i], gc_model_output_bytes(i));
    for (int i = 0; i < inputs; i++)
        free(in[i]);
    for (int i = 0; i < outputs; i++)
        free(out[i]);
    free(in);
    free(out);
    gc_model_destroy(model);
    return 0;
}
