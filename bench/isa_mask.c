/*
 * isa_mask.so: run a program as if this x86-64 host had AVX2 but no
 * AVX-512 (bench/run.sh, ORT_ISA=avx2).
 *
 *   cc -std=c99 -O2 -shared -fPIC bench/isa_mask.c -o isa_mask.so
 *   LD_PRELOAD=./isa_mask.so node bench/ort_timer.js ...
 *
 * onnxruntime picks its MLAS kernels from CPUID and has no setting to
 * leave AVX-512 unused, so tvmcc's x86-64-avx2 code on an AVX-512 host
 * would run against onnxruntime's AVX-512 kernels (twice the FLOPs per
 * FMA instruction). Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID,
 * the cpuid_fault flag in /proc/cpuinfo) makes every CPUID instruction of
 * the process raise SIGSEGV; the handler below executes CPUID itself with
 * faulting briefly off, clears the AVX-512 feature bits (and AVX-VNNI,
 * AMX, which no AVX2-only host of the kind has) and steps over the
 * instruction. Faulting is inherited by the threads created later; the
 * constructor runs before main, so onnxruntime's first query already sees
 * the masked bits. A SIGSEGV that is not a CPUID goes to the handler the
 * program installed for it (or the default action): the library's
 * sigaction() keeps its own handler in place and records the program's
 * (node installs one for WebAssembly traps that does not pass CPUID faults
 * on).
 *
 * When the kernel or CPU cannot fault CPUID the library says so on stderr
 * and exits 3: a silently unmasked run would be a wrong figure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

static struct sigaction previous; /* the program's SIGSEGV action */
static int active;

static void cpuid_raw(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

/* Clears what an AVX2-only host does not report. Leaf 7 subleaf 0:
 * EBX AVX512F(16) DQ(17) IFMA(21) PF(26) ER(27) CD(28) BW(30) VL(31);
 * ECX VBMI(1) VBMI2(6) VNNI(11) BITALG(12) VPOPCNTDQ(14); EDX 4VNNIW(2)
 * 4FMAPS(3) VP2INTERSECT(8) AMX-BF16(22) AVX512-FP16(23) AMX-TILE(24)
 * AMX-INT8(25). Subleaf 1: EAX AVX-VNNI(4) AVX512-BF16(5). Leaf 0xD
 * subleaf 0: EAX, the XSAVE components opmask(5), ZMM_Hi256(6),
 * Hi16_ZMM(7), XTILECFG(17), XTILEDATA(18). */
static void mask(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    if (leaf == 7 && sub == 0) {
        r[1] &= ~(UINT32_C(1) << 16 | UINT32_C(1) << 17 | UINT32_C(1) << 21 | UINT32_C(1) << 26 |
                  UINT32_C(1) << 27 | UINT32_C(1) << 28 | UINT32_C(1) << 30 | UINT32_C(1) << 31);
        r[2] &= ~(UINT32_C(1) << 1 | UINT32_C(1) << 6 | UINT32_C(1) << 11 | UINT32_C(1) << 12 |
                  UINT32_C(1) << 14);
        r[3] &= ~(UINT32_C(1) << 2 | UINT32_C(1) << 3 | UINT32_C(1) << 8 | UINT32_C(1) << 22 |
                  UINT32_C(1) << 23 | UINT32_C(1) << 24 | UINT32_C(1) << 25);
    } else if (leaf == 7 && sub == 1) {
        r[0] &= ~(UINT32_C(1) << 4 | UINT32_C(1) << 5);
    } else if (leaf == 0xd && sub == 0) {
        r[0] &= ~(UINT32_C(7) << 5 | UINT32_C(3) << 17);
    }
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
    ucontext_t *uc = uctx;
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)g[REG_RIP];

    if (ip[0] == 0x0f && ip[1] == 0xa2) {
        uint32_t r[4], leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX];
        syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
        cpuid_raw(leaf, sub, r);
        syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
        mask(leaf, sub, r);
        g[REG_RAX] = r[0];
        g[REG_RBX] = r[1];
        g[REG_RCX] = r[2];
        g[REG_RDX] = r[3];
        g[REG_RIP] += 2;
        return;
    }
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uctx);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    signal(SIGSEGV, SIG_DFL); /* the fault repeats and ends the process */
}

/* The program's sigaction: SIGSEGV actions are recorded, not installed,
 * once the CPUID handler is in place. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "sigaction");
    if (sig == SIGSEGV && active) {
        if (old)
            *old = previous;
        if (act)
            previous = *act;
        return 0;
    }
    return real(sig, act, old);
}

__attribute__((constructor)) static void isa_mask_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous) != 0 || syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        fprintf(stderr, "isa_mask: this kernel or CPU cannot fault CPUID (no cpuid_fault): "
                        "AVX-512 cannot be hidden\n");
        exit(3);
    }
    active = 1;
}
