"""The float64 reference of a 2-D convolution for the suites that check
tvmcc's convs against numpy (test/grouped, test/winograd, test/threads).

conv_ref(x, w, b, group, stride, pads, dilation): x [N, C, H, W], w [Co,
C / group, KH, KW], b [Co] or None; pads one int for every side or (top,
left, bottom, right). Returns y [N, Co, OH, OW] in float64.
"""
import numpy as np


def conv_ref(x, w, b=None, group=1, stride=1, pads=0, dilation=1):
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, _, h, wd = x.shape
    co, cg, kh_n, kw_n = w.shape
    pt, pl, pb, pr = (pads,) * 4 if np.isscalar(pads) else pads
    s, d = stride, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - d * (kh_n - 1) - 1) // s + 1
    ow = (wd + pl + pr - d * (kw_n - 1) - 1) // s + 1
    y = np.zeros((n, co, oh, ow))
    mg = co // group
    for gi in range(group):
        xs = xp[:, gi * cg:(gi + 1) * cg]
        ws = w[gi * mg:(gi + 1) * mg]
        for kh in range(kh_n):
            for kw in range(kw_n):
                win = xs[:, :, kh * d:kh * d + s * (oh - 1) + 1:s, kw * d:kw * d + s * (ow - 1) + 1:s]
                y[:, gi * mg:(gi + 1) * mg] += np.einsum("nchw,oc->nohw", win, ws[:, :, kh, kw])
    if b is not None:
        y += np.asarray(b, dtype=np.float64)[None, :, None, None]
    return y
