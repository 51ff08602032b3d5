#!/usr/bin/env bash
# bench/arm/m4est/check.sh: validates the m4est plugin on loops of known
# cost (check_loops.c): per loop, the difference between the 2N- and the
# N-iteration regions must be N x the instructions and cycles per iteration
# that the cost table in bench/arm/README.md gives, with the default costs
# (branch=2, fmac=3) and with branch=3,fmac=2. Prints one line per check and
# exits nonzero on a mismatch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${BENCH_WORK:-$root/build/bench-arm}/m4est-check
A="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
mkdir -p "$work"
gcc -O2 -std=c99 -Wall -Wextra -fPIC -fvisibility=hidden -shared -o "$work/m4est.so" "$here/m4est.c" || exit 1
arm-none-eabi-gcc $A -O2 -std=c99 -Wall -c "$here/check_loops.c" -o "$work/check_loops.o" &&
arm-none-eabi-gcc $A -O2 -c "$root/test/arm/startup.c" -o "$work/startup.o" &&
arm-none-eabi-gcc $A "$work"/check_loops.o "$work"/startup.o --specs=rdimon.specs -nostartfiles \
    -T "$root/test/arm/mps2-an386.ld" -o "$work/check.elf" || exit 1
arm-none-eabi-nm "$work/check.elf" | awk '$3 == "mark_begin" || $3 == "mark_end" { print $1, $3 }' > "$work/marks.txt"

status=0
# check ARGS "INSNS CYCLES per iteration: int fp mem"
check() {
    local args=$1 want=$2
    timeout 60 qemu-system-arm -M mps2-an386 -icount shift=0 -nographic -monitor none \
        -semihosting-config enable=on,target=native -kernel "$work/check.elf" \
        -plugin "$work/m4est.so,out=$work/out.txt,marks=$work/marks.txt${args:+,$args}" > "$work/run.log" 2>&1 ||
        { echo "FAIL qemu: $(head -1 "$work/run.log")"; status=1; return; }
    awk -v want="$want" -v args="${args:-defaults}" '
        $1 == "hit" { n++; i[n] = $3; c[n] = $4 }
        END {
            split(want, w, " ")
            split("int fp mem", name, " ")
            bad = 0
            for (k = 0; k < 3; k++) {
                # regions: (2k+1, 2k+2) is N iterations, (2k+3, 2k+4) is 2N
                b1 = 4 * k + 1
                di = (i[b1 + 3] - i[b1 + 2]) - (i[b1 + 1] - i[b1])
                dc = (c[b1 + 3] - c[b1 + 2]) - (c[b1 + 1] - c[b1])
                ok = (di == 1000 * w[2 * k + 1] && dc == 1000 * w[2 * k + 2])
                printf "%s %-4s %-18s 1000 iterations: %d insns, %d cycles (want %d, %d)\n",
                    ok ? "ok  " : "FAIL", name[k + 1], args, di, dc, 1000 * w[2 * k + 1], 1000 * w[2 * k + 2]
                if (!ok) bad = 1
            }
            exit bad
        }' "$work/out.txt" || status=1
}

check "" "14 27 12 44 18 52"
# branch=3: 3 branches (bl, pop pc has P = 2 now: +1 each) + bne; fmac=2: 2 fewer on fp.
check "branch=3,fmac=2" "14 30 12 43 18 53"
exit $status
