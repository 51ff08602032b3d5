/*
 * The tuner's learned cost model (tvmcc tune, cmd/tune.c): ridge
 * regression of log(time) on standardized knob features (knobs.h's
 * knobs_features) and their squares. Refit after every batch of
 * measurements; it only ranks candidates, so its scale does not matter.
 */
#ifndef TVMCC_COSTMODEL_H
#define TVMCC_COSTMODEL_H

#define CM_MAX_FEATURES 16
#define CM_DIM (1 + 2 * CM_MAX_FEATURES)

typedef struct CostModel {
    int nf;                       /* features per point */
    int fitted;                   /* 0: predict returns 0 for every point */
    double mean[CM_MAX_FEATURES], sd[CM_MAX_FEATURES];
    double w[CM_DIM];
} CostModel;

/* Fits y (n points, X row-major n x nf) with ridge penalty lambda. */
void cm_fit(CostModel *m, const double *X, const double *y, int n, int nf, double lambda);
double cm_predict(const CostModel *m, const double *x);
/* Spearman rank correlation of a and b (n points), for tests. */
double cm_rank_corr(const double *a, const double *b, int n);

#endif
