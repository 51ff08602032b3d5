/*
 * Shape and type inference of Resize (lowered by lower/op_resize.c): the
 * output extents come from the sizes input, or from the scales input
 * (floor(in * scale)); either computed at run time falls back to the
 * declared output shape. The attributes become the node's ResizeParams
 * (ir/params.h). From opset 18, `axes` lists the dimensions scales, sizes
 * and roi cover (the others keep their extent), and with sizes
 * keep_aspect_ratio_policy not_larger / not_smaller resizes every listed
 * dimension by one scale (the smallest / largest of sizes / input), the
 * extent rounded half up.
 */
#include "infer.h"

#include <math.h>
#include <string.h>

/* Checks the attributes and parses them into p. */
static int check_resize_attrs(const Node *n, int rank, ResizeParams *p, Diag *d)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize", "half_pixel_symmetric", NULL};
    static const char *const pols[] = {"stretch", "not_larger", "not_smaller", NULL};
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
    /* half_pixel_symmetric came with opset 19 */
    if (!ctms[i] || (i == CT_HALF_SYM && n->opset < 19))
        return diag_error(d, n, "coordinate_transformation_mode", "unknown value '%s'", c);
    p->coord = (uint8_t)(n->opset >= 11 ? i : CT_ASYM);
    for (i = 0; nms[i] && strcmp(nms[i], nm); i++)
        ;
    if (!nms[i])
        return diag_error(d, n, "nearest_mode", "unknown value '%s'", nm);
    /* Resize-10 rounds down like the Upsample it replaced */
    p->round = (uint8_t)(n->opset >= 11 ? i : NM_FLOOR);
    p->n_axes = (int8_t)rank;
    for (i = 0; i < rank; i++)
        p->axis_of[i] = (int8_t)i;
    if (n->opset >= 18) {
        const char *pol = attr_string(n, "keep_aspect_ratio_policy", "stretch", d);
        int64_t na = 0, j;
        const int64_t *ax = attr_ints(n, "axes", &na, d);
        for (i = 0; pols[i] && strcmp(pols[i], pol); i++)
            ;
        if (!pols[i])
            return diag_error(d, n, "keep_aspect_ratio_policy", "unknown value '%s'", pol);
        p->policy = (uint8_t)i;
        p->antialias = attr_int(n, "antialias", 0, d) != 0;
        if (p->antialias && p->mode == RESIZE_NEAREST)
            return diag_error(d, n, "antialias", "needs mode linear or cubic");
        if (ax) {
            if (na < 1 || na > rank)
                return diag_error(d, n, "axes", "has %lld entries for rank %d", (long long)na,
                                  rank);
            for (i = 0; i < rank; i++)
                p->axis_of[i] = -1;
            for (j = 0; j < na; j++) {
                int64_t a = ax[j] < 0 ? ax[j] + rank : ax[j];
                if (a < 0 || a >= rank || p->axis_of[a] >= 0)
                    return diag_error(d, n, "axes", "axis %lld is out of range or repeated",
                                      (long long)ax[j]);
                p->axis_of[a] = (int8_t)j;
            }
            p->n_axes = (int8_t)na;
        }
    }
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
    if (infer_need_numeric(n, x, "input[0]", d) || check_resize_attrs(n, x->rank, &p, d) ||
        infer_attr_fits(n, "extrapolation_value", x->dtype, d))
        return 1;
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
        if (cnt < 0) {
            node_set_params(g, n, PARAMS_RESIZE, &p, sizeof p);
            return infer_use_declared(g, n, 0, d, "sizes input is computed at run time");
        }
        if (cnt != p.n_axes)
            return diag_error(d, n, "input[3]", "sizes has %lld entries for %d dimensions",
                              (long long)cnt, p.n_axes);
        for (i = 0; i < x->rank; i++) {
            int j = p.axis_of[i];
            if (j >= 0 && sz[j] < 0)
                return diag_error(d, n, "input[3]", "size %lld is negative", (long long)sz[j]);
            dims[i] = j >= 0 ? sz[j] : x->dims[i];
        }
        if (p.policy != RP_STRETCH) {
            double s = 0;
            int first = 1;
            for (i = 0; i < x->rank; i++) {
                double r;
                if (p.axis_of[i] < 0)
                    continue;
                if (x->dims[i] <= 0)
                    return diag_error(d, n, "input[0]", "keep_aspect_ratio_policy needs "
                                      "non-empty dimensions");
                r = (double)dims[i] / (double)x->dims[i];
                if (first || (p.policy == RP_NOT_LARGER ? r < s : r > s))
                    s = r;
                first = 0;
            }
            p.policy_scale = s;
            for (i = 0; i < x->rank; i++)
                if (p.axis_of[i] >= 0)
                    dims[i] = (int64_t)(s * (double)x->dims[i] + 0.5);
        }
    } else {
        double sc[TVMCC_MAX_RANK];
        int64_t cnt;
        if (need_input(g, n, scales_in, d))
            return 1;
        if (!dtype_is_float(in_val(g, n, scales_in)->dtype))
            return diag_error(d, n, "scales", "must be a float tensor");
        cnt = value_numel(in_val(g, n, scales_in));
        if (cnt != p.n_axes)
            return diag_error(d, n, "scales", "has %lld entries for %d dimensions",
                              (long long)cnt, p.n_axes);
        if (const_floats(g, n->in[scales_in], sc, TVMCC_MAX_RANK) < 0) {
            node_set_params(g, n, PARAMS_RESIZE, &p, sizeof p);
            return infer_use_declared(g, n, 0, d, "scales input is computed at run time");
        }
        for (i = 0; i < x->rank; i++) {
            int j = p.axis_of[i];
            double o = j >= 0 ? floor((double)x->dims[i] * sc[j]) : (double)x->dims[i];
            if (j >= 0 && (!(sc[j] > 0) || !(o < 2147483648.0)))
                return diag_error(d, n, "scales", "scale %g for dimension %d is out of range",
                                  sc[j], i);
            dims[i] = (int64_t)o;
        }
    }
    node_set_params(g, n, PARAMS_RESIZE, &p, sizeof p);
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}
