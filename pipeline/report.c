/*
 * What tvmcc --report-html measures or reads beside the Program
 * (emit_c/report_html.c prints the page):
 *
 *  - report_load_profile: a profile file (tvmcc verify --profile writes
 *    it; format in docs/user-guide.md, HTML report): per-kernel means,
 *    matched to the compiled kernels by name. A kernel the program does not
 *    have is an error naming the file and the kernel, so a profile of
 *    another model or build is never shown as this one's.
 *  - report_code_size: builds NAME.c and tvmrt.c of an output directory
 *    with the target's compiler and NAME.mk's flags, and reads the size of
 *    each object with binutils' size for that compiler (arm-none-eabi-gcc:
 *    arm-none-eabi-size). A missing or failing compiler is not an error:
 *    the page then says why the code was not measured.
 */
#define _DEFAULT_SOURCE
#include "pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "../emit_c/emit.h"
#include "../ir/progress.h"

static int bad_profile(const char *file, const char *what, const char *name)
{
    fprintf(stderr, "tvmcc: profile %s: %s%s%s\n", file, what, name ? name : "", name ? "'" : "");
    return 1;
}

int report_load_profile(const Program *p, const char *file, Arena *a, ReportInfo *ri)
{
    long len = 0;
    char *text = pipeline_read_file(file, &len);
    const cJSON *unit, *runs, *kernels, *k, *target;
    cJSON *root;
    double *value;
    int j, rc = 1;
    if (!text) {
        fprintf(stderr, "tvmcc: cannot read profile %s: %s\n", file, strerror(errno ? errno : EIO));
        return 1;
    }
    root = cJSON_ParseWithLength(text, (size_t)len);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return bad_profile(file, "not a JSON object", NULL);
    }
    value = arena_array(a, (size_t)p->n_kernels + 1, sizeof *value);
    if (!value)
        die("compile arena exhausted");
    for (j = 0; j < p->n_kernels; j++)
        value[j] = -1;
    unit = cJSON_GetObjectItemCaseSensitive(root, "unit");
    runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    kernels = cJSON_GetObjectItemCaseSensitive(root, "kernels");
    target = cJSON_GetObjectItemCaseSensitive(root, "target");
    if (!cJSON_IsString(unit) || (strcmp(unit->valuestring, "ns") != 0 &&
                                  strcmp(unit->valuestring, "instructions") != 0 &&
                                  strcmp(unit->valuestring, "cycles") != 0)) {
        bad_profile(file, "field 'unit': expected \"ns\", \"instructions\" or \"cycles\"", NULL);
        goto done;
    }
    if (!cJSON_IsNumber(runs) || runs->valuedouble < 1 || runs->valuedouble > 1e9 ||
        runs->valuedouble != floor(runs->valuedouble)) {
        bad_profile(file, "field 'runs': expected a positive integer", NULL);
        goto done;
    }
    if (target && !cJSON_IsString(target)) {
        bad_profile(file, "field 'target': expected a string", NULL);
        goto done;
    }
    if (!cJSON_IsArray(kernels)) {
        bad_profile(file, "field 'kernels': expected an array", NULL);
        goto done;
    }
    cJSON_ArrayForEach(k, kernels) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, "value");
        if (!cJSON_IsString(name)) {
            bad_profile(file, "kernels[]: entry without a string 'name'", NULL);
            goto done;
        }
        for (j = 0; j < p->n_kernels; j++)
            if (p->kernels[j] && !strcmp(p->kernels[j]->name, name->valuestring))
                break;
        if (j == p->n_kernels) {
            bad_profile(file, "no kernel of the compiled program is named '", name->valuestring);
            goto done;
        }
        if (value[j] >= 0) {
            bad_profile(file, "kernel listed twice: '", name->valuestring);
            goto done;
        }
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 1e300) {
            bad_profile(file, "a non-negative number 'value' is missing for kernel '",
                        name->valuestring);
            goto done;
        }
        value[j] = v->valuedouble;
    }
    if (target && strcmp(target->valuestring, p->target->name) != 0)
        fprintf(stderr, "tvmcc: warning: profile %s was measured for target %s, not %s\n", file,
                target->valuestring, p->target->name);
    ri->profile = arena_strdup(a, file);
    ri->unit = arena_strdup(a, unit->valuestring);
    ri->runs = (long)runs->valuedouble;
    ri->value = value;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

/* Runs argv with stdout to out_path and stderr to err_path (NULL:
 * /dev/null). Returns the exit status, 127 when it could not be started,
 * -1 when it was killed. */
static int run(char *const *argv, const char *out_path, const char *err_path)
{
    pid_t pid = fork();
    int st;
    if (pid < 0)
        return 127;
    if (pid == 0) {
        int o = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int e = open(err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* binutils' size beside compiler cc: PREFIX-size for PREFIX-gcc. */
static const char *size_tool(Arena *a, const char *cc)
{
    size_t n = strlen(cc);
    if (n > 4 && !strcmp(cc + n - 4, "-gcc"))
        return arena_printf(a, "%.*ssize", (int)(n - 3), cc);
    return "size";
}

/* Compiles dir/src into obj with cc and the target's flags. Returns NULL
 * or why it failed. */
static const char *compile(Arena *a, const Program *p, const char *cc, const char *dir,
                           const char *src, const char *obj, const char *log)
{
    char *flags = arena_strdup(a, p->target->cflags ? p->target->cflags : ""), *tok;
    char **argv = arena_array(a, strlen(flags) / 2 + 8, sizeof *argv);
    int n = 0, rc;
    if (!argv)
        die("compile arena exhausted");
    argv[n++] = (char *)cc;
    for (tok = strtok(flags, " \t"); tok; tok = strtok(NULL, " \t"))
        argv[n++] = tok;
    argv[n++] = "-c";
    argv[n++] = arena_printf(a, "-I%s", dir);
    argv[n++] = arena_printf(a, "%s/%s", dir, src);
    argv[n++] = "-o";
    argv[n++] = (char *)obj;
    argv[n] = NULL;
    rc = run(argv, NULL, log);
    if (rc == 127)
        return arena_printf(a, "the target's compiler %s was not found", cc);
    if (rc != 0)
        return arena_printf(a, "%s failed on %s: %s", cc, src, pipeline_first_line(a, log));
    return NULL;
}

/* text + data and bss of obj, from the Berkeley format of size. */
static const char *object_size(Arena *a, const char *tool, const char *obj, const char *out,
                               int64_t *code, int64_t *bss)
{
    char *argv[3];
    long long text, data, b;
    char line[512];
    FILE *f;
    int rc, ok = 0;
    argv[0] = (char *)tool;
    argv[1] = (char *)obj;
    argv[2] = NULL;
    rc = run(argv, out, NULL);
    if (rc == 127)
        return arena_printf(a, "%s was not found", tool);
    f = rc == 0 ? fopen(out, "r") : NULL;
    if (!f)
        return arena_printf(a, "%s failed on %s", tool, obj);
    /* "   text    data     bss     dec     hex filename" then the numbers */
    if (fgets(line, sizeof line, f) && fgets(line, sizeof line, f) &&
        sscanf(line, "%lld %lld %lld", &text, &data, &b) == 3)
        ok = 1;
    fclose(f);
    if (!ok)
        return arena_printf(a, "cannot read the output of %s", tool);
    *code = text + data;
    *bss = b;
    return NULL;
}

void report_code_size(const Program *p, const char *dir, Arena *a, ReportInfo *ri)
{
    const char *cc = p->target->cc && *p->target->cc ? p->target->cc : "cc";
    const char *tool = size_tool(a, cc), *tmp = getenv("TMPDIR"), *why;
    char *work = arena_printf(a, "%s/tvmcc-size-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *obj, *robj, *log, *out;
    int64_t rt_bss = 0;
    ri->code_measured = 0;
    if (!mkdtemp(work)) {
        ri->code_note = arena_printf(a, "cannot make a temporary directory: %s", strerror(errno));
        return;
    }
    obj = arena_printf(a, "%s/%s.o", work, p->name);
    robj = arena_printf(a, "%s/tvmrt.o", work);
    log = arena_printf(a, "%s/cc.log", work);
    out = arena_printf(a, "%s/size.txt", work);
    progress_note("code size", 0, 2);
    why = compile(a, p, cc, dir, arena_printf(a, "%s.c", p->name), obj, log);
    progress_note("code size", 1, 2);
    if (!why)
        why = compile(a, p, cc, dir, "tvmrt.c", robj, log);
    if (!why)
        why = object_size(a, tool, obj, out, &ri->code_bytes, &ri->static_arena_bytes);
    if (!why)
        why = object_size(a, tool, robj, out, &ri->runtime_bytes, &rt_bss);
    if (why) {
        ri->code_note = why;
    } else {
        ri->code_measured = 1;
        ri->code_note = arena_printf(a, "text + data of %s.o and tvmrt.o built with %s %s "
                                     "(NAME.mk's flags), read by %s", p->name, cc,
                                     p->target->cflags ? p->target->cflags : "", tool);
    }
    pipeline_remove_tree(work);
}
