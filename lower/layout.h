/*
 * Operators in the layouts the layout pass chooses (op_layout.c).
 */
#ifndef TVMCC_LAYOUT_H
#define TVMCC_LAYOUT_H

#include "te.h"

/* 1 when node n computes in NHWC (attribute "tvmcc.layout"). */
int lower_layout_of(const Node *n);
int lower_conv_nhwc(Lower *L, Node *n);

#endif
