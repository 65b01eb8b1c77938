#!/usr/bin/env python3
"""Where a 2-stage ring's k-block goes, from h100_stage_parts.cu's per-k-block trace.

Reads the .csv.gz files that run_stage_parts_lean.sh writes (variant,lean,sms,cta,k,issue,done0,
done1: clock64 from each CTA's start) and prints per variant and SM count, over CTAs 0-15 and
k-blocks 8..246:
  - the cycles per k-block (the median CTA's, issue 8 to issue 247);
  - the median latency of an even and an odd k-block's stage (issue to the later of its barriers'
    completions as the observer warps saw them);
  - what the issuing thread took between a stage's completion and its next load: k-block k + 1 is
    issued once stage k has completed and the 1024-cycle MMA clock of k - 1 has run out
    (issue(k) + 1024), so when the completion came last (by over 100 cycles) the gap is issue(k + 1)
    minus the completion ("after a wait"), and when the clock did, issue(k + 1) minus
    issue(k) + 1024 ("after the clock"); the median and the count of each.
Usage: stage_parts_trace.py TRACE.csv.gz [TRACE.csv.gz ...]
"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def median(values):
    return round(statistics.median(values)) if values else "-"


def summarize(path):
    runs = defaultdict(dict)  # (variant, sms, cta) -> k -> (issue, stage done)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            done = max(int(r["done0"]), int(r["done1"]))
            runs[(r["variant"], int(r["sms"]), int(r["cta"]))][int(r["k"])] = (int(r["issue"]), done)
    print(path)
    print(f"  {'variant':8} {'SMs':>4} {'per k-block':>11} {'even':>6} {'odd':>6} {'after a wait (n)':>17} {'after the clock (n)':>20}")
    for variant, sms in sorted({(v, s) for v, s, _ in runs}):
        per, latency, after_wait, after_clock = [], ([], []), [], []
        for (v, s, _), t in runs.items():
            if (v, s) != (variant, sms):
                continue
            per.append((t[247][0] - t[8][0]) / 239)
            for k in range(8, 247):
                issue, done = t[k]
                latency[k % 2].append(done - issue)
                clock = issue + 1024
                if done > clock + 100:
                    after_wait.append(t[k + 1][0] - done)
                elif clock > done + 100:
                    after_clock.append(t[k + 1][0] - clock)
        print(f"  {variant:8} {sms:>4} {median(per):>11} {median(latency[0]):>6} {median(latency[1]):>6} "
              f"{str(median(after_wait)) + ' (' + str(len(after_wait)) + ')':>17} "
              f"{str(median(after_clock)) + ' (' + str(len(after_clock)) + ')':>20}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for trace in sys.argv[1:]:
        summarize(trace)
