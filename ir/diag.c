/*
 * Diagnostics for user and model errors. Every message is exactly one line,
 *
 *   FILE: node 'NAME' (OP, #INDEX): FIELD: message
 *
 * so that scripts and editors can parse it and users can find the ONNX node
 * by name or by its position in the file. The node part is left out when no
 * node is involved, the field part when there is no field. Internal errors
 * do not come here (see die() in arena.h).
 */
#include "graph.h"

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

/* Prints the common prefix and the message; `kind` is "" or "warning: ". */
static void emit(Diag *d, const Node *n, const char *field, const char *kind,
                 const char *fmt, va_list ap)
{
    FILE *f = d->out ? d->out : stderr;
    if (d->quiet)
        return;
    fprintf(f, "%s: ", d->file ? d->file : "tvmcc");
    fputs(kind, f);
    if (n) {
        const char *op = n->op_type ? n->op_type : op_info[n->op].name;
        if (n->domain && n->domain[0])
            fprintf(f, "node '%s' (%s.%s, #%ld): ", n->name ? n->name : "", n->domain,
                    op ? op : "?", (long)n->index);
        else
            fprintf(f, "node '%s' (%s, #%ld): ", n->name ? n->name : "", op ? op : "?",
                    (long)n->index);
    }
    if (field)
        fprintf(f, "%s: ", field);
    vfprintf(f, fmt, ap);
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
