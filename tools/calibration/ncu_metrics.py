"""ncu_metrics.py [--all] FILE METRIC...: the values of METRIC... for the last kernel in FILE, the
output of `ncu --csv --page raw --print-units base` (other lines of the program's output may be
mixed in), printed comma-separated without thousands separators; with --all, one such line for
every profiled kernel, in launch order. Exits 1, printing nothing, if FILE has no profiled kernel.
Used by run_gemm_traffic.sh, run_l2_footprint.sh and run_gemm_clocks.sh."""
import csv
import sys

args = sys.argv[1:]
every = args[0] == "--all"
if every:
    args = args[1:]
rows = list(csv.reader(line for line in open(args[0]) if line.startswith('"')))
if len(rows) < 3:  # header, units, at least one kernel
    sys.exit(1)
for row in rows[2:] if every else rows[-1:]:
    values = dict(zip(rows[0], row))
    print(",".join(values.get(metric, "nan").replace(",", "") for metric in args[1:]))
