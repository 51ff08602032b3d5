/*
 * Shape and type inference of Resize (lowered by lower/op_resize.c): the
 * output extents come from the sizes input, or from the scales input
 * (floor(in * scale)); either computed at run time falls back to the
 * declared output shape. The attributes become the node's ResizeParams
 * (ir/params.h).
 */
#include "infer.h"

#include <math.h>
#include <string.h>

/* Checks the attributes and parses them into p. */
static int check_resize_attrs(const Node *n, ResizeParams *p, Diag *d)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize", NULL};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                      "ceil", NULL};
    const char *m = attr_string(n, "mode", "nearest", d);
    const char *c = attr_string(n, "coordinate_transformation_mode", "half_pixel", d);
    const char *nm = attr_string(n, "nearest_mode", "round_prefer_floor", d);
    int i;
    memset(p, 0, sizeof *p);
    for (i = 0; modes[i] && strcmp(modes[i], m); i++)
        ;
    if (!modes[i])
        return diag_error(d, n, "mode", "unknown value '%s'", m);
    p->mode = (uint8_t)i;
    for (i = 0; ctms[i] && strcmp(ctms[i], c); i++)
        ;
    if (!ctms[i])
        return diag_error(d, n, "coordinate_transformation_mode", "unknown value '%s'", c);
    p->coord = (uint8_t)(n->opset >= 11 ? i : CT_ASYM);
    for (i = 0; nms[i] && strcmp(nms[i], nm); i++)
        ;
    if (!nms[i])
        return diag_error(d, n, "nearest_mode", "unknown value '%s'", nm);
    /* Resize-10 rounds down like the Upsample it replaced */
    p->round = (uint8_t)(n->opset >= 11 ? i : NM_FLOOR);
    if (node_attr(n, "axes") || node_attr(n, "keep_aspect_ratio_policy") || n->opset >= 18)
        return diag_error(d, n, "axes", "Resize from opset 18 (axes, aspect ratio policy) is "
                          "not supported");
    p->exclude_outside = attr_int(n, "exclude_outside", 0, d) != 0;
    p->cubic_coeff_a = attr_float(n, "cubic_coeff_a", -0.75, d);
    p->extrapolation_value = attr_float(n, "extrapolation_value", 0.0, d);
    return 0;
}

/* Reads a constant float list (scales, roi) of any float type. Returns the
 * count, or -1 when the input is not a compile-time constant. */
static int64_t const_floats(const Graph *g, int32_t vi, double *dst, int64_t cap)
{
    const Value *v = &g->values[vi];
    int64_t cnt = value_numel(v), i;
    if (!v->data || cnt < 0 || cnt > cap)
        return -1;
    for (i = 0; i < cnt; i++) {
        if (v->dtype == DT_FLOAT32)
            dst[i] = ((const float *)v->data)[i];
        else if (v->dtype == DT_FLOAT64)
            dst[i] = ((const double *)v->data)[i];
        else
            return -1;
    }
    return cnt;
}

int infer_Resize(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int64_t dims[TVMCC_MAX_RANK];
    int scales_in = n->opset >= 11 ? 2 : 1, i;
    int have_scales, have_sizes;
    ResizeParams p;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_numeric(n, x, "input[0]", d) || check_resize_attrs(n, &p, d) ||
        infer_attr_fits(n, "extrapolation_value", x->dtype, d))
        return 1;
    node_set_params(g, n, PARAMS_RESIZE, &p, sizeof p);
    have_scales = in_val(g, n, scales_in) && value_numel(in_val(g, n, scales_in)) > 0;
    have_sizes = n->opset >= 11 && in_val(g, n, 3) && value_numel(in_val(g, n, 3)) > 0;
    if (have_scales == have_sizes)
        return diag_error(d, n, "input[2]", "exactly one of scales and sizes must be given");
    if (have_sizes) {
        const int64_t *sz;
        int64_t cnt;
        if (need_input(g, n, 3, d))
            return 1;
        cnt = value_const_ints(g, n->in[3], &sz);
        if (cnt < 0)
            return infer_use_declared(g, n, 0, d, "sizes input is computed at run time");
        if (cnt != x->rank)
            return diag_error(d, n, "input[3]", "sizes has %lld entries for rank %d",
                              (long long)cnt, x->rank);
        for (i = 0; i < x->rank; i++) {
            if (sz[i] < 0)
                return diag_error(d, n, "input[3]", "size %lld is negative", (long long)sz[i]);
            dims[i] = sz[i];
        }
    } else {
        double sc[TVMCC_MAX_RANK];
        int64_t cnt;
        if (need_input(g, n, scales_in, d))
            return 1;
        if (!dtype_is_float(in_val(g, n, scales_in)->dtype))
            return diag_error(d, n, "scales", "must be a float tensor");
        cnt = value_numel(in_val(g, n, scales_in));
        if (cnt != x->rank)
            return diag_error(d, n, "scales", "has %lld entries for rank %d", (long long)cnt,
                              x->rank);
        if (const_floats(g, n->in[scales_in], sc, TVMCC_MAX_RANK) < 0)
            return infer_use_declared(g, n, 0, d, "scales input is computed at run time");
        for (i = 0; i < x->rank; i++) {
            double o = floor((double)x->dims[i] * sc[i]);
            if (!(sc[i] > 0) || !(o < 2147483648.0))
                return diag_error(d, n, "scales", "scale %g for dimension %d is out of range",
                                  sc[i], i);
            dims[i] = (int64_t)o;
        }
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}
