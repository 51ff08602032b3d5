/*
 * tvmcc verify: compiles a model into a temporary directory, builds it
 * with the target's compiler and NAME.mk's flags together with the driver
 * embedded in tvmcc (verify/verify_driver.c), runs it on every data set of
 * an ONNX test-data folder (natively, under qemu, or through a user's
 * --runner command) and compares the outputs with the expected ones.
 *
 * The temporary directory (TMPDIR or /tmp, tvmcc-verify-XXXXXX):
 *   out/            the compiled model (tvmcc -o out --name model)
 *   drv/            the embedded driver, model_io.h, start-up file, linker
 *                   script, verify_hooks.h
 *   driver          the program (driver.elf for Cortex-M)
 *   set_N/in/       input_K.bin: the data set's inputs as raw bytes
 *   set_N/out/      output_K.bin and measure.txt, written by the program
 * It is removed on every exit path, SIGINT and SIGTERM included.
 *
 * Exit status: 0 every output of every data set matches, 1 a mismatch or
 * a model, data, build or run error, 2 a usage error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "compile.h"
#include "../frontend/onnx.h"
#include "../ir/progress.h"
#include "onnx.pb-c.h"

struct EmbeddedFile {
    const char *name;
    const unsigned char *data;
    size_t size;
};
extern const struct EmbeddedFile embedded_files[];

/* SysTick ticks per instruction count on the mps2 boards under -icount
 * shift=0: the core clock is 25 MHz, qemu's clock 1 ns per instruction */
#define TICK_INSNS 40

/* How the program runs. */
enum { RUN_HOST, RUN_QEMU_USER, RUN_QEMU_ARM };

typedef struct VerifyOpts {
    Options o;                 /* the compile (target, bindings) */
    const char *data;          /* --data DIR */
    const char *runner;        /* --runner CMD, or NULL */
    const char *profile;       /* --profile FILE, or NULL */
    double rtol, atol;
    int tol_given;             /* --rtol or --atol given: integers use them too */
    long runs;                 /* --runs N */
    long timeout;              /* --timeout S per data set */
    int verbose;
} VerifyOpts;

/* One expected or produced tensor. */
typedef struct DataSet {
    const char *name;          /* the folder's name */
    const char *dir;           /* its path */
    int n_out_files;
} DataSet;

/* The graph's declared inputs and outputs, in the files' order
 * (input_K.pb, output_K.pb). */
typedef struct FileIO {
    int n_in, n_out;
    const char **in_name, **out_name;
    int *in_kind, *out_kind;   /* 0 tensor, else ONNX_DATA_* bits */
} FileIO;

/* What the compile leaves for the run: the API's inputs and outputs. */
typedef struct ModelIO {
    int n_in, n_out;
    Value *in, *out;           /* name, dtype, shape */
    int *in_file, *out_file;   /* per API buffer: K of input_K.pb / output_K.pb */
    int *in_elem, *out_elem;   /* element of a sequence (0 for a tensor) */
    int n_kernels;             /* kernels in NAME.json */
    const char **kernel_names;
    const char *target_name;
} ModelIO;

/* Per output, over all data sets. */
typedef struct OutStat {
    double max_abs, max_rel;
    long long worst;           /* element index, -1 none */
    int pass;
} OutStat;

static volatile sig_atomic_t interrupted;
/* the current progress stage (a fixed string) and its step, repeated while
 * a build or run is waited for so that the line appears after the delay */
static const char *stage;
static long stage_done, stage_total;
static char tmp_root[4096];

/* A message on stderr; a progress line shown is erased first. */
#ifdef __GNUC__
__attribute__((format(printf, 1, 2)))
#endif
static void verr(const char *fmt, ...)
{
    va_list ap;
    progress_clear();
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void on_signal(int sig)
{
    interrupted = sig;
}

static void remove_tree(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    if (dp) {
        while ((e = readdir(dp)) != NULL) {
            char path[4096 + 256];
            struct stat st;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(path);
            else
                unlink(path);
        }
        closedir(dp);
    }
    rmdir(dir);
}

static void cleanup(void)
{
    if (tmp_root[0])
        remove_tree(tmp_root);
    tmp_root[0] = '\0';
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tvmcc verify MODEL.onnx --data DIR [options]\n"
            "\n"
            "Compiles the model into a temporary directory, builds it with the target's\n"
            "compiler, runs it on every data set of DIR (natively, under qemu, or with\n"
            "--runner) and compares its outputs with the expected ones. DIR is one data\n"
            "set folder (input_K.pb, output_K.pb) or a folder of them (test_data_set_N/).\n"
            "Exit status: 0 all outputs match, 1 a mismatch or an error, 2 usage.\n"
            "\n"
            "options:\n"
            "  --data DIR              the data sets (required)\n"
            "  -t, --target TARGET     target (default c); host targets run natively,\n"
            "                          cortex-m0/m4/m7 under qemu-system-arm, aarch64\n"
            "                          under qemu-aarch64\n"
            "  --input-shape N=D0,D1   bind the shape of graph input N (repeatable; by\n"
            "                          default from the first data set's input files)\n"
            "  --input-value N=V0,V1   bind graph input N to constant values (repeatable;\n"
            "                          its input_K.pb files are then not read)\n"
            "  -O0, -O1, -O2, --no-fuse, --no-winograd  as for the compile (tvmcc --help)\n"
            "  --rtol R                relative tolerance (default 1e-3)\n"
            "  --atol A                absolute tolerance (default 1e-5); integer and bool\n"
            "                          outputs must match exactly unless --rtol or --atol\n"
            "                          is given\n"
            "  --runner CMD            run the program with CMD PROGRAM INPUT_DIR OUTPUT_DIR\n"
            "                          per data set (docs/user-guide.md: the contract)\n"
            "  --profile FILE          time each kernel, write FILE (JSON)\n"
            "  --runs N                run the model N times per data set; times are the\n"
            "                          mean (default 1)\n"
            "  --timeout S             seconds allowed per data set run (default 600)\n"
            "  -v, --verbose           print the commands run and every data set's result\n"
            "  -h, --help              this help\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    verr("tvmcc verify: ");
    verr(fmt, arg);
    verr("\n(run tvmcc verify --help for usage)\n");
    return 2;
}

static int parse_number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno == 0 && *v >= 0 && isfinite(*v);
}

/* Parses argv (after "verify"): 0, or the usage error's status 2 (or 0 with
 * *done set after --help). */
static int parse_args(int argc, char **argv, VerifyOpts *v, int *done)
{
    int i;
    options_init(&v->o);
    v->o.name = "model";
    v->rtol = 1e-3;
    v->atol = 1e-5;
    v->runs = 1;
    v->timeout = 600;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            *done = 1;
            return 0;
        }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            v->verbose = 1;
            continue;
        }
        if (!strcmp(a, "-O0") || !strcmp(a, "-O1") || !strcmp(a, "-O2")) {
            v->o.opt_level = a[2] - '0';
            continue;
        }
        if (!strcmp(a, "--no-winograd")) {
            v->o.no_winograd = 1;
            continue;
        }
        if (!strcmp(a, "--no-fuse")) {
            v->o.no_fuse = 1;
            continue;
        }
        if (a[0] != '-' || !a[1]) {
            if (v->o.model)
                return usage_error("more than one model given (%s)", a);
            v->o.model = a;
            continue;
        }
        {
            static const char *const opts[] = {"-t", "--target", "--data", "--input-shape",
                                               "--input-value", "--rtol", "--atol",
                                               "--runner", "--profile", "--runs",
                                               "--timeout"};
            size_t k, n = sizeof opts / sizeof opts[0];
            const char *opt = NULL;
            for (k = 0; k < n && !opt; k++) {
                size_t len = strlen(opts[k]);
                if (!strcmp(a, opts[k]))
                    opt = opts[k];
                else if (opts[k][1] == '-' && !strncmp(a, opts[k], len) && a[len] == '=')
                    opt = opts[k], val = a + len + 1;
            }
            if (!opt)
                return usage_error("unknown option %s", a);
            if (!val) {
                if (i + 1 >= argc)
                    return usage_error("option %s needs a value", a);
                val = argv[++i];
            }
            if (!strcmp(opt, "-t") || !strcmp(opt, "--target")) {
                v->o.target = val;
            } else if (!strcmp(opt, "--data")) {
                v->data = val;
            } else if (!strcmp(opt, "--runner")) {
                v->runner = val;
            } else if (!strcmp(opt, "--profile")) {
                v->profile = val;
            } else if (!strcmp(opt, "--rtol") || !strcmp(opt, "--atol")) {
                double x;
                if (!parse_number(val, &x))
                    return usage_error("%s needs a number >= 0", opt);
                *(opt[2] == 'r' ? &v->rtol : &v->atol) = x;
                v->tol_given = 1;
            } else if (!strcmp(opt, "--runs") || !strcmp(opt, "--timeout")) {
                char *end;
                long x = strtol(val, &end, 10);
                if (*end || end == val || x < 1 || x > 1000000)
                    return usage_error("%s needs a whole number from 1 to 1000000", opt);
                *(opt[3] == 'u' ? &v->runs : &v->timeout) = x;
            } else {
                const char *err = options_bind(&v->o, opt, val);
                if (err)
                    return usage_error("%s", err);
            }
        }
    }
    if (!v->o.model)
        return usage_error("%s", "no model given");
    if (!v->data)
        return usage_error("%s", "--data DIR is required");
    return 0;
}

/* ------------------------------------------------------------ data sets */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* counts dir/stem_K.pb for K = 0, 1, ... */
static int count_files(Arena *a, const char *dir, const char *stem)
{
    int k = 0;
    while (is_file(arena_printf(a, "%s/%s_%d.pb", dir, stem, k)))
        k++;
    return k;
}

/* The data sets of DIR: DIR itself when it holds input_0.pb or
 * output_0.pb, else its subfolders (sorted). 0, or 1 after reporting. */
static int list_sets(Arena *a, const char *dir, DataSet **out, int *n_out)
{
    DataSet *sets;
    char **names;
    int n = 0, i;
    if (!is_dir(dir)) {
        verr("%s: not a directory (--data)\n", dir);
        return 1;
    }
    if (is_file(arena_printf(a, "%s/input_0.pb", dir)) ||
        is_file(arena_printf(a, "%s/output_0.pb", dir))) {
        const char *end = dir + strlen(dir), *base;
        while (end > dir + 1 && end[-1] == '/')
            end--;
        for (base = end; base > dir && base[-1] != '/'; base--)
            ;
        sets = arena_array(a, 1, sizeof *sets);
        sets[0].name = arena_printf(a, "%.*s", (int)(end - base), base);
        sets[0].dir = dir;
        n = 1;
    } else {
        struct dirent **list;
        int n_list = scandir(dir, &list, NULL, alphasort); /* byte order: tvmcc sets no locale */
        if (n_list < 0) {
            verr("%s: cannot read the directory (--data)\n", dir);
            return 1;
        }
        names = arena_array(a, (size_t)n_list + 1, sizeof *names);
        for (i = 0; i < n_list; i++) {
            if (list[i]->d_name[0] != '.' &&
                is_dir(arena_printf(a, "%s/%s", dir, list[i]->d_name)))
                names[n++] = arena_strdup(a, list[i]->d_name);
            free(list[i]);
        }
        free(list);
        if (n == 0) {
            verr("%s: no data sets: expected input_K.pb / output_K.pb files or "
                    "folders holding them (the ONNX test-data layout)\n", dir);
            return 1;
        }
        sets = arena_array(a, (size_t)n, sizeof *sets);
        for (i = 0; i < n; i++) {
            sets[i].name = names[i];
            sets[i].dir = arena_printf(a, "%s/%s", dir, names[i]);
        }
    }
    for (i = 0; i < n; i++) {
        sets[i].n_out_files = count_files(a, sets[i].dir, "output");
        if (sets[i].n_out_files == 0) {
            verr("%s: no output_0.pb: nothing to compare with\n", sets[i].dir);
            return 1;
        }
    }
    *out = sets;
    *n_out = n;
    return 0;
}

static int spec_names(const char *const *specs, int n, const char *name)
{
    int k;
    size_t len = strlen(name);
    for (k = 0; k < n; k++)
        if (!strncmp(specs[k], name, len) && specs[k][len] == '=')
            return 1;
    return 0;
}

static Tensor *read_checked(Arena *a, const char *path, const char *label, const Value *v,
                            const char *what);
static int write_bytes(const char *path, const void *data, size_t n);

/* Reads path whole into the arena; NULL when it cannot be read. */
static unsigned char *slurp(Arena *a, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long n;
    unsigned char *buf;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = arena_alloc(a, (size_t)n + 1);
    if (n && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

#define MAX_ELEMENTS 4096

/* The element tensors of a test-data file for a value of this kind
 * (onnx_data_elements). 0, or 1 after reporting. */
static int load_elements(Arena *a, const char *path, int kind, OnnxSpan **el, int *count,
                         int *absent)
{
    OnnxSpan data;
    data.p = slurp(a, path, &data.n);
    if (!data.p) {
        verr("%s: cannot read the file\n", path);
        return 1;
    }
    *el = arena_array(a, MAX_ELEMENTS, sizeof **el);
    if (onnx_data_elements(data, kind, *el, MAX_ELEMENTS, count, absent)) {
        verr("%s: not a valid %s\n", path,
                (kind & ONNX_DATA_OPTIONAL) ? "OptionalProto" : "SequenceProto");
        return 1;
    }
    return 0;
}

/* The dims of a TensorProto's bytes as "D0,D1,..." ("" for a scalar);
 * NULL after reporting. */
static const char *span_dims(Arena *a, OnnxSpan t, const char *path)
{
    Diag d;
    Onnx__TensorProto *tp;
    char *s = arena_strdup(a, "");
    size_t j;
    diag_init(&d, path);
    tp = onnx_unpack_buffer(t.p, t.n, 0, &d);
    if (!tp)
        return NULL;
    for (j = 0; j < tp->n_dims; j++)
        s = arena_printf(a, "%s%s%lld", s, j ? "," : "", (long long)tp->dims[j]);
    onnx_free_message(tp);
    return s;
}

static int add_option(Arena *a, VerifyOpts *v, const char *opt, const char *val)
{
    const char *err = options_bind(&v->o, opt, arena_strdup(a, val));
    if (err)
        verr("tvmcc verify: binding the inputs from the data: %s\n", err);
    return err != NULL;
}

/* Reads the graph's declared inputs and outputs (names and kinds, in file
 * order) into fio, and binds each input the user did not bind from the
 * first data set's file: a tensor's shape (--input-shape), a sequence's
 * length and element shapes (--sequence-length, --input-shape 'N[K]='),
 * an absent optional (--optional-absent). 0, or 1 after reporting. */
static int bind_from_data(Arena *a, VerifyOpts *v, const DataSet *set, FileIO *fio)
{
    Diag d;
    void *m;
    int k, dir;
    diag_init(&d, v->o.model);
    m = onnx_unpack_file(v->o.model, 1, &d);
    if (!m)
        return 1;
    for (dir = 1; dir >= 0; dir--) {
        const char *name;
        int n = 0;
        while (onnx_io_kind(m, dir, n, &name) >= 0)
            n++;
        if (dir) {
            fio->n_in = n;
            fio->in_name = arena_array(a, (size_t)n + 1, sizeof(char *));
            fio->in_kind = arena_array(a, (size_t)n + 1, sizeof(int));
        } else {
            fio->n_out = n;
            fio->out_name = arena_array(a, (size_t)n + 1, sizeof(char *));
            fio->out_kind = arena_array(a, (size_t)n + 1, sizeof(int));
        }
        for (k = 0; k < n; k++) {
            int kind = onnx_io_kind(m, dir, k, &name);
            name = arena_strdup(a, name ? name : "");
            if (dir)
                fio->in_name[k] = name, fio->in_kind[k] = kind;
            else
                fio->out_name[k] = name, fio->out_kind[k] = kind;
        }
    }
    onnx_free_message(m);
    for (k = 0; k < fio->n_in; k++) {
        const char *name = fio->in_name[k], *dims;
        const char *path = arena_printf(a, "%s/input_%d.pb", set->dir, k);
        int kind = fio->in_kind[k], count, absent, j;
        OnnxSpan *el;
        if (spec_names(v->o.values, v->o.n_values, name) || !is_file(path))
            continue; /* a missing file is reported when the set is read */
        if (load_elements(a, path, kind, &el, &count, &absent))
            return 1;
        if (absent) {
            if (add_option(a, v, "--optional-absent", name))
                return 1;
            continue;
        }
        if ((kind & ONNX_DATA_SEQUENCE) &&
            add_option(a, v, "--sequence-length", arena_printf(a, "%s=%d", name, count)))
            return 1;
        for (j = 0; j < count; j++) {
            const char *key = (kind & ONNX_DATA_SEQUENCE) ? arena_printf(a, "%s[%d]", name, j)
                                                          : name;
            if (spec_names(v->o.shapes, v->o.n_shapes, key))
                continue;
            if (!(dims = span_dims(a, el[j], path)))
                return 1;
            if (*dims && add_option(a, v, "--input-shape", arena_printf(a, "%s=%s", key, dims)))
                return 1;
        }
    }
    return 0;
}

/* Element elem of the file at path for a value of this kind, checked
 * against v (read_checked); a tensor file is read directly. */
static Tensor *read_elem(Arena *a, const char *path, int kind, int elem, const Value *v,
                         const char *what)
{
    OnnxSpan *el;
    int count, absent;
    const char *tmp;
    if (kind == 0)
        return read_checked(a, path, path, v, what);
    if (load_elements(a, path, kind, &el, &count, &absent))
        return NULL;
    if (absent || elem >= count) {
        verr("%s: holds %s, the compiled model's %s '%s' needs element %d\n", path,
                absent ? "no value" : arena_printf(a, "%d element%s", count,
                                                   count == 1 ? "" : "s"),
                what, v->name, elem);
        return NULL;
    }
    tmp = arena_printf(a, "%s/element.pb", tmp_root);
    if (write_bytes(tmp, el[elem].p, el[elem].n)) {
        verr("tvmcc verify: cannot write %s\n", tmp);
        return NULL;
    }
    return read_checked(a, tmp, arena_printf(a, "%s (element %d)", path, elem), v, what);
}

/* Reads path and checks it against v (what: "input" or "output"). NULL
 * after a one-line message naming the file and the input or output. */
static Tensor *read_checked(Arena *a, const char *path, const char *label, const Value *v,
                            const char *what)
{
    Tensor *t = arena_array(a, 1, sizeof *t);
    Diag d;
    int k, same;
    if (v->dtype == DT_STRING) {
        /* the strings, each followed by NUL: the driver's file format */
        char *buf;
        size_t len, count;
        int st = onnx_read_string_tensor(path, &buf, &len, &count);
        if (st < 0)
            return NULL;
        if (st == 0 || (int64_t)count != value_numel(v)) {
            if (st)
                free(buf);
            verr("%s: %s '%s' is string %s, the file holds %s\n", label, what,
                    v->name, dims_text(a, v->rank, v->dims),
                    st ? arena_printf(a, "%zu strings", count) : "another type");
            return NULL;
        }
        t->dtype = DT_STRING;
        t->numel = (int64_t)count;
        t->data = arena_alloc(a, len + 1);
        memcpy(t->data, buf, len);
        t->dims[0] = (int64_t)len; /* its bytes */
        free(buf);
        return t;
    }
    diag_init(&d, label);
    if (onnx_read_tensor_file(a, path, t, NULL, &d))
        return NULL;
    /* the ONNX test data of ONNX 1.12 and older holds bfloat16 and
     * float16 tensors as uint16 (the same bits) */
    if (t->dtype == DT_UINT16 && (v->dtype == DT_BFLOAT16 || v->dtype == DT_FLOAT16))
        t->dtype = v->dtype;
    same = t->dtype == v->dtype && t->rank == v->rank;
    for (k = 0; same && k < t->rank; k++)
        same = t->dims[k] == v->dims[k];
    if (!same) {
        verr("%s: %s '%s' is %s %s, the file holds %s %s\n", label, what, v->name,
                dtype_name(v->dtype) ? dtype_name(v->dtype) : "?",
                dims_text(a, v->rank, v->dims),
                dtype_name(t->dtype) ? dtype_name(t->dtype) : "an unsupported type",
                dims_text(a, t->rank, t->dims));
        return NULL;
    }
    return t;
}

static int write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f)
        return 1;
    ok = n == 0 || fwrite(data, 1, n, f) == n;
    return (fclose(f) != 0) | !ok;
}

/* ------------------------------------------------------------- commands */

/* Whether prog is an executable on PATH (or a path to one). */
static int on_path(Arena *a, const char *prog)
{
    const char *path = getenv("PATH"), *p;
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    for (p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (n && access(arena_printf(a, "%.*s/%s", (int)n, p, prog), X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* Splits s on blanks into argv (appended at *n, cap entries). */
static void split_words(Arena *a, const char *s, const char **argv, int *n, int cap)
{
    while (*s) {
        size_t len;
        while (isspace((unsigned char)*s))
            s++;
        len = strcspn(s, " \t\n");
        if (len && *n < cap - 1)
            argv[(*n)++] = arena_printf(a, "%.*s", (int)len, s);
        s += len;
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs argv in cwd (NULL: this one) with stdout and stderr into log;
 * returns its exit status, 124 after timeout seconds (it is killed), 125
 * when it cannot be started, 256 + N when signal N killed it, -1 on
 * SIGINT. */
static int run_cmd(const char *const *argv, const char *cwd, const char *log, long timeout,
                   int verbose)
{
    pid_t pid;
    int st, i;
    double t0 = now_seconds();
    if (verbose) {
        verr("tvmcc verify:");
        if (cwd)
            verr(" (in %s)", cwd);
        for (i = 0; argv[i]; i++)
            verr(" %s", argv[i]);
        verr("\n");
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return 125;
    if (pid == 0) {
        /* its own process group, so that a timeout or an interrupt ends
         * everything it started (a runner's qemu too) */
        FILE *f = setpgid(0, 0) == 0 ? freopen(log, "w", stdout) : NULL;
        if (!f || dup2(fileno(stdout), 2) < 0 || (cwd && chdir(cwd) != 0))
            _exit(125);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(125);
    }
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return 125;
        if (interrupted || now_seconds() - t0 > (double)timeout) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            return interrupted ? -1 : 124;
        }
        if (stage)
            progress_note(stage, stage_done, stage_total);
        {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 256 + WTERMSIG(st) : 125;
}

/* The first lines of a log, indented, to stderr. */
static void show_log(const char *log)
{
    FILE *f = fopen(log, "r");
    char line[512];
    int n = 0;
    if (!f)
        return;
    while (n < 8 && fgets(line, sizeof line, f)) {
        verr("  %s", line);
        if (!strchr(line, '\n'))
            fputc('\n', stderr);
        n++;
    }
    fclose(f);
}

static const struct EmbeddedFile *embedded(const char *name)
{
    const struct EmbeddedFile *f;
    for (f = embedded_files; f->name; f++)
        if (!strcmp(f->name, name))
            return f;
    return NULL;
}

static int write_embedded(Arena *a, const char *dir, const char *name)
{
    const struct EmbeddedFile *f = embedded(name);
    if (!f || write_bytes(arena_printf(a, "%s/%s", dir, name), f->data, f->size)) {
        verr("tvmcc verify: cannot write %s/%s\n", dir, name);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ the build */

/* How a target's program is built and run. */
typedef struct RunPlan {
    int how;                   /* RUN_* */
    const char *cc;            /* compiler */
    const char *cc_package;    /* Debian package holding it */
    const char *machine;       /* qemu-system-arm -M */
    const char *ld;            /* linker script (embedded name) */
    const char *unit;          /* "ns" or "instructions" */
    int estimate;              /* cortex-m4: qemu runs with the m4est plugin */
} RunPlan;

static int plan_for(const Target *t, const VerifyOpts *v, RunPlan *rp)
{
    memset(rp, 0, sizeof *rp);
    rp->cc = t->cc && *t->cc ? t->cc : "cc";
    rp->unit = "ns";
    if (!strncmp(t->isa, "armv", 4)) {
        rp->how = RUN_QEMU_ARM;
        rp->cc_package = "gcc-arm-none-eabi and libnewlib-arm-none-eabi";
        rp->unit = "instructions";
        rp->ld = "mps2-an386.ld";
        if (!strcmp(t->name, "cortex-m4"))
            rp->machine = "mps2-an386";
        else if (!strcmp(t->name, "cortex-m0"))
            rp->machine = "mps2-an385"; /* its Cortex-M3 runs every Armv6-M instruction */
        else if (!strcmp(t->name, "cortex-m7"))
            rp->machine = "mps2-an500", rp->ld = "mps2-an500.ld";
        if (!rp->machine && !v->runner) {
            verr("tvmcc verify: target '%s' has no qemu machine to run on; give "
                    "--runner CMD to run its program on a board\n", t->name);
            return 1;
        }
    } else if (!strcmp(t->isa, "aarch64")) {
        rp->how = RUN_QEMU_USER;
        rp->cc_package = "gcc-aarch64-linux-gnu and libc6-dev-arm64-cross";
    } else {
        rp->how = RUN_HOST;
        rp->cc_package = "gcc";
    }
    return 0;
}

/* Writes the driver files and builds the program; its path in *prog. */
static int build(Arena *a, const VerifyOpts *v, const Target *t, const RunPlan *rp,
                 const ModelIO *io, const char **prog)
{
    const char *drv = arena_printf(a, "%s/drv", tmp_root);
    const char *out = arena_printf(a, "%s/out", tmp_root);
    const char *argv[128], *log = arena_printf(a, "%s/cc.log", tmp_root);
    int n = 0, rc;
    DIR *dp;
    struct dirent *e;
    if (!on_path(a, rp->cc)) {
        verr("tvmcc verify: the compiler of target '%s' (%s) is not on PATH "
                "(Debian: apt-get install %s)\n", t->name, rp->cc, rp->cc_package);
        return 1;
    }
    if (mkdir(drv, 0700) != 0 || write_embedded(a, drv, "verify_driver.c") ||
        write_embedded(a, drv, "model_io.h"))
        return 1;
    if (rp->how == RUN_QEMU_ARM && (write_embedded(a, drv, "startup.c") ||
                                    write_embedded(a, drv, rp->ld)))
        return 1;
    if (v->profile) {
        static const char hooks[] =
            "/* force-included by tvmcc verify --profile */\n"
            "void verify_kernel_begin(int i);\n"
            "void verify_kernel_end(int i);\n"
            "#define TVMCC_KERNEL_BEGIN(i) verify_kernel_begin(i)\n"
            "#define TVMCC_KERNEL_END(i) verify_kernel_end(i)\n";
        if (write_bytes(arena_printf(a, "%s/verify_hooks.h", drv), hooks, sizeof hooks - 1)) {
            verr("tvmcc verify: cannot write %s/verify_hooks.h\n", drv);
            return 1;
        }
    }
    argv[n++] = rp->cc;
    split_words(a, t->cflags ? t->cflags : "-std=c99 -O2", argv, &n, 100);
    argv[n++] = arena_printf(a, "-I%s", out);
    argv[n++] = arena_printf(a, "-I%s", drv);
    if (rp->how == RUN_QEMU_ARM)
        argv[n++] = "-DVERIFY_CLOCK_SYSTICK", argv[n++] =
            arena_printf(a, "-DVERIFY_TICK_INSNS=%d", TICK_INSNS);
    else
        argv[n++] = "-DVERIFY_CLOCK_POSIX", argv[n++] = "-D_POSIX_C_SOURCE=200809L";
    if (v->profile) {
        argv[n++] = arena_printf(a, "-DVERIFY_KERNELS=%d", io->n_kernels > 0 ? io->n_kernels : 1);
        argv[n++] = "-include";
        argv[n++] = arena_printf(a, "%s/verify_hooks.h", drv);
    }
    dp = opendir(out);
    if (!dp) {
        verr("tvmcc verify: cannot read %s\n", out);
        return 1;
    }
    while ((e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 2 && !strcmp(e->d_name + len - 2, ".c") && n < 110)
            argv[n++] = arena_printf(a, "%s/%s", out, e->d_name);
    }
    closedir(dp);
    argv[n++] = arena_printf(a, "%s/verify_driver.c", drv);
    if (rp->how == RUN_QEMU_ARM) {
        argv[n++] = arena_printf(a, "%s/startup.c", drv);
        argv[n++] = "--specs=rdimon.specs";
        argv[n++] = "-nostartfiles";
        argv[n++] = "-T";
        argv[n++] = arena_printf(a, "%s/%s", drv, rp->ld);
        *prog = arena_printf(a, "%s/driver.elf", tmp_root);
    } else {
        if (rp->how == RUN_QEMU_USER)
            argv[n++] = "-static";
        *prog = arena_printf(a, "%s/driver", tmp_root);
    }
    argv[n++] = "-o";
    argv[n++] = *prog;
    argv[n++] = "-lm";
    argv[n] = NULL;
    rc = run_cmd(argv, NULL, log, 600, v->verbose);
    if (rc < 0)
        return 1;
    if (rc != 0) {
        verr("tvmcc verify: building the program with %s failed (target '%s'):\n",
                rp->cc, t->name);
        show_log(log);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ the runs */

/* Cortex-M4 cycles, estimated: bench/arm/m4est (embedded), a qemu plugin
 * that charges every executed instruction its cost from the Cortex-M4
 * timing tables, built with the host's cc into tmp/est, with marks on the
 * driver's verify_mark_begin / verify_mark_end (their addresses from
 * arm-none-eabi-nm). 0 when it is ready; 1 (and a note with -v) when it
 * cannot be built here, and the table goes without it. */
static int estimator_setup(Arena *a, const VerifyOpts *v, const char *prog)
{
    const char *est = arena_printf(a, "%s/est", tmp_root);
    const char *nm_log = arena_printf(a, "%s/nm.txt", est);
    const char *cc_argv[] = {"cc", "-O2", "-std=c99", "-fPIC", "-shared", "-fvisibility=hidden",
                             "-o", NULL, NULL, NULL};
    const char *nm_argv[] = {"arm-none-eabi-nm", prog, NULL};
    char line[512];
    int found = 0;
    FILE *in, *out;
    if (mkdir(est, 0700) != 0 || write_embedded(a, est, "m4est.c") ||
        write_embedded(a, est, "qemu_api.h"))
        return 1;
    cc_argv[7] = arena_printf(a, "%s/m4est.so", est);
    cc_argv[8] = arena_printf(a, "%s/m4est.c", est);
    if (!on_path(a, "cc") || !on_path(a, "arm-none-eabi-nm") ||
        run_cmd(cc_argv, NULL, arena_printf(a, "%s/cc.log", est), 120, v->verbose) != 0 ||
        run_cmd(nm_argv, NULL, nm_log, 60, v->verbose) != 0) {
        if (v->verbose)
            fprintf(stderr, "tvmcc verify: no cycle estimate (the m4est plugin or the marks "
                    "could not be built with cc and arm-none-eabi-nm)\n");
        return 1;
    }
    if (!(in = fopen(nm_log, "r")))
        return 1;
    if (!(out = fopen(arena_printf(a, "%s/marks.txt", est), "w"))) {
        fclose(in);
        return 1;
    }
    while (fgets(line, sizeof line, in)) {
        char addr[32], kind[4], name[64];
        if (sscanf(line, "%31s %3s %63s", addr, kind, name) == 3 &&
            (kind[0] == 'T' || kind[0] == 't') && !kind[1] &&
            (!strcmp(name, "verify_mark_begin") || !strcmp(name, "verify_mark_end"))) {
            fprintf(out, "%s %s\n", addr, name);
            found++;
        }
    }
    fclose(in);
    return (fclose(out) != 0) | (found != 2);
}

/* Estimated cycles per run between the two marks of set_rel/m4est.txt;
 * -1 when it is missing. */
static double read_estimate(Arena *a, const char *set_rel, long runs)
{
    FILE *f = fopen(arena_printf(a, "%s/%s/m4est.txt", tmp_root, set_rel), "r");
    char line[1024];
    double begin = -1, end = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        double insns, cycles;
        char name[64];
        if (sscanf(line, "hit %63s %lf %lf", name, &insns, &cycles) == 3) {
            if (!strcmp(name, "verify_mark_begin") && begin < 0)
                begin = cycles;
            else if (!strcmp(name, "verify_mark_end"))
                end = cycles;
        }
    }
    fclose(f);
    return begin >= 0 && end >= begin && runs > 0 ? (end - begin) / (double)runs : -1;
}

/* The measurement the driver wrote: total and per-kernel means. */
static int read_measure(const char *path, char *unit, size_t unit_cap, double *total,
                        double *kernels, int n_kernels)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int got = 0;
    if (!f)
        return 1;
    while (fgets(line, sizeof line, f)) {
        char word[32];
        double x;
        int k;
        if (sscanf(line, "unit %31s", word) == 1 && strlen(word) < unit_cap) {
            strcpy(unit, word);
        } else if (sscanf(line, "total %lf", &x) == 1) {
            *total = x;
            got = 1;
        } else if (sscanf(line, "kernel %d %lf", &k, &x) == 2 && kernels && k >= 0 &&
                   k < n_kernels) {
            kernels[k] += x;
        }
    }
    fclose(f);
    return !got;
}

/* Runs the program on one data set (its inputs in set_dir/in). */
static int run_set(Arena *a, const VerifyOpts *v, RunPlan *rp, const ModelIO *io,
                   const char *prog, const char *set_rel, const char *set_name)
{
    const char *argv[16];
    const char *in_dir = arena_printf(a, "%s/%s/in", tmp_root, set_rel);
    const char *out_dir = arena_printf(a, "%s/%s/out", tmp_root, set_rel);
    const char *log = arena_printf(a, "%s/%s/run.log", tmp_root, set_rel);
    const char *runs = arena_printf(a, "%ld", v->runs);
    const char *cwd = NULL;
    int n = 0, rc;
    if (v->runner) {
        setenv("TVMCC_TARGET", io->target_name, 1);
        setenv("TVMCC_MODEL_DIR", arena_printf(a, "%s/out", tmp_root), 1);
        setenv("TVMCC_NUM_INPUTS", arena_printf(a, "%d", io->n_in), 1);
        setenv("TVMCC_NUM_OUTPUTS", arena_printf(a, "%d", io->n_out), 1);
        setenv("TVMCC_RUNS", runs, 1);
        argv[n++] = "/bin/sh";
        argv[n++] = "-c";
        argv[n++] = arena_printf(a, "%s \"$@\"", v->runner);
        argv[n++] = "tvmcc-verify-runner";
        argv[n++] = prog;
        argv[n++] = in_dir;
        argv[n++] = out_dir;
    } else if (rp->how == RUN_QEMU_ARM) {
        /* semihosting: paths relative to qemu's working directory, no spaces */
        argv[n++] = "qemu-system-arm";
        argv[n++] = "-M";
        argv[n++] = rp->machine;
        argv[n++] = "-icount";
        argv[n++] = "shift=0";
        argv[n++] = "-nographic";
        argv[n++] = "-monitor";
        argv[n++] = "none";
        argv[n++] = "-semihosting-config";
        argv[n++] = arena_printf(a, "enable=on,target=native,arg=driver,arg=%s/in,arg=%s/out,"
                                 "arg=%s", set_rel, set_rel, runs);
        argv[n++] = "-kernel";
        argv[n++] = "driver.elf";
        if (rp->estimate) {
            argv[n++] = "-plugin";
            argv[n++] = arena_printf(a, "est/m4est.so,out=%s/m4est.txt,marks=est/marks.txt",
                                     set_rel);
        }
        cwd = tmp_root;
    } else {
        if (rp->how == RUN_QEMU_USER)
            argv[n++] = "qemu-aarch64";
        argv[n++] = prog;
        argv[n++] = in_dir;
        argv[n++] = out_dir;
        argv[n++] = runs;
    }
    argv[n] = NULL;
    rc = run_cmd(argv, cwd, log, v->timeout, v->verbose);
    if (rc < 0)
        return 1;
    if (rc != 0 && rc != 124 && rp->estimate && !interrupted) {
        /* a qemu built without plugin support: run without the estimate */
        if (v->verbose)
            fprintf(stderr, "tvmcc verify: qemu failed with the m4est plugin; running "
                    "without the cycle estimate\n");
        rp->estimate = 0;
        return run_set(a, v, rp, io, prog, set_rel, set_name);
    }
    if (rc != 0) {
        if (rc == 124)
            verr("%s: the run took longer than %ld s (--timeout)\n", set_name,
                    v->timeout);
        else if (rc > 256)
            verr("%s: the program%s was killed by signal %d%s:\n", set_name,
                    v->runner ? " (--runner)" : "", rc - 256,
                    rc - 256 == SIGILL ? " (an instruction this CPU lacks?)" : "");
        else
            verr("%s: the program%s exited with status %d:\n", set_name,
                    v->runner ? " (--runner)" : "", rc);
        show_log(log);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ compare */

/* element i of an integer or bool buffer as double (exact up to 2^53) and
 * as a bit pattern for exact comparison */
static double int_at(DType dt, const unsigned char *p, int64_t i, uint64_t *bits)
{
    if (dtype_is_packed(dt)) {
        int x = dtype_packed_get(dt, p, i);
        *bits = (uint64_t)(int64_t)x;
        return x;
    }
    switch (dt) {
    case DT_INT8: { int8_t x; memcpy(&x, p + i, 1); *bits = (uint64_t)(int64_t)x; return x; }
    case DT_INT16: { int16_t x; memcpy(&x, p + i * 2, 2); *bits = (uint64_t)(int64_t)x; return x; }
    case DT_INT32: { int32_t x; memcpy(&x, p + i * 4, 4); *bits = (uint64_t)(int64_t)x; return x; }
    case DT_INT64: { int64_t x; memcpy(&x, p + i * 8, 8); *bits = (uint64_t)x; return (double)x; }
    case DT_UINT16: { uint16_t x; memcpy(&x, p + i * 2, 2); *bits = x; return x; }
    case DT_UINT32: { uint32_t x; memcpy(&x, p + i * 4, 4); *bits = x; return x; }
    case DT_UINT64: { uint64_t x; memcpy(&x, p + i * 8, 8); *bits = x; return (double)x; }
    default: *bits = p[i]; return p[i]; /* uint8, bool */
    }
}

/* The element's index as [d0,d1,...] */
static const char *index_text(Arena *a, const Value *v, long long i)
{
    int64_t idx[TVMCC_MAX_RANK];
    int k;
    for (k = v->rank - 1; k >= 0; k--) {
        idx[k] = v->dims[k] > 0 ? i % v->dims[k] : 0;
        i = v->dims[k] > 0 ? i / v->dims[k] : 0;
    }
    return dims_text(a, v->rank, idx);
}

/* Compares one output; fills st and, on a mismatch, prints the worst
 * element. 0 match, 1 mismatch. */
static int compare(Arena *a, const VerifyOpts *v, const Value *val, const Tensor *exp,
                   const unsigned char *got, const char *set_name, OutStat *st)
{
    const unsigned char *e = exp->data;
    int64_t i, bad = 0, worst_bad = -1;
    double worst_err = -1, exp_w = 0, got_w = 0;
    int is_float = dtype_is_float(exp->dtype);
    double rtol = v->rtol, atol = v->atol;
    st->max_abs = st->max_rel = 0;
    st->worst = -1;
    if (exp->dtype == DT_STRING) {
        /* exact; the first string that differs */
        const char *x = exp->data, *y = (const char *)got, *end = y + exp->dims[0];
        for (i = 0; i < exp->numel; i++) {
            size_t lx = strlen(x), ly = strnlen(y, (size_t)(end - y));
            if (lx != ly || memcmp(x, y, lx)) {
                st->worst = i;
                st->max_abs = st->max_rel = INFINITY;
                st->pass = 0;
                verr("%s: output '%s' differs; first: element %lld %s: expected "
                        "\"%s\", got \"%.*s\"\n", set_name, val->name, (long long)i,
                        index_text(a, val, (long long)i), x, (int)ly, y);
                return 1;
            }
            x += lx + 1;
            y += ly + 1;
        }
        st->pass = 1;
        return 0;
    }
    if (!is_float && !v->tol_given)
        rtol = atol = 0;
    for (i = 0; i < exp->numel; i++) {
        double x, y, err, rel;
        int ok;
        if (is_float) {
            x = dtype_float_at(exp->dtype, e, i);
            y = dtype_float_at(exp->dtype, got, i);
            ok = dtype_close(x, y, rtol, atol, &err);
        } else {
            uint64_t bx, by;
            x = int_at(exp->dtype, e, i, &bx);
            y = int_at(exp->dtype, got, i, &by);
            err = bx == by ? 0 : fabs(y - x);
            if (bx != by && err == 0)
                err = 1; /* beyond double precision */
            ok = bx == by || (v->tol_given && err <= atol + rtol * fabs(x));
        }
        rel = err == 0 ? 0 : x != 0 ? err / fabs(x) : INFINITY;
        if (err > st->max_abs)
            st->max_abs = err;
        if (rel > st->max_rel)
            st->max_rel = rel;
        /* the worst element: the largest error among the failing ones,
         * else among all */
        if ((!ok && (worst_bad < 0 || err > worst_err)) ||
            (ok && worst_bad < 0 && err > worst_err)) {
            worst_err = err;
            st->worst = i;
            exp_w = x;
            got_w = y;
            if (!ok)
                worst_bad = i;
        }
        bad += !ok;
    }
    st->pass = bad == 0;
    if (bad) {
        verr("%s: output '%s' differs in %lld of %lld elements; worst: element %lld "
                "%s: expected %.9g, got %.9g (rtol %g, atol %g)\n", set_name, val->name,
                (long long)bad, (long long)exp->numel, (long long)worst_bad,
                index_text(a, val, (long long)worst_bad), exp_w, got_w, rtol, atol);
    }
    return bad != 0;
}

/* ------------------------------------------------------------ profile */

static int write_profile(const VerifyOpts *v, const ModelIO *io, const char *unit,
                         const double *kernels, long runs_total)
{
    cJSON *root = cJSON_CreateObject(), *arr;
    const char *base = strrchr(v->o.model, '/');
    char *text;
    FILE *f;
    int k, bad;
    cJSON_AddStringToObject(root, "model", base ? base + 1 : v->o.model);
    cJSON_AddStringToObject(root, "target", io->target_name);
    cJSON_AddStringToObject(root, "unit", unit);
    cJSON_AddNumberToObject(root, "runs", (double)runs_total);
    arr = cJSON_AddArrayToObject(root, "kernels");
    for (k = 0; k < io->n_kernels; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", io->kernel_names[k]);
        cJSON_AddNumberToObject(o, "value", kernels[k]);
        cJSON_AddItemToArray(arr, o);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    f = fopen(v->profile, "w");
    bad = !f || !text || fputs(text, f) < 0 || fputc('\n', f) == EOF;
    if (f && fclose(f) != 0)
        bad = 1;
    cJSON_free(text);
    if (bad) {
        verr("%s: cannot write the profile (--profile)\n", v->profile);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ main */

static void human(char *buf, size_t cap, double x, const char *unit)
{
    if (!strcmp(unit, "ns")) {
        if (x >= 1e9)
            snprintf(buf, cap, "%.3f s", x * 1e-9);
        else if (x >= 1e6)
            snprintf(buf, cap, "%.3f ms", x * 1e-6);
        else
            snprintf(buf, cap, "%.1f us", x * 1e-3);
    } else {
        snprintf(buf, cap, "%.0f %s", x, !strcmp(unit, "instructions") ? "insns" : unit);
    }
}

/* Compiles the model into tmp/out and records its API in io. */
/* The file holding API buffer k (element *elem of the graph input or
 * output it belongs to), -1 if none */
static int file_of(const char *const *names, int n, const IoTag *tags, int k, const char *name,
                   int *elem)
{
    const char *seq = tags && tags[k].seq ? tags[k].seq : NULL;
    int j;
    *elem = seq ? tags[k].index : 0;
    for (j = 0; j < n; j++)
        if (!strcmp(names[j], seq ? seq : name))
            return j;
    return -1;
}

static int compile(Arena *a, VerifyOpts *v, const FileIO *fio, ModelIO *io)
{
    Arena pa;
    Diag d;
    Pipeline pl;
    int rc, k;
    v->o.out_dir = arena_printf(a, "%s/out", tmp_root);
    v->o.verbose = v->verbose;
    arena_init(&pa, (size_t)8 << 30);
    diag_init(&d, v->o.model);
    pipeline_init(&pl, &v->o, &pa, &d);
    rc = pipeline_run(&pl);
    if (rc == 0) {
        const Graph *g = pl.prog.g;
        io->target_name = arena_strdup(a, pl.target->name);
        io->n_in = g->n_inputs;
        io->n_out = g->n_outputs;
        io->in = arena_array(a, (size_t)io->n_in + 1, sizeof *io->in);
        io->out = arena_array(a, (size_t)io->n_out + 1, sizeof *io->out);
        io->in_file = arena_array(a, (size_t)io->n_in + 1, sizeof *io->in_file);
        io->in_elem = arena_array(a, (size_t)io->n_in + 1, sizeof *io->in_elem);
        io->out_file = arena_array(a, (size_t)io->n_out + 1, sizeof *io->out_file);
        io->out_elem = arena_array(a, (size_t)io->n_out + 1, sizeof *io->out_elem);
        for (k = 0; k < io->n_in && rc == 0; k++) {
            io->in[k] = g->values[g->inputs[k]];
            io->in[k].name = arena_strdup(a, io->in[k].name);
            io->in_file[k] = file_of(fio->in_name, fio->n_in, g->in_tags, k, io->in[k].name,
                                     &io->in_elem[k]);
            if (io->in_file[k] < 0) {
                verr("%s: input '%s' of the compiled model is no graph input\n",
                        v->o.model, io->in[k].name);
                rc = 1;
            }
        }
        for (k = 0; k < io->n_out && rc == 0; k++) {
            io->out[k] = g->values[g->outputs[k]];
            io->out[k].name = arena_strdup(a, io->out[k].name);
            io->out_file[k] = file_of(fio->out_name, fio->n_out, g->out_tags, k,
                                      io->out[k].name, &io->out_elem[k]);
            if (io->out_file[k] < 0) {
                verr("%s: output '%s' of the compiled model is no graph output\n",
                        v->o.model, io->out[k].name);
                rc = 1;
            }
        }
        io->kernel_names = arena_array(a, (size_t)pl.prog.n_kernels + 1, sizeof(char *));
        for (k = 0; k < pl.prog.n_kernels; k++)
            if (pl.prog.kernels[k])
                io->kernel_names[io->n_kernels++] = arena_strdup(a, pl.prog.kernels[k]->name);
    }
    arena_free(&pa);
    return rc;
}

static int verify(Arena *a, VerifyOpts *v)
{
    DataSet *sets;
    ModelIO io;
    RunPlan rp;
    const Target *t;
    const char *prog = NULL, *err = NULL;
    FileIO fio;
    char unit[32] = "ns";
    Tensor ***expected;
    double *set_time, *set_cycles, *kernels = NULL;
    OutStat **stats;
    int n_sets, i, k, fails = 0, measured = 0;
    const char *tmp = getenv("TMPDIR");

    memset(&io, 0, sizeof io);
    progress_start("tvmcc verify");
    t = target_load(a, v->o.target, &err);
    if (!t) {
        verr("tvmcc verify: %s\n", err);
        return target_known(v->o.target) ? 1 : 2;
    }
    if (plan_for(t, v, &rp) || list_sets(a, v->data, &sets, &n_sets))
        return 1;
    if (v->runner == NULL && rp.how != RUN_HOST) {
        const char *q = rp.how == RUN_QEMU_ARM ? "qemu-system-arm" : "qemu-aarch64";
        if (!on_path(a, q)) {
            verr("tvmcc verify: %s is not on PATH, needed to run target '%s' "
                    "(Debian: apt-get install %s)\n", q, t->name,
                    rp.how == RUN_QEMU_ARM ? "qemu-system-arm" : "qemu-user");
            return 1;
        }
    }
    snprintf(tmp_root, sizeof tmp_root, "%s/tvmcc-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmp_root)) {
        verr("tvmcc verify: cannot make a temporary directory under %s\n",
                tmp && *tmp ? tmp : "/tmp");
        tmp_root[0] = '\0';
        return 1;
    }
    memset(&fio, 0, sizeof fio);
    if (bind_from_data(a, v, &sets[0], &fio))
        return 1;
    stage = "compiling";
    if (compile(a, v, &fio, &io) || interrupted)
        return 1;
    progress_clear();

    /* every data set's files, checked before anything is built */
    expected = arena_array(a, (size_t)n_sets, sizeof *expected);
    stats = arena_array(a, (size_t)n_sets, sizeof *stats);
    set_time = arena_array(a, (size_t)n_sets, sizeof *set_time);
    set_cycles = arena_array(a, (size_t)n_sets, sizeof *set_cycles);
    for (i = 0; i < n_sets; i++) {
        const DataSet *s = &sets[i];
        const char *rel = arena_printf(a, "set_%d", i);
        const char *in_dir = arena_printf(a, "%s/%s/in", tmp_root, rel);
        if (mkdir(arena_printf(a, "%s/%s", tmp_root, rel), 0700) || mkdir(in_dir, 0700) ||
            mkdir(arena_printf(a, "%s/%s/out", tmp_root, rel), 0700)) {
            verr("tvmcc verify: cannot make directories under %s\n", tmp_root);
            return 1;
        }
        for (k = 0; k < io.n_in; k++) {
            const char *path = arena_printf(a, "%s/input_%d.pb", s->dir, io.in_file[k]);
            Tensor *in;
            if (!is_file(path)) {
                verr("%s: missing (input '%s')\n", path, io.in[k].name);
                return 1;
            }
            if (!(in = read_elem(a, path, fio.in_kind[io.in_file[k]], io.in_elem[k], &io.in[k],
                                 "input")))
                return 1;
            if (write_bytes(arena_printf(a, "%s/input_%d.bin", in_dir, k), in->data,
                            in->dtype == DT_STRING ? (size_t)in->dims[0] :
                            (size_t)dtype_nbytes(in->dtype, in->numel))) {
                verr("tvmcc verify: cannot write into %s\n", in_dir);
                return 1;
            }
        }
        if (s->n_out_files != fio.n_out) {
            verr("%s: %d output_K.pb file%s, the model has %d output%s\n", s->dir,
                    s->n_out_files, s->n_out_files == 1 ? "" : "s", fio.n_out,
                    fio.n_out == 1 ? "" : "s");
            return 1;
        }
        expected[i] = arena_array(a, (size_t)io.n_out + 1, sizeof **expected);
        stats[i] = arena_array(a, (size_t)io.n_out + 1, sizeof **stats);
        for (k = 0; k < io.n_out; k++) {
            const char *path = arena_printf(a, "%s/output_%d.pb", s->dir, io.out_file[k]);
            if (!(expected[i][k] = read_elem(a, path, fio.out_kind[io.out_file[k]],
                                             io.out_elem[k], &io.out[k], "output")))
                return 1;
        }
    }

    stage = "building the program";
    progress_note(stage, 0, 0);
    if (build(a, v, t, &rp, &io, &prog) || interrupted)
        return 1;
    if (rp.how == RUN_QEMU_ARM && !v->runner && !strcmp(t->name, "cortex-m4"))
        rp.estimate = estimator_setup(a, v, prog) == 0;
    progress_clear();
    if (v->profile)
        kernels = arena_array(a, (size_t)io.n_kernels + 1, sizeof *kernels);
    for (i = 0; i < n_sets; i++) {
        const char *rel = arena_printf(a, "set_%d", i);
        const char *out_dir = arena_printf(a, "%s/%s/out", tmp_root, rel);
        double total = -1;
        stage = "data set", stage_done = i, stage_total = n_sets;
        progress_note(stage, stage_done, stage_total);
        if (run_set(a, v, &rp, &io, prog, rel, sets[i].name) || interrupted)
            return 1;
        if (read_measure(arena_printf(a, "%s/measure.txt", out_dir), unit, sizeof unit, &total,
                         kernels, io.n_kernels) == 0)
            measured++;
        set_time[i] = total;
        set_cycles[i] = rp.estimate ? read_estimate(a, rel, v->runs) : -1;
        for (k = 0; k < io.n_out; k++) {
            const char *path = arena_printf(a, "%s/output_%d.bin", out_dir, k);
            int is_str = io.out[k].dtype == DT_STRING;
            size_t want = is_str ? (size_t)expected[i][k]->dims[0] :
                          (size_t)dtype_nbytes(io.out[k].dtype, value_numel(&io.out[k]));
            unsigned char *got = arena_alloc(a, want + 1);
            FILE *f = fopen(path, "rb");
            size_t n = f ? fread(got, 1, want + 1, f) : 0;
            if (f)
                fclose(f);
            if (is_str && f && n != want) {
                /* other strings than expected: compared below */
                memset(got + n, 0, want + 1 - (n < want ? n : want));
                n = want;
            }
            if (!f || n != want) {
                verr("%s: output '%s': the program wrote %s (%zu bytes expected)\n",
                        sets[i].name, io.out[k].name, f ? "another size" : "no output_K.bin",
                        want);
                return 1;
            }
            fails += compare(a, v, &io.out[k], expected[i][k], got, sets[i].name,
                             &stats[i][k]);
        }
    }
    progress_clear();

    /* the table */
    printf("tvmcc verify: %s, target %s, %d data set%s, rtol %g, atol %g\n", v->o.model,
           io.target_name, n_sets, n_sets == 1 ? "" : "s", v->rtol, v->atol);
    printf("%-24s %-20s %12s %12s %-16s %14s%s  %s\n", "data set", "output", "max abs err",
           "max rel err", "worst element", unit[0] == 'n' ? "time" : unit,
           rp.estimate ? "  M4 cycles (est.)" : "", "result");
    for (i = 0; i < n_sets; i++)
        for (k = 0; k < io.n_out; k++) {
            const OutStat *st = &stats[i][k];
            char tbuf[48] = "", wbuf[48] = "-", cbuf[48] = "";
            if (k == 0 && set_time[i] >= 0)
                human(tbuf, sizeof tbuf, set_time[i], unit);
            if (rp.estimate)
                snprintf(cbuf, sizeof cbuf, "  %16s", k || set_cycles[i] < 0 ? "" :
                         arena_printf(a, "%.0f", set_cycles[i]));
            if (st->worst >= 0 && (st->max_abs > 0 || !st->pass))
                snprintf(wbuf, sizeof wbuf, "%lld", st->worst);
            printf("%-24.24s %-20.20s %12.4g %12.4g %-16s %14s%s  %s\n", k ? "" : sets[i].name,
                   io.out[k].name, st->max_abs, st->max_rel, wbuf, tbuf, cbuf,
                   st->pass ? "pass" : "FAIL");
        }
    if (v->profile) {
        long runs_total = v->runs * (long)(measured ? measured : 1);
        for (k = 0; k < io.n_kernels; k++)
            kernels[k] /= measured ? measured : 1;
        if (write_profile(v, &io, unit, kernels, runs_total))
            return 1;
    }
    printf("%s: %d of %d output%s match\n", fails ? "FAIL" : "PASS",
           n_sets * io.n_out - fails, n_sets * io.n_out, n_sets * io.n_out == 1 ? "" : "s");
    return fails ? 1 : 0;
}

int verify_main(int argc, char **argv)
{
    VerifyOpts v;
    Arena a;
    struct sigaction sa;
    int rc, done = 0;
    memset(&v, 0, sizeof v);
    rc = parse_args(argc, argv, &v, &done);
    if (rc || done)
        return rc;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    arena_init(&a, 0);
    rc = verify(&a, &v);
    progress_stop();
    cleanup();
    arena_free(&a);
    if (interrupted) {
        verr("tvmcc verify: interrupted\n");
        signal((int)interrupted, SIG_DFL);
        raise((int)interrupted);
        return 130;
    }
    return rc;
}
