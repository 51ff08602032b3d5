"""The pass/fail loop the model test scripts share.

run_cases(items, check, tag) calls check(item) for every item: None is a
pass, a string the reason of a failure, and an exception a failure with its
type and message (a broken case is a failure, not a crash). It prints
"PASS TAG" or "FAIL TAG: WHY" per item, then "N passed, N failed", and
returns the exit status (0 when nothing failed).
"""


def run_cases(items, check, tag):
    passed = failed = 0
    for item in items:
        try:
            why = check(item)
        except Exception as e:
            why = "%s: %s" % (type(e).__name__, e)
        if why is None:
            print("PASS " + tag(item), flush=True)
            passed += 1
        else:
            print("FAIL %s: %s" % (tag(item), why), flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1
