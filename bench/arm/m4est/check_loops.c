/*
 * check_loops.c: loops of known cost for bench/arm/m4est/check.sh. Each
 * loop runs N and 2N times between calls of the marker functions, both
 * times from region(), so the code around the loop is the same and the
 * difference of the two regions is N iterations exactly. The loop bodies are assembly, so the compiler
 * cannot change them; the cycles per iteration that m4est's table gives
 * are in the comments (branch = 2, fmac = 3) and in check.sh.
 */
#include <stdint.h>

void mark_begin(void) __attribute__((noinline));
void mark_end(void) __attribute__((noinline));
void loop_int(uint32_t n);
void loop_fp(uint32_t n);
void loop_mem(uint32_t n);
int main(void);

volatile uint32_t mark_last;
uint32_t check_buf[16] __attribute__((aligned(8)));

void mark_begin(void)
{
    mark_last = 1u;
}

void mark_end(void)
{
    mark_last = 2u;
}

__asm__(
    ".syntax unified\n"
    ".thumb\n"
    ".text\n"

    /* 14 instructions, 27 cycles: adds 1, mul 1, mla 1, smlad 1, sdiv 7,
     * movs 1, cmp 1, it 1, moveq 1, bl 2, (leaf: push 3, pop with pc 4),
     * subs 1, bne 2. */
    ".global loop_int\n"
    ".thumb_func\n"
    "loop_int:\n"
    "    push {r4, r5, lr}\n"
    "    movs r1, #3\n"
    "1:  adds r1, r1, #1\n"
    "    mul r2, r1, r1\n"
    "    mla r3, r1, r2, r3\n"
    "    smlad r4, r1, r2, r4\n"
    "    sdiv r5, r2, r1\n"
    "    movs r2, #0\n"
    "    cmp r2, #0\n"
    "    it eq\n"
    "    moveq r3, #1\n"
    "    bl leaf\n"
    "    subs r0, r0, #1\n"
    "    bne 1b\n"
    "    pop {r4, r5, pc}\n"
    ".thumb_func\n"
    "leaf:\n"
    "    push {r4, lr}\n"
    "    pop {r4, pc}\n"

    /* 12 instructions, 44 cycles: vfma 3, vmla 3, vadd 1, vmul 1, vdiv 14,
     * vsqrt 14, vmov r<-s 1, vmov s<-r 1, vmov r,r<-d 2, vcvt 1, subs 1,
     * bne 2. */
    ".global loop_fp\n"
    ".thumb_func\n"
    "loop_fp:\n"
    "1:  vfma.f32 s0, s1, s2\n"
    "    vmla.f32 s3, s4, s5\n"
    "    vadd.f32 s6, s6, s7\n"
    "    vmul.f32 s8, s6, s7\n"
    "    vdiv.f32 s9, s1, s2\n"
    "    vsqrt.f32 s10, s2\n"
    "    vmov r1, s0\n"
    "    vmov s11, r1\n"
    "    vmov r1, r2, d0\n"
    "    vcvt.s32.f32 s12, s1\n"
    "    subs r0, r0, #1\n"
    "    bne 1b\n"
    "    bx lr\n"

    /* 18 instructions, 52 cycles: ldr 2, ldrb 2, str #imm 1, movs 1,
     * str register offset 2, ldrd 3, strd 3, ldm 3 registers 4, stm 3
     * registers 4, vldr single 2, vldr double 3, vstr single 2, vldmia 4
     * S registers 5, vstmia 2 D registers 5, vpush 2 D 5, vpop 2 D 5,
     * subs 1, bne 2. */
    ".global loop_mem\n"
    ".thumb_func\n"
    "loop_mem:\n"
    "    push {r4, lr}\n"
    "    movw r1, #:lower16:check_buf\n"
    "    movt r1, #:upper16:check_buf\n"
    "1:  ldr r2, [r1]\n"
    "    ldrb r3, [r1, #1]\n"
    "    str r2, [r1, #4]\n"
    "    movs r3, #8\n"
    "    str r2, [r1, r3]\n"
    "    ldrd r2, r3, [r1, #8]\n"
    "    strd r2, r3, [r1, #16]\n"
    "    ldm r1, {r2, r3, r4}\n"
    "    stm r1, {r2, r3, r4}\n"
    "    vldr s0, [r1]\n"
    "    vldr d1, [r1, #8]\n"
    "    vstr s0, [r1, #24]\n"
    "    vldmia r1, {s4-s7}\n"
    "    vstmia r1, {d2-d3}\n"
    "    vpush {d8, d9}\n"
    "    vpop {d8, d9}\n"
    "    subs r0, r0, #1\n"
    "    bne 1b\n"
    "    pop {r4, pc}\n");

#define N 1000u

/* One region: the same instructions around the loop whatever n is. */
static void __attribute__((noinline)) region(void (*loop)(uint32_t), uint32_t n)
{
    mark_begin();
    loop(n);
    mark_end();
}

int main(void)
{
    region(loop_int, N);
    region(loop_int, 2 * N);
    region(loop_fp, N);
    region(loop_fp, 2 * N);
    region(loop_mem, N);
    region(loop_mem, 2 * N);
    return 0;
}
