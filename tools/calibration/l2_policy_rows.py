#!/usr/bin/env python3
"""The L2 footprint and lag rows (DRAM bytes per pass x 100) on silicon and in the model, per mode,
with the mean difference in points: how close an L2 replacement policy comes to silicon's.

    python3 tools/calibration/l2_policy_rows.py [--chip h100|h200] [--bwsim build/bwsim]
                                                [--set l2.policy=set_rrip ...]

Rows: every *_hbm_per_pass_x100 row of <chip>_l2_partitions.csv, (H100) h100_l2_footprint.csv and
(H200) h200_l2_reref.csv and h200_l2_lag_interleaved.csv (its lagi rows),
against sim_configs/<chip>.yaml. Each is one `bwsim run ubench` (0.3-1 s).
"""
import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def silicon_rows(chip):
    seen = set()  # a scenario's rows come from the first file that has it (the interleaved run repeats lag_same)
    for name in (f"{chip}_l2_partitions.csv", f"{chip}_l2_footprint.csv", f"{chip}_l2_reref.csv",
                 f"{chip}_l2_lag_interleaved.csv"):
        if not (HERE / name).exists():
            continue
        with open(HERE / name) as f:
            rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))
                    if r and r[0].endswith("_hbm_per_pass_x100") and r[0] not in seen]
        seen.update(r[0] for r in rows)
        for row in rows:
            yield row[0], int(row[1]), int(row[2])


def model(bwsim, config, sets, scenario, param):
    cmd = [bwsim, "run", "ubench", "--config", config, "--scenario", scenario, "--size", str(param), "--json"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return int(json.loads(out)["value"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bwsim", default=str(HERE.parent.parent / "build" / "bwsim"))
    ap.add_argument("--chip", choices=("h100", "h200"), default="h100", help="the silicon rows and the config")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="a config override, as bwsim's --set")
    args = ap.parse_args()
    diffs = defaultdict(list)
    print("scenario,param,silicon,model")
    config = str(HERE.parent.parent / "sim_configs" / f"{args.chip}.yaml")
    for scenario, param, measured in silicon_rows(args.chip):
        predicted = model(args.bwsim, config, args.sets, scenario, param)
        print(f"{scenario},{param},{measured},{predicted}")
        mode = scenario.removeprefix("l2_").removesuffix("_hbm_per_pass_x100")
        diffs[mode].append(abs(predicted - measured))
    print("\nmode,rows,mean difference (points)", file=sys.stderr)
    for mode, d in diffs.items():
        print(f"{mode},{len(d)},{sum(d) / len(d):.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
