/*
 * Type and shape inference of the vision operators GridSample, RoiAlign
 * and NonMaxSuppression (lowered in lower/op_vision.c).
 *
 * GridSample and RoiAlign have static output shapes. NonMaxSuppression's
 * row count depends on the data: the model's declared output shape is
 * used (the backend tests declare the exact count), else it is an error.
 */
#include "infer.h"

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
