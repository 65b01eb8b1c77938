#!/usr/bin/env bash
# On the H100 (or H200) machine: only the partition map of h100_l2_partitions.cu (`map`, no
# profiler), and where the CTAs of a 132-CTA grid (one per SM, as the sweep's launches) run.
# Builds h100_l2_partitions.cu and h100_cta_sms.cu for sm_90a, runs `h100_l2_partitions map`
# (which SMs share an L2 partition, by first-read latency, and the GPC of each SM, by clusters),
# then h100_cta_sms (the SM of each CTA; 8 launches, compared), and joins the two. Writes
# $OUT/$CSV (OUT default: this directory; CSV default: ${GEMM_TAG:-h100}_l2_partition_map.csv):
# the silicon header (date, nvidia-smi, GPU serial and UUID), the map's comment lines
# (`# sm,...`, `# gpc,...`, `# map,...`), the CTA placement's comment lines
# (`# cta_sms,...`: launches that agreed; `# cta_partition,<digits>`: the partition of CTA c's SM,
# as the sweep prints it, for the first launch, and `# cta_partition_launch,<l>,<digits>` for each;
# `# cta_partition_runs,...` and `# cta_gpc_runs,...`: runs of consecutive
# CTAs as first-last:value(count)), then the rows
#   l2_partition_of_cta,<cta>,<partition>   (0: the map's reference SM's partition)
#   gpc_of_cta,<cta>,<gpc>                  (the map's GPC numbering: groups by their smallest SM)
# Usage: [CSV=NAME.csv] bash tools/calibration/run_l2_partition_map.sh
set -uo pipefail
cd "$(dirname "$0")"
source ./device_common.sh
csv="$out/${CSV:-${tag}_l2_partition_map.csv}"
raw="$bin/l2_partition_map_raw"
rm -rf "$raw" && mkdir -p "$raw"
for p in h100_l2_partitions h100_cta_sms; do
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a "$p.cu" -lcuda -o "$bin/$p" > "$raw/$p.build.log" 2>&1 &
done
wait
for p in h100_l2_partitions h100_cta_sms; do
  [ -x "$bin/$p" ] || { cat "$raw/$p.build.log"; exit 1; }
done
silicon_header > "$raw/header.txt"
"$bin/h100_l2_partitions" map "$raw/partitions.txt" > "$raw/map.log" 2>&1 || { cat "$raw/map.log"; exit 1; }
"$bin/h100_cta_sms" 8 > "$raw/ctas.log" 2>&1 || { cat "$raw/ctas.log"; exit 1; }
python3 - "$raw" > "$csv" <<'EOF'
import os, sys
raw = sys.argv[1]
print(open(os.path.join(raw, "header.txt")).read().rstrip())
for line in open(os.path.join(raw, "map.log")):
    if line.startswith("#"):
        print(line.rstrip())
part, gpc = {}, {}
for line in open(os.path.join(raw, "partitions.txt")):
    s, p, g = map(int, line.split())
    part[s], gpc[s] = p, g
ctas, launches = [], []
for line in open(os.path.join(raw, "ctas.log")):
    f = line.split()
    if line.startswith("#"):
        print(line.rstrip())
    elif len(f) == 4 and f[0] == "cta":
        ctas.append(int(f[3]))
    elif len(f) > 2 and f[0] == "launch":
        launches.append((int(f[1]), [int(x) for x in f[2:]]))
def runs(values):  # consecutive CTAs with one value: first-last:value(count)
    out, start = [], 0
    for c in range(1, len(values) + 1):
        if c == len(values) or values[c] != values[start]:
            out.append(f"{start}-{c - 1}:{values[start]}({c - start})")
            start = c
    return " ".join(out)
cp = [part[s] for s in ctas]
cg = [gpc[s] for s in ctas]
print("# cta_partition," + "".join(str(p) for p in cp))
for l, sms in launches:
    print(f"# cta_partition_launch,{l}," + "".join(str(part[s]) for s in sms))
print("# cta_partition_runs," + runs(cp))
print("# cta_gpc_runs," + runs(cg))
print("scenario,param,value")
for c, p in enumerate(cp):
    print(f"l2_partition_of_cta,{c},{p}")
for c, g in enumerate(cg):
    print(f"gpc_of_cta,{c},{g}")
EOF
grep -E '^# (gpu|map|cta_sms|cta_partition|cta_partition_launch|cta_partition_runs|cta_gpc_runs|gpc),' "$csv"
echo "$(grep -c '^l2_partition_of_cta,' "$csv") l2_partition_of_cta rows, $(grep -c '^gpc_of_cta,' "$csv") gpc_of_cta rows -> $csv"
