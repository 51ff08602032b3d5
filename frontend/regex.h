/*
 * RegexFullMatch patterns, compiled at compile time into the instruction
 * table that tvmrt_regex_full_match() (runtime_min/tvmrt.c) runs as a
 * Thompson NFA: every state is advanced in step over the input's code
 * points, so the time is linear in the input and nothing backtracks.
 *
 * The subset of RE2 syntax accepted (docs/user-guide.md, String tensors):
 * literals (UTF-8 included), `.` (any code point but newline), classes
 * `[...]` / `[^...]` of ASCII characters and ranges, the escapes \d \D \w
 * \W \s \S (ASCII, as RE2), \b \B, \n \t \r \f \v and an escaped ASCII
 * punctuation character, groups `(...)` and `(?:...)`, alternation `|`,
 * the quantifiers * + ? {n} {n,} {n,m} (n, m <= 1000; a trailing `?`
 * (non-greedy) is accepted and changes nothing for a full match), and the
 * anchors ^ $ (start and end of the text). Anything else (flags, named
 * groups, \p classes, POSIX classes, non-ASCII class members, backreferences)
 * is refused with a message.
 *
 * Table layout (int32_t):
 *   [0] number of instructions N, [1] number of classes C,
 *   [2 + 3*i .. 2 + 3*i + 2] instruction i: op, a, b,
 *   [2 + 3*N + 8*k .. +7] class k: 128-bit ASCII bitmap as 8 words of 16 bits.
 * Execution starts at instruction 0. Ops (RX_*): MATCH; CHAR a = code point;
 * ANY; CLASS a = class, b = 1 if code points above 127 match; SPLIT to a
 * and b; JMP to a; ASSERT a = RX_BOL, RX_EOL, RX_WORDB or RX_NWORDB.
 */
#ifndef TVMCC_REGEX_H
#define TVMCC_REGEX_H

#include <stddef.h>
#include <stdint.h>

enum { RX_MATCH, RX_CHAR, RX_ANY, RX_CLASS, RX_SPLIT, RX_JMP, RX_ASSERT };
enum { RX_BOL = 1, RX_EOL, RX_WORDB, RX_NWORDB };

/* Most instructions a pattern may compile to. */
#define REGEX_MAX_INSTR 20000

/* Compiles pattern into a new malloc'ed table (*prog, *n_prog int32_t
 * values). Returns 0, or 1 with a one-line reason in err. */
int regex_compile(const char *pattern, int32_t **prog, int *n_prog, char *err, size_t errcap);

#endif
