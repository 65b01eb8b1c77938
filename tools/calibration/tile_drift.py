#!/usr/bin/env python3
"""How far apart in time a persistent GEMM's CTAs run, from a tile log.

Reads the CSV that `gemm_sm90_twin --tile-log FILE` writes on hardware, or that
`bwsim run gemm_sm90 --tile-log FILE` writes (same columns: cta,smid,j,tile,m,n,start_ns,
start_cycles, times from the first tile's start), and prints per file:
  - the interval between a CTA's consecutive tile starts (p10 / median / p90, cycles) and the
    spread of the CTAs' mean intervals (min, max, coefficient of variation);
  - for the CTAs that read the same A tile (same m) in the same round of the schedule, how far
    apart they start it (median |difference|, cycles) at a few tile indices j;
  - the time since the previous read of the same A tile (m), per tile start: the share within
    1000 cycles (it can join that read's fill in flight) and within 10000 (an L2 hit unless the
    line was evicted since).
Usage: tile_drift.py LOG.csv [LOG.csv ...]
"""
import csv
import statistics
import sys
from collections import defaultdict


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def summarize(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    starts = defaultdict(dict)  # cta -> j -> (cycle, m)
    for r in rows:
        starts[int(r["cta"])][int(r["j"])] = (int(r["start_cycles"]), int(r["m"]))
    intervals, means = [], []
    for seq in starts.values():
        times = [seq[j][0] for j in sorted(seq)]
        gaps = [b - a for a, b in zip(times, times[1:])]
        intervals += gaps
        if gaps:
            means.append(statistics.mean(gaps))
    intervals.sort()
    print(f"{path}: {len(rows)} tiles over {len(starts)} CTAs")
    if intervals:
        cv = statistics.pstdev(means) / statistics.mean(means)
        print(f"  tile interval p10 {quantile(intervals, 0.1)} median {quantile(intervals, 0.5)} "
              f"p90 {quantile(intervals, 0.9)}; CTA means {min(means):.0f}..{max(means):.0f} (cv {cv:.3f})")
    # Readers of one A tile in one round: CTAs whose j-th tiles share m.
    line = []
    for j in (1, 2, 5, 10, 20, 30):
        by_m = defaultdict(list)
        for seq in starts.values():
            if j in seq:
                by_m[seq[j][1]].append(seq[j][0])
        diffs = [abs(t - ts[0]) for ts in by_m.values() if len(ts) > 1 for t in ts[1:]]
        if diffs:
            line.append(f"j={j}: {statistics.median(diffs):.0f}")
    if line:
        print("  same A tile, same round, |start difference| median: " + ", ".join(line))
    reads = defaultdict(list)
    for seq in starts.values():
        for cycle, m in seq.values():
            reads[m].append(cycle)
    since = []
    for times in reads.values():
        times.sort()
        since += [b - a for a, b in zip(times, times[1:])]
    if since:
        near = sum(1 for s in since if s < 1000) / len(since)
        warm = sum(1 for s in since if s < 10000) / len(since)
        print(f"  A tile read again: {near:.0%} within 1000 cycles of its previous read, {warm:.0%} within 10000")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        summarize(p)
