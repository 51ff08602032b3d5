#!/usr/bin/env python3
"""Guest instructions executed, from a qemu log written with
-d in_asm,exec,nochain: every translation block's instruction count (from
its in_asm listing) times the number of times it ran (its exec trace
lines; nochain makes qemu log every execution).

    count_insns.py LOG
"""
import collections
import re
import sys


def main():
    size = {}
    cur = None
    runs = collections.Counter()
    insn = re.compile(r"^0x([0-9a-f]+):\s")
    trace = re.compile(r"Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            if line.startswith("IN:") or not line.strip():
                cur = None
                continue
            m = insn.match(line)
            if m:
                if cur is None:
                    cur = int(m.group(1), 16)
                    size[cur] = 0
                size[cur] += 1
                continue
            m = trace.search(line)
            if m:
                runs[int(m.group(1), 16)] += 1
    print(sum(size.get(pc, 0) * n for pc, n in runs.items()))


if __name__ == "__main__":
    main()
