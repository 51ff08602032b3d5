/*
 * Bare-metal start-up for Cortex-M4 (qemu -M mps2-an386) used by the tests;
 * the same file serves the M7 (mps2-an500), M0 (mps2-an385) and M55 builds.
 *
 * Holds the vector table, the reset handler and the few semihosting calls
 * newlib does not make for us: the reset handler copies .data from its load
 * address, zeroes .bss, enables the FPU (the code is built with
 * -mfloat-abi=hard), opens the semihosting stdio handles, fetches the command
 * line qemu was given with -semihosting-config ...,arg=..., splits it on
 * spaces into argv, calls main and reports main's status to qemu with
 * SYS_EXIT_EXTENDED so that qemu's own exit status is main's.
 *
 * File I/O (fopen/fread/fwrite) goes through newlib's librdimon, which turns
 * it into semihosting calls that qemu performs on the host (target=native),
 * relative to qemu's working directory. Arguments therefore cannot contain
 * spaces; the test scripts pass short relative paths.
 *
 * Symbols come from mps2-an386.ld. Built without -pedantic: the vector table
 * stores the initial stack pointer as a function pointer, as the hardware
 * expects.
 */
#include <stdio.h>
#include <stddef.h>
#include <errno.h>

int main(int argc, char **argv);
void initialise_monitor_handles(void);
void reset_handler(void);
void *_sbrk(ptrdiff_t incr);

extern unsigned int __data_load[], __data_start[], __data_end[];
extern unsigned int __bss_start__[], __bss_end__[];
extern unsigned int __stack_top[];
extern char __heap_start[], __heap_end[];

#define SYS_WRITE0         0x04
#define SYS_GET_CMDLINE    0x15
#define SYS_EXIT           0x18
#define SYS_EXIT_EXTENDED  0x20
#define ADP_APPLICATION_EXIT 0x20026

#define CPACR (*(volatile unsigned int *)0xE000ED88u)

#define MAX_ARGS 64
#define CMDLINE_BYTES 4096

/* One semihosting request: r0 = operation, r1 = argument; result in r0. */
static int semihost(int op, void *arg)
{
    register int r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* Ends the simulation with status code; never returns. */
static void __attribute__((noreturn)) semihost_exit(int code)
{
    unsigned int block[2];
    block[0] = ADP_APPLICATION_EXIT;
    block[1] = (unsigned int)code;
    semihost(SYS_EXIT_EXTENDED, block);
    /* Older hosts: plain SYS_EXIT can only say success or failure. */
    semihost(SYS_EXIT, (void *)(code == 0 ? ADP_APPLICATION_EXIT : 0x20023));
    for (;;)
        ;
}

/* Any fault ends the run with a message rather than hanging the test. */
static void fault_handler(void)
{
    semihost(SYS_WRITE0, (void *)"arm: fault exception\n");
    semihost_exit(3);
}

/* Splits the semihosting command line into argv; argv[0] is qemu's program
 * name (the -kernel path) when qemu supplies one. */
static int get_args(char **argv)
{
    static char line[CMDLINE_BYTES];
    struct { char *buf; int len; } block;
    int argc = 0;
    char *p;

    block.buf = line;
    block.len = CMDLINE_BYTES - 1;
    if (semihost(SYS_GET_CMDLINE, &block) != 0)
        line[0] = '\0';
    line[CMDLINE_BYTES - 1] = '\0';
    for (p = line; *p && argc < MAX_ARGS;) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        argv[argc++] = p;
        while (*p && *p != ' ')
            p++;
    }
    if (argc == 0)
        argv[argc++] = "driver";
    argv[argc] = NULL;
    return argc;
}

void reset_handler(void)
{
    static char *argv[MAX_ARGS + 1];
    unsigned int *src, *dst;
    int argc, rc;

    for (src = __data_load, dst = __data_start; dst < __data_end;)
        *dst++ = *src++;
    for (dst = __bss_start__; dst < __bss_end__;)
        *dst++ = 0;
#if defined(__ARM_FP)
    /* CP10 and CP11 full access; barriers so the next FP instruction sees it.
     * Soft-float builds (Cortex-M0) leave CPACR alone. */
    CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif

    initialise_monitor_handles();
    argc = get_args(argv);
    rc = main(argc, argv);
    fflush(NULL);
    semihost_exit(rc);
}

/* newlib's heap: from the end of .bss in PSRAM up to __heap_end. Replaces
 * librdimon's weak _sbrk, which compares against the stack pointer and the
 * stack lives in another memory here. */
void *_sbrk(ptrdiff_t incr)
{
    static char *brk = __heap_start;
    char *old = brk;

    if (incr > __heap_end - brk || incr < __heap_start - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    brk += incr;
    return old;
}

typedef void (*Vector)(void);

/* A program that counts time with SysTick (bench/arm) defines its own
 * systick_handler; otherwise a SysTick exception is a fault like the rest. */
void systick_handler(void) __attribute__((weak, alias("fault_handler")));

/* Cortex-M4 core exceptions; the board's interrupts are never enabled. */
__attribute__((section(".vectors"), used))
const Vector vector_table[16] = {
    (Vector)__stack_top,  /* initial main stack pointer */
    reset_handler,
    fault_handler,        /* NMI */
    fault_handler,        /* HardFault */
    fault_handler,        /* MemManage */
    fault_handler,        /* BusFault */
    fault_handler,        /* UsageFault */
    0, 0, 0, 0,
    fault_handler,        /* SVCall */
    fault_handler,        /* DebugMonitor */
    0,
    fault_handler,        /* PendSV */
    systick_handler,      /* SysTick */
};
