#!/usr/bin/env python3
"""How evenly the L2 slice hash spreads an address pattern, from run_l2_slices.sh's ncu output.

Reads the raw Nsight Compute CSV of h100_l2_slices.cu (one launch per pattern: LINES lines
STRIDE bytes apart from OFFSET, each read 64 times, 4 sectors a read) and prints the slice count
once (sum over avg of lts__t_sectors: ncu's count of slices, the same for every launch; taken from
the single-line launches), then per pattern shape the lines that landed on the busiest slice:
(max - min) / (64 x 4), the min being a slice's background sectors. That overstates the count by
up to about a quarter of a line (the first pass's misses and uneven background), so 6.26 is 6
lines. Beside it, the busiest bin's expected count when the lines fall on the slices at random
(balls in bins, 4000 draws).
Usage: l2_slices.py NCU.txt
"""
import collections
import csv
import random
import statistics
import sys

SECTORS_PER_LINE = 64 * 4


def random_busiest(lines, slices, draws=4000, seed=1):
    rng = random.Random(seed)
    return statistics.mean(
        max(collections.Counter(rng.randrange(slices) for _ in range(lines)).values()) for _ in range(draws))


def read(path):
    """(lines, stride, offset, avg, max, min, sum) per launch, in launch order."""
    text = open(path).read().splitlines()
    patterns = [tuple(int(v) for v in l.split(",")[2:5]) for l in text if l.startswith("pattern,")]
    rows = list(csv.reader(l for l in text if l.startswith('"')))
    header, values = rows[0], rows[2:]  # rows[1]: the units
    col = {h: header.index("lts__t_sectors." + h) for h in ("avg", "max", "min", "sum")}
    num = lambda v: float(v.replace(",", ""))
    if len(patterns) != len(values):
        sys.exit(f"{path}: {len(patterns)} pattern lines but {len(values)} profiled launches")
    return [p + tuple(num(r[col[h]]) for h in ("avg", "max", "min", "sum")) for p, r in zip(patterns, values)]


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    launches = read(argv[1])
    slices = round(statistics.median(s / a for lines, _, _, a, _, _, s in launches if lines == 1))
    print(f"slices: {slices}")
    shapes = collections.defaultdict(list)
    for lines, stride, _, avg, mx, mn, _ in launches:
        if lines > 1:
            shapes[(lines, stride)].append((mx - mn) / SECTORS_PER_LINE)
    print("lines,stride_bytes,launches,busiest_slice_lines_mean,min,max,random_hash_expected")
    for (lines, stride), busiest in sorted(shapes.items()):
        print(f"{lines},{stride},{len(busiest)},{statistics.mean(busiest):.2f},{min(busiest):.2f},{max(busiest):.2f},"
              f"{random_busiest(lines, slices):.2f}")


if __name__ == "__main__":
    main(sys.argv)
