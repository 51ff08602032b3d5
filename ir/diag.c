/*
 * Diagnostics for user and model errors. Every message is exactly one line,
 *
 *   FILE: node 'NAME' (OP, #INDEX): FIELD: message
 *
 * so that scripts and editors can parse it and users can find the ONNX node
 * by name or by its position in the file. A node inlined from a branch of
 * an If whose condition is only known at run time carries a note saying so,
 * printed in parentheses after the message. The node part is left out when no
 * node is involved, the field part when there is no field. Internal errors
 * do not come here (see die() in arena.h).
 */
#include "graph.h"
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>

void diag_init(Diag *d, const char *file)
{
    d->file = file;
    d->errors = 0;
    d->warnings = 0;
    d->quiet = 0;
    d->out = stderr;
}

/* Writes s with control characters escaped (\n, \x1b...), so that a name
 * from the model can neither break the one-line format nor send escape
 * sequences to a terminal. */
static void put_clean(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            fputs("\\n", f);
        else if (c < 32 || c == 127)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

/* Prints the common prefix and the message; `kind` is "" or "warning: ". */
static void emit(Diag *d, const Node *n, const char *field, const char *kind,
                 const char *fmt, va_list ap)
{
    FILE *f = d->out ? d->out : stderr;
    char buf[1024];
    if (d->quiet)
        return;
    progress_clear();
    put_clean(f, d->file ? d->file : "tvmcc");
    fputs(": ", f);
    fputs(kind, f);
    if (n) {
        const char *op = n->op_type ? n->op_type : op_info[n->op].name;
        fputs("node '", f);
        put_clean(f, n->name ? n->name : "");
        fputs("' (", f);
        if (n->domain && n->domain[0]) {
            put_clean(f, n->domain);
            fputc('.', f);
        }
        put_clean(f, op ? op : "?");
        if (n->index >= 0)
            fprintf(f, ", #%ld): ", (long)n->index);
        else
            fputs("): ", f); /* made by tvmcc, not in the file */
    }
    if (field) {
        put_clean(f, field);
        fputs(": ", f);
    }
    vsnprintf(buf, sizeof buf, fmt, ap);
    put_clean(f, buf);
    if (n && n->note) {
        fputs(" (", f);
        put_clean(f, n->note);
        fputc(')', f);
    }
    fputc('\n', f);
}

int diag_error(Diag *d, const Node *n, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(d, n, field, "", fmt, ap);
    va_end(ap);
    d->errors++;
    return 1;
}

void diag_warn(Diag *d, const Node *n, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(d, n, field, "warning: ", fmt, ap);
    va_end(ap);
    d->warnings++;
}
