#!/bin/sh
# The packed and 8-bit element types through data-movement operators: builds
# the models of make_models.py into build/types/data/types and runs them as a
# conformance suite (test/conformance/run.sh, host; extra arguments are passed
# on, e.g. --aarch64). Last line: "N passed, N failed".
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$root/build/types/data"
/usr/bin/python3 "$root/test/types/make_models.py" "$root/build/types/data/types" ||
    { echo "types: make_models.py failed"; echo "0 passed, 1 failed"; exit 1; }
TESTDATA="$root/build/types/data" CONFORMANCE_WORK="${CONFORMANCE_WORK:-$root/build/types/work}" \
    exec "$root/test/conformance/run.sh" --suite types "$@"
