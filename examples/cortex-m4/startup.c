/*
 * startup.c: reset and exception vectors for a Cortex-M4F with no operating
 * system, as on qemu's mps2-an386 board.
 *
 * The core reads the first two words of the vector table (placed at address 0
 * by mps2-an386.ld) for its initial stack pointer and its reset address. The
 * reset handler prepares C (initialised data copied from flash, zeroed .bss,
 * the FPU switched on because the code is built with -mfloat-abi=hard), calls
 * main and hands main's return value to the debugger through the Arm
 * semihosting interface, which makes qemu exit with that status.
 *
 * printf reaches the host through newlib's librdimon (--specs=rdimon.specs),
 * which also speaks semihosting; on a board without a debugger attached,
 * replace it with a UART driver and drop semihost_exit.
 */
#include <stdint.h>

int main(void);
void initialise_monitor_handles(void);
void reset_handler(void);

/* Defined by the linker script. */
extern uint32_t __etext_data[], __sdata[], __edata[], __sbss[], __ebss[];
extern uint32_t __stack_top[];

/* Semihosting call: operation in r0, parameter block in r1, BKPT 0xAB. */
static int semihost_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* SYS_EXIT_EXTENDED (0x20) with reason ADP_Stopped_ApplicationExit carries
 * an exit code that qemu passes on as its own exit status. */
static void __attribute__((noreturn)) semihost_exit(int status)
{
    uint32_t block[2] = { 0x20026u, (uint32_t)status };
    semihost_call(0x20, block);
    for (;;)
        ;
}

static void fault(void)
{
    semihost_call(0x04, "fault\n"); /* SYS_WRITE0 */
    semihost_exit(3);
}

void reset_handler(void)
{
    const uint32_t *from = __etext_data;
    uint32_t *to;

    for (to = __sdata; to < __edata;)
        *to++ = *from++;
    for (to = __sbss; to < __ebss;)
        *to++ = 0;
    /* Coprocessor access control: full access to CP10/CP11 (the FPU). */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");

    initialise_monitor_handles();
    semihost_exit(main());
}

typedef void (*Handler)(void);

/* The 16 system exceptions; the board's interrupts stay disabled. */
__attribute__((section(".isr_vector"), used))
const Handler vectors[16] = {
    (Handler)__stack_top, reset_handler,
    fault, fault, fault, fault, fault,      /* NMI, HardFault, MemManage, Bus, Usage */
    0, 0, 0, 0,
    fault, fault, 0, fault, fault,          /* SVC, DebugMon, -, PendSV, SysTick */
};
