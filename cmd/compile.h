/*
 * The tvmcc commands: compiling a model (cmd/main.c, cmd/compile.c) and
 * tvmcc tune (cmd/tune.c), both through the pipeline (pipeline/).
 */
#ifndef TVMCC_COMPILE_H
#define TVMCC_COMPILE_H

#include "../pipeline/pipeline.h"

/* Runs the pipeline for one model with the command line's memory budget.
 * Returns the process exit status: 0 ok, 1 model or user error. */
int compile_model(const Options *o);

/* Records the value of --input-shape or --input-value (opt, as given) in
 * o. Returns NULL, or the usage error to print when there are too many. */
const char *options_bind(Options *o, const char *opt, const char *val);

/* tvmcc tune (cmd/tune.c): argv after "tune"; returns the exit status. */
int tune_main(int argc, char **argv);

/* tvmcc quantize (cmd/quantize.c): argv after "quantize"; returns the exit
 * status (0, 1 model or data error, 2 usage). */
int quantize_main(int argc, char **argv);

/* tvmcc verify (cmd/verify.c): argv after "verify"; returns the exit
 * status (0 all outputs match, 1 mismatch or error, 2 usage). */
int verify_main(int argc, char **argv);

#endif
