/*
 * Reading a tuning log (written by tvmcc tune, cmd/tune.c) for
 * `tvmcc --tuning-log FILE`: the knobs of each workload key become the
 * lowering's override table (lower/knobs.h). The format is described in
 * docs/user-guide.md (Tuning).
 */
#include "pipeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../ir/target.h"
#include "../lower/knobs.h"

static int bad(const char *file, const char *field, const char *what)
{
    fprintf(stderr, "tvmcc: tuning log %s: %s: %s\n", file, field, what);
    return 1;
}

/* Integer field `name` of object o in [lo, hi]; absent: *v = dflt when
 * optional, else an error. */
static int int_field(const char *file, const char *path, const cJSON *o, const char *name, int optional,
                     int64_t dflt, int64_t lo, int64_t hi, int64_t *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
    char field[256];
    snprintf(field, sizeof field, "%s.%s", path, name);
    if (!x) {
        if (optional) {
            *v = dflt;
            return 0;
        }
        return bad(file, field, "missing");
    }
    if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < (double)lo ||
        x->valuedouble > (double)hi) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected an integer from %lld to %lld", (long long)lo, (long long)hi);
        return bad(file, field, msg);
    }
    *v = (int64_t)x->valuedouble;
    return 0;
}

char *pipeline_read_file(const char *file, long *len)
{
    FILE *f = fopen(file, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = 0;
    fclose(f);
    *len = n;
    return buf;
}

int tunelog_load(Arena *a, const char *file, const Target *t, const KnobTable **out)
{
    long len = 0;
    char *text = pipeline_read_file(file, &len);
    cJSON *root, *tgt, *wl, *w;
    KnobEntry *ents;
    KnobTable *tab;
    int n = 0, rc = 1;
    *out = NULL;
    if (!text) {
        fprintf(stderr, "tvmcc: cannot read tuning log %s: %s\n", file, strerror(errno ? errno : EIO));
        return 1;
    }
    root = cJSON_ParseWithLength(text, (size_t)len);
    free(text);
    if (!root) {
        fprintf(stderr, "tvmcc: tuning log %s: not valid JSON\n", file);
        return 1;
    }
    if (!cJSON_IsObject(root)) {
        bad(file, "(top level)", "expected an object");
        goto done;
    }
    tgt = cJSON_GetObjectItemCaseSensitive(root, "target");
    if (!cJSON_IsString(tgt)) {
        bad(file, "target", tgt ? "expected a string" : "missing");
        goto done;
    }
    wl = cJSON_GetObjectItemCaseSensitive(root, "workloads");
    if (!cJSON_IsArray(wl)) {
        bad(file, "workloads", wl ? "expected an array" : "missing");
        goto done;
    }
    ents = arena_array(a, (size_t)cJSON_GetArraySize(wl) + 1, sizeof *ents);
    tab = arena_alloc(a, sizeof *tab);
    if (!ents || !tab)
        die("compile arena exhausted");
    cJSON_ArrayForEach(w, wl)
    {
        char path[64], kpath[80];
        const cJSON *key, *kn;
        int64_t P, V, G, kc;
        snprintf(path, sizeof path, "workloads[%d]", n);
        snprintf(kpath, sizeof kpath, "%s.knobs", path);
        if (!cJSON_IsObject(w)) {
            bad(file, path, "expected an object");
            goto done;
        }
        key = cJSON_GetObjectItemCaseSensitive(w, "key");
        if (!cJSON_IsString(key) || !*key->valuestring) {
            char field[80];
            snprintf(field, sizeof field, "%s.key", path);
            bad(file, field, key ? "expected a non-empty string" : "missing");
            goto done;
        }
        kn = cJSON_GetObjectItemCaseSensitive(w, "knobs");
        if (!cJSON_IsObject(kn)) {
            bad(file, kpath, kn ? "expected an object" : "missing");
            goto done;
        }
        if (int_field(file, kpath, kn, "P", 0, 0, 1, 1024, &P) ||
            int_field(file, kpath, kn, "V", 0, 0, 1, 1024, &V) ||
            int_field(file, kpath, kn, "G", 1, 0, 0, (int64_t)1 << 40, &G) ||
            int_field(file, kpath, kn, "kc", 1, 0, 0, (int64_t)1 << 40, &kc))
            goto done;
        ents[n].key = arena_strdup(a, key->valuestring);
        memset(&ents[n].knobs, 0, sizeof ents[n].knobs);
        ents[n].knobs.P = (int)P;
        ents[n].knobs.V = (int)V;
        ents[n].knobs.G = G;
        ents[n].knobs.kc = kc;
        n++;
    }
    if (strcmp(tgt->valuestring, t->name) != 0) {
        fprintf(stderr, "tvmcc: warning: tuning log %s is for target %s, not %s; ignored\n", file,
                tgt->valuestring, t->name);
        rc = 0;
        goto done;
    }
    tab->source = arena_strdup(a, file);
    tab->n = n;
    tab->entries = ents;
    *out = tab;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}
