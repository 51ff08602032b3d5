/*
 * tvmcc command line. Parses options into an Options struct and runs the
 * compile. Exit status: 0 success, 1 model or user error (a message naming
 * the file, node and field is printed), 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "../ir/arena.h"
#include "../ir/target.h"
#include "../passes/passes.h"

static void usage(FILE *f)
{
    Arena a;
    arena_init(&a, 0);
    fprintf(f,
            "usage: tvmcc MODEL.onnx [options]\n"
            "       tvmcc tune MODEL.onnx -t TARGET --log FILE.json [--trials N] [--seed S]\n"
            "                  [--input-shape N=D0,D1] [-v]   (tvmcc tune --help)\n"
            "       tvmcc quantize MODEL.onnx --calib DIR -o OUT.onnx [options]\n"
            "                  (tvmcc quantize --help)\n"
            "       tvmcc verify MODEL.onnx --data DIR [-t TARGET] [options]\n"
            "                  (tvmcc verify --help)\n"
            "\n"
            "Compiles an ONNX model to portable C: OUT/NAME.h, NAME.c, NAME_weights.c,\n"
            "NAME.json, NAME.mk, NAME.cmake, tvmrt.h, tvmrt.c.\n"
            "\n"
            "options:\n"
            "  -t, --target TARGET     target (default c); one of: %s;\n"
            "                          native (the best x86 target this machine runs:\n"
            "                          not for cross-compiling); or a path to a target\n"
            "                          file (DIR/NAME.json)\n"
            "  -o, --output DIR        output directory (default out; with --dump-*,\n"
            "                          --report and no -o, nothing is written)\n"
            "  --name NAME             C name prefix and file stem (default model)\n"
            "  --input-shape N=D0,D1   bind the shape of graph input N (repeatable)\n"
            "  --input-value N=V0,V1   bind graph input N to constant values (parsed by\n"
            "                          its type; true/false for bool): N leaves the\n"
            "                          generated API and the model specializes on it,\n"
            "                          folding the Ifs it decides (repeatable)\n"
            "  --sequence-length N=L   sequence graph input N has L elements, passed as\n"
            "                          L buffers; shape element K with --input-shape\n"
            "                          'N[K]=D0,D1' (repeatable)\n"
            "  --optional-absent N     optional graph input N has no value (it has no\n"
            "                          buffer; without this option it is present)\n"
            "  -O0, -O1, -O2           optimization level (default -O2); -O0 turns off\n"
            "                          fusion (kernels then are one per node)\n"
            "  --no-fuse               turn off operator fusion only\n"
            "  --no-winograd           3x3 convs stay direct convs (skip the winograd\n"
            "                          pass: weights 9/16 the size, less workspace)\n"
            "  --quantize DIR          quantize the float model first (tvmcc quantize with\n"
            "                          --calib DIR and its defaults; the report goes to\n"
            "                          stdout) and compile the QDQ model it writes\n"
            "  --tuning-log FILE.json  use the knobs that tvmcc tune logged for this\n"
            "                          target's workloads (others keep the defaults)\n"
            "  --string-bytes N        bytes of character storage in the workspace per\n"
            "                          string a string operator makes (default 64)\n"
            "  --dump-ir[=PASS]        print the graph after PASS (frontend, simplify,\n"
            "                          fold_constants, dce, layout, fuse; default: after\n"
            "                          the last pass)\n"
            "  --dump-loops            print the loop IR of every kernel\n"
            "  --report                print a table of kernels (fused nodes, MACs, bytes)\n"
            "                          and memory (workspace, lower bound, weights)\n"
            "  --report-html           also write OUT/NAME_report.html: the arena plan,\n"
            "                          per-kernel figures, RAM / flash / MAC totals (code\n"
            "                          size measured with the target's compiler)\n"
            "  --profile FILE          per-kernel times or counts for the HTML report\n"
            "                          (tvmcc verify --profile writes it)\n"
            "  -v, --verbose           print progress and timings to stderr\n"
            "  --version               print the version\n"
            "  -h, --help              this help\n",
            target_names(&a));
    arena_free(&a);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tvmcc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run tvmcc --help for usage)\n");
    return 2;
}

/* --quantize DIR: tvmcc quantize into a temporary directory (the QDQ model
 * keeps the model's file name, which the output names), then the compile */
static int quantize_then_compile(Options *o, const char *dir)
{
    const char *tmp = getenv("TMPDIR"), *base = strrchr(o->model, '/');
    char tdir[4096], path[4096 + 256], json[4096 + 256], *argv[8 + 2 * MAX_SHAPE_BINDINGS];
    int argc = 0, k, rc;
    size_t n;
    base = base ? base + 1 : o->model;
    snprintf(tdir, sizeof tdir, "%s/tvmcc-q-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tdir)) {
        fprintf(stderr, "tvmcc: cannot make a temporary directory for --quantize\n");
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s", tdir, base);
    n = strlen(path);
    if (n < 5 || strcmp(path + n - 5, ".onnx"))
        strcat(path, ".onnx");
    snprintf(json, sizeof json, "%.*s.json", (int)(strlen(path) - 5), path);
    argv[argc++] = (char *)o->model;
    argv[argc++] = "--calib";
    argv[argc++] = (char *)dir;
    argv[argc++] = "-o";
    argv[argc++] = path;
    for (k = 0; k < o->n_shapes; k++) {
        argv[argc++] = "--input-shape";
        argv[argc++] = (char *)o->shapes[k];
    }
    if (o->verbose)
        argv[argc++] = "-v";
    rc = quantize_main(argc, argv);
    if (rc == 0) {
        const char *model = o->model;
        o->model = path;
        rc = compile_model(o);
        o->model = model;
    }
    unlink(path);
    unlink(json);
    rmdir(tdir);
    return rc;
}

int main(int argc, char **argv)
{
    Options o;
    int i, dumps = 0, have_out = 0;
    const char *quantize_dir = NULL;
    options_init(&o);
    if (argc > 1 && !strcmp(argv[1], "tune"))
        return tune_main(argc - 2, argv + 2);
    if (argc > 1 && !strcmp(argv[1], "quantize"))
        return quantize_main(argc - 2, argv + 2);
    if (argc > 1 && !strcmp(argv[1], "verify"))
        return verify_main(argc - 2, argv + 2);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKES_VALUE(shortopt, longopt)                                                    \
    ((*shortopt && !strcmp(a, shortopt)) || !strcmp(a, longopt) ||                        \
     (!strncmp(a, longopt "=", strlen(longopt) + 1) && (val = a + strlen(longopt) + 1)))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("tvmcc %s\n", TVMCC_VERSION);
            return 0;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            o.verbose = 1;
        } else if (!strcmp(a, "-O0") || !strcmp(a, "-O1") || !strcmp(a, "-O2")) {
            o.opt_level = a[2] - '0';
        } else if (!strcmp(a, "--report")) {
            o.report = 1;
            dumps = 1;
        } else if (!strcmp(a, "--report-html")) {
            o.report_html = 1;
        } else if (!strcmp(a, "--no-fuse")) {
            o.no_fuse = 1;
        } else if (!strcmp(a, "--no-winograd")) {
            o.no_winograd = 1;
        } else if (!strcmp(a, "--dump-loops")) {
            o.dump_loops = 1;
            dumps = 1;
        } else if (!strcmp(a, "--dump-ir")) {
            o.dump_ir = "";
            dumps = 1;
        } else if (!strncmp(a, "--dump-ir=", 10)) {
            o.dump_ir = a + 10;
            dumps = 1;
        } else if (TAKES_VALUE("-t", "--target") || TAKES_VALUE("-o", "--output") ||
                   TAKES_VALUE("", "--name") || TAKES_VALUE("", "--input-shape") ||
                   TAKES_VALUE("", "--input-value") || TAKES_VALUE("", "--sequence-length") ||
                   TAKES_VALUE("", "--optional-absent") ||
                   TAKES_VALUE("", "--string-bytes") || TAKES_VALUE("", "--tuning-log") ||
                   TAKES_VALUE("", "--quantize") || TAKES_VALUE("", "--profile")) {
            const char *opt = a;
            if (!val) {
                if (i + 1 >= argc)
                    return usage_error("option %s needs a value", a);
                val = argv[++i];
            }
            if (!strncmp(opt, "-t", 2) || !strncmp(opt, "--target", 8)) {
                o.target = val;
            } else if (!strncmp(opt, "-o", 2) || !strncmp(opt, "--output", 8)) {
                o.out_dir = val;
                have_out = 1;
            } else if (!strncmp(opt, "--name", 6)) {
                o.name = val;
            } else if (!strncmp(opt, "--tuning-log", 12)) {
                o.tuning_log = val;
            } else if (!strncmp(opt, "--profile", 9)) {
                o.profile = val;
            } else if (!strncmp(opt, "--quantize", 10)) {
                quantize_dir = val;
            } else if (!strncmp(opt, "--string-bytes", 14)) {
                char *end;
                long long v = strtoll(val, &end, 10);
                if (*end || end == val || v < 1 || v > (1LL << 24))
                    return usage_error("--string-bytes needs a number from 1 to 16777216, got "
                                       "'%s'", val);
                o.string_bytes = v;
            } else {
                /* --input-shape, --input-value, --sequence-length, --optional-absent */
                const char *err = options_bind(&o, opt, val);
                if (err)
                    return usage_error("%s", err);
            }
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option %s", a);
        } else if (o.model) {
            return usage_error("more than one model given (%s)", a);
        } else {
            o.model = a;
        }
#undef TAKES_VALUE
    }
    if (!o.model)
        return usage_error("%s", "no model given");
    if (dumps && !have_out)
        o.out_dir = NULL;
    if (o.profile && !o.report_html)
        return usage_error("%s", "--profile needs --report-html");
    if (o.report_html && !o.out_dir)
        return usage_error("%s", "--report-html needs an output directory (-o DIR)");
    if (o.dump_ir && *o.dump_ir && strcmp(o.dump_ir, "frontend") != 0) {
        int k, known = 0;
        for (k = 0; k < pass_count; k++)
            known |= !strcmp(o.dump_ir, pass_table[k].name);
        if (!known) {
            fprintf(stderr, "tvmcc: --dump-ir: unknown pass '%s'; passes: frontend", o.dump_ir);
            for (k = 0; k < pass_count; k++)
                fprintf(stderr, " %s", pass_table[k].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    {
        Arena a;
        const char *err = NULL;
        arena_init(&a, 0);
        if (!target_load(&a, o.target, &err)) {
            /* an unknown name is a usage error; a target file that is
             * there but wrong (a bad intrinsic declaration) is exit 1 */
            int rc = target_known(o.target) ? 1 : 2;
            fprintf(stderr, "tvmcc: %s\n", err);
            arena_free(&a);
            return rc;
        }
        arena_free(&a);
    }
    if (quantize_dir)
        return quantize_then_compile(&o, quantize_dir);
    return compile_model(&o);
}
