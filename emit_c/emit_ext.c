/*
 * Kernels that are one runtime call (Kernel.ext, lower/op_string.c): the
 * function takes the kernel's buffers like any other kernel and returns
 * the runtime function's status; constant string and int32_t arrays it
 * passes are static arrays printed in front of it.
 */
#include <stdint.h>
#include <stdio.h>

#include "emit.h"

/* s as a C string literal: printable ASCII as is, everything else (and
 * characters that would end or bend the literal) as octal escapes. */
static void c_string(FILE *f, const char *s)
{
    const unsigned char *c;
    fputc('"', f);
    for (c = (const unsigned char *)s; *c; c++) {
        if (*c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\' && *c != '?')
            fputc(*c, f);
        else
            fprintf(f, "\\%03o", *c);
    }
    fputc('"', f);
}

static const char *param_type(const Buffer *b)
{
    if (b->dtype == DT_STRING)
        return b->written ? "tvmrt_string *" : "const tvmrt_string *";
    return b->written ? "char *" : "const char *";
}

void emit_ext_kernel(FILE *f, const Program *p, const Kernel *k)
{
    const ExternCall *c = k->ext;
    int i, first = 1;
    fprintf(f, "/* %s: runtime call */\n", emit_safe(p->g->arena, k->origin));
    for (i = 0; i < c->n_args; i++) {
        int j;
        if (c->args[i].kind == EXT_INTS && c->args[i].n_ints > 0) {
            fprintf(f, "static const int32_t %s_i%d[%d] = {", k->name, i, c->args[i].n_ints);
            for (j = 0; j < c->args[i].n_ints; j++) {
                int32_t v = c->args[i].ints[j];
                fputs(j ? (j % 16 ? ", " : ",\n    ") : "", f);
                if (v == INT32_MIN)
                    fputs("(-2147483647 - 1)", f);
                else
                    fprintf(f, "%ld", (long)v);
            }
            fprintf(f, "};\n");
            continue;
        }
        if (c->args[i].kind != EXT_STRINGS || c->args[i].n_strings == 0)
            continue;
        fprintf(f, "static const char *const %s_s%d[%d] = {", k->name, i, c->args[i].n_strings);
        for (j = 0; j < c->args[i].n_strings; j++) {
            fputs(j ? ", " : "", f);
            c_string(f, c->args[i].strings[j]);
        }
        fprintf(f, "};\n");
    }
    fprintf(f, "static int %s(", k->name);
    for (i = 0; i < k->n_bufs; i++) {
        const Buffer *b = &k->bufs[i];
        if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED)
            continue;
        if (b->dtype == DT_STRING)
            fprintf(f, "%s%srestrict %s", first ? "" : ", ", param_type(b), b->name);
        else
            fprintf(f, "%s%s%s *restrict %s", first ? "" : ", ", b->written ? "" : "const ",
                    emit_ctype(b->dtype), b->name);
        first = 0;
    }
    if (first)
        fprintf(f, "void");
    fprintf(f, ")\n{\n    return %s(", c->fn);
    for (i = 0; i < c->n_args; i++) {
        const ExtArg *a = &c->args[i];
        const Buffer *b;
        fputs(i ? ", " : "", f);
        switch (a->kind) {
        case EXT_BUF:
            b = &k->bufs[a->buf];
            if (b->dtype == DT_STRING)
                fputs(b->name, f);
            else
                fprintf(f, "(%s)%s", param_type(b), b->name);
            break;
        case EXT_INT:
            fprintf(f, "%lld", (long long)a->ival);
            break;
        case EXT_INTS:
            if (a->n_ints)
                fprintf(f, "%s_i%d", k->name, i);
            else
                fputs("NULL", f);
            break;
        case EXT_STRINGS:
            if (a->n_strings)
                fprintf(f, "%s_s%d", k->name, i);
            else
                fputs("NULL", f);
            break;
        }
    }
    fprintf(f, ");\n}\n\n");
}
