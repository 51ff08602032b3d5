/*
 * Type and shape inference of TopK, ReverseSequence, Compress, MaxUnpool
 * and Upsample.
 *
 * Several of them take a shape-deciding input (TopK's k, Compress's
 * condition, MaxUnpool's output_shape, Upsample's scales) that the backend
 * tests feed at run time. A compile-time constant is used when there is
 * one; otherwise the output falls back to the shape the model declares, and
 * the lowering reads the run-time values (lower/op_more.c).
 */
#include "infer.h"

#include <string.h>

int infer_TopK(Graph *g, Node *n, Diag *d)
{
    Value *x;
    AxisParams p;
    int ax;
    int64_t dims[TVMCC_MAX_RANK];
    const int64_t *kv;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d) || infer_need_output(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank < 1 || infer_axis(n, attr_int(n, "axis", -1, d), x->rank, &ax, d, "axis"))
        return x->rank < 1 ? diag_error(d, n, "input[0]", "must have rank >= 1") : 1;
    memset(&p, 0, sizeof p);
    p.axis = ax;
    p.largest = attr_int(n, "largest", 1, d) != 0;
    infer_set_axis(g, n, ax, &p);
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    if (n->opset < 10) {
        dims[ax] = attr_int(n, "k", 1, d);
    } else if (n->n_in > 1 && n->in[1] >= 0 && value_const_ints(g, n->in[1], &kv) == 1) {
        dims[ax] = kv[0];
    } else {
        if (infer_use_declared(g, n, 0, d, "k is computed at run time") ||
            infer_use_declared(g, n, 1, d, "k is computed at run time"))
            return 1;
        dims[ax] = out_val(g, n, 0)->dims[ax];
        if (out_val(g, n, 0)->rank != x->rank)
            return diag_error(d, n, "output[0]", "declared rank differs from the input's");
    }
    if (dims[ax] < 0 || dims[ax] > x->dims[ax])
        return diag_error(d, n, "k", "%lld is outside [0, %lld]", (long long)dims[ax],
                          (long long)x->dims[ax]);
    if (value_set(g, n->out[0], x->dtype, x->rank, dims, d, n) ||
        value_set(g, n->out[1], DT_INT64, x->rank, dims, d, n))
        return 1;
    return 0;
}

int infer_ReverseSequence(Graph *g, Node *n, Diag *d)
{
    Value *x, *l;
    int64_t ba = attr_int(n, "batch_axis", 1, d), ta = attr_int(n, "time_axis", 0, d);
    AxisParams p;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    l = in_val(g, n, 1);
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "must have rank >= 2");
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return diag_error(d, n, "batch_axis", "batch_axis and time_axis must be 0 and 1");
    memset(&p, 0, sizeof p);
    p.axis = (int)ba;
    p.time_axis = (int)ta;
    infer_set_axis(g, n, p.axis, &p);
    if (l->rank != 1 || l->dims[0] != x->dims[ba] || dtype_is_float(l->dtype))
        return diag_error(d, n, "input[1]", "sequence_lens must be integers of length %lld",
                          (long long)x->dims[ba]);
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_Compress(Graph *g, Node *n, Diag *d)
{
    Value *x, *c, *y;
    const Attr *a = node_attr(n, "axis");
    int ax = -1;
    int64_t dims[TVMCC_MAX_RANK], len;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    c = in_val(g, n, 1);
    if (a && infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &ax, d, "axis"))
        return 1;
    infer_set_axis(g, n, ax, NULL);
    len = ax < 0 ? value_numel(x) : x->dims[ax];
    if (c->rank != 1 || c->dims[0] > len)
        return diag_error(d, n, "input[1]", "condition must be 1-D and at most %lld long",
                          (long long)len);
    if (c->data) {
        int64_t i, cnt = 0;
        const uint8_t *b = c->data;
        if (c->dtype != DT_BOOL)
            return diag_error(d, n, "input[1]", "condition must be bool");
        for (i = 0; i < c->dims[0]; i++)
            cnt += b[i] != 0;
        if (ax < 0)
            return value_set(g, n->out[0], x->dtype, 1, &cnt, d, n);
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        dims[ax] = cnt;
        return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
    }
    if (infer_use_declared(g, n, 0, d, "condition is computed at run time"))
        return 1;
    y = out_val(g, n, 0);
    if (ax < 0 ? y->rank != 1 : y->rank != x->rank)
        return diag_error(d, n, "output[0]", "declared rank does not fit the input");
    y->dtype = x->dtype;
    return 0;
}

int infer_MaxUnpool(Graph *g, Node *n, Diag *d)
{
    Value *x, *ix;
    int64_t dims[TVMCC_MAX_RANK], kc, sc, pc;
    const int64_t *k = attr_ints(n, "kernel_shape", &kc, d), *s, *p, *os;
    int i, nsp;
    ConvWindow win;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    ix = in_val(g, n, 1);
    nsp = x->rank - 2;
    if (nsp < 1 || ix->rank != x->rank || memcmp(ix->dims, x->dims, (size_t)x->rank * 8))
        return diag_error(d, n, "input[1]", "indices must have the input's N x C x spatial "
                          "shape");
    if (ix->dtype != DT_INT64)
        return diag_error(d, n, "input[1]", "indices must be int64");
    s = attr_ints(n, "strides", &sc, d);
    p = attr_ints(n, "pads", &pc, d);
    if (!k || kc != nsp || (s && sc != nsp) || (p && pc != 2 * nsp))
        return diag_error(d, n, "kernel_shape", "kernel_shape, strides or pads have the wrong "
                          "length");
    /* the window MaxPool had: out is the default unpooled extent */
    memset(&win, 0, sizeof win);
    win.nsp = nsp;
    win.group = 1;
    for (i = 0; i < nsp; i++) {
        win.kernel[i] = k[i];
        win.strides[i] = s ? s[i] : 1;
        win.dilations[i] = 1;
        win.pad_begin[i] = p ? p[i] : 0;
        win.pad_end[i] = p ? p[nsp + i] : 0;
        win.out[i] = (x->dims[2 + i] - 1) * win.strides[i] - win.pad_begin[i] - win.pad_end[i] +
                     k[i];
    }
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    if (n->n_in > 2 && n->in[2] >= 0) {
        if (value_const_ints(g, n->in[2], &os) == x->rank)
            return value_set(g, n->out[0], x->dtype, x->rank, os, d, n);
        if (infer_use_declared(g, n, 0, d, "output_shape is computed at run time"))
            return 1;
        out_val(g, n, 0)->dtype = x->dtype;
        return 0;
    }
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (i = 0; i < nsp; i++)
        dims[2 + i] = win.out[i];
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

int infer_Upsample(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int64_t dims[TVMCC_MAX_RANK], cnt;
    double sc[TVMCC_MAX_RANK];
    const double *fs = NULL;
    int i, known = 0;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    {
        /* the Resize of opset 10 with two modes */
        const char *mode = attr_string(n, "mode", "nearest", d);
        ResizeParams rp;
        if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "bilinear"))
            return diag_error(d, n, "mode", "unknown mode '%s' (nearest, linear)", mode);
        memset(&rp, 0, sizeof rp);
        rp.mode = strcmp(mode, "nearest") ? RESIZE_LINEAR : RESIZE_NEAREST;
        rp.coord = CT_ASYM;
        rp.round = NM_FLOOR;
        node_set_params(g, n, PARAMS_RESIZE, &rp, sizeof rp);
    }
    if (n->n_in > 1 && n->in[1] >= 0) {
        Value *s = in_val(g, n, 1);
        if (s->data && s->dtype == DT_FLOAT32 && value_numel(s) == x->rank) {
            const float *f = s->data;
            for (i = 0; i < x->rank; i++)
                sc[i] = f[i];
            known = 1;
        }
    } else if ((fs = attr_floats(n, "scales", &cnt, d)) && cnt == x->rank) {
        for (i = 0; i < x->rank; i++)
            sc[i] = fs[i];
        known = 1;
    }
    if (!known) {
        if (infer_use_declared(g, n, 0, d, "scales are computed at run time"))
            return 1;
        if (out_val(g, n, 0)->rank != x->rank)
            return diag_error(d, n, "output[0]", "declared rank differs from the input's");
        out_val(g, n, 0)->dtype = x->dtype;
        return 0;
    }
    for (i = 0; i < x->rank; i++) {
        double o = (double)x->dims[i] * sc[i];
        if (!(sc[i] >= 1.0))
            return diag_error(d, n, "scales", "scale %d must be at least 1", i);
        if (!(o < 2147483648.0)) /* as Resize; also keeps the conversion defined */
            return diag_error(d, n, "scales", "scale %g for dimension %d is out of range", sc[i], i);
        dims[i] = (int64_t)o;
    }
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

/* DFT (opset 17, 20): x is [..., n, ..., 1 or 2] (real or complex), the
 * transform runs along `axis` (from opset 20 the scalar input[2], default
 * -2, counted from the back of the full rank); y is complex
 * [..., m, ..., 2] where m is dft_length (default n), halved plus one when
 * onesided. An axis input known only at run time takes the declared output
 * shape when onesided or dft_length make it depend on the axis; the
 * lowering then picks the axis at run time among those the shapes allow. */
int infer_DFT(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int64_t dims[TVMCC_MAX_RANK], len;
    const int64_t *lv;
    AxisParams p;
    int ax, onesided;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "input[0]", "element type %s is not supported (float expected)",
                          dtype_name(x->dtype));
    if (x->rank < 3 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return diag_error(d, n, "input[0]", "expected [batch, ..., 1 or 2]");
    memset(&p, 0, sizeof p);
    p.inverse = attr_int(n, "inverse", 0, d) != 0;
    onesided = attr_int(n, "onesided", 0, d) != 0;
    if (n->opset >= 20) {
        int64_t a = -2, cnt = 0;
        const int64_t *av;
        if (n->n_in > 2 && n->in[2] >= 0) {
            Value *axv = in_val(g, n, 2);
            if (axv->dtype != DT_INT64 && axv->dtype != DT_INT32)
                return diag_error(d, n, "input[2]", "axis must be an integer scalar");
            cnt = value_const_ints(g, n->in[2], &av);
            if (cnt == 1)
                a = av[0];
            else if (cnt < 0 && value_numel(axv) == 1)
                p.runtime_axis = 1;
            else
                return diag_error(d, n, "input[2]", "axis must be a scalar");
        }
        ax = (int)(a < 0 ? a + x->rank : a);
        if (!p.runtime_axis && (a < -x->rank || a > x->rank - 2 || ax > x->rank - 2))
            return diag_error(d, n, "input[2]", "axis %lld is out of range for rank %d",
                              (long long)a, x->rank);
        if (p.runtime_axis)
            ax = 1;
    } else if (n->n_in > 2 && n->in[2] >= 0) {
        return diag_error(d, n, "input[2]", "axis is an input only from opset 20");
    } else if (infer_axis(n, attr_int(n, "axis", 1, d), x->rank - 1, &ax, d, "axis")) {
        return 1;
    }
    if (ax == 0)
        return diag_error(d, n, "axis", "the batch axis cannot be transformed");
    p.axis = ax;
    infer_set_axis(g, n, ax, &p);
    len = x->dims[ax];
    if (n->n_in > 1 && n->in[1] >= 0) {
        if (value_const_ints(g, n->in[1], &lv) != 1)
            return diag_error(d, n, "input[1]", "dft_length must be a compile-time constant");
        len = lv[0];
        if (len < 1)
            return diag_error(d, n, "input[1]", "dft_length must be positive");
    }
    if (p.runtime_axis && (onesided || (n->n_in > 1 && n->in[1] >= 0)))
        return infer_use_declared(g, n, 0, d, "axis input is computed at run time");
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[ax] = onesided ? len / 2 + 1 : len;
    dims[x->rank - 1] = 2;
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}
