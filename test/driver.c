/*
 * Generic test harness for a model compiled by tvmcc with --name model.
 *
 *     driver IN0.bin IN1.bin ... -o OUT0.bin OUT1.bin ...
 *
 * Each input file holds the dense bytes of one graph input (in graph order)
 * and must be exactly MODEL_INPUT_BYTES[i] long. The model runs twice: once
 * with a 64-byte-aligned workspace supplied here, once with NULL (the static
 * arena inside model.c). Output buffers are filled with different poison bytes
 * before each run, so an output element a kernel forgets to write shows up as
 * a difference between the runs. Both runs must agree byte for byte; the
 * first run's outputs are written to the -o files.
 *
 * A string input (MODEL_INPUT_DTYPES names "string") is read from a file of
 * NUL-terminated strings, one per element; a string output is compared
 * between the runs by content and written the same way.
 *
 * Only stdio and malloc are used so the same file builds for the host and for
 * Cortex-M with newlib and semihosting (test/arm/). Exit status: 0 ok,
 * 1 model or data error, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MODEL_IO_PROG "driver"
#define MODEL_IO_STRINGS
#include "model_io.h"

#define ALIGN MODEL_IO_ALIGN

/* Byte sizes of each buffer; the macros expand to brace initialisers. */
static const unsigned long input_bytes[] = MODEL_INPUT_BYTES;
static const unsigned long output_bytes[] = MODEL_OUTPUT_BYTES;
static const char *const input_dtypes[] = MODEL_INPUT_DTYPES;
static const char *const output_dtypes[] = MODEL_OUTPUT_DTYPES;

/* The caller-supplied workspace; ALIGN spare bytes allow aligning by hand
 * because C99 has no alignment specifier. */
static unsigned char workspace_store[MODEL_WORKSPACE_BYTES + ALIGN];

static int is_string(const char *dtype)
{
    return strcmp(dtype, "string") == 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: driver IN0.bin ... -o OUT0.bin ...  (model has %d inputs, %d outputs)\n",
            MODEL_NUM_INPUTS, MODEL_NUM_OUTPUTS);
}

int main(int argc, char **argv)
{
    /* +1 keeps the arrays legal when a model has no inputs. */
    const void *inputs[MODEL_NUM_INPUTS + 1] = { 0 };
    void *outputs[MODEL_NUM_OUTPUTS + 1] = { 0 };
    void *check[MODEL_NUM_OUTPUTS + 1] = { 0 };
    const char *in_paths[MODEL_NUM_INPUTS + 1] = { 0 };
    const char *out_paths[MODEL_NUM_OUTPUTS + 1] = { 0 };
    int n_in = 0, n_out = 0, seen_o = 0;
    int i, rc;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && !seen_o) {
            seen_o = 1;
        } else if (!seen_o) {
            if (n_in == MODEL_NUM_INPUTS) {
                usage();
                return 2;
            }
            in_paths[n_in++] = argv[i];
        } else {
            if (n_out == MODEL_NUM_OUTPUTS) {
                usage();
                return 2;
            }
            out_paths[n_out++] = argv[i];
        }
    }
    if (n_in != MODEL_NUM_INPUTS || n_out != MODEL_NUM_OUTPUTS) {
        usage();
        return 2;
    }

    for (i = 0; i < MODEL_NUM_INPUTS; i++) {
        void *buf;
        if (is_string(input_dtypes[i])) {
            if (read_strings(in_paths[i], &buf, input_bytes[i] / sizeof(const char *)) != 0)
                return 1;
            inputs[i] = buf;
            continue;
        }
        buf = alloc_aligned(input_bytes[i]);
        if (!buf) {
            fprintf(stderr, "driver: out of memory for input %d\n", i);
            return 1;
        }
        if (read_file(in_paths[i], buf, input_bytes[i]) != 0)
            return 1;
        inputs[i] = buf;
    }
    for (i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        outputs[i] = alloc_aligned(output_bytes[i]);
        check[i] = alloc_aligned(output_bytes[i]);
        if (!outputs[i] || !check[i]) {
            fprintf(stderr, "driver: out of memory for output %d\n", i);
            return 1;
        }
        memset(outputs[i], 0xA5, (size_t)output_bytes[i]);
        memset(check[i], 0x5A, (size_t)output_bytes[i]);
    }

    rc = model_run(inputs, outputs, align_up(workspace_store));
    if (rc != 0) {
        fprintf(stderr, "driver: model_run failed with status %d\n", rc);
        return 1;
    }
    rc = model_run(inputs, check, NULL);
    if (rc != 0) {
        fprintf(stderr, "driver: model_run (static arena) failed with status %d\n", rc);
        return 1;
    }
    for (i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        if (is_string(output_dtypes[i])) {
            /* the strings may live in either workspace: compare contents */
            const char *const *a = outputs[i], *const *b = check[i];
            unsigned long k, count = output_bytes[i] / sizeof(const char *);
            for (k = 0; k < count; k++)
                if (strcmp(a[k], b[k]) != 0) {
                    fprintf(stderr, "driver: string output %d differs between the runs\n", i);
                    return 1;
                }
            continue;
        }
        if (memcmp(outputs[i], check[i], (size_t)output_bytes[i]) != 0) {
            fprintf(stderr, "driver: output %d differs between the supplied workspace "
                    "and the static arena (or is not fully written)\n", i);
            return 1;
        }
    }

    for (i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        if (is_string(output_dtypes[i]) ?
                write_strings(out_paths[i], outputs[i], output_bytes[i] / sizeof(const char *)) :
                write_file(out_paths[i], outputs[i], output_bytes[i]))
            return 1;
    }
    return 0;
}
