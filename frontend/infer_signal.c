/*
 * Type and shape inference of STFT and MelWeightMatrix (lowered in
 * lower/op_signal.c).
 *
 * Both take their sizes as tensors (frame_step, frame_length, dft_length,
 * num_mel_bins) that the backend tests feed at run time. Constant sizes
 * give the shape; otherwise the model's declared output shape is used and
 * the kernel reads the sizes at run time.
 */
#include "infer.h"

#include <string.h>

static int const_scalar(Graph *g, Node *n, int i, int64_t *v)
{
    const int64_t *p;
    if (n->n_in <= i || n->in[i] < 0 || value_const_ints(g, n->in[i], &p) != 1)
        return 0;
    *v = p[0];
    return 1;
}

int infer_STFT(Graph *g, Node *n, Diag *d)
{
    Value *x, *w = NULL;
    int64_t step, flen = -1, dims[4];
    int onesided = attr_int(n, "onesided", 1, d) != 0;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output", "output 0 is required");
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype) || x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return diag_error(d, n, "signal", "expected a float tensor [batch, length, 1 or 2]");
    if (n->n_in > 2 && n->in[2] >= 0) {
        if (need_input(g, n, 2, d))
            return 1;
        w = in_val(g, n, 2);
        if (w->rank != 1 || w->dims[0] < 1 || w->dims[0] > x->dims[1])
            return diag_error(d, n, "window", "must be 1-D and not longer than the signal");
        flen = w->dims[0];
    }
    if (!const_scalar(g, n, 3, &flen) && n->n_in > 3 && n->in[3] >= 0)
        flen = -1;
    if (flen == -1 && !w && !(n->n_in > 3 && n->in[3] >= 0))
        return diag_error(d, n, "frame_length", "needs a window or a frame_length");
    if (const_scalar(g, n, 1, &step) && flen > 0) {
        if (step < 1 || flen > x->dims[1])
            return diag_error(d, n, "frame_step", "frame_step %lld and frame_length %lld do not "
                              "fit a signal of %lld", (long long)step, (long long)flen,
                              (long long)x->dims[1]);
        dims[0] = x->dims[0];
        dims[1] = (x->dims[1] - flen) / step + 1;
        dims[2] = onesided ? flen / 2 + 1 : flen;
        dims[3] = 2;
        return value_set(g, n->out[0], x->dtype, 4, dims, d, n);
    }
    if (infer_use_declared(g, n, 0, d, "frame_step or frame_length is computed at run time"))
        return 1;
    {
        Value *y = out_val(g, n, 0);
        if (y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[3] != 2 || y->dtype != x->dtype)
            return diag_error(d, n, "output[0]", "declared shape must be [batch, frames, bins, 2]"
                              " of the signal's type");
    }
    return 0;
}

int infer_MelWeightMatrix(Graph *g, Node *n, Diag *d)
{
    int64_t bins, dft, dims[2];
    int i;
    DType t = (DType)attr_int(n, "output_datatype", DT_FLOAT32, d);
    for (i = 0; i < 5; i++)
        if (need_input(g, n, i, d))
            return 1;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output", "output 0 is required");
    if (!dtype_is_float(t))
        return diag_error(d, n, "output_datatype", "only float outputs are supported");
    if (const_scalar(g, n, 0, &bins) && const_scalar(g, n, 1, &dft)) {
        if (bins < 1 || dft < 1)
            return diag_error(d, n, "num_mel_bins", "sizes must be positive");
        dims[0] = dft / 2 + 1;
        dims[1] = bins;
        return value_set(g, n->out[0], t, 2, dims, d, n);
    }
    if (infer_use_declared(g, n, 0, d, "num_mel_bins or dft_length is computed at run time"))
        return 1;
    if (out_val(g, n, 0)->rank != 2)
        return diag_error(d, n, "output[0]", "the declared shape must have rank 2");
    return 0;
}
