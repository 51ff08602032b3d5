/*
 * Ridge regression for the tuner's cost model (costmodel.h): the normal
 * equations (X'X + lambda I) w = X'y solved by Gaussian elimination with
 * partial pivoting; features standardized with the training points' mean
 * and deviation, the bias not penalized.
 */
#include "costmodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int expand(const CostModel *m, const double *x, double *z)
{
    int i, d = 0;
    z[d++] = 1.0;
    for (i = 0; i < m->nf; i++) {
        double s = (x[i] - m->mean[i]) / m->sd[i];
        z[d++] = s;
        z[d++] = s * s;
    }
    return d;
}

void cm_fit(CostModel *m, const double *X, const double *y, int n, int nf, double lambda)
{
    double A[CM_DIM][CM_DIM + 1], z[CM_DIM];
    int i, j, r, d = 1 + 2 * nf;
    memset(m, 0, sizeof *m);
    m->nf = nf > CM_MAX_FEATURES ? CM_MAX_FEATURES : nf;
    nf = m->nf;
    d = 1 + 2 * nf;
    if (n < 1)
        return;
    for (j = 0; j < nf; j++) {
        double s = 0, q = 0;
        for (i = 0; i < n; i++)
            s += X[i * nf + j];
        s /= n;
        for (i = 0; i < n; i++)
            q += (X[i * nf + j] - s) * (X[i * nf + j] - s);
        m->mean[j] = s;
        m->sd[j] = q > 1e-18 * n ? sqrt(q / n) : 1.0;
    }
    memset(A, 0, sizeof A);
    for (i = 0; i < n; i++) {
        expand(m, &X[i * nf], z);
        for (r = 0; r < d; r++) {
            for (j = 0; j < d; j++)
                A[r][j] += z[r] * z[j];
            A[r][d] += z[r] * y[i];
        }
    }
    for (r = 1; r < d; r++)
        A[r][r] += lambda;
    A[0][0] += 1e-9;
    for (r = 0; r < d; r++) {
        int piv = r;
        double t;
        for (i = r + 1; i < d; i++)
            if (fabs(A[i][r]) > fabs(A[piv][r]))
                piv = i;
        if (fabs(A[piv][r]) < 1e-300)
            continue;
        if (piv != r)
            for (j = 0; j <= d; j++) {
                t = A[r][j];
                A[r][j] = A[piv][j];
                A[piv][j] = t;
            }
        for (i = 0; i < d; i++) {
            double f;
            if (i == r || A[i][r] == 0.0)
                continue;
            f = A[i][r] / A[r][r];
            for (j = r; j <= d; j++)
                A[i][j] -= f * A[r][j];
        }
    }
    for (r = 0; r < d; r++)
        m->w[r] = fabs(A[r][r]) < 1e-300 ? 0.0 : A[r][d] / A[r][r];
    m->fitted = 1;
}

double cm_predict(const CostModel *m, const double *x)
{
    double z[CM_DIM], s = 0;
    int i, d;
    if (!m->fitted)
        return 0.0;
    d = expand(m, x, z);
    for (i = 0; i < d; i++)
        s += m->w[i] * z[i];
    return s;
}

/* ranks (average for ties) of v into r */
static void ranks(const double *v, double *r, int n)
{
    int i, j;
    for (i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (j = 0; j < n; j++) {
            less += v[j] < v[i];
            eq += v[j] == v[i];
        }
        r[i] = less + (eq - 1) / 2.0;
    }
}

double cm_rank_corr(const double *a, const double *b, int n)
{
    double *ra = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double *rb = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    int i;
    if (!ra || !rb || n < 2) {
        free(ra);
        free(rb);
        return 0.0;
    }
    ranks(a, ra, n);
    ranks(b, rb, n);
    for (i = 0; i < n; i++) {
        ma += ra[i];
        mb += rb[i];
    }
    ma /= n;
    mb /= n;
    for (i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    free(rb);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0.0;
}
