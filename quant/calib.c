/*
 * Samples and host runs for `tvmcc quantize` (calib.h).
 *
 * A model runs on the compiling machine as tvmcc's own output: compiled for
 * the portable C target into a temporary directory, built with the host
 * compiler together with a small driver (written below) that reads the
 * samples' inputs from its standard input, one sample after another, and
 * writes each sample's outputs to its standard output. No Python and no
 * other runtime is involved; -ffp-contract=off keeps the float results the
 * same on every host, so the same samples give the same quantized model.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../frontend/onnx.h"
#include "../pipeline/pipeline.h"
#include "calib.h"

/* ------------------------------------------------------------ progress */

int progress_enabled(void)
{
    return isatty(2);
}

void progress_line(const char *label, int done, int total)
{
    if (!label || !progress_enabled())
        return;
    fprintf(stderr, "\r%s: %d/%d", label, done, total);
    fflush(stderr);
}

void progress_end(void)
{
    if (progress_enabled())
        fprintf(stderr, "\r\033[K");
}

/* ------------------------------------------------------------- samples */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sorted names of the entries of dir matching want (1: directories,
 * 0: input_*.pb / output_*.pb files) */
static char **list_dir(Arena *a, const char *dir, int dirs, int *count)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int n = 0, cap = 0;
    *count = 0;
    if (!dp)
        return NULL;
    while ((e = readdir(dp)) != NULL) {
        struct stat st;
        char *path;
        if (e->d_name[0] == '.')
            continue;
        path = arena_printf(a, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || (dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
            continue;
        if (n == cap) {
            char **nn;
            cap = cap ? cap * 2 : 64;
            nn = arena_array(a, (size_t)cap, sizeof *nn);
            if (n)
                memcpy(nn, names, (size_t)n * sizeof *nn);
            names = nn;
        }
        names[n++] = arena_strdup(a, e->d_name);
    }
    closedir(dp);
    if (n)
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    *count = n;
    return names;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *shape_text(Arena *a, int rank, const int64_t *dims)
{
    char *s = arena_strdup(a, "[");
    int k;
    for (k = 0; k < rank; k++)
        s = arena_printf(a, "%s%s%lld", s, k ? "," : "", (long long)dims[k]);
    return arena_printf(a, "%s]", s);
}

/* one tensor file against the value it is for */
static void *read_checked(Arena *a, const char *path, const Value *v, const char *what, Diag *d)
{
    Tensor t;
    Diag fd;
    int k, same;
    /* the file's own problems are reported against the file */
    diag_init(&fd, path);
    fd.quiet = d->quiet;
    fd.out = d->out;
    if (onnx_read_tensor_file(a, path, &t, NULL, &fd)) {
        d->errors += fd.errors ? fd.errors : 1;
        return NULL;
    }
    if (t.dtype != v->dtype) {
        diag_error(d, NULL, path, "%s '%s' is %s, the file holds %s", what, v->name,
                   dtype_name(v->dtype) ? dtype_name(v->dtype) : "?",
                   dtype_name(t.dtype) ? dtype_name(t.dtype) : "an unsupported type");
        return NULL;
    }
    same = t.rank == v->rank;
    for (k = 0; same && k < t.rank; k++)
        same = t.dims[k] == v->dims[k];
    if (!same) {
        diag_error(d, NULL, path, "%s '%s' has shape %s, the file holds %s (set it with "
                   "--input-shape)", what, v->name, shape_text(a, v->rank, v->dims),
                   shape_text(a, t.rank, t.dims));
        return NULL;
    }
    return t.data;
}

/* the files input_K.pb (K = 0..) of one sample folder */
static int load_sample(Arena *a, const Graph *g, const char *dir, void **in, void **out,
                       int *n_out, Diag *d)
{
    int k, files, i, n_in_files = 0, n_out_files = 0;
    char **names = list_dir(a, dir, 0, &files);
    for (i = 0; i < files; i++) {
        if (!strncmp(names[i], "input_", 6))
            n_in_files++;
        else if (!strncmp(names[i], "output_", 7))
            n_out_files++;
    }
    if (n_in_files != g->n_inputs) {
        diag_error(d, NULL, dir, "the model has %d input%s, the folder %d input_K.pb file%s",
                   (int)g->n_inputs, g->n_inputs == 1 ? "" : "s", n_in_files,
                   n_in_files == 1 ? "" : "s");
        return 1;
    }
    for (k = 0; k < g->n_inputs; k++) {
        const char *path = arena_printf(a, "%s/input_%d.pb", dir, k);
        if (!file_exists(path)) {
            diag_error(d, NULL, path, "missing (input '%s')", g->values[g->inputs[k]].name);
            return 1;
        }
        if (!(in[k] = read_checked(a, path, &g->values[g->inputs[k]], "input", d)))
            return 1;
    }
    *n_out = 0;
    if (out && n_out_files == g->n_outputs) {
        for (k = 0; k < g->n_outputs; k++) {
            const char *path = arena_printf(a, "%s/output_%d.pb", dir, k);
            if (!file_exists(path))
                return 0;
            if (!(out[k] = read_checked(a, path, &g->values[g->outputs[k]], "output", d)))
                return 1;
        }
        *n_out = g->n_outputs;
    }
    return 0;
}

static uint64_t next_rand(uint64_t *s)
{
    /* xorshift64*: deterministic on every host */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* the rows of the table a Gather reads with integer input vi (0 if none) */
static int64_t gather_rows(const Graph *g, int32_t vi)
{
    int32_t ni;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (!n->dead && n->op == OP_Gather && n->n_in > 1 && n->in[1] == vi && n->in[0] >= 0) {
            const Value *t = &g->values[n->in[0]];
            int64_t axis = attr_int(n, "axis", 0, NULL);
            if (axis < 0)
                axis += t->rank;
            if (axis >= 0 && axis < t->rank)
                return t->dims[axis];
        }
    }
    return 0;
}

static int random_samples(Arena *a, const Graph *g, int count, uint64_t seed, SampleSet *s,
                          Diag *d)
{
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    int i, k;
    if (!st)
        st = 1;
    for (i = 0; i < count; i++) {
        s->names[i] = arena_printf(a, "random-%d", i);
        s->inputs[i] = arena_array(a, (size_t)g->n_inputs + 1, sizeof(void *));
        for (k = 0; k < g->n_inputs; k++) {
            const Value *v = &g->values[g->inputs[k]];
            int64_t n = value_numel(v), e, rows = 0;
            size_t es = dtype_size(v->dtype);
            unsigned char *buf;
            if (!es || dtype_is_packed(v->dtype) || v->dtype == DT_STRING) {
                diag_error(d, NULL, "--calib", "random samples of input '%s' (%s) cannot be made",
                           v->name, dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
                return 1;
            }
            buf = arena_array(a, (size_t)(n ? n : 1), es);
            memset(buf, 0, (size_t)(n ? n : 1) * es);
            if (!dtype_is_float(v->dtype))
                rows = gather_rows(g, g->inputs[k]);
            for (e = 0; e < n; e++) {
                uint64_t r = next_rand(&st);
                double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
                if (v->dtype == DT_FLOAT32) {
                    ((float *)buf)[e] = (float)(2 * u - 1);
                } else if (v->dtype == DT_FLOAT64) {
                    ((double *)buf)[e] = 2 * u - 1;
                } else if (rows > 0) {
                    int64_t idx = (int64_t)(u * (double)rows);
                    if (v->dtype == DT_INT64)
                        ((int64_t *)buf)[e] = idx;
                    else if (v->dtype == DT_INT32)
                        ((int32_t *)buf)[e] = (int32_t)idx;
                }
            }
            s->inputs[i][k] = buf;
        }
    }
    return 0;
}

int samples_load(Arena *a, const Graph *g, const char *spec, uint64_t seed, SampleSet *s,
                 Diag *d)
{
    int n_dirs, i, direct;
    char **dirs;
    memset(s, 0, sizeof *s);
    s->n_inputs = g->n_inputs;
    if (g->n_inputs < 1) {
        diag_error(d, NULL, NULL, "the model has no inputs to calibrate with");
        return 1;
    }
    if (!strncmp(spec, "random:", 7)) {
        char *end;
        long n = strtol(spec + 7, &end, 10);
        if (*end || n < 1 || n > 100000) {
            diag_error(d, NULL, "--calib", "'%s': random:N takes a count from 1 to 100000", spec);
            return 1;
        }
        s->n_samples = (int)n;
        s->names = arena_array(a, (size_t)n, sizeof *s->names);
        s->inputs = arena_array(a, (size_t)n, sizeof *s->inputs);
        return random_samples(a, g, (int)n, seed, s, d);
    }
    direct = file_exists(arena_printf(a, "%s/input_0.pb", spec));
    if (direct) {
        n_dirs = 1;
        dirs = NULL;
    } else {
        struct stat st;
        if (stat(spec, &st) != 0 || !S_ISDIR(st.st_mode)) {
            diag_error(d, NULL, spec, "not a directory");
            return 1;
        }
        dirs = list_dir(a, spec, 1, &n_dirs);
        if (n_dirs == 0) {
            diag_error(d, NULL, spec, "no samples: expected folders holding input_0.pb ... "
                       "(the ONNX test-data layout)");
            return 1;
        }
    }
    s->n_samples = n_dirs;
    s->names = arena_array(a, (size_t)n_dirs, sizeof *s->names);
    s->inputs = arena_array(a, (size_t)n_dirs, sizeof *s->inputs);
    s->outputs = arena_array(a, (size_t)n_dirs, sizeof *s->outputs);
    s->n_outputs = g->n_outputs;
    for (i = 0; i < n_dirs; i++) {
        const char *dir = direct ? spec : arena_printf(a, "%s/%s", spec, dirs[i]);
        int n_out = 0;
        s->names[i] = direct ? spec : dirs[i];
        s->inputs[i] = arena_array(a, (size_t)g->n_inputs + 1, sizeof(void *));
        s->outputs[i] = arena_array(a, (size_t)g->n_outputs + 1, sizeof(void *));
        if (load_sample(a, g, dir, s->inputs[i], s->outputs[i], &n_out, d))
            return 1;
        if (n_out == 0)
            s->n_outputs = 0;
    }
    return 0;
}

/* ---------------------------------------------------------- host model */

static const char driver_c[] =
    "/* tvmcc quantize: runs qcal_run on the samples of stdin, writes outputs to stdout */\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"qcal.h\"\n"
    "static const unsigned long ib[] = QCAL_INPUT_BYTES;\n"
    "static const unsigned long ob[] = QCAL_OUTPUT_BYTES;\n"
    "int main(void)\n"
    "{\n"
    "    void *in[QCAL_NUM_INPUTS], *out[QCAL_NUM_OUTPUTS];\n"
    "    unsigned char *ws = malloc(QCAL_WORKSPACE_BYTES + 64);\n"
    "    void *wsa;\n"
    "    int i;\n"
    "    if (!ws) return 3;\n"
    "    wsa = ws + (64 - (size_t)ws % 64) % 64;\n"
    "    for (i = 0; i < QCAL_NUM_INPUTS; i++) if (!(in[i] = malloc(ib[i] + 1))) return 3;\n"
    "    for (i = 0; i < QCAL_NUM_OUTPUTS; i++) if (!(out[i] = malloc(ob[i] + 1))) return 3;\n"
    "    for (;;) {\n"
    "        for (i = 0; i < QCAL_NUM_INPUTS; i++) {\n"
    "            size_t got = fread(in[i], 1, ib[i], stdin);\n"
    "            if (got != ib[i]) return i == 0 && got == 0 && feof(stdin) ? 0 : 4;\n"
    "        }\n"
    "        if (qcal_run((const void *const *)in, out, wsa) != 0) return 5;\n"
    "        for (i = 0; i < QCAL_NUM_OUTPUTS; i++)\n"
    "            if (fwrite(out[i], 1, ob[i], stdout) != ob[i]) return 6;\n"
    "        fflush(stdout);\n"
    "    }\n"
    "}\n";

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f)
        return 1;
    ok = fwrite(data, 1, n, f) == n;
    return fclose(f) != 0 || !ok;
}

static void remove_tree(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (!dp)
        return;
    while ((e = readdir(dp)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            remove_tree(path); /* the compiled model's folder */
    }
    closedir(dp);
    rmdir(dir);
}

void host_model_free(HostModel *m)
{
    if (m->dir)
        remove_tree(m->dir);
    m->dir = NULL;
}

int host_model_build(Arena *a, const uint8_t *onnx, size_t size, const char *what,
                     const char *const *shapes, int n_shapes, int verbose, HostModel *m,
                     Diag *d)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = arena_printf(a, "%s/tvmcc-quantize-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const char *cc = getenv("CC");
    Options o;
    Arena pa;
    Diag pd;
    Pipeline pl;
    char *cmd, *log;
    int i, rc;
    memset(m, 0, sizeof *m);
    if (!mkdtemp(dir)) {
        diag_error(d, NULL, NULL, "cannot make a temporary directory under %s",
                   tmp && *tmp ? tmp : "/tmp");
        return 1;
    }
    m->dir = dir;
    options_init(&o);
    o.model = what;
    o.model_data = onnx;
    o.model_size = size;
    o.target = "c";
    o.name = "qcal";
    o.out_dir = arena_printf(a, "%s/c", dir);
    for (i = 0; i < n_shapes && i < MAX_SHAPE_BINDINGS; i++)
        o.shapes[o.n_shapes++] = shapes[i];
    arena_init(&pa, (size_t)8 << 30);
    diag_init(&pd, what);
    pipeline_init(&pl, &o, &pa, &pd);
    rc = pipeline_run(&pl);
    if (rc == 0) {
        const Graph *g = pl.prog.g;
        Value *outs = arena_array(a, (size_t)g->n_outputs + 1, sizeof *outs);
        m->n_in = g->n_inputs;
        m->n_out = g->n_outputs;
        m->in_bytes = arena_array(a, (size_t)g->n_inputs + 1, sizeof *m->in_bytes);
        m->out_bytes = arena_array(a, (size_t)g->n_outputs + 1, sizeof *m->out_bytes);
        for (i = 0; i < g->n_inputs; i++) {
            const Value *v = &g->values[g->inputs[i]];
            m->in_bytes[i] = dtype_nbytes(v->dtype, value_numel(v));
        }
        for (i = 0; i < g->n_outputs; i++) {
            const Value *v = &g->values[g->outputs[i]];
            outs[i] = *v;
            outs[i].name = arena_strdup(a, v->name);
            m->out_bytes[i] = dtype_nbytes(v->dtype, value_numel(v));
        }
        m->outputs = outs;
    }
    arena_free(&pa);
    if (rc != 0) {
        diag_error(d, NULL, NULL, "compiling the %s for the host failed (above)", what);
        return 1;
    }
    if (write_file(arena_printf(a, "%s/c/main.c", dir), driver_c, sizeof driver_c - 1)) {
        diag_error(d, NULL, NULL, "cannot write into %s", dir);
        return 1;
    }
    m->exe = arena_printf(a, "%s/run", dir);
    log = arena_printf(a, "%s/cc.log", dir);
    /* $CC may hold options (it is word-split, as make does); the paths
     * are quoted */
    cmd = arena_printf(a, "%s -O2 -ffp-contract=off -std=c99 -w '-I%s/c' '%s/c/qcal.c' "
                       "'%s/c/qcal_weights.c' '%s/c/tvmrt.c' '%s/c/main.c' -o '%s' -lm > '%s' 2>&1",
                       cc && *cc ? cc : "cc", dir, dir, dir, dir, dir, m->exe, log);
    if (verbose)
        fprintf(stderr, "tvmcc quantize: building the %s: %s\n", what, cmd);
    if (system(cmd) != 0) {
        diag_error(d, NULL, NULL, "building the %s with the host compiler failed (%s; set CC "
                   "to choose the compiler)", what, log);
        return 1;
    }
    return 0;
}

static FILE *start(const HostModel *m, const SampleSet *s, Arena *a, Diag *d)
{
    const char *in = arena_printf(a, "%s/inputs.bin", m->dir);
    FILE *f;
    int i, k;
    {
        f = fopen(in, "wb");
        if (!f) {
            diag_error(d, NULL, in, "cannot write");
            return NULL;
        }
        for (i = 0; i < s->n_samples; i++)
            for (k = 0; k < s->n_inputs; k++)
                if (fwrite(s->inputs[i][k], 1, (size_t)m->in_bytes[k], f) !=
                    (size_t)m->in_bytes[k]) {
                    fclose(f);
                    diag_error(d, NULL, in, "cannot write");
                    return NULL;
                }
        if (fclose(f) != 0) {
            diag_error(d, NULL, in, "cannot write");
            return NULL;
        }
    }
    f = popen(arena_printf(a, "'%s' < '%s'", m->exe, in), "r");
    if (!f)
        diag_error(d, NULL, m->exe, "cannot run");
    return f;
}

static int read_sample(FILE *f, const HostModel *m, void **out)
{
    int k;
    for (k = 0; k < m->n_out; k++)
        if (fread(out[k], 1, (size_t)m->out_bytes[k], f) != (size_t)m->out_bytes[k])
            return 1;
    return 0;
}

static void **out_buffers(const HostModel *m)
{
    void **out = calloc((size_t)m->n_out + 1, sizeof *out);
    int k;
    if (!out)
        return NULL;
    for (k = 0; k < m->n_out; k++)
        if (!(out[k] = malloc((size_t)m->out_bytes[k] + 1)))
            return NULL;
    return out;
}

static void free_buffers(const HostModel *m, void **out)
{
    int k;
    if (!out)
        return;
    for (k = 0; k < m->n_out; k++)
        free(out[k]);
    free(out);
}

int host_model_run(const HostModel *m, const SampleSet *s, SampleFn fn, void *ctx,
                   const char *progress, Diag *d)
{
    Arena a;
    FILE *f;
    void **out;
    int i, rc = 0, st;
    if (s->n_inputs != m->n_in) {
        diag_error(d, NULL, NULL, "the samples have %d inputs, the model %d", s->n_inputs,
                   m->n_in);
        return 1;
    }
    arena_init(&a, 0);
    f = start(m, s, &a, d);
    out = out_buffers(m);
    if (!f || !out) {
        arena_free(&a);
        free_buffers(m, out);
        if (f)
            pclose(f);
        return 1;
    }
    for (i = 0; i < s->n_samples && rc == 0; i++) {
        progress_line(progress, i, s->n_samples);
        if (read_sample(f, m, out)) {
            diag_error(d, NULL, s->names[i], "the host build of the model stopped on this sample");
            rc = 1;
            break;
        }
        rc = fn(ctx, i, out);
    }
    if (progress)
        progress_end();
    st = pclose(f);
    if (rc == 0 && st != 0) {
        diag_error(d, NULL, m->exe, "exited with status %d", st);
        rc = 1;
    }
    free_buffers(m, out);
    arena_free(&a);
    return rc;
}

int host_model_run_pair(const HostModel *ma, const HostModel *mb, const SampleSet *s, PairFn fn,
                        void *ctx, const char *progress, Diag *d)
{
    Arena a;
    FILE *fa, *fb;
    void **oa, **ob;
    int i, rc = 0, sa, sb;
    arena_init(&a, 0);
    fa = start(ma, s, &a, d);
    fb = fa ? start(mb, s, &a, d) : NULL;
    oa = out_buffers(ma);
    ob = out_buffers(mb);
    if (!fa || !fb || !oa || !ob) {
        if (fa)
            pclose(fa);
        if (fb)
            pclose(fb);
        free_buffers(ma, oa);
        free_buffers(mb, ob);
        arena_free(&a);
        return 1;
    }
    for (i = 0; i < s->n_samples && rc == 0; i++) {
        progress_line(progress, i, s->n_samples);
        if (read_sample(fa, ma, oa) || read_sample(fb, mb, ob)) {
            diag_error(d, NULL, s->names[i], "a host build stopped on this sample");
            rc = 1;
            break;
        }
        rc = fn(ctx, i, oa, ob);
    }
    if (progress)
        progress_end();
    sa = pclose(fa);
    sb = pclose(fb);
    if (rc == 0 && (sa != 0 || sb != 0)) {
        diag_error(d, NULL, NULL, "a host build exited with status %d", sa ? sa : sb);
        rc = 1;
    }
    free_buffers(ma, oa);
    free_buffers(mb, ob);
    arena_free(&a);
    return rc;
}
