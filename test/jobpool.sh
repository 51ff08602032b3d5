# Sourced by the bash test scripts that run independent commands side by
# side (test/quantize/run.sh, test/quantize/trained.sh,
# test/qdq/build_targets.sh): at most N at a time, in the background.
#
#   . test/jobpool.sh
#   pool_size N          # how many at once (default: the number of CPUs)
#   pool_run CMD ARG...  # starts CMD ARG... when fewer than N are running
#   pool_wait            # waits for all of them
#
# A pooled command runs in a subshell: it reports through the files it
# writes, never through the caller's variables; the caller checks those
# files after pool_wait, in its own order, so the output does not depend
# on which job ended first. Needs bash (wait -n).
pool_max=$(nproc 2>/dev/null || echo 2)
pool_size() { pool_max=$1; }
pool_run() {
    while [ "$(jobs -rp | wc -l)" -ge "$pool_max" ]; do
        wait -n
    done
    "$@" &
}
pool_wait() { wait; }
