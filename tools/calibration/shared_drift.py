#!/usr/bin/env python3
"""Reads h100_shared_drift.cu's per-load log (h100_shared_drift_log.csv.gz) and prints what the
rates alone do not show: whether SMs that read the same box at the same moment stay together, and
how far apart in time two GPCs' reads of a line may arrive and still be served once.

1. Unpaced runs (param STEP): for the SMs that start at the same box, the median gap between the
   completion times of the same load, for pairs in the same GPC and pairs in different GPCs
   (GPCs from h100_gpc_map.csv's SM lists), at loads 0, 8, 32, 128, 255.
2. Runs paced in cycles (pace P, each GPC-position's schedule DELTA cycles after the previous):
   the median over SMs of how far load j completes behind its schedule, at j = 0, 4, 8, 12, in
   cycles at the header's clock. While the group's reads are served once, the SMs keep up (the lag
   stays at its load-0 value); served separately, the 132 SMs ask more than the arrays' distinct
   rate and fall behind by about (box time - P) per load.

Usage: shared_drift.py [LOG] [GPC_MAP]   (defaults beside this script)
"""
import collections
import csv
import gzip
import os
import statistics
import sys

from tile_drift import read_gpc_map

here = os.path.dirname(os.path.abspath(__file__))
log_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "h100_shared_drift_log.csv.gz")
map_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "h100_gpc_map.csv")
CLOCK_GHZ = 1.98  # h100_shared_drift.csv's nvidia-smi line: 1980 MHz during the run

gpc_of = read_gpc_map(map_path)

runs = collections.OrderedDict()
with gzip.open(log_path, "rt") as f:
    for r in csv.DictReader(l for l in f if not l.startswith("#")):
        key = (int(r["step"]), int(r["pace"]), int(r["pace_cycles"]), int(r["delta_cycles"]))
        run = runs.setdefault(key, {"t": collections.defaultdict(dict), "sm": {}})
        run["t"][int(r["cta"])][int(r["j"])] = int(r["t_ns"])
        run["sm"][int(r["cta"])] = int(r["smid"])

print("unpaced: median gap (ns) between SMs starting at the same box, same GPC / different GPCs")
for (step, pace, pace_cycles, delta), run in runs.items():
    if pace or pace_cycles:
        continue
    t, sm = run["t"], run["sm"]
    groups = collections.defaultdict(list)
    for c in t:
        groups[(c * step) % 128].append(c)
    cells = []
    for j in (0, 8, 32, 128, 255):
        same, diff = [], []
        for g in groups.values():
            for a in g:
                for b in g:
                    if a < b:
                        (same if gpc_of[sm[a]] == gpc_of[sm[b]] else diff).append(abs(t[a][j] - t[b][j]))
        fmt = lambda v: f"{statistics.median(v):.0f}" if v else "-"
        cells.append(f"j{j} {fmt(same)}/{fmt(diff)}")
    print(f"  STEP {step:2d}: " + "  ".join(cells))

print(f"paced in cycles: median lag of load j behind its schedule (cycles at {CLOCK_GHZ} GHz)")
for (step, pace, pace_cycles, delta), run in runs.items():
    if not pace_cycles:
        continue
    t = run["t"]
    cells = []
    for j in (0, 4, 8, 12):
        lag = statistics.median(t[c][j] * CLOCK_GHZ - j * pace_cycles - (c // 16) * delta for c in t)
        cells.append(f"j{j} {lag:5.0f}")
    print(f"  P {pace_cycles} DELTA {delta:3d}: " + "  ".join(cells))
