#!/usr/bin/env python3
"""What run_gemm_clocks.sh measured: the clocks of the L2, the DRAM and the SMs while the twin's
GEMMs run, and how much each timed launch of a row differs from the next.

  gemm_clocks.py PLAIN.csv NCU.csv
      per row: the timed launches (cycles, SM MHz from clock64 over %globaltimer, us) for each
      host sleep before a launch; then ncu's launches (application replay, the GPU's own clock):
      us, the SM, L2 and DRAM clocks, the share of the L2's cycles the fabric-to-L2 path was
      active, DRAM GB and, where measured, the sectors that came through the fabric.
  gemm_clocks.py --model BWSIM CONFIG ROW PLAIN.csv
      the model's cycles for every timed launch of ROW (one of run_gemm_clocks.sh's rows) at that
      launch's own clock (kinds ending _p128 with --l2-promotion 128), and the error launch by
      launch, summarized per promotion and per kind (BWSIM: the bwsim binary).
"""
import json
import statistics
import subprocess
import sys

from tile_drift import read_csv

ROWS = {  # run_gemm_clocks.sh's rows (its `row` calls, raster m, swizzle 1): bwsim run gemm_sm90's arguments
    "pp128_8192": "--m 8192 --n 8192 --k 8192 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6",
    "coop_8192": "--m 8192 --n 8192 --k 8192 --schedule cooperative --rows-per-wg 64 --tile-n 256 --stages 4",
    "pp128_4096": "--m 4096 --n 4096 --k 4096 --schedule pingpong --rows-per-wg 128 --tile-n 128 --stages 6",
}


def spread(values, fmt="{:.0f}"):
    values = sorted(values)
    return f"{fmt.format(values[0])}..{fmt.format(values[-1])} (median {fmt.format(statistics.median(values))})"


def summary(plain_path, ncu_path):
    plain = read_csv(plain_path)
    for row in dict.fromkeys(r["row"] for r in plain):
        print(f"{row}, timed launches:")
        for kind in dict.fromkeys(r["kind"] for r in plain if r["row"] == row):
            runs = [r for r in plain if r["row"] == row and r["kind"] == kind]
            print(f"  {kind:9s} cycles {spread([float(r['cycles']) for r in runs])}, "
                  f"MHz {spread([float(r['mhz']) for r in runs])}, "
                  f"us {spread([float(r['span_ns']) / 1000 for r in runs], '{:.1f}')}")
    counted = read_csv(ncu_path)
    print("ncu, application replay:")
    for run, row in dict.fromkeys((r["run"], r["row"]) for r in counted):
        runs = [r for r in counted if r["run"] == run and r["row"] == row]
        col = lambda name: [float(r[name]) for r in runs]
        active = [float(r["lts__ltcfabric2ltc_cycles_active.avg"]) / float(r["lts__cycles_elapsed.avg"]) for r in runs]
        line = (f"  {run:8s} {row:14s} us {spread([v / 1000 for v in col('gpu__time_duration.sum')], '{:.1f}')}, "
                f"SM MHz {spread([v / 1e6 for v in col('sm__cycles_elapsed.avg.per_second')])}, "
                f"L2 MHz {spread([v / 1e6 for v in col('lts__cycles_elapsed.avg.per_second')])}, "
                f"DRAM MHz {spread([v / 1e6 for v in col('dram__cycles_elapsed.avg.per_second')])}, "
                f"fabric active {spread([100 * a for a in active], '{:.0f}%')}, "
                f"DRAM GB {spread([v / 1e9 for v in col('dram__bytes_read.sum')], '{:.2f}')}")
        if "lts__t_sectors_srcunit_ltcfabric.sum" in runs[0]:
            line += f", fabric sectors M {spread([v / 1e6 for v in col('lts__t_sectors_srcunit_ltcfabric.sum')], '{:.1f}')}"
        print(line)


def model(bwsim, config, row, plain_path):
    errors = {}
    print("kind,launch,mhz,silicon_cycles,model_cycles,error_pct,model_hbm_gb")
    for r in read_csv(plain_path):
        if r["row"] != row:
            continue
        promotion = "128" if r["kind"].endswith("_p128") else "256"
        args = [bwsim, "run", "gemm_sm90", *ROWS[row].split(), "--swizzle", "1", "--warmup", "1", "--config", config,
                "--l2-promotion", promotion, "--set", f"clock_ghz={float(r['mhz']) / 1000}", "--no-check-races",
                "--json"]
        d = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        error = 100 * (d["cycles"] / float(r["cycles"]) - 1)
        errors.setdefault(f"promotion {promotion}B", []).append(error)
        errors.setdefault(r["kind"], []).append(error)
        print(f"{r['kind']},{r['launch']},{r['mhz']},{r['cycles']},{d['cycles']},{error:+.1f},"
              f"{d['memory']['hbm_read_bytes'] / 1e9:.2f}")
    for kind, e in errors.items():
        print(f"# {kind}: {len(e)} launches, error median {statistics.median(e):+.1f}%, "
              f"range {min(e):+.1f}%..{max(e):+.1f}%, within 10%: {sum(abs(x) <= 10 for x in e)}")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--model":
        model(*sys.argv[2:])
    elif len(sys.argv) == 3:
        summary(*sys.argv[1:])
    else:
        sys.exit(__doc__)
