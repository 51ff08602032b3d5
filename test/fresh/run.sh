#!/usr/bin/env bash
# The README's promise on a fresh machine: Debian 12 (debootstrap
# --variant=minbase bookworm) with nothing but git and make, as root, in
# which `make demo` must install what it needs and pass.
#
#   test/fresh/run.sh [--rev REV] [--keep]
#     --rev REV  the commit to test (default HEAD; `git archive REV`)
#     --keep     keep the root in build/fresh/root afterwards
#
# Checks, in one root under build/fresh/:
#   1. as an unprivileged user, `make demo` stops before building anything
#      and prints the exact `sudo apt-get install` command;
#   2. as root, `make demo` installs the build set and prints the demo's
#      success line ("demo: output matches the expected values");
#   3. `scripts/deps.sh --simulate test`: every package of the test set
#      resolves from the mirror (`apt-get install --simulate`). Installing
#      the whole set (torch, qemu, two cross toolchains, the test data:
#      about 2 GB) would add minutes to every CI run for what the simulation
#      already proves: that each name exists and its dependencies resolve.
# The minbase root with git and make is cached in build/fresh/base.tar
# (deleted by `make clean`); everything after it is made anew each run.
# Needs root and debootstrap; without either it prints SKIP with the
# reason. The mirror is the first Debian URI in apt's sources (override:
# FRESH_MIRROR). Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rev=HEAD keep=0
while [ $# -gt 0 ]; do
    case $1 in
        --rev) rev=${2:?}; shift ;;
        --keep) keep=1 ;;
        *) echo "usage: test/fresh/run.sh [--rev REV] [--keep]" >&2; exit 2 ;;
    esac
    shift
done
pass=0 failed=0
ok() { echo "PASS fresh: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL fresh: $1"; failed=$((failed + 1)); }
finish() { echo "$pass passed, $failed failed"; [ $failed = 0 ]; exit $?; }
skip() { echo "SKIP fresh: $1"; echo "0 passed, 0 failed"; exit 0; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap and chroot)"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] ||
    skip "debootstrap is not installed (scripts/deps.sh test installs it)"
PATH=$PATH:/usr/sbin:/sbin
command -v git >/dev/null 2>&1 || skip "git is not installed"
git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null || { bad "no commit $rev in $root"; finish; }

mirror=${FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" && $0 ~ /debian/ && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }')
fi
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '$1 == "URIs:" && $2 ~ /debian/ && $2 !~ /security/ { print $2; exit }')
fi
mirror=${mirror:-http://deb.debian.org/debian}

work=$root/build/fresh
r=$work/root
mkdir -p "$work"
log=$work/log
: > "$log"

unmount_all() {
    local m
    for m in "$r/proc" "$r/dev/pts" "$r/dev"; do
        mountpoint -q "$m" 2>/dev/null && umount -l "$m"
    done
    return 0
}
cleanup() {
    unmount_all
    # --one-file-system: never into a mount that failed to come off
    [ $keep = 1 ] || rm -rf --one-file-system "$r"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

unmount_all
rm -rf --one-file-system "$r"

# 0. The base: minbase plus git and make, cached.
if [ ! -s "$work/base.tar" ]; then
    echo "fresh: debootstrap --variant=minbase bookworm from $mirror (log: $log)"
    if ! debootstrap --variant=minbase bookworm "$r" "$mirror" >>"$log" 2>&1; then
        bad "debootstrap failed: $(tail -1 "$log")"
        finish
    fi
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null
    mount -t proc proc "$r/proc"
    if ! chroot "$r" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q --no-install-recommends git make' >>"$log" 2>&1; then
        bad "apt-get install git make in the fresh root failed: $(tail -1 "$log")"
        finish
    fi
    chroot "$r" apt-get clean >>"$log" 2>&1
    umount -l "$r/proc"
    tar -C "$r" -cf "$work/base.tar.tmp" . && mv "$work/base.tar.tmp" "$work/base.tar"
    rm -rf --one-file-system "$r"
fi
mkdir -p "$r"
tar -C "$r" -xf "$work/base.tar" || { bad "cannot unpack $work/base.tar"; finish; }
cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null
mount -t proc proc "$r/proc"
# /dev from debootstrap holds the basic nodes; where they could not be made
# (a container without mknod), the host's /dev is bound instead.
[ -c "$r/dev/null" ] || mount --bind /dev "$r/dev"
for p in python3 gcc protoc-c; do
    if chroot "$r" sh -c "command -v $p" >/dev/null 2>&1; then
        bad "the base root already has $p: it is not a fresh machine"
        finish
    fi
done

src=/root/tvmcc
mkdir -p "$r$src"
git -C "$root" archive "$rev" | tar -x -C "$r$src" || { bad "git archive $rev failed"; finish; }
echo "fresh: $(git -C "$root" rev-parse --short "$rev") in a minbase bookworm root with git and make"

# 1. As another user: the exact install command, and no build.
chroot "$r" useradd -m fresh >>"$log" 2>&1
cp -a "$r$src" "$r/home/fresh/tvmcc" && chroot "$r" chown -R fresh "/home/fresh/tvmcc"
ids="$(chroot "$r" id -u fresh):$(chroot "$r" id -g fresh)"
out=$(chroot --userspec="$ids" "$r" /usr/bin/env HOME=/home/fresh /bin/sh -c 'cd /home/fresh/tvmcc && make demo' 2>&1)
rc=$?
printf '%s\n' "$out" >> "$log"
if [ $rc = 0 ]; then
    bad "make demo as a user without the packages succeeded"
elif ! printf '%s\n' "$out" | grep -q '^  sudo apt-get install -y --no-install-recommends.* libonnx-dev'; then
    bad "make demo as a user does not print the install command: $(printf '%s\n' "$out" | tail -1)"
elif [ -e "$r/home/fresh/tvmcc/tvmcc" ] || [ -d "$r/home/fresh/tvmcc/build/gen" ]; then
    bad "make demo as a user built something before stopping"
else
    ok "as a user, make demo prints the install command and stops"
fi

# 2. As root: make demo installs the build set and passes.
start=$(date +%s)
out=$(chroot "$r" /usr/bin/env HOME=/root /bin/sh -c "cd $src && make demo" 2>&1)
rc=$?
printf '%s\n' "$out" >> "$log"
if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^demo: output matches the expected values'; then
    ok "as root, make demo installs the build set and passes ($(( $(date +%s) - start )) s)"
else
    bad "as root, make demo (exit $rc): $(printf '%s\n' "$out" | tail -1)"
    printf '%s\n' "$out" | tail -15 | sed 's/^/    /'
fi

# 3. The test set resolves.
out=$(chroot "$r" /usr/bin/env HOME=/root /bin/sh -c "cd $src && scripts/deps.sh --simulate test" 2>&1)
rc=$?
printf '%s\n' "$out" >> "$log"
if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^deps: all [0-9]* packages of the test set resolve'; then
    ok "scripts/deps.sh --simulate test: $(printf '%s\n' "$out" | tail -1 | sed 's/^deps: //')"
else
    bad "the test set does not resolve: $(printf '%s\n' "$out" | tr '\n' ' ' | cut -c1-300)"
fi
finish
