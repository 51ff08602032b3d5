"""The pass/fail loop the model test scripts share.

run_cases(items, check, tag) calls check(item) for every item: None is a
pass, a string the reason of a failure, a Skipped the pass of the part that
could run here with the reason the rest could not (say, an AVX-512 build
checked on a host that cannot run it), and an exception a failure with its
type and message (a broken case is a failure, not a crash). It prints
"PASS TAG" or "FAIL TAG: WHY" per item, "SKIP TAG: WHY" after the PASS of a
Skipped one (test/run_all.sh lists every SKIP line in its summary), then
"N passed, N failed", and returns the exit status (0 when nothing failed).

host_cpu_flags() is the host's /proc/cpuinfo flags, or the words of
$TVMCC_TEST_CPU_FLAGS when set, so that the paths for a host without some
extension can be tried on one that has it.
"""
import os
import subprocess


class Skipped(str):
    """What a check returns when it passed what it could and skipped the
    rest; the string is the reason."""


def host_cpu_flags():
    forced = os.environ.get("TVMCC_TEST_CPU_FLAGS")
    if forced is not None:
        return set(forced.split())
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def run_cases(items, check, tag):
    passed = failed = 0
    for item in items:
        try:
            why = check(item)
        except Exception as e:
            why = "%s: %s" % (type(e).__name__, e)
        if why is None or isinstance(why, Skipped):
            print("PASS " + tag(item), flush=True)
            if why is not None:
                print("SKIP %s: %s" % (tag(item), why), flush=True)
            passed += 1
        else:
            print("FAIL %s: %s" % (tag(item), why), flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def run(cmd, log, timeout, cwd=None):
    """Runs cmd with stdout and stderr into log (and returned): (ok, text)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        with open(log, "w") as f:
            f.write("timed out after %d s\n" % timeout)
        return False, "timed out after %d s" % timeout
    text = p.stdout.decode("utf-8", "replace")
    with open(log, "w") as f:
        f.write(text)
    return p.returncode == 0, text
