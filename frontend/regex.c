/*
 * RegexFullMatch pattern compiler (see regex.h for the subset and the
 * table). A recursive-descent parser builds a small tree (alternation,
 * concatenation, repetition, atoms); the tree is then emitted as Thompson
 * NFA instructions, a counted repetition {n,m} as n copies of its operand
 * followed by m - n optional ones.
 */
#include "regex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum RxKind { RK_EMPTY, RK_CHAR, RK_ANY, RK_CLASS, RK_ASSERT, RK_CAT, RK_ALT, RK_REP } RxKind;

typedef struct RxNode {
    RxKind kind;
    int32_t a;          /* CHAR: code point; CLASS: class; ASSERT: RX_*; REP: min */
    int32_t b;          /* CLASS: non-ASCII matches; REP: max (-1: none) */
    int left, right;    /* CAT, ALT: operands; REP: left */
} RxNode;

typedef struct Rx {
    const char *p;      /* parse position */
    const char *start;
    RxNode *nodes;
    int n_nodes, cap_nodes;
    uint16_t (*classes)[8];
    int n_classes, cap_classes;
    int32_t *ins;       /* instructions, 3 values each */
    int n_ins, cap_ins;
    int depth;
    char *err;
    size_t errcap;
    int failed;
} Rx;

static int fail(Rx *r, const char *fmt, ...)
{
    va_list ap;
    if (r->failed)
        return -1;
    r->failed = 1;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errcap, fmt, ap);
    va_end(ap);
    return -1;
}

static void *grow(void *p, int *cap, int need, size_t size)
{
    void *q;
    if (need <= *cap)
        return p;
    *cap = need * 2 + 16;
    q = realloc(p, (size_t)*cap * size);
    if (!q) {
        fprintf(stderr, "tvmcc: out of memory\n");
        exit(1);
    }
    return q;
}

static int node(Rx *r, RxKind kind, int32_t a, int32_t b, int left, int right)
{
    RxNode *n;
    if (r->failed || left < -1 || right < -1 || (kind >= RK_CAT && left < 0) ||
        (kind != RK_REP && kind >= RK_CAT && right < 0))
        return -1;
    r->nodes = grow(r->nodes, &r->cap_nodes, r->n_nodes + 1, sizeof *r->nodes);
    n = &r->nodes[r->n_nodes];
    n->kind = kind;
    n->a = a;
    n->b = b;
    n->left = left;
    n->right = right;
    return r->n_nodes++;
}

/* One UTF-8 code point at *s (advancing it); an invalid byte is itself. */
static int32_t utf8(const char **s)
{
    const unsigned char *c = (const unsigned char *)*s;
    int32_t cp;
    int len, i;
    if (c[0] < 0x80) {
        *s += 1;
        return c[0];
    }
    len = c[0] >= 0xf0 ? 4 : c[0] >= 0xe0 ? 3 : c[0] >= 0xc0 ? 2 : 1;
    cp = len == 4 ? c[0] & 7 : len == 3 ? c[0] & 15 : c[0] & 31;
    for (i = 1; i < len; i++) {
        if ((c[i] & 0xc0) != 0x80) {
            len = 1;
            cp = c[0];
            break;
        }
        cp = (cp << 6) | (c[i] & 0x3f);
    }
    *s += len;
    return len == 1 ? (int32_t)c[0] : cp;
}

static void set_bit(uint16_t *cls, int c)
{
    cls[c >> 4] = (uint16_t)(cls[c >> 4] | (1u << (c & 15)));
}

static void set_range(uint16_t *cls, int lo, int hi)
{
    int c;
    for (c = lo; c <= hi; c++)
        set_bit(cls, c);
}

/* Adds the ASCII members of \d \w \s (upper case: their complement) to cls;
 * returns 1 if letter names one. */
static int perl_class(uint16_t *cls, char letter)
{
    uint16_t tmp[8];
    int i, neg = letter >= 'A' && letter <= 'Z';
    memset(tmp, 0, sizeof tmp);
    switch (neg ? letter - 'A' + 'a' : letter) {
    case 'd':
        set_range(tmp, '0', '9');
        break;
    case 'w':
        set_range(tmp, '0', '9');
        set_range(tmp, 'A', 'Z');
        set_range(tmp, 'a', 'z');
        set_bit(tmp, '_');
        break;
    case 's':
        set_bit(tmp, ' ');
        set_bit(tmp, '\t');
        set_bit(tmp, '\n');
        set_bit(tmp, '\f');
        set_bit(tmp, '\r');
        break;
    default:
        return 0;
    }
    for (i = 0; i < 8; i++)
        cls[i] = (uint16_t)(cls[i] | (neg ? (uint16_t)~tmp[i] : tmp[i]));
    return 1;
}

/* The character of a single-character escape \c (n t r f v and ASCII
 * punctuation), or -1. */
static int32_t escape_char(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    default: break;
    }
    if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
        (c >= '{' && c <= '~'))
        return (unsigned char)c;
    return -1;
}

static int new_class(Rx *r, const uint16_t *bits, int non_ascii)
{
    r->classes = grow(r->classes, &r->cap_classes, r->n_classes + 1, sizeof *r->classes);
    memcpy(r->classes[r->n_classes], bits, sizeof r->classes[0]);
    return node(r, RK_CLASS, r->n_classes++, non_ascii, -1, -1);
}

/* [...] after the '[' */
static int parse_class(Rx *r)
{
    uint16_t bits[8];
    int neg = 0, first = 1, i;
    memset(bits, 0, sizeof bits);
    if (*r->p == '^') {
        neg = 1;
        r->p++;
    }
    for (;;) {
        int32_t lo, hi;
        const char *at = r->p;
        if (!*r->p)
            return fail(r, "missing ] after the class at offset %d", (int)(at - r->start));
        if (*r->p == ']' && !first)
            break;
        first = 0;
        if (r->p[0] == '[' && r->p[1] == ':')
            return fail(r, "POSIX classes ([:name:]) are not supported");
        if (*r->p == '\\') {
            char e = r->p[1];
            if (perl_class(bits, e)) {
                r->p += 2;
                continue;
            }
            lo = escape_char(e);
            if (lo < 0)
                return fail(r, "escape \\%c is not supported in a class", e ? e : ' ');
            r->p += 2;
        } else {
            lo = utf8(&r->p);
        }
        hi = lo;
        if (r->p[0] == '-' && r->p[1] && r->p[1] != ']') {
            r->p++;
            if (*r->p == '\\') {
                hi = escape_char(r->p[1]);
                if (hi < 0)
                    return fail(r, "escape \\%c is not supported as a range end",
                                r->p[1] ? r->p[1] : ' ');
                r->p += 2;
            } else {
                hi = utf8(&r->p);
            }
            if (hi < lo)
                return fail(r, "range %.*s is reversed", (int)(r->p - at), at);
        }
        if (hi > 127)
            return fail(r, "classes of non-ASCII characters are not supported");
        set_range(bits, lo, hi);
    }
    r->p++; /* ] */
    if (neg)
        for (i = 0; i < 8; i++)
            bits[i] = (uint16_t)~bits[i];
    return new_class(r, bits, neg);
}

static int parse_alt(Rx *r);

static int parse_atom(Rx *r)
{
    char c = *r->p;
    uint16_t bits[8];
    int32_t e;
    switch (c) {
    case '(':
        r->p++;
        if (*r->p == '?') {
            if (r->p[1] != ':')
                return fail(r, "group flags and named groups ((?...) other than (?:) are "
                            "not supported");
            r->p += 2;
        }
        if (++r->depth > 200)
            return fail(r, "groups nested too deeply");
        {
            int inner = parse_alt(r);
            r->depth--;
            if (*r->p != ')')
                return fail(r, "missing ) at offset %d", (int)(r->p - r->start));
            r->p++;
            return inner;
        }
    case '[':
        r->p++;
        return parse_class(r);
    case '.':
        r->p++;
        return node(r, RK_ANY, 0, 0, -1, -1);
    case '^':
        r->p++;
        return node(r, RK_ASSERT, RX_BOL, 0, -1, -1);
    case '$':
        r->p++;
        return node(r, RK_ASSERT, RX_EOL, 0, -1, -1);
    case '\\':
        c = r->p[1];
        memset(bits, 0, sizeof bits);
        if (!c)
            return fail(r, "trailing \\");
        r->p += 2;
        if (c == 'b' || c == 'B')
            return node(r, RK_ASSERT, c == 'b' ? RX_WORDB : RX_NWORDB, 0, -1, -1);
        if (perl_class(bits, c))
            return new_class(r, bits, c >= 'A' && c <= 'Z');
        e = escape_char(c);
        if (e < 0)
            return fail(r, "escape \\%c is not supported", c);
        return node(r, RK_CHAR, e, 0, -1, -1);
    case '*': case '+': case '?': case '{':
        return fail(r, "%c at offset %d has nothing to repeat", c, (int)(r->p - r->start));
    default:
        return node(r, RK_CHAR, utf8(&r->p), 0, -1, -1);
    }
}

/* A decimal number of at most 4 digits at r->p, or -1. */
static int number(Rx *r)
{
    int v = 0, k = 0;
    while (*r->p >= '0' && *r->p <= '9' && k < 5) {
        v = v * 10 + (*r->p++ - '0');
        k++;
    }
    return k == 0 || k == 5 ? -1 : v;
}

static int parse_repeat(Rx *r)
{
    int x = parse_atom(r);
    int repeated = 0;
    while (!r->failed) {
        int lo, hi;
        char c = *r->p;
        if (c == '*' || c == '+' || c == '?') {
            lo = c == '+';
            hi = c == '?' ? 1 : -1;
            r->p++;
        } else if (c == '{') {
            const char *at = r->p++;
            lo = number(r);
            hi = lo;
            if (*r->p == ',') {
                r->p++;
                hi = *r->p == '}' ? -1 : number(r);
                if (hi == -1 && *r->p != '}')
                    lo = -1;
            }
            if (lo < 0 || *r->p != '}')
                return fail(r, "bad repetition at offset %d (a literal { must be escaped)",
                            (int)(at - r->start));
            r->p++;
            if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
                return fail(r, "bad repetition count at offset %d (at most 1000, max >= min)",
                            (int)(at - r->start));
        } else {
            break;
        }
        if (repeated)
            return fail(r, "bad repetition operator at offset %d (nested quantifier)",
                        (int)(r->p - r->start - 1));
        repeated = 1;
        if (*r->p == '?') /* non-greedy: the same strings match in full */
            r->p++;
        x = node(r, RK_REP, lo, hi, x, -1);
    }
    return x;
}

static int parse_cat(Rx *r)
{
    int x = -2;
    while (!r->failed && *r->p && *r->p != '|' && *r->p != ')') {
        int y = parse_repeat(r);
        x = x == -2 ? y : node(r, RK_CAT, 0, 0, x, y);
    }
    return x == -2 ? node(r, RK_EMPTY, 0, 0, -1, -1) : x;
}

static int parse_alt(Rx *r)
{
    int x = parse_cat(r);
    while (!r->failed && *r->p == '|') {
        r->p++;
        x = node(r, RK_ALT, 0, 0, x, parse_cat(r));
    }
    return x;
}

static int emit(Rx *r, int32_t op, int32_t a, int32_t b)
{
    if (r->n_ins >= REGEX_MAX_INSTR) {
        fail(r, "the pattern compiles to more than %d instructions", REGEX_MAX_INSTR);
        return 0;
    }
    r->ins = grow(r->ins, &r->cap_ins, 3 * (r->n_ins + 1), sizeof *r->ins);
    r->ins[3 * r->n_ins] = op;
    r->ins[3 * r->n_ins + 1] = a;
    r->ins[3 * r->n_ins + 2] = b;
    return r->n_ins++;
}

static void gen(Rx *r, int x)
{
    const RxNode *n;
    int i, s, j;
    if (r->failed)
        return;
    n = &r->nodes[x];
    switch (n->kind) {
    case RK_EMPTY:
        break;
    case RK_CHAR:
        emit(r, RX_CHAR, n->a, 0);
        break;
    case RK_ANY:
        emit(r, RX_ANY, 0, 0);
        break;
    case RK_CLASS:
        emit(r, RX_CLASS, n->a, n->b);
        break;
    case RK_ASSERT:
        emit(r, RX_ASSERT, n->a, 0);
        break;
    case RK_CAT:
        gen(r, n->left);
        gen(r, n->right);
        break;
    case RK_ALT:
        /* split L1, L2; L1: left; jmp end; L2: right; end: */
        s = emit(r, RX_SPLIT, 0, 0);
        r->ins[3 * s + 1] = r->n_ins;
        gen(r, n->left);
        j = emit(r, RX_JMP, 0, 0);
        r->ins[3 * s + 2] = r->n_ins;
        gen(r, n->right);
        r->ins[3 * j + 1] = r->n_ins;
        break;
    case RK_REP: {
        int32_t lo = n->a, hi = n->b, left = n->left;
        int32_t chain = -1;
        for (i = 0; i < lo && !r->failed; i++)
            gen(r, left);
        if (hi < 0) {
            /* L: split body, end; body; jmp L; end: */
            s = emit(r, RX_SPLIT, 0, 0);
            r->ins[3 * s + 1] = r->n_ins;
            gen(r, left);
            emit(r, RX_JMP, s, 0);
            r->ins[3 * s + 2] = r->n_ins;
            break;
        }
        /* hi - lo optional copies, each skipping to the end: the splits
         * are chained through their second target until it is known */
        for (i = lo; i < hi && !r->failed; i++) {
            s = emit(r, RX_SPLIT, 0, chain);
            r->ins[3 * s + 1] = r->n_ins;
            chain = s;
            gen(r, left);
        }
        while (chain >= 0 && !r->failed) {
            j = r->ins[3 * chain + 2];
            r->ins[3 * chain + 2] = r->n_ins;
            chain = j;
        }
        break;
    }
    }
}

int regex_compile(const char *pattern, int32_t **prog, int *n_prog, char *err, size_t errcap)
{
    Rx r;
    int root, i, k, total;
    int32_t *out;
    memset(&r, 0, sizeof r);
    r.p = r.start = pattern;
    r.err = err;
    r.errcap = errcap;
    root = parse_alt(&r);
    if (!r.failed && *r.p == ')')
        fail(&r, "unmatched ) at offset %d", (int)(r.p - r.start));
    if (!r.failed)
        gen(&r, root);
    if (!r.failed)
        emit(&r, RX_MATCH, 0, 0);
    out = NULL;
    if (!r.failed) {
        total = 2 + 3 * r.n_ins + 8 * r.n_classes;
        out = malloc((size_t)total * sizeof *out);
        if (!out) {
            fprintf(stderr, "tvmcc: out of memory\n");
            exit(1);
        }
        out[0] = r.n_ins;
        out[1] = r.n_classes;
        memcpy(out + 2, r.ins, (size_t)r.n_ins * 3 * sizeof *out);
        for (i = 0; i < r.n_classes; i++)
            for (k = 0; k < 8; k++)
                out[2 + 3 * r.n_ins + 8 * i + k] = r.classes[i][k];
        *prog = out;
        *n_prog = total;
    }
    free(r.nodes);
    free(r.classes);
    free(r.ins);
    return r.failed;
}
