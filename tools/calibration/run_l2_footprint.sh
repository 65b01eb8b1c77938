#!/usr/bin/env bash
# On the H100 machine: build h100_l2_footprint.cu and run it under Nsight Compute for each mode and
# footprint; writes h100_l2_footprint.csv (headed by date, nvidia-smi and ncu comment lines) in $OUT
# (default: this directory): per footprint a comment with the program's row and the measured
# launch's DRAM bytes read, L2 read sectors and hits (32 B) and sectors crossing between the L2
# partitions (ltcfabric), then the row l2_footprint_<mode>_hbm_per_pass_x100,<MiB>,<DRAM bytes
# read / (2 passes x footprint) x 100>.
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_l2_footprint.cu -lcuda -o /tmp/h100_l2_footprint || exit 1
metrics=dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum
csv="$out/h100_l2_footprint.csv"
{
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  echo "# ncu,$(ncu --version | tail -n 1)"
  echo "# mode,footprint_mib,boxes_per_cta,cycles,clock_mhz,l2_bytes_per_cycle,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,l2_fabric_sectors"
  echo "scenario,param,value"
} > "$csv"
for mode in shared split; do
  for mib in 8 12 16 20 24 28 32 36 40 48 56; do
    timeout 120 ncu --clock-control none --cache-control none -k regex:k_sweep --launch-skip 1 --launch-count 1 \
      --metrics "$metrics" --csv --page raw --print-units base /tmp/h100_l2_footprint "$mode" "$mib" > /tmp/l2p.txt 2>&1
    row=$(grep -E '^(shared|split),' /tmp/l2p.txt)
    if [ -n "$row" ] && values=$(python3 ncu_metrics.py /tmp/l2p.txt ${metrics//,/ }); then
      echo "# $row,$values" >> "$csv"
      echo "$row,$values" | awk -F, '{printf "l2_footprint_%s_hbm_per_pass_x100,%d,%.0f\n", $1, $2, $7 * 100 / (2 * $2 * 1048576)}' >> "$csv"
    else
      echo "# FAILED $mode $mib: $(tail -n 3 /tmp/l2p.txt | tr '\n' ' ')" >> "$csv"
    fi
    tail -n 1 "$csv"
  done
done
