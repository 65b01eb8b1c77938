"""ncu_metrics.py FILE METRIC...: the values of METRIC... for the last kernel in FILE, the output of
`ncu --csv --page raw --print-units base` (other lines of the program's output may be mixed in),
printed comma-separated without thousands separators. Exits 1, printing nothing, if FILE has no
profiled kernel. Used by run_gemm_traffic.sh and run_l2_footprint.sh."""
import csv
import sys

rows = list(csv.reader(line for line in open(sys.argv[1]) if line.startswith('"')))
if len(rows) < 3:  # header, units, at least one kernel
    sys.exit(1)
values = dict(zip(rows[0], rows[-1]))
print(",".join(values.get(metric, "nan").replace(",", "") for metric in sys.argv[2:]))
