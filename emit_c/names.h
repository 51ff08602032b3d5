/*
 * What the emitted files call things (emit_c/names.c): C types of the
 * IR's dtypes, the NAME macros' prefix, model text made safe for comments,
 * and the constants: which values NAME_weights.c holds, their names
 * (NAME_w<N>), the form of their declaration and how kernels refer to
 * them. Kernel, buffer and loop-variable names are chosen by the lowering
 * (lower/program.c, lower/te.c) and printed as they are. This file calls
 * no other file of emit_c/; every other one may call it.
 */
#ifndef TVMCC_EMIT_NAMES_H
#define TVMCC_EMIT_NAMES_H

#include "../ir/graph.h"
#include "../lower/program.h"

/* Model-supplied text made safe for a C comment: bytes outside printable
 * ASCII become '?', and a star-slash cannot close the comment. */
const char *emit_safe(Arena *a, const char *s);
/* NAME upper-cased, for macros. */
const char *emit_upper(Arena *a, const char *s);
const char *emit_ctype(DType t);          /* storage C type */
const char *emit_compute_ctype(DType t);
const char *emit_small_name(DType t);     /* "f8e4m3fn", "i4"...: tvmrt helpers */  /* C type of computed values */

/* Constants up to EMIT_SMALL_BYTES are readable arrays; larger ones are
 * rows of EMIT_ROW_BYTES bytes, each a string literal (emit_weights.c). */
#define EMIT_SMALL_BYTES 4096
#define EMIT_ROW_BYTES 1024
/* Bytes of constant v. */
int64_t emit_const_bytes(const Value *v);
/* Whether v is emitted as rows of bytes (above EMIT_SMALL_BYTES). */
int emit_const_is_rows(const Value *v);
/* Whether v is emitted as a union with a typed view `.v` (rows, float32
 * and float64), not a plain array. */
int emit_const_is_union(const Value *v);
/* Sets used[v] for every value emitted as a constant: read by a kernel, or a
 * constant graph output. used has g->n_values entries, zeroed. */
void emit_mark_used_consts(const Program *p, char *used);
int64_t emit_weights_bytes(const Program *p);   /* bytes of constants emitted */
const char *emit_const_name(const Program *p, int32_t vi); /* "NAME_w3" */
/* The declaration of constant vi without initializer, the same text in
 * NAME.c (after "extern") and NAME_weights.c: "const union NAME_w3_u {...} NAME_w3". */
const char *emit_const_decl(const Program *p, int32_t vi);
/* How a kernel argument refers to the typed elements: "NAME_w3.v". */
const char *emit_const_ref(const Program *p, int32_t vi);

#endif
