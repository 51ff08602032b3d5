/*
 * NAME_report.html (tvmcc --report-html): what a firmware engineer asks of
 * a compiled model, in one page that needs nothing but a browser.
 *
 *  - Totals: RAM (the arena plus the caller's input and output buffers),
 *    flash (weights, and the code when pipeline/report.c could build it
 *    with the target's compiler), multiply-accumulates.
 *  - The arena plan as an SVG: one rectangle per tensor placed in the
 *    arena, over the kernels it is live in (x) and the bytes it occupies
 *    (y); each rectangle's <title> (shown on hover without any script)
 *    names the tensor, its size and offset, its producer and consumers.
 *  - A table per kernel: fused ONNX nodes, MACs, bytes read and written,
 *    weight bytes, and the profile's time or count when one was given.
 *
 * The page is well-formed XML (no named entities, every element closed),
 * uses inline CSS only and refers to no other file or address (not even
 * a namespace URI: the HTML parser puts <svg> in its namespace), so it can
 * be archived or mailed as it is. Like every output file it is the same
 * bytes for the same model and options (no dates). The fill colours of the
 * rectangles are fixed (.act, .tmp below): test/report/run.sh counts them
 * in a browser's screenshot.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

#define PLOT_W 900 /* plot area of the SVG, pixels */
#define PLOT_H 420
#define MARGIN_L 80
#define MARGIN_T 10
#define MARGIN_B 40

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes
 * there are not one (a name in a model need not be valid UTF-8; the page
 * must be). */
static int utf8_len(const unsigned char *s)
{
    int n, i;
    if (s[0] < 0x80)
        return 1;
    n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
        : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* overlong 3- and 4-byte forms, surrogates, past U+10FFFF */
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* Text with the XML specials escaped; control characters and bytes that
 * are not UTF-8 become '?'. */
static void esc(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (s && *s) {
        int n = utf8_len(s);
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if (n == 0 || (*s < 0x20 && *s != '\t' && *s != '\n') || *s == 0x7f)
                fputc('?', f);
            else
                fwrite(s, 1, (size_t)n, f);
        }
        s += n ? n : 1;
    }
}

/* "12345 B (12.1 KiB)"; plain bytes below 1 KiB. */
static void bytes(FILE *f, int64_t b)
{
    if (b < 1024)
        fprintf(f, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        fprintf(f, "%lld B (%.1f KiB)", (long long)b, (double)b / 1024.0);
    else
        fprintf(f, "%lld B (%.2f MiB)", (long long)b, (double)b / (1024.0 * 1024.0));
}

static int64_t io_bytes(const Graph *g, const int32_t *vals, int n)
{
    int64_t sum = 0;
    int j;
    for (j = 0; j < n; j++) {
        const Value *v = &g->values[vals[j]];
        sum += v->dtype == DT_STRING ? value_numel(v) * (int64_t)sizeof(const char *)
                                     : dtype_nbytes(v->dtype, value_numel(v));
    }
    return sum;
}

static int64_t kernel_weight_bytes(const Kernel *k)
{
    int64_t sum = 0;
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope == BUF_CONST)
            sum += dtype_nbytes(k->bufs[i].dtype, k->bufs[i].numel);
    return sum;
}

/* One total: a row of the summary, its value in data-bytes for tests. */
static void total_row(FILE *f, const char *id, const char *label, int64_t b, const char *note)
{
    fprintf(f, "<tr><th>%s</th><td id=\"%s\" data-bytes=\"%lld\">", label, id, (long long)b);
    bytes(f, b);
    fprintf(f, "</td><td>");
    esc(f, note);
    fprintf(f, "</td></tr>\n");
}

static void summary(const Program *p, const ReportInfo *ri, FILE *f)
{
    const Graph *g = p->g;
    int64_t in = io_bytes(g, g->inputs, g->n_inputs), out = io_bytes(g, g->outputs, g->n_outputs);
    int64_t weights = emit_weights_bytes(p), macs = 0;
    char note[512];
    int j, n = 0;
    for (j = 0; j < p->n_kernels; j++)
        if (p->kernels[j]) {
            macs += p->kernels[j]->macs;
            n++;
        }
    fprintf(f, "<h2>Totals</h2>\n<table class=\"totals\">\n");
    snprintf(note, sizeof note, "arena %lld + inputs %lld + outputs %lld bytes",
             (long long)p->workspace_bytes, (long long)in, (long long)out);
    total_row(f, "ram", "RAM", p->workspace_bytes + in + out, note);
    snprintf(note, sizeof note, "NAME_WORKSPACE_BYTES; no placement beats %lld bytes (the largest "
             "sum of tensors live at one kernel)%s", (long long)p->lower_bound_bytes,
             p->workspace_bytes == p->lower_bound_bytes ? ", reached" : "");
    total_row(f, "arena", "arena", p->workspace_bytes, note);
    total_row(f, "io", "I/O buffers", in + out, "the caller's input and output buffers");
    if (ri && ri->code_measured) {
        snprintf(note, sizeof note, "weights %lld + code %lld (%s.o) + runtime %lld (tvmrt.o) bytes",
                 (long long)weights, (long long)ri->code_bytes, p->name, (long long)ri->runtime_bytes);
        total_row(f, "flash", "flash", weights + ri->code_bytes + ri->runtime_bytes, note);
    } else {
        total_row(f, "flash", "flash", weights, "weights only: code size not measured");
    }
    total_row(f, "weights", "weights", weights, "const arrays of NAME_weights.c");
    if (ri && ri->code_measured) {
        total_row(f, "code", "code", ri->code_bytes + ri->runtime_bytes, ri->code_note);
    } else {
        fprintf(f, "<tr><th>code</th><td id=\"code\">not measured</td><td>");
        esc(f, ri && ri->code_note ? ri->code_note : "");
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "<tr><th>MACs</th><td id=\"macs\" data-value=\"%lld\">%lld</td><td>%d kernels</td></tr>\n",
            (long long)macs, (long long)macs, n);
    fprintf(f, "</table>\n");
}

/* The kernels a value is live in: produced by kernel *first (its first
 * writer), last used by kernel *last. Returns 0 when no kernel writes it. */
static int live_range(const Program *p, int32_t v, int *first, int *last)
{
    int j, i;
    *first = -1;
    *last = -1;
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        for (i = 0; k && i < k->n_bufs; i++) {
            if (k->bufs[i].scope != BUF_ARENA || k->bufs[i].value != v)
                continue;
            if (k->bufs[i].written && *first < 0)
                *first = j;
            *last = j;
        }
    }
    return *first >= 0;
}

/* Who writes value v first ("producer") and who reads it (consumers), for
 * a rectangle's title. */
static void users(FILE *f, const Program *p, int32_t v)
{
    int j, i, n = 0;
    fputs("\nproduced by ", f);
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        for (i = 0; k && i < k->n_bufs; i++)
            if (k->bufs[i].scope == BUF_ARENA && k->bufs[i].value == v && k->bufs[i].written) {
                esc(f, k->name);
                j = p->n_kernels;
                break;
            }
    }
    fputs("\nconsumed by ", f);
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        for (i = 0; k && i < k->n_bufs; i++)
            if (k->bufs[i].scope == BUF_ARENA && k->bufs[i].value == v && !k->bufs[i].written) {
                fputs(n++ ? ", " : "", f);
                esc(f, k->name);
                break;
            }
    }
    if (!n)
        fputs("(none: a dead result)", f);
}

/* One rectangle: kernels first..last, bytes off..off+size. */
static void rect(FILE *f, const Program *p, const char *cls, int first, int last, int64_t off,
                 int64_t size)
{
    double cw = (double)PLOT_W / p->n_kernels, scale = (double)PLOT_H / (double)p->workspace_bytes;
    double h = (double)size * scale;
    fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">",
            cls, MARGIN_L + first * cw, MARGIN_T + (double)off * scale, (last - first + 1) * cw,
            h < 1.0 ? 1.0 : h);
}

static void plan_svg(const Program *p, FILE *f)
{
    const Graph *g = p->g;
    int W = MARGIN_L + PLOT_W + 20, H = MARGIN_T + PLOT_H + MARGIN_B;
    int32_t v;
    int j, i, t;
    fprintf(f, "<h2>Arena plan</h2>\n<p>Each rectangle is a tensor in the arena: across the "
               "kernels it is live in, down from its offset by its size. Hover for its name, "
               "size, producer and consumers. Blue: tensors between kernels; orange: a "
               "kernel's scratch buffers.</p>\n");
    fprintf(f, "<svg id=\"plan\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" shape-rendering=\"crispEdges\">\n", W, H, W, H);
    fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", MARGIN_L,
            MARGIN_T, PLOT_W, PLOT_H);
    if (p->workspace_bytes <= 0 || p->n_kernels <= 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">no arena: every tensor is an input, output or "
                   "constant</text>\n</svg>\n", MARGIN_L + 20, MARGIN_T + 40);
        return;
    }
    /* axes: offsets on the left in KiB, kernel indexes below */
    for (t = 0; t <= 4; t++)
        fprintf(f, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f KiB</text>\n",
                MARGIN_L - 6, MARGIN_T + PLOT_H * t / 4 + 4,
                (double)p->workspace_bytes * t / 4 / 1024.0);
    {
        int step = p->n_kernels <= 20 ? 1 : (p->n_kernels + 19) / 20;
        for (j = 0; j < p->n_kernels; j += step)
            fprintf(f, "<text class=\"ax\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n",
                    MARGIN_L + (j + 0.5) * PLOT_W / p->n_kernels, MARGIN_T + PLOT_H + 16, j);
        fprintf(f, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">kernel</text>\n",
                MARGIN_L + PLOT_W / 2, MARGIN_T + PLOT_H + 34);
    }
    for (v = 0; v < g->n_values; v++) {
        int first, last;
        int64_t size;
        if (p->value_offset[v] < 0 || !live_range(p, v, &first, &last))
            continue;
        size = dtype_nbytes(g->values[v].dtype, value_numel(&g->values[v]));
        rect(f, p, "act", first, last, p->value_offset[v], size);
        fputs("<title>", f);
        esc(f, g->values[v].name);
        fprintf(f, " (%s): %lld bytes at offset %lld..%lld, live in kernels %d..%d",
                dtype_name(g->values[v].dtype), (long long)size, (long long)p->value_offset[v],
                (long long)(p->value_offset[v] + size), first, last);
        users(f, p, v);
        fputs("</title></rect>\n", f);
    }
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        for (i = 0; k && i < k->n_bufs; i++) {
            const Buffer *b = &k->bufs[i];
            int64_t size;
            if (b->scope != BUF_TEMP)
                continue;
            size = dtype_nbytes(b->dtype, b->numel);
            rect(f, p, "tmp", j, b->persist ? p->n_kernels - 1 : j, p->temp_offset[j][i], size);
            fputs("<title>scratch ", f);
            esc(f, b->name);
            fputs(" of ", f);
            esc(f, k->name);
            fprintf(f, ": %lld bytes at offset %lld..%lld%s</title></rect>\n", (long long)size,
                    (long long)p->temp_offset[j][i], (long long)(p->temp_offset[j][i] + size),
                    b->persist ? ", kept to the end of the run" : "");
        }
    }
    fprintf(f, "</svg>\n");
}

static void kernel_table(const Program *p, const ReportInfo *ri, FILE *f)
{
    const Graph *g = p->g;
    int has_prof = ri && ri->profile, j, i;
    double total = 0;
    if (has_prof)
        for (j = 0; j < p->n_kernels; j++)
            if (p->kernels[j] && ri->value[j] > 0)
                total += ri->value[j];
    fprintf(f, "<h2>Kernels</h2>\n");
    if (has_prof) {
        fprintf(f, "<p id=\"profile\">Profile ");
        esc(f, ri->profile);
        fprintf(f, ": mean %s per run over %ld runs; %.0f %s in all.</p>\n", ri->unit, ri->runs,
                total, ri->unit);
    }
    fprintf(f, "<table class=\"kernels\">\n<tr><th>#</th><th>kernel</th><th>ONNX nodes</th>"
               "<th>MACs</th><th>bytes read</th><th>bytes written</th><th>bytes moved</th>"
               "<th>weight bytes</th>");
    if (has_prof) {
        fprintf(f, "<th>");
        esc(f, ri->unit);
        fprintf(f, "</th><th>share</th>");
    }
    fprintf(f, "</tr>\n");
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        int64_t rd, wr;
        if (!k)
            continue;
        rd = emit_kernel_bytes(k, 0);
        wr = emit_kernel_bytes(k, 1);
        fprintf(f, "<tr><td>%d</td><td class=\"name\">", j);
        esc(f, k->name);
        fprintf(f, "</td><td>");
        for (i = 0; i < k->n_nodes; i++) {
            const Node *n = &g->nodes[k->nodes[i]];
            fprintf(f, "%s<span title=\"", i ? " + " : "");
            esc(f, n->name ? n->name : "");
            fprintf(f, " (node %d)\">", n->index);
            esc(f, n->op_type);
            fprintf(f, "</span>");
        }
        fprintf(f, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td>",
                (long long)k->macs, (long long)rd, (long long)wr, (long long)(rd + wr),
                (long long)kernel_weight_bytes(k));
        if (has_prof && ri->value[j] >= 0)
            fprintf(f, "<td>%.0f</td><td>%.1f%%</td>", ri->value[j],
                    total > 0 ? 100.0 * ri->value[j] / total : 0.0);
        else if (has_prof)
            fprintf(f, "<td>-</td><td>-</td>");
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

void emit_report_html(const Program *p, const ReportInfo *ri, FILE *f)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
               "<meta charset=\"utf-8\"/>\n<title>");
    esc(f, p->name);
    fprintf(f, " - tvmcc report</title>\n<style>\n"
               "body { font-family: sans-serif; margin: 1.5em; color: #222; }\n"
               "table { border-collapse: collapse; margin-bottom: 1em; }\n"
               "th, td { border: 1px solid #bbb; padding: 2px 8px; text-align: left; }\n"
               "table.kernels td { text-align: right; font-variant-numeric: tabular-nums; }\n"
               "table.kernels td.name, table.kernels td:nth-child(3) { text-align: left; }\n"
               "table.totals td:nth-child(2) { font-weight: bold; white-space: nowrap; }\n"
               "rect.frame { fill: #f4f4f4; stroke: #888888; }\n"
               "rect.act { fill: #2060c0; stroke: #ffffff; stroke-width: 1; }\n"
               "rect.tmp { fill: #e07000; stroke: #ffffff; stroke-width: 1; }\n"
               "rect.act:hover, rect.tmp:hover { fill: #c02020; }\n"
               "text.ax { font-size: 11px; fill: #444; }\n"
               ".note { color: #844; }\n"
               "</style>\n</head>\n<body>\n<h1>");
    esc(f, p->name);
    fprintf(f, "</h1>\n<p>Compiled by tvmcc %s from ", p->version);
    esc(f, p->model_base);
    fprintf(f, " for target <b>");
    esc(f, p->target->name);
    fprintf(f, "</b>.</p>\n");
    summary(p, ri, f);
    plan_svg(p, f);
    kernel_table(p, ri, f);
    fprintf(f, "</body>\n</html>\n");
}
