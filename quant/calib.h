/*
 * Running models on the compiling machine for `tvmcc quantize`
 * (quant/calib.c): calibration samples, a model compiled by tvmcc for the
 * host and built with the host's C compiler, and a run of it over the
 * samples that hands each sample's outputs to a callback.
 */
#ifndef TVMCC_QUANT_CALIB_H
#define TVMCC_QUANT_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "../ir/graph.h"

/* The calibration (or evaluation) set: n samples of the graph inputs, each
 * sample one dense buffer per input, in graph input order; and, when the
 * directory has them, the expected outputs (output_K.pb). */
typedef struct SampleSet {
    int n_samples;
    int n_inputs;
    const char **names;         /* sample names (the subdirectory, or "random-K") */
    void ***inputs;             /* [sample][input] */
    int n_outputs;              /* 0: no output_K.pb */
    void ***outputs;            /* [sample][output] */
} SampleSet;

/* Reads DIR (a folder of sample folders, or one sample folder holding
 * input_K.pb directly) against the graph's inputs: each file's element type
 * and shape must be the input's. "random:N" draws N samples instead (float
 * inputs uniform in [-1, 1], integer inputs 0, or a row index where they
 * feed Gather; seeded by `seed`). 0, or 1 after reporting one line naming
 * the file and the input. */
int samples_load(Arena *a, const Graph *g, const char *spec, uint64_t seed, SampleSet *s,
                 Diag *d);

/* A model compiled for the host: its temporary directory, program, and the
 * byte size, type and shape of each input and output. */
typedef struct HostModel {
    char *dir;                  /* temporary directory (removed by host_model_free) */
    char *exe;
    int n_in, n_out;
    int64_t *in_bytes, *out_bytes;
    const Value *outputs;       /* name, dtype, shape of each output */
} HostModel;

/* Compiles the model (ONNX bytes) with tvmcc for the portable C target,
 * builds it and a driver with the host compiler ($CC or cc). shapes are
 * --input-shape specs. 0, or 1 after reporting. */
int host_model_build(Arena *a, const uint8_t *onnx, size_t size, const char *what,
                     const char *const *shapes, int n_shapes, int verbose, HostModel *m,
                     Diag *d);
void host_model_free(HostModel *m);

/* Runs the model on every sample; fn gets each sample's index and outputs.
 * A nonzero return from fn stops the run with that status. progress: a
 * label for the progress line on stderr (NULL: none). */
typedef int (*SampleFn)(void *ctx, int sample, void *const *outputs);
int host_model_run(const HostModel *m, const SampleSet *s, SampleFn fn, void *ctx,
                   const char *progress, Diag *d);

/* Two models on the same samples side by side (float and quantized): fn
 * gets both output lists of each sample. */
typedef int (*PairFn)(void *ctx, int sample, void *const *a_out, void *const *b_out);
int host_model_run_pair(const HostModel *a, const HostModel *b, const SampleSet *s, PairFn fn,
                        void *ctx, const char *progress, Diag *d);

/* Whether progress lines go to stderr (it is a terminal). */
int progress_enabled(void);
void progress_line(const char *label, int done, int total);
void progress_end(void);

#endif
