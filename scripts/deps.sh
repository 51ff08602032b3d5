#!/bin/sh
# Checks (and, as root, installs) everything tvmcc's build, demo and tests use.
# Usage: scripts/deps.sh [--simulate] build|test
#   build: compiler toolchain, protobuf-c, ONNX proto, cJSON, python3-onnx (demo)
#   test:  + ONNX backend test data, Cortex-M4 cross toolchain and qemu,
#            aarch64 toolchain and qemu-user, torch/torchvision, debootstrap
#            (test/fresh), onnxruntime-node (npm, into build/node),
#            espeak-ng, sox, imagemagick, fonts-dejavu-core (test/quantize:
#            speech and text images for the trained models),
#            chromium (test/report: renders the HTML report headless)
#   --simulate: install nothing; check with `apt-get install --simulate`
#            that every package of the set resolves from the configured
#            mirrors (as root, after `apt-get update`); exit 1 if one does not.
#            npm packages are not checked in this mode.
set -e
simulate=0
if [ "${1:-}" = --simulate ]; then simulate=1; shift; fi
what=${1:-build}
case $what in
    build|test|bench) ;;
    *) echo "usage: scripts/deps.sh [--simulate] build|test" >&2; exit 2 ;;
esac
pkgs="build-essential protobuf-c-compiler libprotobuf-c-dev libonnx-dev libcjson-dev python3-onnx python3-numpy"
if [ "$what" != build ]; then
    pkgs="$pkgs libonnx-testdata gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm clang libclang-rt-14-dev"
    pkgs="$pkgs python3-torch python3-torchvision qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross debootstrap"
    pkgs="$pkgs espeak-ng sox imagemagick fonts-dejavu-core chromium"
    # node and npm may come from Debian's nodejs/npm or from NodeSource's
    # nodejs; a simulated install checks Debian's
    { [ $simulate = 0 ] && command -v node >/dev/null 2>&1; } || pkgs="$pkgs nodejs"
    { [ $simulate = 0 ] && command -v npm >/dev/null 2>&1; } || pkgs="$pkgs npm"
fi
if [ $simulate = 1 ]; then
    [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    n=$(echo $pkgs | wc -w)
    if out=$(apt-get install --simulate -q --no-install-recommends $pkgs 2>&1); then
        echo "deps: all $n packages of the $what set resolve ($(printf '%s\n' "$out" | grep -c '^Inst ') to install)"
        exit 0
    fi
    echo "deps: the $what set does not resolve:" >&2
    printf '%s\n' "$out" | grep -E '^E:|has no installation candidate|Unable to locate|Depends:' >&2 ||
        printf '%s\n' "$out" | tail -5 >&2
    exit 1
fi
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "deps: installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
    else
        echo "deps: missing packages; run:" >&2
        echo "  sudo apt-get install -y --no-install-recommends$missing" >&2
        exit 1
    fi
fi
if [ "$what" != build ]; then
    here=$(cd "$(dirname "$0")/.." && pwd)
    if [ ! -d "$here/build/node/node_modules/onnxruntime-node" ]; then
        if [ "$(id -u)" = 0 ] || [ -w "$here/build" ]; then
            mkdir -p "$here/build/node"
            echo "deps: installing onnxruntime-node (npm, --ignore-scripts)"
            (cd "$here/build/node" && npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node >/dev/null) ||
                echo "deps: npm install onnxruntime-node failed; tests that need it are skipped" >&2
        else
            echo "deps: run: (mkdir -p build/node && cd build/node && npm install --ignore-scripts onnxruntime-node)" >&2
        fi
    fi
fi
exit 0
