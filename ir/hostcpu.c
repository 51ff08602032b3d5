/*
 * `-t native`: the best embedded target the compiling machine runs.
 *
 * On x86-64 the CPU's features come from cpuid (leaf 1: FMA, OSXSAVE;
 * leaf 7: AVX2, AVX512F/DQ/BW/VL) and the state the operating system saves
 * from xgetbv (XCR0: the ymm state for AVX2, the opmask and zmm states
 * too for AVX-512; a hypervisor or kernel that hides them makes the
 * instructions fault): AVX512F+BW+VL+DQ gives x86-64-avx512, AVX2+FMA
 * x86-64-avx2, anything else x86-64. On AArch64 the `Features` line of
 * /proc/cpuinfo (Linux): asimddp gives aarch64-dotprod, else aarch64.
 * Any other host gets the portable `c` target.
 *
 * Test hook: TVMCC_TEST_CPU_FLAGS in the environment (a space-separated
 * list of /proc/cpuinfo flag names, as test/hostcpu.sh reads it) replaces
 * the detected features: avx512f avx512bw avx512vl avx512dq, avx2 fma,
 * asimddp (and on a host that is neither x86-64 nor AArch64, x86 flags
 * pick an x86 target; an empty list then gives `c`).
 */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define HOST_X86 1
#elif defined(__aarch64__)
#define HOST_AARCH64 1
#endif

enum {
    CPU_AVX2 = 1,
    CPU_FMA = 2,
    CPU_AVX512F = 4,
    CPU_AVX512BW = 8,
    CPU_AVX512VL = 16,
    CPU_AVX512DQ = 32,
    CPU_ASIMDDP = 64,
    CPU_X86 = 128 /* an x86-64 host (or a test list with an x86 flag) */
};

static const struct {
    const char *word;
    int bit;
} cpu_words[] = {
    {"avx2", CPU_AVX2},         {"fma", CPU_FMA},           {"avx512f", CPU_AVX512F},
    {"avx512bw", CPU_AVX512BW}, {"avx512vl", CPU_AVX512VL}, {"avx512dq", CPU_AVX512DQ},
    {"asimddp", CPU_ASIMDDP},   {"sse2", CPU_X86},
};

/* The feature bits of a space-separated word list (a cpuinfo flags or
 * Features line, or the test hook's value). */
static int words_bits(const char *s)
{
    int bits = 0;
    size_t i;
    while (*s) {
        size_t n;
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        n = strcspn(s, " \t\n");
        for (i = 0; i < sizeof cpu_words / sizeof cpu_words[0]; i++)
            if (n == strlen(cpu_words[i].word) && !strncmp(s, cpu_words[i].word, n))
                bits |= cpu_words[i].bit;
        s += n;
    }
    if (bits & (CPU_AVX2 | CPU_FMA | CPU_AVX512F))
        bits |= CPU_X86;
    return bits;
}

#ifdef HOST_X86
static unsigned long long xgetbv0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

static int host_bits(void)
{
    unsigned int a, b, c, d, max;
    unsigned long long xcr0 = 0;
    int bits = CPU_X86;
    max = __get_cpuid_max(0, NULL);
    if (max < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return bits;
    if (c & bit_OSXSAVE)
        xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6) /* the OS does not save xmm and ymm */
        return bits;
    if (c & bit_FMA)
        bits |= CPU_FMA;
    if (max < 7)
        return bits;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & bit_AVX2)
        bits |= CPU_AVX2;
    if ((xcr0 & 0xe0) == 0xe0) { /* opmask, upper zmm halves, zmm16-31 */
        if (b & bit_AVX512F)
            bits |= CPU_AVX512F;
        if (b & bit_AVX512BW)
            bits |= CPU_AVX512BW;
        if (b & bit_AVX512VL)
            bits |= CPU_AVX512VL;
        if (b & bit_AVX512DQ)
            bits |= CPU_AVX512DQ;
    }
    return bits;
}
#elif defined(HOST_AARCH64)
static int host_bits(void)
{
    char line[4096];
    int bits = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Features", 8) && strchr(line, ':')) {
            bits = words_bits(strchr(line, ':') + 1);
            break;
        }
    fclose(f);
    return bits & ~CPU_X86;
}
#else
static int host_bits(void)
{
    return 0;
}
#endif

static const char *name_of(int bits, int aarch64)
{
    const int avx512 = CPU_AVX512F | CPU_AVX512BW | CPU_AVX512VL | CPU_AVX512DQ;
    if (aarch64 && !(bits & CPU_X86))
        return bits & CPU_ASIMDDP ? "aarch64-dotprod" : "aarch64";
    if ((bits & avx512) == avx512)
        return "x86-64-avx512";
    if ((bits & (CPU_AVX2 | CPU_FMA)) == (CPU_AVX2 | CPU_FMA))
        return "x86-64-avx2";
    return bits & CPU_X86 ? "x86-64" : "c";
}

const char *target_native_name(void)
{
    const char *hook = getenv("TVMCC_TEST_CPU_FLAGS");
    int aarch64 = 0;
#ifdef HOST_AARCH64
    aarch64 = 1;
#endif
#ifdef HOST_X86
    if (hook)
        return name_of(words_bits(hook) | CPU_X86, 0);
#endif
    return name_of(hook ? words_bits(hook) : host_bits(), aarch64);
}
