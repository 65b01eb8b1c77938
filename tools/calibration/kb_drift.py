#!/usr/bin/env python3
"""kb_drift.py MAP.csv LOG.csv [LOG.csv ...]: do a GPC's SMs keep one pace, k-block by k-block?

LOG: a k-block tile log (--kb-log 1, as kb_joins.py reads); MAP: its machine's GPC map. For each CTA
c and c + 2 (another TPC) on SMs of one GPC, the difference of their k-th issue times over the run:
its slope (cycles per k-block, a least-squares fit: a steady difference of pace), the standard
deviation of its steps (k-block to k-block jitter) and its median size. Prints per LOG the median
k-block interval, the CTAs' mean intervals' coefficient of variation and the medians of the three
over the pairs.
"""
import statistics
import sys
from collections import defaultdict

from tile_drift import read_csv, read_gpc_map


def issue_times(rows):
    """cta -> (smid, issue times in run order: tile j's k-blocks, tile by tile)."""
    k_blocks = max(int(r["kb"]) for r in rows) + 1
    times, sm = defaultdict(dict), {}
    for r in rows:
        cta = int(r["cta"])
        sm[cta] = int(r["smid"])
        times[cta][int(r["j"]) * k_blocks + int(r["kb"])] = float(r["start_cycles"])
    return {c: (sm[c], [t[k] for k in sorted(t)]) for c, t in times.items()}


def slope(values):
    xs = range(len(values))
    mx, my = (len(values) - 1) / 2, statistics.mean(values)
    return sum((x - mx) * (y - my) for x, y in zip(xs, values)) / sum((x - mx) ** 2 for x in xs)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    gpc_of = read_gpc_map(argv[1])
    for path in argv[2:]:
        ctas = issue_times(read_csv(path))
        intervals = [b - a for _, t in ctas.values() for a, b in zip(t, t[1:])]
        means = [(t[-1] - t[0]) / (len(t) - 1) for _, t in ctas.values()]
        slopes, steps, sizes = [], [], []
        for c, (sm, t) in ctas.items():
            if c + 2 not in ctas or gpc_of.get(sm) != gpc_of.get(ctas[c + 2][0]):
                continue
            d = [b - a for a, b in zip(t, ctas[c + 2][1])]
            slopes.append(abs(slope(d)))
            steps.append(statistics.pstdev([y - x for x, y in zip(d, d[1:])]))
            sizes.append(statistics.median(abs(x) for x in d))
        if not slopes:
            print(f"{path}: no pair of CTAs c, c + 2 on one GPC")
            continue
        print(f"{path}: k-block interval median {statistics.median(intervals):.0f} cycles, CTA mean intervals cv "
              f"{statistics.pstdev(means) / statistics.mean(means):.3f}; pairs c, c + 2 in a GPC ({len(slopes)}): "
              f"|slope| {statistics.median(slopes):.1f} cycles per k-block, step sd {statistics.median(steps):.0f}, "
              f"|difference| {statistics.median(sizes):.0f} (medians)")


if __name__ == "__main__":
    main(sys.argv)
