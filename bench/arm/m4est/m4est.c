/*
 * m4est.c: a QEMU TCG plugin (qemu-system-arm 7.2, plugin API 1) that
 * estimates Cortex-M4(F) core cycles of a bare-metal program by giving
 * every executed instruction a fixed cost from the processor's timing
 * tables (see cost() below and bench/arm/README.md for the sources).
 *
 *   gcc -O2 -std=c99 -fPIC -shared -o m4est.so m4est.c
 *   qemu-system-arm -M mps2-an386 -icount shift=0 ... \
 *       -plugin ./m4est.so,out=FILE[,marks=FILE][,branch=N][,fmac=N][,dump=FILE]
 *
 * How: when QEMU translates a block (TB), the plugin reads each guest
 * instruction's disassembly, classifies it and sums the block's cycles,
 * per class as well; when the block runs, inline additions (no callback)
 * add those sums to global counters. Blocks that start at a marked address
 * (marks=FILE, lines "HEXADDR NAME", e.g. function entries from nm) also
 * get a callback that records a snapshot of every counter; a hit of the
 * same mark as the last recorded one is not recorded again (a function
 * whose first instruction is a loop head then counts once per call, not
 * per iteration). At exit the plugin writes to out=FILE:
 *
 *   m4est 1 branch=B fmac=F
 *   classes NAME...                   the instruction classes, in order
 *   total INSNS CYCLES C0 Y0 C1 Y1 ...  whole run (Ck count, Yk cycles)
 *   hit NAME INSNS CYCLES C0 Y0 ...   counters when mark NAME was entered
 *   dropped N                         hits beyond the table (if any)
 *
 * The cost of a region is the difference of two snapshots. The counters
 * are charged when a block starts, so a block left early (an exception,
 * a semihosting call) is charged in full; between two marks of ordinary
 * code the figures are exact sums of the static costs.
 *
 * dump=FILE writes "CYCLES CLASS DISASSEMBLY" for every instruction
 * translated (sort -u it to review the classification).
 *
 * Options: branch=N (cycles of a branch, default 2; a pipeline refill P is
 * branch-1), fmac=N (cycles of VFMA/VMLA and relatives, default 3).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_api.h"

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

enum {
    K_ALU,   /* data processing, moves, shifts, bit fields, IT, everything not listed */
    K_IMUL,  /* integer multiplies: MUL, MLA, SMULL, SMLAD, SMLABB, ... */
    K_DIV,   /* SDIV, UDIV */
    K_LD,    /* LDR and its byte, halfword, signed and exclusive forms */
    K_ST,    /* STR and its forms */
    K_LDM,   /* LDM, POP, LDRD */
    K_STM,   /* STM, PUSH, STRD */
    K_BR,    /* B, BL, BX, BLX, CBZ, CBNZ, TBB, TBH, ISB, and writes to pc */
    K_FP,    /* FPU arithmetic (not below), compares, conversions, VMOV, VMRS */
    K_FMAC,  /* VFMA, VFMS, VFNMA, VFNMS, VMLA, VMLS, VNMLA, VNMLS */
    K_FDIV,  /* VDIV, VSQRT */
    K_VLD,   /* VLDR, VLDM, VPOP */
    K_VST,   /* VSTR, VSTM, VPUSH */
    NCLASS
};

static const char *const class_name[NCLASS] = {
    "alu", "imul", "div", "ld", "st", "ldm", "stm", "br", "fp", "fmac", "fdiv", "vld", "vst",
};

#define NCOUNT (2 + 2 * NCLASS)
#define MAX_MARKS 4096
#define MAX_HITS 8192

static uint64_t counters[NCOUNT]; /* insns, cycles, then count and cycles per class */
static unsigned branch_cost = 2, fmac_cost = 3;
static char *out_path;
static FILE *dump;

static struct mark {
    uint64_t addr;
    char *name;
} marks[MAX_MARKS];
static int n_marks;

static struct hit {
    int mark;
    uint64_t v[NCOUNT];
} hits[MAX_HITS];
static int n_hits;
static unsigned long dropped;

/* ---- classification ---------------------------------------------------- */

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_cond(const char *s)
{
    static const char *const cc[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                     "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
    size_t i;
    if (*s == 0)
        return 1;
    for (i = 0; i < sizeof cc / sizeof cc[0]; i++)
        if (strcmp(s, cc[i]) == 0)
            return 1;
    return 0;
}

/* Register number of "r7", "s12", "d3"; the APCS names map to r9..r15. */
static int reg_number(const char *s, char *bank)
{
    static const char *const alias[] = {"sb", "sl", "fp", "ip", "sp", "lr", "pc"};
    size_t i;
    while (*s == ' ')
        s++;
    for (i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (starts(s, alias[i])) {
            *bank = 'r';
            return 9 + (int)i;
        }
    *bank = *s;
    return atoi(s + 1);
}

/* Registers in the {...} list of ops: items separated by commas, each a
 * register or a range "d8-d11". Sets *has_pc and *doubles. */
static int reg_list(const char *ops, int *has_pc, int *doubles)
{
    const char *p = strchr(ops, '{'), *end;
    int n = 0;
    *has_pc = *doubles = 0;
    if (!p || !(end = strchr(p, '}')))
        return 1;
    p++;
    while (p < end) {
        const char *q = p, *dash = NULL;
        char bank = 'r';
        int lo, hi;
        while (q < end && *q != ',') {
            if (*q == '-')
                dash = q;
            q++;
        }
        lo = reg_number(p, &bank);
        hi = dash ? reg_number(dash + 1, &bank) : lo;
        n += hi >= lo ? hi - lo + 1 : 1;
        if (bank == 'd')
            *doubles = 1;
        if (bank == 'r' && lo <= 15 && hi >= 15)
            *has_pc = 1;
        p = q + 1;
    }
    return n ? n : 1;
}

/* Number of top-level operands (commas outside [] and {}) plus one. */
static int n_operands(const char *ops)
{
    int depth = 0, n = *ops ? 1 : 0;
    for (; *ops; ops++) {
        if (*ops == '[' || *ops == '{')
            depth++;
        else if (*ops == ']' || *ops == '}')
            depth--;
        else if (*ops == ',' && depth == 0)
            n++;
    }
    return n;
}

/* Whether the first operand (the destination of a load or data operation)
 * is pc. */
static int dest_is_pc(const char *ops)
{
    return starts(ops, "pc") && (ops[2] == 0 || ops[2] == ',' || ops[2] == ' ');
}

/* Whether the address "[rn, rm...]" has a register offset. */
static int reg_offset(const char *ops)
{
    const char *p = strchr(ops, '[');
    const char *comma = p ? strchr(p, ',') : NULL;
    const char *close = p ? strchr(p, ']') : NULL;
    if (!comma || !close || comma > close)
        return 0;
    comma++;
    while (*comma == ' ')
        comma++;
    return *comma != '#' && *comma != '-';
}

static int is_branch(const char *m)
{
    if (starts(m, "blx"))
        return is_cond(m + 3);
    if (starts(m, "bx") || starts(m, "bl"))
        return is_cond(m + 2) || (starts(m, "bl") && is_cond(m + 1)); /* "ble", "blt", "bls", "blo" */
    if (m[0] == 'b')
        return is_cond(m + 1);
    return starts(m, "cbz") || starts(m, "cbnz");
}

static const char *const imul_prefix[] = {"mul", "mla", "mls", "smul", "smla", "smls", "smmul", "smmla",
                                          "smmls", "smuad", "smusd", "umul", "umla", "umaal"};

/* Cycles of one instruction, from its disassembly "mnemonic operands";
 * the class goes to *cls. Mnemonics are matched by prefix, so condition
 * codes (ldrne), sizes (ldrb) and addressing-mode suffixes (ldmia) need no
 * stripping; width (.w, .n) and data-type suffixes (.f32) are cut off. */
static unsigned cost(const char *text, int *cls)
{
    char m[32];
    const char *ops;
    size_t i = 0;
    unsigned p = branch_cost > 1 ? branch_cost - 1 : 1; /* pipeline refill */
    int has_pc, doubles, n;

    while (*text == ' ' || *text == '\t')
        text++;
    while (text[i] && text[i] != ' ' && text[i] != '\t' && text[i] != '.' && i < sizeof m - 1) {
        m[i] = (char)tolower((unsigned char)text[i]);
        i++;
    }
    m[i] = 0;
    ops = text + i;
    while (*ops && *ops != ' ' && *ops != '\t') /* the rest of ".f32", ".w" */
        ops++;
    while (*ops == ' ' || *ops == '\t')
        ops++;

    if (m[0] == 'v') {
        if (starts(m, "vfma") || starts(m, "vfms") || starts(m, "vfnma") || starts(m, "vfnms") ||
            starts(m, "vmla") || starts(m, "vmls") || starts(m, "vnmla") || starts(m, "vnmls")) {
            *cls = K_FMAC;
            return fmac_cost;
        }
        if (starts(m, "vdiv") || starts(m, "vsqrt")) {
            *cls = K_FDIV;
            return 14;
        }
        if (starts(m, "vldr") || starts(m, "vstr")) {
            *cls = m[1] == 'l' ? K_VLD : K_VST;
            return ops[0] == 'd' ? 3 : 2;
        }
        if (starts(m, "vldm") || starts(m, "vpop") || starts(m, "vstm") || starts(m, "vpush")) {
            *cls = (m[1] == 'l' || starts(m, "vpop")) ? K_VLD : K_VST;
            n = reg_list(ops, &has_pc, &doubles);
            return 1 + (doubles ? 2 * n : n);
        }
        *cls = K_FP;
        if (starts(m, "vmov") && n_operands(ops) >= 3)
            return 2; /* two core registers to or from two S or one D */
        return 1;
    }
    if (is_branch(m)) {
        *cls = K_BR;
        return branch_cost;
    }
    if (starts(m, "tbb") || starts(m, "tbh")) {
        *cls = K_BR;
        return 2 + p;
    }
    if (starts(m, "isb")) {
        *cls = K_BR;
        return 1 + p;
    }
    if (starts(m, "ldrd") || starts(m, "strd")) {
        *cls = m[0] == 'l' ? K_LDM : K_STM;
        return 3;
    }
    if (starts(m, "ldm") || starts(m, "pop")) {
        *cls = K_LDM;
        n = reg_list(ops, &has_pc, &doubles);
        return 1 + n + (has_pc ? p : 0);
    }
    if (starts(m, "stm") || starts(m, "push")) {
        *cls = K_STM;
        return 1 + reg_list(ops, &has_pc, &doubles);
    }
    if (starts(m, "ldr")) {
        *cls = K_LD;
        return 2 + (dest_is_pc(ops) ? p : 0);
    }
    if (starts(m, "str")) {
        *cls = K_ST;
        return reg_offset(ops) ? 2 : 1;
    }
    if (starts(m, "sdiv") || starts(m, "udiv")) {
        *cls = K_DIV;
        return 7;
    }
    for (i = 0; i < sizeof imul_prefix / sizeof imul_prefix[0]; i++)
        if (starts(m, imul_prefix[i])) {
            *cls = K_IMUL;
            return 1;
        }
    if (dest_is_pc(ops) && !starts(m, "cmp") && !starts(m, "cmn") && !starts(m, "tst") &&
        !starts(m, "teq")) {
        *cls = K_BR;
        return 1 + p;
    }
    *cls = K_ALU;
    return 1;
}

/* ---- run time ------------------------------------------------------------ */

static void on_mark(unsigned int vcpu, void *udata)
{
    int k = (int)(intptr_t)udata;
    (void)vcpu;
    if (n_hits > 0 && hits[n_hits - 1].mark == k)
        return;
    if (n_hits == MAX_HITS) {
        dropped++;
        return;
    }
    hits[n_hits].mark = k;
    memcpy(hits[n_hits].v, counters, sizeof counters);
    n_hits++;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    uint64_t cyc = 0, c_n[NCLASS] = {0}, c_y[NCLASS] = {0};
    uint64_t pc = qemu_plugin_tb_vaddr(tb) & ~(uint64_t)1;
    int k;
    (void)id;

    for (i = 0; i < n; i++) {
        char *text = qemu_plugin_insn_disas(qemu_plugin_tb_get_insn(tb, i));
        int cls = K_ALU;
        unsigned y = cost(text ? text : "", &cls);
        if (dump)
            fprintf(dump, "%u %s %s\n", y, class_name[cls], text ? text : "?");
        if (text)
            g_free(text);
        cyc += y;
        c_n[cls]++;
        c_y[cls] += y;
    }
    for (k = 0; k < n_marks; k++)
        if (marks[k].addr == pc)
            qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS,
                                                 (void *)(intptr_t)k);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &counters[0], n);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &counters[1], cyc);
    for (k = 0; k < NCLASS; k++)
        if (c_n[k]) {
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                     &counters[2 + 2 * k], c_n[k]);
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                     &counters[3 + 2 * k], c_y[k]);
        }
}

static void write_counts(FILE *f, const uint64_t *v)
{
    int k;
    for (k = 0; k < NCOUNT; k++)
        fprintf(f, " %llu", (unsigned long long)v[k]);
    fputc('\n', f);
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
    FILE *f = fopen(out_path, "w");
    int k;
    (void)id;
    (void)udata;
    if (dump)
        fclose(dump);
    if (!f) {
        fprintf(stderr, "m4est: cannot write %s\n", out_path);
        return;
    }
    fprintf(f, "m4est 1 branch=%u fmac=%u\nclasses", branch_cost, fmac_cost);
    for (k = 0; k < NCLASS; k++)
        fprintf(f, " %s", class_name[k]);
    fprintf(f, "\ntotal");
    write_counts(f, counters);
    for (k = 0; k < n_hits; k++) {
        fprintf(f, "hit %s", marks[hits[k].mark].name);
        write_counts(f, hits[k].v);
    }
    if (dropped)
        fprintf(f, "dropped %lu\n", dropped);
    fclose(f);
}

/* ---- set-up ---------------------------------------------------------------- */

static int read_marks(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], name[400];
    unsigned long long addr;
    if (!f) {
        fprintf(stderr, "m4est: cannot read %s\n", path);
        return -1;
    }
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%llx %399s", &addr, name) == 2 && n_marks < MAX_MARKS) {
            marks[n_marks].addr = addr & ~1ull;
            marks[n_marks].name = strdup(name);
            n_marks++;
        }
    fclose(f);
    return 0;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv)
{
    int i;
    (void)info;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (starts(a, "out="))
            out_path = strdup(a + 4);
        else if (starts(a, "marks=")) {
            if (read_marks(a + 6))
                return -1;
        } else if (starts(a, "branch="))
            branch_cost = (unsigned)atoi(a + 7);
        else if (starts(a, "fmac="))
            fmac_cost = (unsigned)atoi(a + 5);
        else if (starts(a, "dump=")) {
            if (!(dump = fopen(a + 5, "w"))) {
                fprintf(stderr, "m4est: cannot write %s\n", a + 5);
                return -1;
            }
        } else {
            fprintf(stderr, "m4est: unknown argument %s\n", a);
            return -1;
        }
    }
    if (!out_path) {
        fprintf(stderr, "m4est: out=FILE is required\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
