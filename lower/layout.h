/*
 * Operators in the layouts the layout pass chooses (op_layout.c).
 */
#ifndef TVMCC_LAYOUT_H
#define TVMCC_LAYOUT_H

#include "te.h"

enum { LAYOUT_NCHW = 0, LAYOUT_NHWC = 1, LAYOUT_NCHWC = 2 };
/* The layout node n computes in (attribute "tvmcc.layout"). */
int lower_layout_of(const Node *n);
int lower_conv_nhwc(Lower *L, Node *n);
int lower_conv_nchwc(Lower *L, Node *n);
int lower_maxpool_nchwc(Lower *L, Node *n);

#endif
