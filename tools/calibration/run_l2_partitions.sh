#!/usr/bin/env bash
# On the H100 machine: build h100_l2_partitions.cu, find which SMs share an L2 partition (`map`,
# no profiler), then run each mode's points in one Nsight Compute process (-k regex:k_measure: only
# the measured launches are profiled, the warm-ups and flushes run between them untouched, the L2
# as they leave it: --cache-control none, --clock-control none). The four metrics take ncu 3
# passes; --replay-mode application runs the whole program once per pass, so each pass's measured
# launch finds the L2 as its own warm-up left it. (Kernel replay, the default, saves the device
# memory the kernel can reach before its first pass: with this program's 160 MiB flush buffer
# allocated, that evicted the warm-up's lines, and every point's first pass read its whole
# footprint from HBM; a first run here, 2026-11-27, showed it.) The program's rows come once per
# pass; the last pass's are kept, with every pass's cycles; the lag modes' "# spans" lines (the
# leaders' and followers' span spread) are the first pass's. Writes h100_l2_partitions.csv (or $L2P_CSV) in
# $OUT (default: this directory), headed by date, nvidia-smi, GPU and ncu comment lines, the
# partition map and the profiler's passes per kernel; then per point a comment with the program's
# row and the measured launch's DRAM bytes read, L2 read sectors and hits (32 B) and sectors that
# crossed between the partitions (ltcfabric); then the rows
#   l2_partitions_<mode>_hbm_per_pass_x100,<param>,<DRAM bytes / (passes x footprint) x 100>
#   l2_partitions_<mode>_fabric_per_pass_x100,<param>,<ltcfabric sectors x 32 / (passes x footprint) x 100>
# (lag modes: footprint = the leaders' bytes, one pass: 100 while the followers hit, 200 once not).
# Every launch counts about 21,500 ltcfabric sectors that are not its reads (264 per L2 slice, the
# metric's .min, in all-hit launches too): the fabric rows include them (9 at 8 MiB, 1 at 56).
# The raw logs and ncu reports go to $OUT/l2_partitions_raw.tar.gz.
set -uo pipefail
cd "$(dirname "$0")"
source ./device_common.sh
raw="$bin/l2_partitions_raw"
rm -rf "$raw" && mkdir -p "$raw"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_l2_partitions.cu -lcuda -o "$bin/h100_l2_partitions" \
  > "$raw/build.log" 2>&1 || { cat "$raw/build.log"; exit 1; }
prog="$bin/h100_l2_partitions"
cuobjdump -sass "$prog" 2>/dev/null | awk '/Function : .*k_map_probe/{f=1} /Function : .*k_where/{f=0} f' > "$raw/map_probe.sass"
metrics=dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum
csv="$out/${L2P_CSV:-h100_l2_partitions.csv}"  # L2P_CSV: another name (h200_l2_reref.csv)
{
  silicon_header
  echo "# ncu,$(ncu --version | tail -n 1),--replay-mode application --clock-control none --cache-control none"
} > "$raw/header.txt"
"$prog" map "$raw/partitions.txt" > "$raw/map.log" 2>&1 || { cat "$raw/map.log"; exit 1; }
grep '^# map' "$raw/map.log"
# sweep NAME POINT...: one ncu process; NAME.log (program rows, ncu's progress), NAME.ncu.csv.
sweep() {
  local name=$1
  shift
  timeout 100 ncu --replay-mode application --clock-control none --cache-control none -k regex:k_measure -f \
    -o "$raw/$name" --metrics "$metrics" \
    "$prog" sweep "$raw/partitions.txt" "$@" > "$raw/$name.log" 2>&1
  ncu --import "$raw/$name.ncu-rep" --csv --page raw --print-units base > "$raw/$name.ncu.csv" 2>> "$raw/$name.log"
  echo "$name: $(grep -c '^row,' "$raw/$name.log") rows (all passes), $(grep -c '^"' "$raw/$name.ncu.csv") ncu csv lines"
}
points() {  # points MODE VALUE...: MODE:VALUE for each
  local mode=$1
  shift
  for v in "$@"; do echo "$mode:$v"; done
}
# L2P_FOOTPRINTS: the footprint modes' MiB (default the H100 run's; the H200 run, 60 MiB of L2, added 52 60 64 72).
fps="${L2P_FOOTPRINTS:-8 12 16 20 24 28 32 36 40 44 48 56}"
lags="0 2 4 6 8 10 12 14 16 20 24 28 32 40 48 64 96"
# L2P_MODES: the modes to sweep (default all of the H100 run's; reref modes take the footprints as Z).
modes="${L2P_MODES:-check pair_same pair_cross half0 lag_same lag_cross half1 shared_half0 shared split}"
for mode in $modes; do
  case $mode in
    check) sweep check check_same:8 check_cross:8 check_same:24 check_cross:24 ;;
    lag_* | lagr_* | lagi_*) sweep "$mode" $(points "$mode" $lags) ;;
    *) sweep "$mode" $(points "$mode" $fps) ;;
  esac
done
silicon_footer >> "$raw/header.txt"
python3 - "$raw" $modes > "$csv" <<'EOF'
import csv, os, re, sys
raw, names = sys.argv[1], sys.argv[2:]
print(open(os.path.join(raw, "header.txt")).read().rstrip())
for line in open(os.path.join(raw, "map.log")):
    if line.startswith("#"):
        print(line.rstrip())
first = True
comments, rows = [], []
for name in names:
    log = os.path.join(raw, name + ".log")
    passes = {}  # index -> the row as each replay pass printed it (each pass runs the whole program)
    spans_seen = set()
    for l in (open(log) if os.path.exists(log) else []):
        if l.startswith("row,"):
            passes.setdefault(l.split(",")[1], []).append(l.strip().split(","))
        elif l.startswith("spans,") and l.split(",")[1] not in spans_seen:  # the lag modes' span spread, first pass
            spans_seen.add(l.split(",")[1])
            comments.append("# " + l.strip())
    prog = [v[-1] + ["/".join(r[8] for r in v)] for v in passes.values()]  # the last pass's row
    if first and os.path.exists(log):
        print(next((l.rstrip() for l in open(log) if l.startswith("# cta_partition")), "# cta_partition,?"))
        first = False
    ncsv = os.path.join(raw, name + ".ncu.csv")
    table = list(csv.reader(l for l in open(ncsv) if l.startswith('"'))) if os.path.exists(ncsv) else []
    kernels = [dict(zip(table[0], r)) for r in table[2:]] if len(table) > 2 else []
    if not prog or len(kernels) != len(prog):
        comments.append(f"# FAILED {name}: {len(prog)} program rows, {len(kernels)} profiled kernels")
    for p, k in zip(prog, kernels):
        _, _, mode, param, fp, active, loaded, npass, cycles, mhz, bpc, each = p
        vals = [k.get(m, "nan").replace(",", "") for m in
                ("dram__bytes_read.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_read_lookup_hit.sum",
                 "lts__t_sectors_srcunit_ltcfabric.sum")]
        comments.append("# " + ",".join([mode, param, fp, active, loaded, npass, cycles, mhz, bpc, each] + vals))
        denom = int(npass) * int(fp)
        rows.append(f"l2_partitions_{mode}_hbm_per_pass_x100,{param},{float(vals[0]) * 100 / denom:.0f}")
        rows.append(f"l2_partitions_{mode}_fabric_per_pass_x100,{param},{float(vals[3]) * 32 * 100 / denom:.0f}")
print("# mode,param,footprint_bytes,active_sms,loaded_bytes,passes,cycles,clock_mhz,l2_bytes_per_cycle,"
      "cycles_each_replay_pass,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,l2_fabric_sectors")
print("\n".join(comments))
print("scenario,param,value")
print("\n".join(rows))
EOF
tar -czf "$out/l2_partitions_raw.tar.gz" -C "$bin" l2_partitions_raw
grep -c '^l2_partitions' "$csv"
