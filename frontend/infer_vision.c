/*
 * Type and shape inference of the vision operators GridSample, RoiAlign,
 * NonMaxSuppression, AffineGrid, CenterCropPad, Col2Im and DeformConv (lowered in
 * lower/op_vision.c).
 *
 * DeformConv (2-D) has Conv's window rule, the output extents checked
 * against the offset input's.
 *
 * AffineGrid, CenterCropPad and Col2Im take their output extents from an
 * input (size, shape, image_shape and block_shape); when it is computed at
 * run time the declared output shape is used and the lowering derives what
 * it needs from the shapes (Col2Im loads block_shape at run time).
 *
 * GridSample and RoiAlign have static output shapes. NonMaxSuppression's
 * row count depends on the data: the model's declared output shape is
 * used (the backend tests declare the exact count), else it is an error.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

static int need_rank(Diag *d, Node *n, const Value *v, int rank, const char *field)
{
    if (v->rank != rank)
        return diag_error(d, n, field, "must have rank %d (got %d)", rank, v->rank);
    return 0;
}

int infer_GridSample(Graph *g, Node *n, Diag *d)
{
    Value *x, *gr;
    const char *mode, *pad;
    VisionParams p;
    int64_t dims[TVMCC_MAX_RANK];
    int k, nsp;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output", "output 0 is required");
    x = in_val(g, n, 0);
    gr = in_val(g, n, 1);
    if (x->rank != 4 && (x->rank != 5 || n->opset < 20))
        return diag_error(d, n, "X", "X must have rank 4 (rank 5 from opset 20), got rank %d",
                          x->rank);
    nsp = x->rank - 2;
    if (need_rank(d, n, gr, x->rank, "grid"))
        return 1;
    if (gr->dims[0] != x->dims[0] || gr->dims[x->rank - 1] != nsp)
        return diag_error(d, n, "grid", "must have shape [N, out..., %d] with N = %lld", nsp,
                          (long long)x->dims[0]);
    if (!dtype_is_float(x->dtype) || !dtype_is_float(gr->dtype))
        return diag_error(d, n, "X", "X and grid must be floating point");
    mode = attr_string(n, "mode", n->opset >= 20 ? "linear" : "bilinear", d);
    pad = attr_string(n, "padding_mode", "zeros", d);
    if (strcmp(mode, "bilinear") && strcmp(mode, "linear") && strcmp(mode, "nearest") &&
        strcmp(mode, "bicubic") && strcmp(mode, "cubic"))
        return diag_error(d, n, "mode", "unknown mode '%s'", mode);
    if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
        return diag_error(d, n, "padding_mode", "unknown padding mode '%s'", pad);
    memset(&p, 0, sizeof p);
    p.mode = !strcmp(mode, "nearest") ? SAMPLE_NEAREST
             : !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? SAMPLE_LINEAR : SAMPLE_CUBIC;
    p.padding_mode = !strcmp(pad, "border") ? SAMPLE_BORDER
                     : !strcmp(pad, "reflection") ? SAMPLE_REFLECTION : SAMPLE_ZEROS;
    p.align_corners = attr_int(n, "align_corners", 0, d) != 0;
    node_set_params(g, n, PARAMS_VISION, &p, sizeof p);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (k = 0; k < nsp; k++)
        dims[2 + k] = gr->dims[1 + k];
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

int infer_RoiAlign(Graph *g, Node *n, Diag *d)
{
    Value *x, *rois, *bi;
    const char *mode, *ctm;
    VisionParams p;
    int64_t dims[4], oh, ow, sr;
    int i;
    for (i = 0; i < 3; i++)
        if (need_input(g, n, i, d))
            return 1;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output", "output 0 is required");
    x = in_val(g, n, 0);
    rois = in_val(g, n, 1);
    bi = in_val(g, n, 2);
    if (need_rank(d, n, x, 4, "X") || need_rank(d, n, rois, 2, "rois") ||
        need_rank(d, n, bi, 1, "batch_indices"))
        return 1;
    if (rois->dims[1] != 4 || bi->dims[0] != rois->dims[0])
        return diag_error(d, n, "rois", "must have shape [num_rois, 4] matching batch_indices");
    if (!dtype_is_float(x->dtype) || rois->dtype != x->dtype)
        return diag_error(d, n, "X", "X and rois must share a floating-point type");
    if (dtype_is_float(bi->dtype) || bi->dtype == DT_BOOL)
        return diag_error(d, n, "batch_indices", "must be an integer tensor");
    mode = attr_string(n, "mode", "avg", d);
    ctm = attr_string(n, "coordinate_transformation_mode", "half_pixel", d);
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return diag_error(d, n, "mode", "unknown mode '%s'", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return diag_error(d, n, "coordinate_transformation_mode", "unknown mode '%s'", ctm);
    oh = attr_int(n, "output_height", 1, d);
    ow = attr_int(n, "output_width", 1, d);
    sr = attr_int(n, "sampling_ratio", 0, d);
    if (oh < 1 || ow < 1 || oh > 65536 || ow > 65536)
        return diag_error(d, n, "output_height", "output size %lldx%lld is not valid",
                          (long long)oh, (long long)ow);
    if (sr < 0 || sr > 1024)
        return diag_error(d, n, "sampling_ratio", "%lld is not valid", (long long)sr);
    if (sr == 0 && !rois->data)
        return diag_error(d, n, "sampling_ratio", "sampling_ratio 0 makes the number of "
                          "samples depend on run-time rois; give a positive sampling_ratio");
    memset(&p, 0, sizeof p);
    p.max_mode = !strcmp(mode, "max");
    /* opset 10 has no coordinate_transformation_mode: output_half_pixel */
    p.half_pixel = strcmp(ctm, "output_half_pixel") != 0 && n->opset >= 16;
    p.spatial_scale = attr_float(n, "spatial_scale", 1.0, d);
    p.sampling_ratio = sr;
    node_set_params(g, n, PARAMS_VISION, &p, sizeof p);
    dims[0] = rois->dims[0];
    dims[1] = x->dims[1];
    dims[2] = oh;
    dims[3] = ow;
    return value_set(g, n->out[0], x->dtype, 4, dims, d, n);
}

int infer_NonMaxSuppression(Graph *g, Node *n, Diag *d)
{
    Value *b, *s, *y;
    VisionParams p;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    memset(&p, 0, sizeof p);
    p.center_point_box = attr_int(n, "center_point_box", 0, d) != 0;
    node_set_params(g, n, PARAMS_VISION, &p, sizeof p);
    b = in_val(g, n, 0);
    s = in_val(g, n, 1);
    if (need_rank(d, n, b, 3, "boxes") || need_rank(d, n, s, 3, "scores"))
        return 1;
    if (b->dims[2] != 4 || s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1])
        return diag_error(d, n, "scores", "boxes [B, S, 4] and scores [B, C, S] disagree");
    if (!dtype_is_float(b->dtype) || !dtype_is_float(s->dtype))
        return diag_error(d, n, "boxes", "boxes and scores must be floating point");
    if (b->dims[1] > 4096)
        return diag_error(d, n, "boxes", "%lld boxes per batch; tvmcc supports up to 4096",
                          (long long)b->dims[1]);
    if (infer_use_declared(g, n, 0, d, "the number of selected boxes depends on the data"))
        return 1;
    y = out_val(g, n, 0);
    if (y->dtype != DT_INT64 || y->rank != 2 || y->dims[1] != 3)
        return diag_error(d, n, "output[0]", "selected_indices must be int64 [num_selected, 3]");
    return 0;
}

/* Reads the values of integer input i when they are a compile-time
 * constant of `want` entries: returns 1 with *v set, 0 when they are only
 * known at run time, -1 (reported) on a bad count or type. */
static int const_shape_input(Graph *g, Node *n, int i, int64_t want, const int64_t **v,
                             Diag *d)
{
    Value *s = in_val(g, n, i);
    char field[16];
    int64_t cnt;
    snprintf(field, sizeof field, "input[%d]", i);
    if (s->dtype != DT_INT64 || s->rank != 1 || s->dims[0] != want) {
        diag_error(d, n, field, "must be an int64 tensor of %lld entries", (long long)want);
        return -1;
    }
    cnt = value_const_ints(g, n->in[i], v);
    return cnt == want;
}

/* AffineGrid (opset 20): theta [N, 2, 3] with size (N, C, H, W) gives the
 * grid [N, H, W, 2]; theta [N, 3, 4] with size (N, C, D, H, W) gives
 * [N, D, H, W, 3]. */
int infer_AffineGrid(Graph *g, Node *n, Diag *d)
{
    Value *th, *sz, *y;
    int64_t dims[TVMCC_MAX_RANK];
    const int64_t *sv;
    int nsp, k, known;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    th = in_val(g, n, 0);
    sz = in_val(g, n, 1);
    if (infer_need_float(n, th, "theta", d))
        return 1;
    if (sz->rank != 1 || (sz->dims[0] != 4 && sz->dims[0] != 5))
        return diag_error(d, n, "size", "must have 4 (2-D) or 5 (3-D) entries");
    nsp = (int)sz->dims[0] - 2;
    if (th->rank != 3 || th->dims[1] != nsp || th->dims[2] != nsp + 1)
        return diag_error(d, n, "theta", "must have shape [N, %d, %d] for size of %d entries",
                          nsp, nsp + 1, nsp + 2);
    known = const_shape_input(g, n, 1, nsp + 2, &sv, d);
    if (known < 0)
        return 1;
    if (!known) {
        if (infer_use_declared(g, n, 0, d, "size input is computed at run time"))
            return 1;
        y = out_val(g, n, 0);
        if (y->rank != nsp + 2 || y->dims[0] != th->dims[0] || y->dims[nsp + 1] != nsp)
            return diag_error(d, n, "output[0]", "declared shape does not fit theta");
        return 0;
    }
    if (sv[0] != th->dims[0])
        return diag_error(d, n, "size", "N is %lld, theta has %lld", (long long)sv[0],
                          (long long)th->dims[0]);
    dims[0] = sv[0];
    for (k = 0; k < nsp; k++) {
        if (sv[2 + k] < 1)
            return diag_error(d, n, "size", "extent %lld is not positive", (long long)sv[2 + k]);
        dims[1 + k] = sv[2 + k];
    }
    dims[nsp + 1] = nsp;
    return value_set(g, n->out[0], th->dtype, nsp + 2, dims, d, n);
}

/* CenterCropPad (opset 18): each dimension listed in axes (default all) is
 * cropped or zero-padded to the extent in `shape`, centred. */
int infer_CenterCropPad(Graph *g, Node *n, Diag *d)
{
    Value *x, *sh, *y;
    int64_t dims[TVMCC_MAX_RANK], na = 0, j;
    const int64_t *ax, *sv;
    int listed[TVMCC_MAX_RANK], i, known;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    sh = in_val(g, n, 1);
    ax = attr_ints(n, "axes", &na, d);
    memset(listed, 0, sizeof listed);
    if (!ax) {
        na = x->rank;
        for (i = 0; i < x->rank; i++)
            listed[i] = 1;
    }
    for (j = 0; ax && j < na; j++) {
        int64_t a = ax[j] < 0 ? ax[j] + x->rank : ax[j];
        if (a < 0 || a >= x->rank || listed[a])
            return diag_error(d, n, "axes", "axis %lld is out of range or repeated",
                              (long long)ax[j]);
        listed[a] = 1;
    }
    if (sh->dtype != DT_INT64 && sh->dtype != DT_INT32)
        return diag_error(d, n, "shape", "must be an integer tensor");
    if (sh->rank != 1 || sh->dims[0] != na)
        return diag_error(d, n, "shape", "must have %lld entries (one per axis)", (long long)na);
    known = value_const_ints(g, n->in[1], &sv) == na;
    if (!known) {
        if (infer_use_declared(g, n, 0, d, "shape input is computed at run time"))
            return 1;
        y = out_val(g, n, 0);
        if (y->rank != x->rank)
            return diag_error(d, n, "output[0]", "declared rank %d differs from input rank %d",
                              y->rank, x->rank);
        for (i = 0; i < x->rank; i++)
            if (!listed[i] && y->dims[i] != x->dims[i])
                return diag_error(d, n, "output[0]", "declared extent of dimension %d is not "
                                  "the input's, which axes leaves as it is", i);
        return 0;
    }
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    for (j = 0; j < na; j++) {
        int64_t a = !ax ? j : ax[j] < 0 ? ax[j] + x->rank : ax[j];
        if (sv[j] < 0)
            return diag_error(d, n, "shape", "extent %lld is negative", (long long)sv[j]);
        dims[a] = sv[j];
    }
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

/* Col2Im (opset 18): input [N, C * prod(block_shape), L] sums its columns
 * back into an image [N, C, image_shape...]. */
int infer_Col2Im(Graph *g, Node *n, Diag *d)
{
    Value *x, *im, *y;
    int64_t dims[TVMCC_MAX_RANK], nsp, kv = 1, k, pads[2 * TVMCC_MAX_SPATIAL];
    const int64_t *iv, *bv;
    ConvWindow win;
    int ki, kb;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d) ||
        infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    im = in_val(g, n, 1);
    if (x->rank != 3)
        return diag_error(d, n, "input", "must have rank 3 [N, C * prod(block_shape), L]");
    if (im->rank != 1 || im->dims[0] < 1 || im->dims[0] > TVMCC_MAX_SPATIAL ||
        im->dims[0] + 2 > TVMCC_MAX_RANK)
        return diag_error(d, n, "image_shape", "must be a 1-D tensor of 1 to %d extents",
                          TVMCC_MAX_SPATIAL);
    nsp = im->dims[0];
    memset(&win, 0, sizeof win);
    win.nsp = (int)nsp;
    win.group = 1;
    if (infer_read_ints(n, "dilations", (int)nsp, 1, 1, win.dilations, d) ||
        infer_read_ints(n, "strides", (int)nsp, 1, 1, win.strides, d) ||
        infer_read_ints(n, "pads", 2 * (int)nsp, 0, 0, pads, d))
        return 1;
    for (k = 0; k < nsp; k++) {
        win.pad_begin[k] = pads[k];
        win.pad_end[k] = pads[nsp + k];
    }
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    ki = const_shape_input(g, n, 1, nsp, &iv, d);
    kb = ki < 0 ? -1 : const_shape_input(g, n, 2, nsp, &bv, d);
    if (ki < 0 || kb < 0)
        return 1;
    if (kb) {
        for (k = 0; k < nsp; k++) {
            if (bv[k] < 1)
                return diag_error(d, n, "block_shape", "extent %lld is not positive",
                                  (long long)bv[k]);
            kv *= bv[k];
        }
        if (x->dims[1] % kv)
            return diag_error(d, n, "input", "dimension 1 (%lld) is not a multiple of "
                              "prod(block_shape) = %lld", (long long)x->dims[1], (long long)kv);
    }
    if (!ki || !kb) {
        if (infer_use_declared(g, n, 0, d, "image_shape or block_shape is computed at run time"))
            return 1;
        y = out_val(g, n, 0);
        if (y->rank != nsp + 2 || y->dims[0] != x->dims[0] || y->dims[1] < 1 ||
            x->dims[1] % y->dims[1])
            return diag_error(d, n, "output[0]", "declared shape does not fit the input");
        return 0;
    }
    dims[0] = x->dims[0];
    dims[1] = x->dims[1] / kv;
    for (k = 0; k < nsp; k++) {
        if (iv[k] < 1)
            return diag_error(d, n, "image_shape", "extent %lld is not positive",
                              (long long)iv[k]);
        dims[2 + k] = iv[k];
    }
    return value_set(g, n->out[0], x->dtype, (int)nsp + 2, dims, d, n);
}

/* Checks that input i, when given, has rank 4 and the extents e. */
static int need_dims4(Graph *g, Node *n, int i, const int64_t *e, Diag *d)
{
    Value *v;
    char field[16];
    int k;
    if (n->n_in <= i || n->in[i] < 0)
        return 0;
    v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (v->dtype != in_val(g, n, 0)->dtype)
        return diag_error(d, n, field, "must have the element type of X");
    if (v->rank != 4)
        return diag_error(d, n, field, "must have rank 4");
    for (k = 0; k < 4; k++)
        if (e[k] >= 0 && v->dims[k] != e[k])
            return diag_error(d, n, field, "dimension %d is %lld, expected %lld", k,
                              (long long)v->dims[k], (long long)e[k]);
    return 0;
}

/* DeformConv (opset 19), 2-D: X [N, C, H, W], W [oC, C / group, kH, kW],
 * offset [N, offset_group * 2 * kH * kW, oH, oW], B [oC], mask
 * [N, offset_group * kH * kW, oH, oW]. */
int infer_DeformConv(Graph *g, Node *n, Diag *d)
{
    Value *x, *w;
    ConvWindow win;
    int64_t dims[4], og, e[4], kk;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d) ||
        infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 1);
    if (infer_need_float(n, x, "X", d))
        return 1;
    if (x->rank != 4)
        return diag_error(d, n, "X", "only 2-D deformable convolution (X of rank 4) is "
                          "supported, got rank %d", x->rank);
    if (w->rank != 4 || w->dtype != x->dtype)
        return diag_error(d, n, "W", "must have rank 4 and the element type of X");
    if (infer_conv_window(n, x, w->dims + 2, 0, &win, d))
        return 1;
    win.group = attr_int(n, "group", 1, d);
    og = attr_int(n, "offset_group", 1, d);
    if (win.group < 1 || x->dims[1] != w->dims[1] * win.group || w->dims[0] % win.group)
        return diag_error(d, n, "group", "%lld does not fit X channels %lld and W [%lld, %lld]",
                          (long long)win.group, (long long)x->dims[1], (long long)w->dims[0],
                          (long long)w->dims[1]);
    if (og < 1 || x->dims[1] % og)
        return diag_error(d, n, "offset_group", "%lld does not divide the channels %lld",
                          (long long)og, (long long)x->dims[1]);
    win.offset_group = og;
    kk = win.kernel[0] * win.kernel[1];
    dims[0] = x->dims[0];
    dims[1] = w->dims[0];
    dims[2] = win.out[0];
    dims[3] = win.out[1];
    e[0] = x->dims[0];
    e[1] = og * 2 * kk;
    e[2] = win.out[0];
    e[3] = win.out[1];
    if (need_dims4(g, n, 2, e, d))
        return 1;
    e[1] = og * kk;
    if (need_dims4(g, n, 4, e, d))
        return 1;
    if (n->n_in > 3 && n->in[3] >= 0) {
        Value *b = in_val(g, n, 3);
        if (b->rank != 1 || b->dims[0] != w->dims[0] || b->dtype != x->dtype)
            return diag_error(d, n, "B", "must be [%lld] of the element type of X",
                              (long long)w->dims[0]);
    }
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return value_set(g, n->out[0], x->dtype, 4, dims, d, n);
}
