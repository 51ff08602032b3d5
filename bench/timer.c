/*
 * Timing driver for a model compiled by tvmcc with --name model (bench/run.sh).
 *
 *     timer IN0.bin ... [-w WARMUPS] [-n RUNS] [-b BUDGET_MS] [-m] [-o OUT0.bin ...]
 *
 * Reads each graph input from its file (dense bytes, exactly
 * MODEL_INPUT_BYTES[i] long), then calls model_run WARMUPS times untimed and
 * RUNS times timed with clock_gettime(CLOCK_MONOTONIC). A positive BUDGET_MS
 * bounds both phases: warm-up stops once it has taken BUDGET_MS / 2 and the
 * timed runs stop once they have taken BUDGET_MS, but at least one call of
 * each phase is made (so a slow model still gives one sample per process).
 *
 * Prints one line per timed run with its time in milliseconds (lines starting
 * with '#' are comments), or with -m only the median. The outputs of the last
 * run are written to the -o files. Defaults: -w 2 -n 10, no budget.
 * Exit status: 0 ok, 1 model or data error, 2 usage error.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define MODEL_IO_PROG "timer"
#include "../test/model_io.h"

#define MAX_FILES 64

static const unsigned long input_bytes[] = MODEL_INPUT_BYTES;
static const unsigned long output_bytes[] = MODEL_OUTPUT_BYTES;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: timer IN0.bin ... [-w WARMUPS] [-n RUNS] [-b BUDGET_MS] [-m] "
            "[-o OUT0.bin ...]  (model has %d inputs, %d outputs)\n",
            MODEL_NUM_INPUTS, MODEL_NUM_OUTPUTS);
    return 2;
}

/* Parses a non-negative integer option value; -1 when malformed. */
static long parse_count(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v >= 0) ? v : -1;
}

int main(int argc, char **argv)
{
    const void *inputs[MODEL_NUM_INPUTS + 1] = { 0 };
    void *outputs[MODEL_NUM_OUTPUTS + 1] = { 0 };
    const char *in_paths[MAX_FILES], *out_paths[MAX_FILES];
    long warmups = 2, runs = 10, budget = 0;
    int n_in = 0, n_out = 0, seen_o = 0, median_only = 0;
    double *times, t0, spent;
    void *workspace;
    long i, done;
    int rc;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-w") || !strcmp(a, "-n") || !strcmp(a, "-b")) && i + 1 < argc) {
            long v = parse_count(argv[++i]);
            if (v < 0)
                return usage();
            if (a[1] == 'w')
                warmups = v;
            else if (a[1] == 'n')
                runs = v;
            else
                budget = v;
        } else if (!strcmp(a, "-m")) {
            median_only = 1;
        } else if (!strcmp(a, "-o")) {
            seen_o = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage();
        } else if (seen_o) {
            if (n_out == MAX_FILES)
                return usage();
            out_paths[n_out++] = a;
        } else {
            if (n_in == MAX_FILES)
                return usage();
            in_paths[n_in++] = a;
        }
    }
    if (n_in != MODEL_NUM_INPUTS || (seen_o && n_out != MODEL_NUM_OUTPUTS) || runs < 1)
        return usage();

    for (i = 0; i < MODEL_NUM_INPUTS; i++) {
        void *buf = alloc_aligned(input_bytes[i]);
        if (!buf || read_file(in_paths[i], buf, input_bytes[i]) != 0)
            return 1;
        inputs[i] = buf;
    }
    for (i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        outputs[i] = alloc_aligned(output_bytes[i]);
        if (!outputs[i]) {
            fprintf(stderr, "timer: out of memory\n");
            return 1;
        }
        memset(outputs[i], 0, (size_t)output_bytes[i]);
    }
    workspace = alloc_aligned(MODEL_WORKSPACE_BYTES);
    times = malloc((size_t)runs * sizeof *times);
    if (!workspace || !times) {
        fprintf(stderr, "timer: out of memory\n");
        return 1;
    }

    t0 = now_ms();
    for (i = 0; i < warmups; i++) {
        rc = model_run(inputs, outputs, workspace);
        if (rc != 0) {
            fprintf(stderr, "timer: model_run failed with status %d\n", rc);
            return 1;
        }
        if (budget > 0 && now_ms() - t0 >= budget / 2.0)
            break;
    }
    if (!median_only)
        printf("# warmups %ld, %.3f ms\n", i < warmups ? i + 1 : warmups, now_ms() - t0);

    spent = 0.0;
    for (done = 0; done < runs; done++) {
        double t = now_ms();
        rc = model_run(inputs, outputs, workspace);
        times[done] = now_ms() - t;
        if (rc != 0) {
            fprintf(stderr, "timer: model_run failed with status %d\n", rc);
            return 1;
        }
        spent += times[done];
        if (budget > 0 && spent >= budget) {
            done++;
            break;
        }
    }

    if (median_only) {
        qsort(times, (size_t)done, sizeof *times, cmp_double);
        printf("%.4f\n", done % 2 ? times[done / 2] : (times[done / 2 - 1] + times[done / 2]) / 2);
    } else {
        for (i = 0; i < done; i++)
            printf("%.4f\n", times[i]);
    }
    for (i = 0; i < n_out; i++)
        if (write_file(out_paths[i], outputs[i], output_bytes[i]) != 0)
            return 1;
    return 0;
}
