/*
 * Reads target descriptions with cJSON from the copies embedded in the
 * binary, or from a file given by path. Aliases are followed one level
 * (arm -> cortex-m4). The "intrinsics" object declares tile intrinsics:
 * a compute definition (parsed here into a TilePat tree), the extents the
 * tile accepts and the C templates it is printed with (emit_c/emit_tile.c).
 * Every declaration is checked here, so the printer can trust it: a bad
 * one is an error naming the file and the field. So are the "isa", which
 * picks the target's family (ir/family.c), the "schedule" knobs (only
 * those the family's templates read for this target, each in range) and
 * that the family prints every declared intrinsic.
 */
#include "target.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct EmbeddedFile {
    const char *name;
    const unsigned char *data;
    size_t size;
};
extern const struct EmbeddedFile embedded_files[];

/* Largest target file read from a path. */
#define MAX_TARGET_FILE (1 << 20)

static const struct EmbeddedFile *find_file(const char *name)
{
    const struct EmbeddedFile *f;
    size_t n = strlen(name);
    for (f = embedded_files; f->name; f++)
        if (strncmp(f->name, name, n) == 0 && strcmp(f->name + n, ".json") == 0)
            return f;
    return NULL;
}

/* A target named by path rather than by an embedded name. */
static int is_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') || (n > 5 && !strcmp(name + n - 5, ".json"));
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

int target_known(const char *name)
{
    FILE *f;
    if (!strcmp(name, "native"))
        return 1;
    if (!is_path(name))
        return find_file(name) != NULL;
    f = fopen(name, "rb");
    if (!f)
        return 0;
    fclose(f);
    return 1;
}

/* ---- errors: "target file F: FIELD: message" ---- */

typedef struct Ctx {
    Arena *a;
    const char *file;
    const char **err;
} Ctx;

static int fail(const Ctx *c, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *c->err = arena_printf(c->a, "target file %s: %s: %s", c->file, field, msg);
    return 1;
}

/* ---- the compute definition ----
 *
 *   compute := ref '=' expr
 *   expr    := term ('+' term)*
 *   term    := factor ('*' factor)*
 *   factor  := ref | '(' expr ')'
 *   ref     := NAME '[' [NAME (',' NAME)*] ']'
 *
 * The left-hand side names the accumulator and the two tile axes (rows,
 * vector); a reference's axes say which of them the operand may vary with
 * (every operand may also vary with the reduce loops around the tile). */

typedef struct Lex {
    const Ctx *c;
    const char *field, *s, *p;
    const char *axis[2];
    int failed;
} Lex;

static void skip_ws(Lex *l)
{
    while (*l->p == ' ' || *l->p == '\t')
        l->p++;
}

static int lex_fail(Lex *l, const char *what)
{
    if (!l->failed)
        fail(l->c, l->field, "%s at column %d of \"%s\"", what, (int)(l->p - l->s) + 1, l->s);
    l->failed = 1;
    return 0;
}

static const char *lex_name(Lex *l)
{
    const char *b;
    skip_ws(l);
    b = l->p;
    if (!isalpha((unsigned char)*l->p) && *l->p != '_') {
        lex_fail(l, "expected a name");
        return NULL;
    }
    while (isalnum((unsigned char)*l->p) || *l->p == '_')
        l->p++;
    return arena_strndup(l->c->a, b, (size_t)(l->p - b));
}

static int lex_eat(Lex *l, char ch)
{
    skip_ws(l);
    if (*l->p != ch)
        return 0;
    l->p++;
    return 1;
}

/* ref; on the left-hand side (lhs) the names define the axes. */
static TilePat *parse_ref(Lex *l, int lhs)
{
    TilePat *r = arena_alloc(l->c->a, sizeof *r);
    int n = 0, i;
    memset(r, 0, sizeof *r);
    r->kind = TPAT_LOAD;
    if (!(r->name = lex_name(l)))
        return NULL;
    if (!lex_eat(l, '['))
        return lex_fail(l, "expected '['"), NULL;
    skip_ws(l);
    if (*l->p != ']')
        do {
            const char *ax = lex_name(l);
            if (!ax)
                return NULL;
            if (lhs) {
                if (n == 2)
                    return lex_fail(l, "the accumulator has two axes (rows, vector)"), NULL;
                if (n == 1 && !strcmp(ax, l->axis[0]))
                    return lex_fail(l, "repeated axis"), NULL;
                l->axis[n] = ax;
                r->axes |= 1u << n;
            } else {
                for (i = 0; i < 2 && strcmp(ax, l->axis[i]); i++)
                    ;
                if (i == 2)
                    return lex_fail(l, "unknown axis (not on the left-hand side)"), NULL;
                if (r->axes & (1u << i))
                    return lex_fail(l, "repeated axis"), NULL;
                r->axes |= 1u << i;
            }
            n++;
        } while (lex_eat(l, ','));
    if (!lex_eat(l, ']'))
        return lex_fail(l, "expected ']' or ','"), NULL;
    if (lhs && n != 2)
        return lex_fail(l, "the accumulator needs two axes (rows, vector)"), NULL;
    return r;
}

static TilePat *parse_expr(Lex *l);

static TilePat *parse_factor(Lex *l)
{
    TilePat *e;
    if (lex_eat(l, '(')) {
        e = parse_expr(l);
        if (e && !lex_eat(l, ')'))
            return lex_fail(l, "expected ')'"), NULL;
        return e;
    }
    return parse_ref(l, 0);
}

static TilePat *parse_binary(Lex *l, int mul)
{
    TilePat *e = mul ? parse_factor(l) : parse_binary(l, 1);
    while (e && lex_eat(l, mul ? '*' : '+')) {
        TilePat *n = arena_alloc(l->c->a, sizeof *n);
        memset(n, 0, sizeof *n);
        n->kind = mul ? TPAT_MUL : TPAT_ADD;
        n->a = e;
        n->b = mul ? parse_factor(l) : parse_binary(l, 1);
        if (!n->b)
            return NULL;
        e = n;
    }
    return e;
}

static TilePat *parse_expr(Lex *l)
{
    return parse_binary(l, 0);
}

static int shape_fail(const Ctx *c, const char *field, const char *s, const char *why)
{
    return fail(c, field, "\"%s\": %s (the form is OUT[p,v] = OUT[p,v] + X[..] * Y[..], X without v, "
                          "Y with v)", s, why);
}

/* Parses `s` into tile->value and the role names; 0 on success. */
static int parse_compute(const Ctx *c, const char *field, const char *s, TileIntrin *ti)
{
    Lex l;
    TilePat *lhs, *rhs, *acc, *mul, *x, *y;
    memset(&l, 0, sizeof l);
    l.c = c;
    l.field = field;
    l.s = l.p = s;
    lhs = parse_ref(&l, 1);
    if (!lhs)
        return 1;
    if (!lex_eat(&l, '='))
        return lex_fail(&l, "expected '='"), 1;
    rhs = parse_expr(&l);
    if (!rhs)
        return 1;
    skip_ws(&l);
    if (*l.p)
        return lex_fail(&l, "unexpected text"), 1;
    /* OUT + X * Y or X * Y + OUT */
    if (rhs->kind != TPAT_ADD)
        return shape_fail(c, field, s, "the right-hand side is not a sum");
    acc = (TilePat *)rhs->a;
    mul = (TilePat *)rhs->b;
    if (acc->kind != TPAT_LOAD) {
        acc = (TilePat *)rhs->b;
        mul = (TilePat *)rhs->a;
    }
    if (acc->kind != TPAT_LOAD || strcmp(acc->name, lhs->name) || acc->axes != 3u)
        return shape_fail(c, field, s, "one term of the sum must be the accumulator at the same axes");
    if (mul->kind != TPAT_MUL || mul->a->kind != TPAT_LOAD || mul->b->kind != TPAT_LOAD)
        return shape_fail(c, field, s, "the other term must be a product of two operands");
    x = (TilePat *)mul->a;
    y = (TilePat *)mul->b;
    if (!strcmp(x->name, lhs->name) || !strcmp(y->name, lhs->name) || !strcmp(x->name, y->name))
        return shape_fail(c, field, s, "the operands and the accumulator need three distinct names");
    if (((x->axes >> 1) & 1u) == ((y->axes >> 1) & 1u))
        return shape_fail(c, field, s, "exactly one operand must vary with the vector axis");
    acc->role = TILE_ACC;
    x->role = (x->axes & 2u) ? TILE_VEC : TILE_BCAST;
    y->role = (y->axes & 2u) ? TILE_VEC : TILE_BCAST;
    ti->role_name[TILE_ACC] = lhs->name;
    ti->role_name[x->role] = x->name;
    ti->role_name[y->role] = y->name;
    ti->axes[0].name = l.axis[0];
    ti->axes[1].name = l.axis[1];
    ti->value = rhs;
    return 0;
}

/* ---- templates ---- */

static const char *const tpl_keys[TT_COUNT] = {"load", "store", "broadcast", "fma"};

/* Checks that template s uses exactly the placeholders in `names` (each
 * at least once); `$$` is a literal dollar sign. */
static int check_template(const Ctx *c, const char *field, const char *s, const char *const *names, int n)
{
    const char *p;
    int used[4] = {0, 0, 0, 0}, i;
    for (p = s; *p; p++) {
        const char *b;
        size_t len;
        if (*p != '$')
            continue;
        if (p[1] == '$') {
            p++;
            continue;
        }
        b = ++p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        len = (size_t)(p - b);
        if (!len)
            return fail(c, field, "'$' not followed by a placeholder name (write $$ for a dollar sign)");
        for (i = 0; i < n && (strlen(names[i]) != len || strncmp(names[i], b, len)); i++)
            ;
        if (i == n) {
            char allowed[128] = "";
            int j;
            for (j = 0; j < n; j++)
                snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s$%s", j ? ", " : "",
                         names[j]);
            return fail(c, field, "unknown placeholder '$%.*s' (allowed: %s)", (int)len, b, allowed);
        }
        used[i] = 1;
        p--;
    }
    for (i = 0; i < n; i++)
        if (!used[i])
            return fail(c, field, "placeholder $%s is missing", names[i]);
    return 0;
}

/* A string, or an array of strings joined by newlines. */
static const char *json_lines(Arena *a, const cJSON *it)
{
    const cJSON *e;
    char *out = NULL;
    if (cJSON_IsString(it))
        return arena_strdup(a, it->valuestring);
    if (!cJSON_IsArray(it))
        return NULL;
    out = arena_strdup(a, "");
    cJSON_ArrayForEach(e, it) {
        if (!cJSON_IsString(e))
            return NULL;
        out = arena_printf(a, "%s%s%s", out, *out ? "\n" : "", e->valuestring);
    }
    return out;
}

/* An integer field in [lo, hi]; absent: def (or an error if def < lo). */
static int int_field(const Ctx *c, const cJSON *o, const char *key, const char *field, int64_t lo, int64_t hi,
                     int64_t def, int64_t *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) {
        if (def < lo)
            return fail(c, field, "missing");
        *out = def;
        return 0;
    }
    /* the range first: converting NaN or an out-of-range double is undefined */
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= (double)lo && it->valuedouble <= (double)hi) ||
        it->valuedouble != (double)(int64_t)it->valuedouble)
        return fail(c, field, "must be an integer in %lld..%lld", (long long)lo, (long long)hi);
    *out = (int64_t)it->valuedouble;
    return 0;
}

static int only_keys(const Ctx *c, const cJSON *o, const char *field, const char *const *keys)
{
    const cJSON *it;
    int i;
    cJSON_ArrayForEach(it, o) {
        for (i = 0; keys[i] && strcmp(keys[i], it->string); i++)
            ;
        if (!keys[i])
            return fail(c, arena_printf(c->a, "%s.%s", field, it->string), "unknown field");
    }
    return 0;
}

static int parse_axis(const Ctx *c, const cJSON *axes, const char *field, TileAxis *ax)
{
    static const char *const keys[] = {"min", "max", "multiple_of", NULL};
    const char *f = arena_printf(c->a, "%s.%s", field, ax->name);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(axes, ax->name);
    if (!cJSON_IsObject(o))
        return fail(c, f, "missing (an object with min, max, multiple_of for each axis of the compute)");
    if (only_keys(c, o, f, keys) ||
        int_field(c, o, "min", arena_printf(c->a, "%s.min", f), 1, 1 << 20, 0, &ax->min) ||
        int_field(c, o, "max", arena_printf(c->a, "%s.max", f), ax->min, 1 << 20, 0, &ax->max) ||
        int_field(c, o, "multiple_of", arena_printf(c->a, "%s.multiple_of", f), 1, 1 << 20, 1, &ax->multiple))
        return 1;
    return 0;
}

/* What tiles and lane-wise vectors declare alike. */
typedef struct DeclHead {
    int lanes;
    const char *vector_type, *header;
} DeclHead;

/* The keys allowed (keys), dtype, lanes (at least min_lanes, filling the
 * target's vector_bits), vector_type and header of declaration o. */
static int parse_head(const Ctx *c, const Target *t, const cJSON *o, const char *base, const char *const *keys,
                      int min_lanes, DeclHead *h)
{
    const cJSON *it;
    int64_t v;
#define FIELD(k) arena_printf(c->a, "%s.%s", base, k)
    if (only_keys(c, o, base, keys))
        return 1;
    it = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    if (it && (!cJSON_IsString(it) || strcmp(it->valuestring, "float32")))
        return fail(c, FIELD("dtype"), "must be \"float32\" (the only vector type so far)");
    if (int_field(c, o, "lanes", FIELD("lanes"), min_lanes, 64, 0, &v))
        return 1;
    h->lanes = (int)v;
    if (h->lanes * 32 != t->vector_bits)
        return fail(c, FIELD("lanes"), "%d float32 lanes do not fill the target's vector_bits (%d)", h->lanes,
                    t->vector_bits);
    it = cJSON_GetObjectItemCaseSensitive(o, "vector_type");
    if (!cJSON_IsString(it) || !*it->valuestring)
        return fail(c, FIELD("vector_type"), "missing (the C type of one vector)");
    h->vector_type = arena_strdup(c->a, it->valuestring);
    h->header = "";
    if ((it = cJSON_GetObjectItemCaseSensitive(o, "header")) && !(h->header = json_lines(c->a, it)))
        return fail(c, FIELD("header"), "must be a string or an array of strings (lines)");
#undef FIELD
    return 0;
}

/* The object "c" of declaration o (field: its name), whose keys must be
 * among the n in `keys`; NULL after an error. */
static const cJSON *tpl_object(const Ctx *c, const cJSON *o, const char *field, const char *const *keys, int n)
{
    const cJSON *tpl = cJSON_GetObjectItemCaseSensitive(o, "c"), *it;
    const char *known = "";
    int i;
    for (i = 0; i < n; i++)
        known = arena_printf(c->a, "%s%s%s", known, i ? ", " : "", keys[i]);
    if (!cJSON_IsObject(tpl))
        return fail(c, field, "missing (an object of C templates: %s)", known), NULL;
    cJSON_ArrayForEach(it, tpl) {
        for (i = 0; i < n && strcmp(it->string, keys[i]); i++)
            ;
        if (i == n)
            return fail(c, arena_printf(c->a, "%s.%s", field, it->string), "unknown template (known: %s)", known),
                   NULL;
    }
    return tpl;
}

static int parse_tile(const Ctx *c, const Target *t, const cJSON *o, const char *name, TileIntrin *ti)
{
    static const char *const keys[] = {"kind", "description", "compute", "axes", "reduce_loops", "dtype",
                                       "lanes", "vector_type", "header", "guard", "reduce_loop_prefix", "c",
                                       NULL};
    const char *base = arena_printf(c->a, "intrinsics.%s", name);
    const cJSON *it, *axes, *tpl;
    DeclHead h;
    int64_t v;
    int i;
#define FIELD(k) arena_printf(c->a, "%s.%s", base, k)
    memset(ti, 0, sizeof *ti);
    ti->name = arena_strdup(c->a, name);
    ti->ctype = "float";
    if (parse_head(c, t, o, base, keys, 1, &h))
        return 1;
    ti->lanes = h.lanes;
    ti->vector_type = h.vector_type;
    ti->header = h.header;
    it = cJSON_GetObjectItemCaseSensitive(o, "compute");
    if (!cJSON_IsString(it))
        return fail(c, FIELD("compute"), "missing (a string such as \"acc[p,v] = acc[p,v] + a[p] * b[v]\")");
    ti->compute = arena_strdup(c->a, it->valuestring);
    if (parse_compute(c, FIELD("compute"), ti->compute, ti))
        return 1;
    axes = cJSON_GetObjectItemCaseSensitive(o, "axes");
    if (!cJSON_IsObject(axes))
        return fail(c, FIELD("axes"), "missing (an object with an entry for each axis of the compute)");
    cJSON_ArrayForEach(it, axes)
        if (strcmp(it->string, ti->axes[0].name) && strcmp(it->string, ti->axes[1].name))
            return fail(c, arena_printf(c->a, "%s.%s", FIELD("axes"), it->string), "not an axis of the compute");
    for (i = 0; i < 2; i++)
        if (parse_axis(c, axes, FIELD("axes"), &ti->axes[i]))
            return 1;
    /* the printer unrolls rows x vectors accumulators */
    if (ti->axes[0].max > 64)
        return fail(c, arena_printf(c->a, "%s.%s.max", FIELD("axes"), ti->axes[0].name), "at most 64 rows");
    if (ti->axes[1].multiple % ti->lanes)
        return fail(c, arena_printf(c->a, "%s.%s.multiple_of", FIELD("axes"), ti->axes[1].name),
                    "the vector axis takes whole vectors: a multiple of lanes (%d)", ti->lanes);
    if (ti->axes[1].max > 8 * (int64_t)ti->lanes)
        return fail(c, arena_printf(c->a, "%s.%s.max", FIELD("axes"), ti->axes[1].name),
                    "at most 8 vectors (%d)", 8 * ti->lanes);
    if (int_field(c, o, "reduce_loops", FIELD("reduce_loops"), 1, 3, 3, &v))
        return 1;
    ti->reduce_loops = (int)v;
    if ((it = cJSON_GetObjectItemCaseSensitive(o, "guard"))) {
        if (!cJSON_IsString(it) || !*it->valuestring || strchr(it->valuestring, '\n'))
            return fail(c, FIELD("guard"), "must be a one-line preprocessor condition");
        ti->guard = arena_strdup(c->a, it->valuestring);
    }
    ti->loop_prefix = "";
    if ((it = cJSON_GetObjectItemCaseSensitive(o, "reduce_loop_prefix")) &&
        !(ti->loop_prefix = json_lines(c->a, it)))
        return fail(c, FIELD("reduce_loop_prefix"), "must be a string or an array of strings (lines)");
    if (!(tpl = tpl_object(c, o, FIELD("c"), tpl_keys, TT_COUNT)))
        return 1;
    for (i = 0; i < TT_COUNT; i++) {
        static const char *const ptr[] = {"ptr"}, *const st[] = {"ptr", "x"}, *const x[] = {"x"};
        const char *f = arena_printf(c->a, "%s.%s", FIELD("c"), tpl_keys[i]);
        const char *ops[3];
        it = cJSON_GetObjectItemCaseSensitive(tpl, tpl_keys[i]);
        if (!cJSON_IsString(it) || !*it->valuestring)
            return fail(c, f, "missing (a C expression template)");
        ti->tpl[i] = arena_strdup(c->a, it->valuestring);
        ops[0] = ti->role_name[TILE_BCAST];
        ops[1] = ti->role_name[TILE_VEC];
        ops[2] = ti->role_name[TILE_ACC];
        if (check_template(c, f, ti->tpl[i], i == TT_LOAD ? ptr : i == TT_STORE ? st : i == TT_BROADCAST ? x : ops,
                           i == TT_LOAD || i == TT_BROADCAST ? 1 : i == TT_STORE ? 2 : 3))
            return 1;
    }
#undef FIELD
    return 0;
}


static const char *const lane_keys[LT_COUNT] = {"load", "store", "broadcast", "add", "sub", "mul", "div",
                                                "min", "max", "fma", "fma_scalar"};

/* A lane-wise vector intrinsic: its type, header, guard and one template
 * per operation (div, fma and fma_scalar optional). */
static int parse_lanes(const Ctx *c, const Target *t, const cJSON *o, const char *name, LaneIntrin *li)
{
    static const char *const keys[] = {"kind", "description", "dtype", "lanes", "vector_type", "header", "guard",
                                       "c", NULL};
    static const char *const ptr[] = {"ptr"}, *const st[] = {"ptr", "x"}, *const x[] = {"x"},
                             *const ab[] = {"a", "b"}, *const fma[] = {"acc", "a", "b"},
                             *const fmas[] = {"acc", "a", "x"};
    const char *base = arena_printf(c->a, "intrinsics.%s", name);
    const cJSON *it, *tpl;
    DeclHead h;
    int i;
#define FIELD(k) arena_printf(c->a, "%s.%s", base, k)
    memset(li, 0, sizeof *li);
    li->name = arena_strdup(c->a, name);
    if (parse_head(c, t, o, base, keys, 2, &h))
        return 1;
    li->lanes = h.lanes;
    li->vector_type = h.vector_type;
    li->header = h.header;
    it = cJSON_GetObjectItemCaseSensitive(o, "guard");
    if (!cJSON_IsString(it) || !*it->valuestring || strchr(it->valuestring, '\n'))
        return fail(c, FIELD("guard"), "missing (a one-line preprocessor condition: the portable loop stays "
                                       "under #else)");
    li->guard = arena_strdup(c->a, it->valuestring);
    if (!(tpl = tpl_object(c, o, FIELD("c"), lane_keys, LT_COUNT)))
        return 1;
    for (i = 0; i < LT_COUNT; i++) {
        const char *f = arena_printf(c->a, "%s.%s", FIELD("c"), lane_keys[i]);
        const char *const *names = i == LT_LOAD ? ptr : i == LT_STORE ? st : i == LT_BROADCAST ? x
                                 : i == LT_FMA ? fma : i == LT_FMA_SCALAR ? fmas : ab;
        int n = i == LT_LOAD || i == LT_BROADCAST ? 1 : i == LT_FMA || i == LT_FMA_SCALAR ? 3 : 2;
        it = cJSON_GetObjectItemCaseSensitive(tpl, lane_keys[i]);
        if (!it && (i == LT_DIV || i == LT_FMA || i == LT_FMA_SCALAR))
            continue;
        if (!cJSON_IsString(it) || !*it->valuestring)
            return fail(c, f, "missing (a C expression template)");
        li->tpl[i] = arena_strdup(c->a, it->valuestring);
        if (check_template(c, f, li->tpl[i], names, n))
            return 1;
    }
#undef FIELD
    return 0;
}

static int parse_intrinsics(const Ctx *c, const cJSON *in, Target *t)
{
    const cJSON *it;
    TileIntrin *tiles;
    int n = 0;
    if (!in)
        return 0;
    if (!cJSON_IsObject(in))
        return fail(c, "intrinsics", "must be an object mapping each intrinsic's name to its declaration "
                                     "(see docs/adding-a-target.md)");
    cJSON_ArrayForEach(it, in)
        n++;
    tiles = arena_alloc(c->a, (size_t)(n ? n : 1) * sizeof *tiles);
    n = 0;
    cJSON_ArrayForEach(it, in) {
        const char *f = arena_printf(c->a, "intrinsics.%s", it->string);
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "kind");
        if (!cJSON_IsObject(it))
            return fail(c, f, "must be an object (a declaration)");
        if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "tile")) {
            if (parse_tile(c, t, it, it->string, &tiles[n]))
                return 1;
            n++;
        } else if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "lanes")) {
            LaneIntrin *li = arena_alloc(c->a, sizeof *li);
            if (t->lane_ops)
                return fail(c, f, "a second \"lanes\" intrinsic (one per target: %s)", t->lane_ops->name);
            if (parse_lanes(c, t, it, it->string, li))
                return 1;
            t->lane_ops = li;
        } else {
            return fail(c, arena_printf(c->a, "%s.kind", f), "must be \"tile\" or \"lanes\"");
        }
    }
    t->tiles = tiles;
    t->n_tiles = n;
    t->fma_tile = n > 0;
    return 0;
}

/* ---- the "schedule" knobs ---- */

typedef struct KnobField {
    const char *key;
    int lo, hi;
    size_t off; /* in TargetKnobs */
} KnobField;

static const KnobField knob_fields[] = {
    {"lanes", 2, 64, offsetof(TargetKnobs, lanes)},
    {"rows", 1, 64, offsetof(TargetKnobs, rows)},
    {"unroll_vec", 0, 256, offsetof(TargetKnobs, unroll_vec)},
    {"pad", 0, 64, offsetof(TargetKnobs, pad)},
    {"part_vec", 0, 1, offsetof(TargetKnobs, part_vec)},
    {"conv_l1_pct", 10, 100, offsetof(TargetKnobs, conv_l1_pct)},
    {"dw_nchwc", 0, 1, offsetof(TargetKnobs, dw_nchwc)},
    {"no_tile_prefetch", 0, 1, offsetof(TargetKnobs, no_tile_prefetch)},
    {"winograd", 0, 1, offsetof(TargetKnobs, winograd)},
    {"acc", 1, 64, offsetof(TargetKnobs, acc)},
    {"vec", 0, 64, offsetof(TargetKnobs, vec)},
    {"unroll_red", 0, 64, offsetof(TargetKnobs, unroll_red)},
    {"dsp", 0, 1, offsetof(TargetKnobs, dsp)},
    {"int_acc", 1, 64, offsetof(TargetKnobs, int_acc)},
    {"int_lanes", 1, 64, offsetof(TargetKnobs, int_lanes)},
    {"dot", 0, 1, offsetof(TargetKnobs, dot)},
};

static int has_key(const char *const *keys, const char *key)
{
    for (; *keys; keys++)
        if (!strcmp(*keys, key))
            return 1;
    return 0;
}

/* The "schedule" object o (NULL: absent) into t->knobs over the defaults:
 * only the keys the family's templates read for t, each in its range;
 * acc is required by the Arm templates, int_acc and int_lanes with dsp 1
 * and only then. */
static int parse_knobs(const Ctx *c, const cJSON *o, Target *t)
{
    const char *const *keys = t->family->knob_keys(t);
    const char *list = "";
    const cJSON *it;
    size_t i;
    target_default_knobs(t);
    for (i = 0; keys[i]; i++)
        list = arena_printf(c->a, "%s%s%s", list, i ? ", " : "", keys[i]);
    if (o && !cJSON_IsObject(o))
        return fail(c, "schedule", "must be an object of knobs (%s)", list);
    cJSON_ArrayForEach(it, o) {
        const char *f = arena_printf(c->a, "schedule.%s", it->string);
        int64_t v;
        for (i = 0; i < sizeof knob_fields / sizeof knob_fields[0] && strcmp(knob_fields[i].key, it->string); i++)
            ;
        if (!has_key(keys, it->string))
            return fail(c, f, "%s (the templates of family %s%s read: %s)",
                        i < sizeof knob_fields / sizeof knob_fields[0] ? "not read by this target" : "unknown knob",
                        t->family->name, t->has_fpu ? "" : " without an FPU", list);
        if (int_field(c, o, it->string, f, knob_fields[i].lo, knob_fields[i].hi, 0, &v))
            return 1;
        *(int *)(void *)((char *)&t->knobs + knob_fields[i].off) = (int)v;
    }
    if (has_key(keys, "acc") && !cJSON_GetObjectItemCaseSensitive(o, "acc"))
        return fail(c, "schedule.acc", "missing (float accumulators per register tile of the Arm templates)");
    if (t->knobs.vec == 1)
        return fail(c, "schedule.vec", "must be 0 (scalar tiles) or the lanes of the vector tiles (2..64)");
    for (i = 0; i < 2; i++) {
        const char *k = i ? "int_lanes" : "int_acc";
        if (has_key(keys, k) && !t->knobs.dsp != !cJSON_GetObjectItemCaseSensitive(o, k))
            return fail(c, arena_printf(c->a, "schedule.%s", k), t->knobs.dsp ? "missing (dsp is 1)"
                                                                             : "read only with dsp 1");
    }
    return 0;
}

/* The family of the file's "isa" (default "c"). */
static int parse_family(const Ctx *c, const cJSON *root, Target *t)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "isa");
    if (it && !cJSON_IsString(it))
        return fail(c, "isa", "must be a string (%s)", target_isas(c->a));
    t->isa = arena_strdup(c->a, it ? it->valuestring : "c");
    t->family = target_family(t->isa);
    if (!t->family)
        return fail(c, "isa", "unknown ISA \"%s\" (families: %s); a new ISA is a new family "
                              "(docs/adding-a-target.md)", t->isa, target_isas(c->a));
    return 0;
}

/* Every declared intrinsic must be printed somewhere by the family. */
static int check_printed(const Ctx *c, const Target *t)
{
    const char *field = NULL, *why = t->family->unprinted(c->a, t, &field);
    return why ? fail(c, field, "%s (isa \"%s\": family %s)", why, t->isa, t->family->name) : 0;
}

const Target *target_parse(Arena *a, const char *file, const char *name, const char *json, size_t len,
                           const char **err)
{
    const struct EmbeddedFile *f = NULL;
    cJSON *root = cJSON_ParseWithLength(json, len);
    Target *t;
    const char *alias;
    Ctx c;
    c.a = a;
    c.file = file;
    c.err = err;
    if (!root) {
        *err = arena_printf(a, "target file %s is not valid JSON", file);
        return NULL;
    }
    alias = json_str(a, root, "alias", NULL);
    if (alias) {
        cJSON_Delete(root);
        f = find_file(alias);
        if (!f) {
            *err = arena_printf(a, "target file %s: alias: unknown target '%s'; known targets: %s", file, alias,
                                target_names(a));
            return NULL;
        }
        name = alias;
        file = c.file = arena_printf(a, "targets/%s", f->name);
        root = cJSON_ParseWithLength((const char *)f->data, f->size);
        if (!root)
            die("embedded target file %s is not valid JSON", f->name);
        if (json_str(a, root, "alias", NULL))
            die("target alias chain too long at %s", name);
    }
    t = arena_alloc(a, sizeof *t);
    memset(t, 0, sizeof *t);
    t->name = arena_strdup(a, name);
    t->file = file;
    t->cflags = json_str(a, root, "cflags", "");
    t->cc = json_str(a, root, "cc", "cc");
    t->preferred_layout = json_str(a, root, "preferred_layout", "NCHW");
    t->vector_bits = json_int(root, "vector_bits", 0);
    t->has_fpu = json_int(root, "fpu", 1);
    t->alignment = json_int(root, "alignment", 16);
    t->vector_registers = json_int(root, "vector_registers", 0);
    t->l1_bytes = json_int(root, "l1_bytes", 0);
    t->l2_bytes = json_int(root, "l2_bytes", 0);
    if (parse_family(&c, root, t) || parse_intrinsics(&c, cJSON_GetObjectItemCaseSensitive(root, "intrinsics"), t) ||
        parse_knobs(&c, cJSON_GetObjectItemCaseSensitive(root, "schedule"), t) || check_printed(&c, t)) {
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_Delete(root);
    return t;
}

/* Reads a target file given by path into the arena. */
static char *read_path(Arena *a, const char *path, size_t *len, const char **err)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    if (!f) {
        *err = arena_printf(a, "cannot open target file %s: %s", path, strerror(errno));
        return NULL;
    }
    buf = arena_alloc(a, MAX_TARGET_FILE + 1);
    *len = buf ? fread(buf, 1, MAX_TARGET_FILE + 1, f) : 0;
    fclose(f);
    if (!buf || *len > MAX_TARGET_FILE) {
        *err = arena_printf(a, "target file %s is larger than %d bytes", path, MAX_TARGET_FILE);
        return NULL;
    }
    buf[*len] = 0;
    return buf;
}

/* A name, "native" (ir/hostcpu.c picks the embedded target) or a path. */
const Target *target_load(Arena *a, const char *name, const char **err)
{
    const struct EmbeddedFile *f;
    if (is_path(name)) {
        size_t len;
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name, *data;
        size_t n = strlen(base);
        if (!(data = read_path(a, name, &len, err)))
            return NULL;
        if (n > 5 && !strcmp(base + n - 5, ".json"))
            n -= 5;
        return target_parse(a, name, arena_strndup(a, base, n), data, len, err);
    }
    if (!strcmp(name, "native")) {
        const char *real = target_native_name();
        Target *t;
        f = find_file(real);
        if (!f)
            die("no embedded target %s for -t native", real);
        t = (Target *)target_parse(a, arena_printf(a, "targets/%s", f->name), real, (const char *)f->data, f->size,
                                   err);
        if (t)
            t->native = 1;
        return t;
    }
    f = find_file(name);
    if (!f) {
        *err = arena_printf(a, "unknown target '%s'; known targets: %s, native (or a path to a target file)", name,
                            target_names(a));
        return NULL;
    }
    return target_parse(a, arena_printf(a, "targets/%s", f->name), name, (const char *)f->data, f->size, err);
}
