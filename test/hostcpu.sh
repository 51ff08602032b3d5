# Sourced by the test scripts that depend on the host CPU's extensions.
# host_has FLAG: true when the host CPU lists FLAG in /proc/cpuinfo, or,
# when $TVMCC_TEST_CPU_FLAGS is set, when that list of words has it (to try
# the paths for a host without some extension on one that has it, e.g.
# TVMCC_TEST_CPU_FLAGS="sse2 avx avx2 fma" for an AVX2-only host).
host_has() {
    if [ -n "${TVMCC_TEST_CPU_FLAGS+set}" ]; then
        case " $TVMCC_TEST_CPU_FLAGS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
    fi
    grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw -- "$1"
}
