#!/usr/bin/env python3
"""box_spread_gpc.py PACES.csv MAP.csv: the all-SM streams of h100_box_spread.cu GPC by GPC.

PACES.csv: h200_box_spread_paces.csv (per CTA, when loads 64 and 511 of its stream landed). MAP.csv:
a GPC map with "# gpc,G,SMS,smid ..." lines (h200_gpc_map_loads.csv). For each run, mode and
stages, prints each GPC's mean pace (an SM's interval between those landings over the median SM's)
over its SMs outside the short CPCs (smids 32-43, 78-87, 126-127: tile_drift.py --fast-set)."""
import statistics
import sys
from collections import defaultdict

from tile_drift import read_csv, read_gpc_map

SHORT_CPCS = set(range(32, 44)) | set(range(78, 88)) | {126, 127}

if len(sys.argv) != 3:
    sys.exit(__doc__)
gpc_of = read_gpc_map(sys.argv[2])
paces = defaultdict(dict)
for r in read_csv(sys.argv[1]):
    paces[(r["run"], r["mode"], int(r["stages"]))][int(r["smid"])] = int(r["landed_511"]) - int(r["landed_64"])
for (run, mode, stages), by_sm in sorted(paces.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
    median = statistics.median(by_sm.values())
    by_gpc = defaultdict(list)
    for sm, v in by_sm.items():
        if sm not in SHORT_CPCS:
            by_gpc[gpc_of.get(sm, -1)].append(v / median)
    row = "  ".join(f"GPC {g}: {statistics.mean(v):.3f}" for g, v in sorted(by_gpc.items()))
    print(f"{mode} S {stages} run {run}: {row}")
