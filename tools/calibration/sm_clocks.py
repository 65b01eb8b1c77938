#!/usr/bin/env python3
"""The SMs' clocks and paces by GPC, from run_sm_clocks.sh's files (README, "One clock per GPC").

  sm_clocks.py reduce DIR            one row per CTA of every timed GEMM launch in DIR (its
                                     <tag>_sm_clocks_gemm_<name>.csv.rN clock logs and the tile
                                     logs beside them): config,launch,cta,smid,mhz,pace_ns
                                     (pace: mean ns between its tiles' starts, the first excluded)
  sm_clocks.py summary PACES MAP [UNITS]
                                     per launch, each GPC's mean clock, pace in ns and pace in
                                     cycles (its ns pace times its own clock), each over the
                                     launch's median; with UNITS (h100_power's per-CTA log), each
                                     sustained load's clock by GPC the same way.
MAP is a GPC map ("# gpc,G,SMS,smid ..." lines, h200_gpc_map_loads.csv); its GPCs 8 and up (GPC 0's
loose TPCs on the H200 map) count as GPC 0, as the model's layout has them.
"""
import collections
import glob
import os
import statistics
import sys

from tile_drift import read_csv, read_gpc_map


def reduce(folder):
    print("config,launch,cta,smid,mhz,pace_ns")
    for clock_log in sorted(glob.glob(os.path.join(folder, "*_sm_clocks_gemm_*.csv.r*"))):
        base, launch = clock_log.rsplit(".r", 1)
        config = base.split("_sm_clocks_gemm_")[1][: -len(".csv")]
        tile_log = clock_log.replace("_sm_clocks_gemm_", "_sm_clocks_tiles_")
        starts = collections.defaultdict(list)
        for r in read_csv(tile_log):
            starts[int(r["cta"])].append(int(r["start_ns"]))
        for r in read_csv(clock_log):
            s = sorted(starts[int(r["cta"])])
            pace = (s[-1] - s[1]) / (len(s) - 2) if len(s) > 2 else 0
            print(f"{config},{launch},{r['cta']},{r['smid']},{r['mhz']},{pace:.0f}")


def by_gpc(values):  # [(gpc, value)] -> each GPC's mean over the median of all
    med = statistics.median(v for _, v in values)
    groups = collections.defaultdict(list)
    for g, v in values:
        groups[g].append(v / med)
    return " ".join(f"{statistics.mean(groups[g]):.3f}" for g in sorted(groups))


def summary(paces, map_path, units=None):
    m = read_gpc_map(map_path)
    launches = collections.defaultdict(list)
    for r in read_csv(paces):
        launches[(r["config"], int(r["launch"]))].append(r)
    print("per launch, GPCs 0..7 over the launch's median: clock | pace in ns | pace in cycles")
    for (config, launch), rs in sorted(launches.items()):
        clk = [(m[int(r["smid"])], float(r["mhz"])) for r in rs]
        ns = [(m[int(r["smid"])], float(r["pace_ns"])) for r in rs]
        cyc = [(m[int(r["smid"])], float(r["pace_ns"]) * float(r["mhz"])) for r in rs]
        print(f"{config} r{launch}: {by_gpc(clk)} | {by_gpc(ns)} | {by_gpc(cyc)}")
    if units:
        print("sustained loads, GPCs 0..7 clock over the load's median (median MHz)")
        loads = collections.defaultdict(list)
        for r in read_csv(units):
            loads[(r["load"], int(r["sms"]))].append((m[int(r["smid"])], int(r["cycles"]) * 1000 / int(r["ns"])))
        for (load, sms), v in loads.items():
            print(f"{load} {sms}: {by_gpc(v)} ({statistics.median(x for _, x in v):.0f})")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "reduce":
        reduce(sys.argv[2])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "summary":
        summary(*sys.argv[2:])
    else:
        sys.exit(__doc__)
