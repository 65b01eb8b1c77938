#!/usr/bin/env python3
"""pace_persistence.py: does an SM's pace under a loaded L2 hold from launch to launch?

  pace_persistence.py collect DIR > PACES.csv
      DIR: run_pace_persistence.sh's tile logs (loads_p<P>.csv.r<R>: h100_gemm_loads, launch R of
      process P on A copy R % 2, as the script's --a-copies 2 alternates them; gemm_p<P>.csv.r<R>: the GEMM twin's timed launch R). Writes one row
      per CTA and launch: program,process,launch,a_copy,clock_mhz,cta,smid,pace (the CTA's mean
      interval between tile starts, cycles; a_copy -1 for the GEMM, whose operands never change).
  pace_persistence.py PACES.csv MAP.csv
      MAP: the machine's GPC map (h100_gpc_map's "# gpc,..." lines). Prints per launch the GPCs'
      mean paces (over the median SM's, the SMs below 0.9 of it left out as tile_drift.py --gpc
      does) and the mean of the L2 partition {0, 4, 5, 6} minus the other's (h200.yaml dies.of_gpc);
      then the correlation of the SMs' paces between two launches, averaged over the pairs of each
      kind: the same A copy (the same allocation of the process, by its order) in one process or in
      two, another copy, and the GEMM's launches in one process or in two.
  pace_persistence.py homes DIR > HOMES.csv
      DIR's homes_p<P>.csv (h100_gemm_loads --probe-homes: each private A line's latency read from
      the other partition, far, and from the first reader's, near) reduced per process, copy and
      region: the lines slower than FAR_CYCLES from the other partition (homed in the first
      reader's), and the two reads' mean latencies.
"""
import csv
import glob
import itertools
import os
import re
import statistics
import sys
from collections import defaultdict

from tile_drift import fast_set, gpc_paces, read_csv, read_gpc_map, read_rows, sm_paces

PARTITION_0 = {0, 4, 5, 6}  # h200.yaml dies.of_gpc
# Between the two modes of the far read's latency on the H200 (2026-11-29: 250-325 cycles for the
# lines its own partition holds, 425-500 for the others; the near read 250-325 for all).
FAR_CYCLES = 375


def collect(directory):
    header_lines(directory)
    print("# pace_persistence.py collect of run_pace_persistence.sh's tile logs: per CTA and launch, its"
          " mean interval between tile starts (cycles at the launch's clock)")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["program", "process", "launch", "a_copy", "clock_mhz", "cta", "smid", "pace"])
    for path in sorted(glob.glob(os.path.join(directory, "*_p*.csv.r*"))):
        program, process, launch = re.match(r"(loads|gemm)_p(\d+)\.csv\.r(\d+)$", os.path.basename(path)).groups()
        with open(path) as f:
            mhz = f.readline().strip().split(",")[1]
        rows = read_rows(path)
        smid_of = {int(r["cta"]): int(r["smid"]) for r in rows}
        paces = sm_paces(rows)
        for cta, sm in sorted(smid_of.items()):
            if sm in paces:
                out.writerow([program, process, launch, int(launch) % 2 if program == "loads" else -1, mhz, cta, sm,
                              f"{paces[sm]:.1f}"])


def homes(directory):
    header_lines(directory)
    print(f"# pace_persistence.py homes: per process, copy of A and region (CTA r's private rows), the"
          f" lines whose read from the other partition took over {FAR_CYCLES} cycles, and the mean latencies")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["process", "copy", "region", "lines", "far_lines", "far_read_mean", "near_read_mean"])
    for path in sorted(glob.glob(os.path.join(directory, "homes_p*.csv"))):
        process = re.match(r"homes_p(\d+)\.csv$", os.path.basename(path)).group(1)
        regions = defaultdict(list)
        for r in read_csv(path):
            regions[(int(r["copy"]), int(r["region"]))].append((int(r["far"]), int(r["near"])))
        for (copy, region), reads in sorted(regions.items()):
            out.writerow([process, copy, region, len(reads), sum(1 for far, _ in reads if far > FAR_CYCLES),
                          f"{statistics.mean(far for far, _ in reads):.1f}",
                          f"{statistics.mean(near for _, near in reads):.1f}"])


def header_lines(directory):
    """The silicon header lines (date, GPU) of the run, from its GPC map."""
    with open(os.path.join(directory, "gpc_map.csv")) as f:
        sys.stdout.writelines(line for line in f if line.startswith(("# date", "# nvidia-smi", "# gpu")))


def correlation(a, b):
    """Pearson's over the SMs in both; 0 where either launch's paces are all equal."""
    common = sorted(set(a) & set(b))
    try:
        return statistics.correlation([a[s] for s in common], [b[s] for s in common])
    except statistics.StatisticsError:
        return 0.0


def partition_split(gpc_means):
    """The mean pace of partition 0's GPCs minus the other's (gpc_means: GPC -> mean pace)."""
    return statistics.mean(v for g, v in gpc_means.items() if g in PARTITION_0) - statistics.mean(
        v for g, v in gpc_means.items() if g not in PARTITION_0)


def pair_kind(a, b):
    """What two launches (program, process, launch, a_copy) share, as summarize() groups them."""
    where = "one process" if a[1] == b[1] else "two processes"
    if a[0] == "loads":
        return f"loads, {'same A copy' if a[3] == b[3] else 'other A copy'}, {where}"
    return f"gemm, {where}"


def pair_correlations(paces_by_launch):
    """kind -> the correlations of the SMs' paces (each launch's fast set left out) over the
    pairs of launches of one program."""
    normal = {}
    for key, paces in paces_by_launch.items():
        fast = set(fast_set(paces))
        normal[key] = {s: v for s, v in paces.items() if s not in fast}
    kinds = defaultdict(list)
    for a, b in itertools.combinations(sorted(normal), 2):
        if a[0] == b[0]:
            kinds[pair_kind(a, b)].append(correlation(normal[a], normal[b]))
    return kinds


def summarize(paces_path, map_path):
    gpc_of = read_gpc_map(map_path)
    launches = defaultdict(dict)  # (program, process, launch, a_copy) -> smid -> pace
    for r in read_csv(paces_path):
        launches[(r["program"], int(r["process"]), int(r["launch"]), int(r["a_copy"]))][int(r["smid"])] = float(r["pace"])
    for (program, process, launch, copy), paces in sorted(launches.items()):
        means = {g: v[0] for g, v in gpc_paces(gpc_of, paces).items()}
        row = " ".join(f"{v:.3f}" for _, v in sorted(means.items()))
        print(f"{program} process {process} launch {launch} copy {copy:2d}: GPCs 0-7 {row}  "
              f"partition split {partition_split(means):+.3f}")
    for kind, values in sorted(pair_correlations(launches).items()):
        print(f"correlation of the SMs' paces, {kind}: mean {statistics.mean(values):+.2f} "
              f"(min {min(values):+.2f}, max {max(values):+.2f}, {len(values)} pairs)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "collect":
        collect(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "homes":
        homes(sys.argv[2])
    elif len(sys.argv) == 3:
        summarize(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
