/*
 * Reads target descriptions with cJSON from the copies embedded in the
 * binary. Aliases are followed one level (arm -> cortex-m4).
 */
#include "target.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

struct EmbeddedFile {
    const char *name;
    const unsigned char *data;
    size_t size;
};
extern const struct EmbeddedFile embedded_files[];

static const struct EmbeddedFile *find_file(const char *name)
{
    const struct EmbeddedFile *f;
    size_t n = strlen(name);
    for (f = embedded_files; f->name; f++)
        if (strncmp(f->name, name, n) == 0 && strcmp(f->name + n, ".json") == 0)
            return f;
    return NULL;
}

static const char *json_str(Arena *a, const cJSON *o, const char *key, const char *def)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(it) ? arena_strdup(a, it->valuestring) : def;
}

static int json_int(const cJSON *o, const char *key, int def)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) ? it->valueint : def;
}

const char *target_names(Arena *a)
{
    const struct EmbeddedFile *f;
    char *out = arena_strdup(a, "");
    for (f = embedded_files; f->name; f++) {
        size_t n = strlen(f->name);
        if (n > 5 && strcmp(f->name + n - 5, ".json") == 0)
            out = arena_printf(a, "%s%s%.*s", out, *out ? " " : "", (int)(n - 5), f->name);
    }
    return out;
}

const Target *target_load(Arena *a, const char *name, const char **err)
{
    const struct EmbeddedFile *f = find_file(name);
    cJSON *root;
    Target *t;
    const char *alias;
    int depth;
    for (depth = 0; depth < 2; depth++) {
        if (!f) {
            *err = arena_printf(a, "unknown target '%s'; known targets: %s", name, target_names(a));
            return NULL;
        }
        root = cJSON_ParseWithLength((const char *)f->data, f->size);
        if (!root)
            die("embedded target file %s is not valid JSON", f->name);
        alias = json_str(a, root, "alias", NULL);
        if (!alias)
            break;
        cJSON_Delete(root);
        name = alias;
        f = find_file(name);
    }
    if (depth == 2)
        die("target alias chain too long at %s", name);
    t = arena_alloc(a, sizeof *t);
    t->name = arena_strdup(a, name);
    t->isa = json_str(a, root, "isa", "c");
    t->cflags = json_str(a, root, "cflags", "");
    t->cc = json_str(a, root, "cc", "cc");
    t->preferred_layout = json_str(a, root, "preferred_layout", "NCHW");
    t->vector_bits = json_int(root, "vector_bits", 0);
    t->has_fpu = json_int(root, "fpu", 1);
    t->alignment = json_int(root, "alignment", 16);
    t->vector_registers = json_int(root, "vector_registers", 0);
    t->l1_bytes = json_int(root, "l1_bytes", 0);
    t->l2_bytes = json_int(root, "l2_bytes", 0);
    t->fma_tile = 0;
    {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "intrinsics"), *it;
        cJSON_ArrayForEach(it, in)
            if (cJSON_IsString(it) && !strcmp(it->valuestring, "fma_tile"))
                t->fma_tile = 1;
    }
    cJSON_Delete(root);
    return t;
}
