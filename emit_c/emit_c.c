/*
 * Writes NAME.c: one static function per kernel (loop IR printed as C, with
 * a comment naming the ONNX nodes it implements) and NAME_run(), which
 * checks its arguments, points every tensor at its buffer (caller's input
 * or output, a constant in NAME_weights.c, or an offset in the workspace)
 * and calls the kernels in order. Graph outputs that no kernel writes
 * (an output that is a graph input, a constant, or listed twice) are
 * copied with memcpy (memmove from a caller's buffer, which may overlap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "emit_tile.h"
#include "emit_loopq.h"
#include "emit_ctile.h"

static int64_t max_extent(const Stmt *s)
{
    int64_t m = 0, x;
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR)
        m = s->extent;
    for (i = 0; i < s->n_body; i++)
        if ((x = max_extent(s->body[i])) > m)
            m = x;
    return m;
}

static const char *kernel_idx_type(const Kernel *k)
{
    const int64_t limit = (int64_t)1 << 30;
    int i;
    if (max_extent(k->body) >= limit)
        return "int64_t";
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].numel >= limit)
            return "int64_t";
    return "int32_t";
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

/* Whether the C printed for e names loop variable var: a scalar local
 * (numel 1) is printed without its index. */
static int expr_prints_var(const Kernel *k, const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && k->bufs[e->buf].scope == BUF_LOCAL && k->bufs[e->buf].numel == 1)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return expr_prints_var(k, e->a, var) || expr_prints_var(k, e->b, var) || expr_prints_var(k, e->c, var);
}

/* Whether the C printed for a loop body names loop variable var (a unit
 * loop whose body does not would leave an unused constant). */
static int stmt_uses_var(const Kernel *k, const Stmt *s, int var)
{
    int i;
    if (!s)
        return 0;
    if ((s->kind != ST_STORE || k->bufs[s->buf].scope != BUF_LOCAL || k->bufs[s->buf].numel != 1) &&
        expr_prints_var(k, s->index, var))
        return 1;
    if (expr_prints_var(k, s->value, var) || expr_prints_var(k, s->cond, var))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (stmt_uses_var(k, s->body[i], var))
            return 1;
    return 0;
}

static void emit_portable(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth);

/* 1 if k writes a packed (4-bit or 2-bit) tensor. */
static int kernel_stores_packed(const Kernel *k)
{
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (dtype_is_packed(k->bufs[i].dtype) && k->bufs[i].scope != BUF_INPUT &&
            k->bufs[i].scope != BUF_CONST && k->bufs[i].scope != BUF_UNUSED)
            return 1;
    return 0;
}

static void emit_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth)
{
    int i;
    if (!s)
        return;
    switch (s->kind) {
    case ST_SEQ:
        for (i = 0; i < s->n_body; i++) {
            /* an init nest and the tile after it: one tile starting from
             * the init value (emit_tile.c) */
            if (i + 1 < s->n_body && emit_tile_init_loop(pr, f, k, s->body[i], s->body[i + 1], depth)) {
                i++;
                continue;
            }
            emit_stmt(pr, f, k, s->body[i], depth);
        }
        break;
    case ST_FOR:
        if (s->for_kind == FOR_TENSORIZE && emit_tile_loop(pr, f, k, s, depth, emit_portable)) /* emit_tile.c */
            break;
        if (s->for_kind == FOR_TENSORIZE && pr->ctile_upper && !pr->in_tile) {
            /* the `c` target's tile: plain loops (emit_ctile.c) */
            const Stmt *row = NULL;
            int off = ctile_offset_tile(k, s, &row);
            if (off)
                ctile_offset_open(pr, f, k, row, depth, pr->idx_type);
            pr->in_tile = 1;
            pr->offset_row = off ? row : NULL;
            emit_stmt(pr, f, k, s, off ? depth + 1 : depth);
            pr->in_tile = 0;
            pr->offset_row = NULL;
            if (off)
                ctile_offset_close(pr, f, k, row, depth, pr->idx_type);
            break;
        }
        if (s->extent == 1 && s->for_kind == FOR_TENSORIZE && pr->family && pr->family->print_stmt &&
            pr->family->print_stmt(pr, f, k, s, depth, emit_stmt))
            break; /* a tensorized nest of one row (emit_qtile.c's epilogue) */
        if (s->extent == 1) {
            /* a unit loop: bind the variable instead */
            indent(f, depth);
            fprintf(f, "{\n");
            indent(f, depth + 1);
            fprintf(f, "const %s %s = 0;\n", pr->idx_type, k->var_names[s->var]);
            if (!stmt_uses_var(k, s->body[0], s->var)) {
                indent(f, depth + 1);
                fprintf(f, "(void)%s;\n", k->var_names[s->var]);
            }
            emit_stmt(pr, f, k, s->body[0], depth + 1);
            indent(f, depth);
            fprintf(f, "}\n");
            break;
        }
        if (pr->family && pr->family->print_stmt && pr->family->print_stmt(pr, f, k, s, depth, emit_stmt))
            break; /* the family's intrinsics (emit_intrin.c, emit_arm.c) */
        if (pr->c_portable && s->for_kind != FOR_PARALLEL && ctile_guarded_loop(pr, f, k, s, depth, pr->idx_type, emit_stmt))
            break;
        if (s->for_kind == FOR_TENSORIZE && !pr->in_tile && !pr->in_portable)
            pr->tensorize_missed++;
        /* annotations from the schedule: guarded so that a build without
         * OpenMP sees no unknown pragma */
        if (pr->in_tile && ctile_row_loop(k, s))
            ctile_unroll_pragma(f, s->extent); /* rows unrolled: one vector loop each */
        else if ((pr->in_tile && ctile_vector_loop(k, s)) ||
                 (pr->c_portable && !pr->kernel_tiled && s->for_kind == FOR_VECTORIZE && s->extent <= 16))
            ctile_unroll_pragma(f, 1); /* kept whole for the loop vectorizer */
        if (kernel_stores_packed(k))
            ; /* packed stores are read-modify-writes of shared bytes: no
               * simd lanes or threads on them */
        else if (s->for_kind == FOR_VECTORIZE)
            fprintf(f, "#ifdef _OPENMP\n#pragma omp simd\n#endif\n");
        else if (s->for_kind == FOR_PARALLEL) {
            /* dynamic: a thread slowed by another job on its core takes
             * fewer chunks instead of holding the loop's end (the
             * iterations write disjoint outputs, so the bytes do not
             * depend on the split; 2-thread medians on a shared AMD Zen 3
             * host: geometric mean of 3 CNNs 1.31 -> 1.17 of onnxruntime's,
             * four interleaved pairs). Chunks of consecutive iterations
             * (tpl_parallel_chunks) where one iteration is little work. */
            fprintf(f, "#ifdef _OPENMP\n#pragma omp parallel for schedule(dynamic");
            if (s->chunk > 1)
                fprintf(f, ", %lld", (long long)s->chunk);
            fprintf(f, ")\n#endif\n");
        }
        indent(f, depth);
        fprintf(f, "for (%s %s = 0; %s < %lld; %s++) {\n", pr->idx_type, k->var_names[s->var],
                k->var_names[s->var], (long long)s->extent, k->var_names[s->var]);
        emit_stmt(pr, f, k, s->body[0], depth + 1);
        indent(f, depth);
        fprintf(f, "}\n");
        break;
    case ST_STORE: {
        const Buffer *b = &k->bufs[s->buf];
        if (pr->in_tile && ctile_update(pr, f, k, s, depth, pr->ctile_upper, pr->offset_row))
            break;
        indent(f, depth);
        if (b->scope != BUF_LOCAL && dtype_is_packed(b->dtype)) {
            /* packed: a read-modify-write of element i's bits */
            fprintf(f, "tvmrt_st_%s(%s, ", emit_small_name(b->dtype), b->name);
            emit_index(pr, f, k, s->index, 0);
            fprintf(f, ", (%s)(", dtype_is_float(b->dtype) ? "float" :
                    dtype_is_signed_int(b->dtype) ? "int32_t" : "uint32_t");
            emit_expr(pr, f, k, s->value);
            fprintf(f, "));\n");
            break;
        }
        if (b->scope == BUF_LOCAL && b->numel == 1) {
            fprintf(f, "%s = ", b->name);
        } else {
            fprintf(f, "%s[", b->name);
            emit_index(pr, f, k, s->index, 0);
            fprintf(f, "] = ");
        }
        if (b->dtype == DT_FLOAT16 || b->dtype == DT_BFLOAT16) {
            fprintf(f, "tvmrt_f32_to_%s(", b->dtype == DT_FLOAT16 ? "f16" : "bf16");
            emit_expr(pr, f, k, s->value);
            fprintf(f, ");\n");
        } else if (b->scope != BUF_LOCAL && emit_small_name(b->dtype)) {
            fprintf(f, "tvmrt_f32_to_%s(", emit_small_name(b->dtype));
            emit_expr(pr, f, k, s->value);
            fprintf(f, ");\n");
        } else if (b->dtype == DT_BOOL || dtype_size(b->dtype) < 4) {
            fprintf(f, "(%s)", emit_ctype(b->dtype));
            emit_expr(pr, f, k, s->value);
            fprintf(f, ";\n");
        } else {
            emit_expr(pr, f, k, s->value);
            fprintf(f, ";\n");
        }
        break;
    }
    case ST_IF:
        indent(f, depth);
        fprintf(f, "if (");
        emit_expr(pr, f, k, s->cond);
        fprintf(f, ") {\n");
        emit_stmt(pr, f, k, s->body[0], depth + 1);
        if (s->n_body > 1 && s->body[1]) {
            indent(f, depth);
            fprintf(f, "} else {\n");
            emit_stmt(pr, f, k, s->body[1], depth + 1);
        }
        indent(f, depth);
        fprintf(f, "}\n");
        break;
    case ST_DECL: {
        const Buffer *b = &k->bufs[s->buf];
        const char *ct = emit_compute_ctype(b->dtype);
        if (pr->family && pr->family->print_stmt && pr->family->print_stmt(pr, f, k, s, depth, emit_stmt))
            break; /* the family's vector tiles (emit_arm.c) */
        indent(f, depth);
        fprintf(f, "{\n");
        indent(f, depth + 1);
        if (b->numel == 1)
            fprintf(f, "%s %s;\n", ct, b->name);
        else if (b->no_init)
            fprintf(f, "%s %s[%lld];\n", ct, b->name, (long long)b->numel);
        else
            fprintf(f, "%s %s[%lld] = {0};\n", ct, b->name, (long long)b->numel);
        emit_stmt(pr, f, k, s->body[0], depth + 1);
        indent(f, depth);
        fprintf(f, "}\n");
        break;
    }
    }
}

/* The portable `#else` branch of a matched tile: its loops are no miss. */
static void emit_portable(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth)
{
    pr->in_portable++;
    emit_stmt(pr, f, k, s, depth);
    pr->in_portable--;
}

static int kernel_is_empty(const Kernel *k)
{
    int i;
    if (k->ext)
        return 0;
    for (i = 0; i < k->n_stages; i++)
        if (k->bufs[k->stages[i].out_buf].numel > 0)
            return 0;
    return 1;
}

static void emit_kernel(Printer *pr, FILE *f, const Program *p, const Kernel *k)
{
    int i, first = 1;
    const Graph *g = p->g;
    if (k->ext) {
        emit_ext_kernel(f, p, k);
        return;
    }
    fprintf(f, "/* %s\n", emit_safe(g->arena, k->origin));
    for (i = 0; i < k->n_bufs; i++) {
        const Buffer *b = &k->bufs[i];
        if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED)
            continue;
        fprintf(f, " *   %s: %s[%lld]", b->name, dtype_name(b->dtype), (long long)b->numel);
        if (b->value >= 0)
            fprintf(f, " '%s'", emit_safe(g->arena, g->values[b->value].name));
        else
            fprintf(f, " scratch");
        fprintf(f, "\n");
    }
    if (pr->noinline_upper)
        fprintf(f, " */\nstatic %s_NOINLINE void %s(", pr->noinline_upper, k->name);
    else
        fprintf(f, " */\nstatic void %s(", k->name);
    for (i = 0; i < k->n_bufs; i++) {
        const Buffer *b = &k->bufs[i];
        if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED)
            continue;
        fprintf(f, "%s%s%s *%s%s", first ? "" : ", ", b->written ? "" : "const ",
                emit_ctype(b->dtype), b->inplace ? "" : "restrict ", b->name);
        first = 0;
    }
    if (first)
        fprintf(f, "void");
    fprintf(f, ")\n{\n");
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope != BUF_LOCAL && k->bufs[i].scope != BUF_UNUSED && !lq_stmt_uses_buf(k->body, i))
            fprintf(f, "    (void)%s;\n", k->bufs[i].name);
    pr->idx_type = kernel_idx_type(k);
    pr->kernel_tiled = ctile_any(&k, 1);
    emit_stmt(pr, f, k, k->body, 1);
    pr->idx_type = "int32_t";
    fprintf(f, "}\n\n");
}

static int output_slot(const Graph *g, int32_t vi)
{
    int j;
    for (j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == vi)
            return j;
    return -1;
}

static void emit_arg(FILE *f, const Program *p, int ki, const Kernel *k, int bi)
{
    const Buffer *b = &k->bufs[bi];
    const Graph *g = p->g;
    const char *ct = emit_ctype(b->dtype);
    switch (b->scope) {
    case BUF_INPUT:
        fprintf(f, "(const %s *)inputs[%d]", ct, (int)g->values[b->value].input_index);
        break;
    case BUF_OUTPUT:
        fprintf(f, "(%s *)outputs[%d]", ct, output_slot(g, b->value));
        break;
    case BUF_CONST:
        fputs(emit_const_ref(p, b->value), f);
        break;
    case BUF_ARENA:
        fprintf(f, "(%s *)(void *)(ws + %lld)", ct, (long long)p->value_offset[b->value]);
        break;
    case BUF_TEMP:
        fprintf(f, "(%s *)(void *)(ws + %lld)", ct, (long long)p->temp_offset[ki][bi]);
        break;
    case BUF_LOCAL:
    case BUF_UNUSED:
        break;
    }
}

static void emit_const_decls(FILE *f, const Program *p)
{
    const Graph *g = p->g;
    int32_t vi;
    int any = 0;
    char *used = calloc((size_t)g->n_values + 1, 1);
    if (!used)
        die("out of memory");
    emit_mark_used_consts(p, used);
    for (vi = 0; vi < g->n_values; vi++) {
        if (!used[vi])
            continue;
        if (!any)
            fprintf(f, "/* constants, defined in %s_weights.c */\n", p->name);
        any = 1;
        fprintf(f, "extern %s;\n", emit_const_decl(p, vi));
    }
    if (any)
        fprintf(f, "\n");
    free(used);
}

/* emit_c_file, recording each kernel's tensorize misses in miss_out[]
 * when it is not NULL. */
static int emit_c_file_misses(Program *p, FILE *f, Diag *d, int *miss_out)
{
    const Graph *g = p->g;
    Printer printer, *pr = &printer;
    int ki, bi, j, json_index;
    memset(pr, 0, sizeof *pr);
    pr->idx_type = "int32_t";
    fprintf(f, "/* %s.c: generated by tvmcc %s from %s for target %s. Do not edit. */\n",
            p->name, p->version, emit_safe(g->arena, p->model_base), p->target->name);
    fprintf(f, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n");
    emit_tile_begin(pr, f, p->target); /* the declared tile intrinsics' headers */
    pr->family = p->target ? p->target->family : NULL;
    if (pr->family && pr->family->print_begin)
        pr->family->print_begin(pr, f, p->target); /* its printers' headers */
    pr->c_portable = pr->family && pr->family->portable;
    if (pr->c_portable && ctile_uses_expf((const Kernel *const *)p->kernels, p->n_kernels)) {
        const char *u = emit_upper(g->arena, p->name);
        char *nm = arena_alloc(g->arena, strlen(u) + 6);
        if (!nm)
            die("out of memory");
        sprintf(nm, "%s_expf", u);
        ctile_expf_helper(f, u);
        pr->expf = nm;
    }
    if (pr->c_portable && ctile_any((const Kernel *const *)p->kernels, p->n_kernels)) {
        pr->ctile_upper = emit_upper(g->arena, p->name);
        ctile_begin(f, pr->ctile_upper);
    }
    /* (the Cortex-M DSP targets too: gcc allocates the registers of an int8
     * kernel's tiles worse inside one model function; bench/arm's int8
     * models ran 10% more cycles with their kernels inlined) */
    if (pr->c_portable || pr->arm_dsp) {
        pr->noinline_upper = emit_upper(g->arena, p->name);
        ctile_noinline(f, pr->noinline_upper);
    }
    fprintf(f, "#include \"%s.h\"\n#include \"tvmrt.h\"\n\n", p->name);
    /* measurement hooks around each kernel call (tvmcc verify --profile
     * defines them; the argument is the kernel's index in NAME.json) */
    fprintf(f, "/* Optional per-kernel measurement hooks: empty unless the build defines them. */\n"
               "#ifndef TVMCC_KERNEL_BEGIN\n#define TVMCC_KERNEL_BEGIN(i)\n#endif\n"
               "#ifndef TVMCC_KERNEL_END\n#define TVMCC_KERNEL_END(i)\n#endif\n\n");
    emit_const_decls(f, p);
    if (p->workspace_bytes > 0) {
        fprintf(f, "/* Static arena used when %s_run gets a NULL workspace; 64 bytes larger\n"
                   " * than the workspace so that it can be aligned on any compiler. */\n", p->name);
        {
            const char *U = emit_upper(g->arena, p->name);
            fprintf(f, "/* Optional placement: -D%s_ARENA_SECTION=.name (NAME.mk:\n"
                       " * %s_ARENA_SECTION); use a NOLOAD or .bss.* section. */\n"
                       "#ifdef %s_ARENA_SECTION\n"
                       "#define %s_ASTR_(s) #s\n#define %s_ASTR(s) %s_ASTR_(s)\n"
                       "#define %s_ARENA_PLACE __attribute__((section(%s_ASTR(%s_ARENA_SECTION))))\n"
                       "#else\n#define %s_ARENA_PLACE\n#endif\n",
                    U, U, U, U, U, U, U, U, U, U);
            fprintf(f, "static union {\n    unsigned char bytes[%lld];\n    double align_d;\n    int64_t align_i;\n} %s_arena %s_ARENA_PLACE;\n\n",
                    (long long)p->workspace_bytes + 64, p->name, U);
        }
    }
    for (ki = 0; ki < p->n_kernels; ki++) {
        const Kernel *k = p->kernels[ki];
        int missed = pr->tensorize_missed;
        if (!k || kernel_is_empty(k))
            continue;
        emit_kernel(pr, f, p, k);
        missed = pr->tensorize_missed - missed;
        if (miss_out)
            miss_out[ki] = missed;
        if (missed && d)
            diag_warn(d, k->n_nodes ? &g->nodes[k->nodes[k->n_nodes - 1]] : NULL, NULL,
                      "kernel %s: %d loop nest%s marked for tensorize match%s no printer of target "
                      "'%s'; printed as scalar loops", k->name, missed, missed == 1 ? "" : "s",
                      missed == 1 ? "es" : "", p->target->name);
    }

    fprintf(f, "int %s_run(const void *const inputs[], void *const outputs[], void *workspace)\n{\n",
            p->name);
    if (p->workspace_bytes > 0)
        fprintf(f, "    unsigned char *ws = (unsigned char *)workspace;\n"
                   "    if (!ws)\n"
                   "        ws = %s_arena.bytes + (64u - (uintptr_t)%s_arena.bytes %% 64u) %% 64u;\n",
                p->name, p->name);
    else
        fprintf(f, "    (void)workspace;\n");
    if (g->n_inputs > 0) {
        fprintf(f, "    if (!inputs");
        for (j = 0; j < g->n_inputs; j++)
            fprintf(f, " || !inputs[%d]", j);
        fprintf(f, ")\n        return TVMRT_ERR_NULL_INPUT;\n");
    } else {
        fprintf(f, "    (void)inputs;\n");
    }
    fprintf(f, "    if (!outputs");
    for (j = 0; j < g->n_outputs; j++)
        fprintf(f, " || !outputs[%d]", j);
    fprintf(f, ")\n        return TVMRT_ERR_NULL_OUTPUT;\n");
    if (p->workspace_bytes > 0)
        fprintf(f, "    if (((uintptr_t)ws %% TVMRT_WORKSPACE_ALIGN) != 0)\n        return TVMRT_ERR_MISALIGNED;\n");
    for (ki = 0, json_index = 0; ki < p->n_kernels; ki++) {
        const Kernel *k = p->kernels[ki];
        int first = 1;
        if (k)
            json_index++;
        if (!k || kernel_is_empty(k))
            continue;
        fprintf(f, "    TVMCC_KERNEL_BEGIN(%d);\n", json_index - 1);
        /* a runtime call returns a status; loops cannot fail */
        fprintf(f, k->ext ? "    {\n        int rc = %s(" : "    %s(", k->name);
        for (bi = 0; bi < k->n_bufs; bi++) {
            if (k->bufs[bi].scope == BUF_LOCAL || k->bufs[bi].scope == BUF_UNUSED)
                continue;
            if (!first)
                fprintf(f, ", ");
            emit_arg(f, p, ki, k, bi);
            first = 0;
        }
        fprintf(f, k->ext ? ");\n        if (rc != 0)\n            return rc;\n    }\n" : ");\n");
        fprintf(f, "    TVMCC_KERNEL_END(%d);\n", json_index - 1);
    }
    /* outputs no kernel wrote */
    for (j = 0; j < g->n_outputs; j++) {
        int32_t vi = g->outputs[j];
        const Value *v = &g->values[vi];
        int64_t bytes = dtype_nbytes(v->dtype, value_numel(v));
        int first_slot = output_slot(g, vi);
        if (bytes <= 0)
            continue;
        /* memmove where the caller's buffers may be the same or overlap */
        if (first_slot != j)
            fprintf(f, "    memmove(outputs[%d], outputs[%d], %lld);\n", j, first_slot, (long long)bytes);
        else if (v->data)
            fprintf(f, "    memcpy(outputs[%d], %s, %lld);\n", j, emit_const_ref(p, vi), (long long)bytes);
        else if (v->input_index >= 0)
            fprintf(f, "    memmove(outputs[%d], inputs[%d], %lld);\n", j, (int)v->input_index, (long long)bytes);
    }
    /* packed outputs: the unused bits of the last byte are zero (kernels
     * store element by element and leave them as the caller had them) */
    for (j = 0; j < g->n_outputs; j++) {
        const Value *v = &g->values[g->outputs[j]];
        int64_t n = value_numel(v), per = dtype_is_packed(v->dtype) ? 8 / dtype_bits(v->dtype) : 1;
        if (per > 1 && n % per != 0)
            fprintf(f, "    ((uint8_t *)outputs[%d])[%lld] &= 0x%02xu;\n", j, (long long)(n / per),
                    (unsigned)((1u << ((n % per) * dtype_bits(v->dtype))) - 1u));
    }
    fprintf(f, "    return TVMRT_OK;\n}\n");
    return 0;
}

int emit_c_file(Program *p, FILE *f, Diag *d)
{
    return emit_c_file_misses(p, f, d, NULL);
}

int emit_tensorize_misses(const Program *p, int *miss)
{
    FILE *null = fopen("/dev/null", "w");
    int ki, n = 0;
    for (ki = 0; ki < p->n_kernels; ki++)
        miss[ki] = 0;
    if (!null)
        die("cannot open /dev/null");
    emit_c_file_misses((Program *)p, null, NULL, miss); /* reads p only */
    fclose(null);
    for (ki = 0; ki < p->n_kernels; ki++)
        n += miss[ki];
    return n;
}
