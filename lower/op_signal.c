/*
 * Lowering of the signal-processing operators (STFT, MelWeightMatrix), and
 * the entry points of the control-flow operators, which never reach
 * lowering: frontend/control.c inlines them before inference.
 */
#include "lower.h"

int lower_If(Lower *L, Node *n)
{
    (void)L;
    die("control-flow node %s reached lowering", n->op_type);
}

int lower_Loop(Lower *L, Node *n)
{
    return lower_If(L, n);
}

int lower_Scan(Lower *L, Node *n)
{
    return lower_If(L, n);
}
