#!/bin/sh
# A `tvmcc verify --runner` command (docs/user-guide.md, "The runner
# contract") that runs the program under qemu, as tvmcc verify itself does:
#
#   qemu_runner.sh PROGRAM INPUT_DIR OUTPUT_DIR
#
# PROGRAM reads INPUT_DIR/input_K.bin and writes OUTPUT_DIR/output_K.bin and
# OUTPUT_DIR/measure.txt. TVMCC_TARGET names the target: cortex-m0/m4/m7 run
# on qemu-system-arm's mps2 boards with semihosting (file I/O on the host;
# the paths must not contain spaces), aarch64 under qemu-aarch64, anything
# else natively. The exit status is the program's (qemu passes it on).
# test/verify/run.sh tests the contract with it; a runner for a board would
# flash PROGRAM (or build its own firmware from TVMCC_MODEL_DIR), send the
# input bytes and write the outputs it reads back.
set -u
prog=$1 in=$2 out=$3
runs=${TVMCC_RUNS:-1}
case ${TVMCC_TARGET:-c} in
    cortex-m4) machine=mps2-an386 ;;
    cortex-m7) machine=mps2-an500 ;;
    cortex-m0) machine=mps2-an385 ;;
    aarch64) exec qemu-aarch64 "$prog" "$in" "$out" "$runs" ;;
    *) exec "$prog" "$in" "$out" "$runs" ;;
esac
exec qemu-system-arm -M "$machine" -icount shift=0 -nographic -monitor none \
    -semihosting-config "enable=on,target=native,arg=driver,arg=$in,arg=$out,arg=$runs" \
    -kernel "$prog"
