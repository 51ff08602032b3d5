/*
 * Tensorize driven by the target's declarations (see emit_tile.h).
 *
 * A tile intrinsic declares (ir/target.h, TileIntrin)
 *
 *   compute   OUT[p,v] = OUT[p,v] + X[..] * Y[..]   (or X * Y + OUT)
 *   axes      the extents p (rows) and v (vector axis) may take
 *   templates load $ptr, store $ptr $x, broadcast $x, fma $X $Y $OUT
 *
 * where X does not vary with v (one broadcast per row) and Y does (whole
 * vectors). A FOR_TENSORIZE nest matches when it is
 *
 *   for r1: [for r2: [for r3:]] for p: for v:
 *     acc[base + p*V + v] = <the compute's right-hand side>
 *
 * (at most `reduce_loops` reduce loops), with P and V extents the axes
 * allow, acc a float32 buffer (a local array of at least P*V elements, or
 * a tensor whose rows lie RS >= V apart: acc[base + p*RS + v]) whose index
 * does not move with the reduce loops, every operand a float32 load whose
 * index is affine in p (a constant step per row) and depends on an axis
 * only if the compute lists it, and Y unit-stride in v. The tree of + and
 * * is matched node for node, operands in the declared order.
 *
 * The P*(V/LANES) accumulator vectors are loaded from acc once (or, right
 * after an init nest storing a constant to the same elements, start as
 * that constant: emit_tile_init_loop), live in
 * registers across the reduce loops and are stored back at the end; each
 * reduce step loads the V/LANES vectors of Y (once per step, or per row
 * when Y moves with the row) and broadcasts one element of X per row.
 * Every accumulator element receives the same products in the same order
 * as the scalar nest (a*b + c contracted as the target's flags allow). A
 * declaration with a guard prints the tile under `#if GUARD` and the
 * scalar nest under #else.
 */
#include "emit_tile.h"

#include <string.h>

#include "emit.h"
#include "emit_loopq.h"


typedef struct Tile {
    const TileIntrin *ti;
    const Stmt *red[3];
    int nred;
    const Stmt *ploop, *vloop, *store;
    const Expr *op[TILE_ROLES]; /* the loads bound to the compute's operands */
    int acc;
    int64_t P, VL, step[TILE_ROLES]; /* operand offsets per row */
    int64_t prefetch;                /* the loop's prefetch distance (elements) */
    int64_t prefetch_l2;             /* and its distance into L2 only */
    int64_t rs;                      /* accumulator offset per row */
} Tile;

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

void emit_tile_begin(Printer *pr, FILE *f, const Target *t)
{
    int i, j;
    pr->tile_target = t;
    pr->tile_fallback = NULL;
    for (i = 0; t && i < t->n_tiles; i++) {
        const TileIntrin *ti = &t->tiles[i];
        for (j = 0; j < i; j++)
            if (!strcmp(t->tiles[j].header, ti->header) &&
                (t->tiles[j].guard ? ti->guard && !strcmp(t->tiles[j].guard, ti->guard) : !ti->guard))
                break;
        if (!*ti->header || j < i)
            continue;
        if (ti->guard)
            fprintf(f, "#if %s\n%s\n#endif\n\n", ti->guard, ti->header);
        else
            fprintf(f, "%s\n\n", ti->header);
    }
}

int emit_tile_has_header(const Target *t, const char *text)
{
    int i;
    for (i = 0; t && i < t->n_tiles; i++)
        if (!t->tiles[i].guard && strstr(t->tiles[i].header, text))
            return 1;
    return 0;
}

void emit_template(Printer *pr, FILE *f, const char *tpl, const char *const *names, int n, EmitTplArgFn arg, const void *ctx)
{
    const char *p = tpl;
    int i;
    while (*p) {
        size_t len = 0;
        if (*p != '$') {
            fputc(*p++, f);
            continue;
        }
        if (p[1] == '$') {
            fputc('$', f);
            p += 2;
            continue;
        }
        p++;
        while ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z') ||
               (p[len] >= '0' && p[len] <= '9') || p[len] == '_')
            len++;
        for (i = 0; i < n; i++)
            if (strlen(names[i]) == len && !strncmp(names[i], p, len)) {
                arg(pr, f, i, ctx);
                break;
            }
        p += len;
    }
}

static void str_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    fputs(((const char *const *)ctx)[i], f);
}

/* Prints template tpl with each $names[i] replaced by vals[i]. */
static void tpl_print(Printer *pr, FILE *f, const char *tpl, const char *const *names, const char *const *vals, int n)
{
    emit_template(pr, f, tpl, names, n, str_arg, vals);
}

/* The four operations of the printer, each from its template. */
static void op_load(Printer *pr, FILE *f, const TileIntrin *ti, const char *ptr)
{
    static const char *const n[] = {"ptr"};
    tpl_print(pr, f, ti->tpl[TT_LOAD], n, &ptr, 1);
}

static void op_store(Printer *pr, FILE *f, const TileIntrin *ti, const char *ptr, const char *x)
{
    static const char *const n[] = {"ptr", "x"};
    const char *v[2];
    v[0] = ptr;
    v[1] = x;
    tpl_print(pr, f, ti->tpl[TT_STORE], n, v, 2);
}

static void op_broadcast(Printer *pr, FILE *f, const TileIntrin *ti, const char *x)
{
    static const char *const n[] = {"x"};
    tpl_print(pr, f, ti->tpl[TT_BROADCAST], n, &x, 1);
}

static void op_fma(Printer *pr, FILE *f, const TileIntrin *ti, const char *bcast, const char *vec, const char *acc)
{
    const char *v[TILE_ROLES];
    v[TILE_ACC] = acc;
    v[TILE_BCAST] = bcast;
    v[TILE_VEC] = vec;
    tpl_print(pr, f, ti->tpl[TT_FMA], ti->role_name, v, TILE_ROLES);
}

/* ---- the matcher ---- */

static int extent_ok(const TileAxis *ax, int64_t n)
{
    return n >= ax->min && n <= ax->max && n % ax->multiple == 0;
}

/* Whether e matches the compute tree pt, binding the operand loads. */
static int match_value(const Kernel *k, const Expr *e, const TilePat *pt, Tile *t)
{
    const int axis_var[2] = {t->ploop->var, t->vloop->var};
    int ok = 1, i;
    if (!e || e->dtype != DT_FLOAT32)
        return 0;
    if (pt->kind != TPAT_LOAD)
        return e->kind == EX_BINARY && e->op == (pt->kind == TPAT_ADD ? BIN_ADD : BIN_MUL) &&
               match_value(k, e->a, pt->a, t) && match_value(k, e->b, pt->b, t);
    if (e->kind != EX_LOAD || k->bufs[e->buf].dtype != DT_FLOAT32)
        return 0;
    if (pt->role == TILE_ACC)
        return e->buf == t->acc && lq_same_expr(e->a, t->store->index);
    if (e->buf == t->acc)
        return 0;
    for (i = 0; i < 2; i++)
        if (!(pt->axes & (1u << i)) && lq_uses_var(e->a, axis_var[i]))
            return 0;
    if (pt->role == TILE_VEC && !lq_unit_stride(e->a, t->vloop->var))
        return 0;
    t->step[pt->role] = lq_coef(e->a, t->ploop->var, &ok);
    t->op[pt->role] = e;
    return ok;
}

static int match_tile(const Kernel *k, const Stmt *loop, const TileIntrin *ti, Tile *t)
{
    const Stmt *s = loop;
    int ok = 1, i;
    t->ti = ti;
    t->nred = 0;
    t->prefetch = loop->prefetch;
    t->prefetch_l2 = loop->prefetch_l2;
    while (s && s->kind == ST_FOR && t->nred < ti->reduce_loops) {
        t->red[t->nred++] = s;
        s = s->body[0];
        if (!s || s->kind != ST_FOR)
            return 0;
        /* the reduce loops are followed by p and v: stop at the last two */
        if (s->body[0] && s->body[0]->kind == ST_FOR && s->body[0]->body[0] &&
            s->body[0]->body[0]->kind == ST_STORE)
            break;
    }
    if (!s || s->kind != ST_FOR || !s->body[0] || s->body[0]->kind != ST_FOR)
        return 0;
    t->ploop = s;
    t->vloop = s->body[0];
    t->store = t->vloop->body[0];
    if (!t->store || t->store->kind != ST_STORE)
        return 0;
    t->P = t->ploop->extent;
    t->VL = t->vloop->extent;
    if (!extent_ok(&ti->axes[0], t->P) || !extent_ok(&ti->axes[1], t->VL))
        return 0;
    t->acc = t->store->buf;
    if (k->bufs[t->acc].dtype != DT_FLOAT32 ||
        (k->bufs[t->acc].scope == BUF_LOCAL && k->bufs[t->acc].numel < t->P * t->VL))
        return 0;
    /* acc index: (base invariant in the nest) + p*RS + v, rows RS >= VL
     * apart: VL in a local tile, the output's row length when the tile
     * accumulates straight into the output (a matmul's rows) */
    t->rs = lq_coef(t->store->index, t->ploop->var, &ok);
    if ((t->P > 1 && t->rs < t->VL) || lq_coef(t->store->index, t->vloop->var, &ok) != 1 || !ok)
        return 0;
    for (i = 0; i < t->nred; i++)
        if (lq_uses_var(t->store->index, t->red[i]->var))
            return 0;
    return match_value(k, t->store->value, ti->value, t);
}

/* ---- the printer ---- */

/* Whether an inner reduce loop of a tile (a conv window's row or column;
 * or one the schedule marked FOR_UNROLL, a matmul's pair of steps, below)
 * goes without the declared loop prefix (which keeps the compiler from
 * unrolling reduce loops), i.e. is left for the compiler to unroll: when
 * it is short and the accumulators take at most half the target's vector
 * registers, so that the loads the unrolled steps share fit in the rest
 * without spilling. A small tile (e.g. 7 positions of a 7x7 output)
 * otherwise spends as much on the short loop's control as on its FMAs. */
static int tile_unroll_inner(const Printer *pr, const Tile *t, int64_t nv, int64_t extent)
{
    int regs = pr->tile_target && pr->tile_target->vector_registers > 0 ? pr->tile_target->vector_registers : 16;
    return extent <= 4 && 2 * t->P * nv <= regs;
}

/* Prints a float32 expression e (for an intrinsic template's argument). */
static void expr_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    const void *const *c = ctx;
    (void)i;
    emit_expr(pr, f, (const Kernel *)c[0], (const Expr *)c[1]);
}

/* The tile; init (or NULL) is the constant its accumulators start from
 * (broadcast to every lane) instead of loads from acc
 * (emit_tile_init_loop). */
static void print_tile(Printer *pr, FILE *f, const Kernel *k, const Tile *t, int depth, const Expr *init)
{
    const TileIntrin *ti = t->ti;
    const char *an = k->bufs[t->acc].name, *vt = ti->vector_type;
    const char *pn = k->var_names[t->ploop->var], *vn = k->var_names[t->vloop->var];
    const int64_t lanes = ti->lanes, nv = t->VL / lanes;
    const int64_t astep = t->step[TILE_BCAST], bstep = t->step[TILE_VEC];
    char ptr[64], x[64], acc[64];
    int64_t r, j;
    int i, d;
    indent(f, depth);
    fprintf(f, "{ /* %s %lldx%lld: accumulators in registers */\n", ti->name, (long long)t->P, (long long)t->VL);
    indent(f, depth + 1);
    fprintf(f, "%s *tc;\n", ti->ctype);
    indent(f, depth + 1);
    fprintf(f, "{\n");
    indent(f, depth + 2);
    fprintf(f, "const int32_t %s = 0, %s = 0;\n", pn, vn);
    indent(f, depth + 2);
    fprintf(f, "tc = &%s[", an);
    emit_index(pr, f, k, t->store->index, 0);
    fprintf(f, "];\n");
    indent(f, depth + 1);
    fprintf(f, "}\n");
    for (r = 0; r < t->P; r++)
        for (j = 0; j < nv; j++) {
            indent(f, depth + 1);
            fprintf(f, "%s c%lld_%lld = ", vt, (long long)r, (long long)j);
            if (init) {
                static const char *const bn[] = {"x"};
                const void *ctx[2];
                ctx[0] = k;
                ctx[1] = init;
                emit_template(pr, f, ti->tpl[TT_BROADCAST], bn, 1, expr_arg, ctx);
            } else {
                snprintf(ptr, sizeof ptr, "tc + %lld", (long long)(r * t->rs + j * lanes));
                op_load(pr, f, ti, ptr);
            }
            fprintf(f, ";\n");
        }
    d = depth + 1;
    for (i = 0; i < t->nred; i++) {
        const char *rn = k->var_names[t->red[i]->var];
        if (*ti->loop_prefix &&
            !(i > 0 && (tile_unroll_inner(pr, t, nv, t->red[i]->extent) || t->red[i]->for_kind == FOR_UNROLL)))
            fprintf(f, "%s\n", ti->loop_prefix);
        indent(f, d);
        fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) {\n", rn, rn, (long long)t->red[i]->extent, rn);
        d++;
    }
    indent(f, d);
    fprintf(f, "const %s *ta, *tb;\n", ti->ctype);
    indent(f, d);
    fprintf(f, "{\n");
    indent(f, d + 1);
    fprintf(f, "const int32_t %s = 0, %s = 0;\n", pn, vn);
    indent(f, d + 1);
    fprintf(f, "(void)%s;\n", pn);
    indent(f, d + 1);
    fprintf(f, "(void)%s;\n", vn);
    indent(f, d + 1);
    fprintf(f, "ta = &%s[", k->bufs[t->op[TILE_BCAST]->buf].name);
    emit_index(pr, f, k, t->op[TILE_BCAST]->a, 0);
    fprintf(f, "];\n");
    indent(f, d + 1);
    fprintf(f, "tb = &%s[", k->bufs[t->op[TILE_VEC]->buf].name);
    emit_index(pr, f, k, t->op[TILE_VEC]->a, 0);
    fprintf(f, "];\n");
    indent(f, d);
    fprintf(f, "}\n");
    if ((t->prefetch > 0 || t->prefetch_l2 > 0) && !bstep) {
        /* a hint only: GCC and clang's builtin, nothing elsewhere; into
         * every cache level, and (locality 2) into L2 only */
        int64_t elem = (int64_t)dtype_size(k->bufs[t->op[TILE_VEC]->buf].dtype), off;
        fprintf(f, "#if defined(__GNUC__)\n");
        for (off = 0; t->prefetch > 0 && off * elem < t->VL * elem; off += 64 / elem) {
            indent(f, d);
            fprintf(f, "__builtin_prefetch(tb + %lld);\n", (long long)(t->prefetch + off));
        }
        for (off = 0; t->prefetch_l2 > 0 && off * elem < t->VL * elem; off += 64 / elem) {
            indent(f, d);
            fprintf(f, "__builtin_prefetch(tb + %lld, 0, 2);\n", (long long)(t->prefetch_l2 + off));
        }
        fprintf(f, "#endif\n");
    }
    /* the vector operand invariant across rows: its vectors are loaded
     * once per step; else each row loads its own */
    for (j = 0; j < nv && !bstep; j++) {
        indent(f, d);
        fprintf(f, "const %s w%lld = ", vt, (long long)j);
        snprintf(ptr, sizeof ptr, "tb + %lld", (long long)(j * lanes));
        op_load(pr, f, ti, ptr);
        fprintf(f, ";\n");
    }
    if (!astep) {
        indent(f, d);
        fprintf(f, "const %s a = ", vt);
        op_broadcast(pr, f, ti, "ta[0]");
        fprintf(f, ";\n");
    }
    for (r = 0; r < t->P; r++) {
        indent(f, d);
        fprintf(f, "{\n");
        for (j = 0; j < nv && bstep; j++) {
            indent(f, d + 1);
            fprintf(f, "const %s w%lld = ", vt, (long long)j);
            snprintf(ptr, sizeof ptr, "tb + %lld", (long long)(r * bstep + j * lanes));
            op_load(pr, f, ti, ptr);
            fprintf(f, ";\n");
        }
        if (astep) {
            indent(f, d + 1);
            fprintf(f, "const %s a = ", vt);
            snprintf(x, sizeof x, "ta[%lld]", (long long)(r * astep));
            op_broadcast(pr, f, ti, x);
            fprintf(f, ";\n");
        }
        for (j = 0; j < nv; j++) {
            indent(f, d + 1);
            snprintf(acc, sizeof acc, "c%lld_%lld", (long long)r, (long long)j);
            snprintf(x, sizeof x, "w%lld", (long long)j);
            fprintf(f, "%s = ", acc);
            op_fma(pr, f, ti, "a", x, acc);
            fprintf(f, ";\n");
        }
        indent(f, d);
        fprintf(f, "}\n");
    }
    for (i = t->nred - 1; i >= 0; i--) {
        d--;
        indent(f, d);
        fprintf(f, "}\n");
    }
    for (r = 0; r < t->P; r++)
        for (j = 0; j < nv; j++) {
            indent(f, depth + 1);
            snprintf(ptr, sizeof ptr, "tc + %lld", (long long)(r * t->rs + j * lanes));
            snprintf(acc, sizeof acc, "c%lld_%lld", (long long)r, (long long)j);
            op_store(pr, f, ti, ptr, acc);
            fprintf(f, ";\n");
        }
    indent(f, depth);
    fprintf(f, "}\n");
}

int emit_tile_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, EmitStmtFn emit)
{
    Tile t;
    int i;
    if (!pr->tile_target || loop == pr->tile_fallback || loop->kind != ST_FOR)
        return 0;
    for (i = 0; i < pr->tile_target->n_tiles; i++)
        if (match_tile(k, loop, &pr->tile_target->tiles[i], &t))
            break;
    if (i == pr->tile_target->n_tiles)
        return 0;
    if (t.ti->guard)
        fprintf(f, "#if %s\n", t.ti->guard);
    print_tile(pr, f, k, &t, depth, NULL);
    if (!t.ti->guard)
        return 1;
    lq_print_else(pr, f, k, loop, depth, emit, &pr->tile_fallback);
    return 1;
}

int emit_tile_init_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *init, const Stmt *loop, int depth)
{
    Tile t;
    const Stmt *iv, *st;
    int i;
    if (!pr->tile_target || !init || !loop || loop == pr->tile_fallback || loop->kind != ST_FOR ||
        loop->for_kind != FOR_TENSORIZE || init->kind != ST_FOR || !init->body[0] ||
        init->body[0]->kind != ST_FOR)
        return 0;
    iv = init->body[0];
    st = iv->body[0];
    if (!st || st->kind != ST_STORE)
        return 0;
    for (i = 0; i < pr->tile_target->n_tiles; i++)
        if (match_tile(k, loop, &pr->tile_target->tiles[i], &t))
            break;
    if (i == pr->tile_target->n_tiles || t.ti->guard)
        return 0;
    if (init->var != t.ploop->var || iv->var != t.vloop->var || init->extent != t.P || iv->extent != t.VL ||
        st->buf != t.acc || !lq_same_expr(st->index, t.store->index) || !st->value ||
        st->value->kind != EX_FLOAT || st->value->dtype != DT_FLOAT32)
        return 0;
    print_tile(pr, f, k, &t, depth, st->value);
    return 1;
}
