# Sourced by the device scripts (run_loads_private.sh, run_loads_scaling.sh, run_program.sh):
# what every silicon run starts with. Sets out (OUT, default .), tag (GEMM_TAG, default h100) and
# bin (a build folder).
out="${OUT:-.}"
tag="${GEMM_TAG:-h100}"
bin=/tmp/calibration_bin
mkdir -p "$bin"

# build_sm90 PROGRAM...: each PROGRAM.cu for sm_90a into $bin (log in $out/build.log; exits on error).
build_sm90() {
  local program
  for program in "$@"; do
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a "$program.cu" -lcuda -o "$bin/$program" \
      >> "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
  done
}

# The ncu counts of a run's L2 reuse (run_gemm_locality.sh, run_loads_locality.sh): DRAM bytes read,
# L2 read sectors and their hits, and the SM clock ncu saw.
l2_reuse_metrics=dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,sm__cycles_elapsed.avg.per_second

# silicon_footer: the GPU's clocks after the run, as one comment line.
silicon_footer() {
  echo "# nvidia-smi_after,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
}

# silicon_header: the comment lines that head every measured CSV (date, GPU and clocks, serial).
silicon_header() {
  echo "# date,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# nvidia-smi,$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader)"
  nvidia-smi --query-gpu=serial,uuid --format=csv,noheader | sed 's/^/# gpu,/'
}

# ncu_values KERNEL_REGEX SKIP PROGRAM [ARG...]: the $metrics (comma-separated) of PROGRAM's launch
# of a kernel matching KERNEL_REGEX after SKIP such launches (ncu at the GPU's own clock, the L2 as
# the earlier launches left it), printed comma-separated; non-zero exit if ncu profiled nothing
# (its output stays in $bin/ncu.txt).
ncu_values() {
  local kernel=$1 skip=$2
  shift 2
  timeout 300 ncu --clock-control none --cache-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    --metrics "$metrics" --csv --page raw --print-units base "$@" > "$bin/ncu.txt" 2>&1
  python3 ncu_metrics.py "$bin/ncu.txt" ${metrics//,/ }
}

# loads_timed_and_counted LOG ARG...: h100_gemm_loads ARG... (built by build_sm90) run once timed,
# its tile log written to LOG unless LOG is empty, and once under ncu with the $metrics of its
# third launch. Sets `timed` (the program's CSV row) and `counted` (the values, ",,," where ncu
# profiled nothing): run_loads_locality.sh, run_loads_groups.sh, run_loads_joins.sh.
loads_timed_and_counted() {
  local log=$1
  shift
  timed=$(timeout 120 "$bin/h100_gemm_loads" "$@" ${log:+--tile-log "$log"} | tail -n 1)
  counted=$(ncu_values k_loads 2 "$bin/h100_gemm_loads" "$@" --reps 2) || counted=",,,"
}

# twin_launches PREFIX ARG...: gemm_sm90_twin ARG... ($bin's, from build_sm90 or fabric_build), each
# timed launch as a PREFIX,launch,cycles,mhz,span_ns line (from its stderr's "# launch" lines;
# none if it failed): run_gemm_clocks.sh, run_loads_stride.sh.
twin_launches() {
  local prefix=$1
  shift
  timeout 120 "$bin/gemm_sm90_twin" "$@" 2>&1 >/dev/null |
    sed -n "s/^# launch \([0-9]*\): \([0-9]*\) cycles at \([0-9]*\) MHz, span \([0-9]*\) ns$/$prefix,\1,\2,\3,\4/p"
}

# gpc_map_after CSV: CSV's silicon header (its first 3 lines: date, GPU, serial), then this
# machine's GPC map (h100_gpc_map, built by build_sm90), for the file the analysis scripts read.
gpc_map_after() {
  head -n 3 "$1"
  "$bin/h100_gpc_map"
}

# ncu_rows RUN KERNEL_REGEX SKIP PROGRAM [ARG...]: ncu_values as one RUN,metric,value line per
# metric (a "# FAILED RUN" line if ncu profiled nothing).
ncu_rows() {
  local run=$1 values
  shift
  if values=$(ncu_values "$@"); then
    metric_rows "$run" "$values"
  else
    echo "# FAILED $run"
  fi
}

# metric_rows RUN VALUES: VALUES (comma-separated, in $metrics' order) as RUN,metric,value lines.
metric_rows() {
  paste -d, <(tr ',' '\n' <<< "$metrics") <(tr ',' '\n' <<< "$2") | sed "s/^/$1,/"
}

# twin_ncu_rows RUN M N K SCHEDULE ROWS_PER_WG TILE_N STAGES: ncu_rows of gemm_sm90_twin's timed
# launch (after two warm-ups) of that row, raster M, swizzle 1, one wave of persistent CTAs
# (run_gemm_requests_ncu.sh, run_l2_slices.sh; gemm_sm90_twin built by build_sm90).
twin_ncu_rows() {
  ncu_rows "$1" k_gemm 2 "$bin/gemm_sm90_twin" --m "$2" --n "$3" --k "$4" --reps 1 --raster m --swizzle 1 --grid 0 \
    --schedule "$5" --rows-per-wg "$6" --tile-n "$7" --stages "$8"
}

# ncu_rows_header: the head of a CSV of ncu_rows lines: the silicon header, the ncu version and the
# column names.
ncu_rows_header() {
  silicon_header
  echo "# ncu,$(ncu --version | tail -n 1)"
  echo "run,metric,value"
}

# twin_csv_headers CSV NCU_CSV: start the two files twin_timed_and_counted appends to, each with the
# silicon header and its column names.
twin_csv_headers() {
  { silicon_header; echo "m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,cycles,clock_mhz,span_ns,event_ns,tflops,check"; } > "$1"
  { silicon_header; echo "m,n,k,schedule,rows_per_wg,tile_n,stages,raster,swizzle,grid,dram_read_bytes,l2_read_sectors,l2_read_hit_sectors,ncu_sm_hz"; } > "$2"
}

# twin_timed_and_counted CSV NCU_CSV ARG...: gemm_sm90_twin ARG... (built by build_sm90) timed (its
# row appended to CSV) and counted by ncu with $metrics (the third launch; appended to NCU_CSV after
# the row's first ten columns): run_gemm_locality.sh, run_gemm_k_sweep.sh.
twin_timed_and_counted() {
  local csv=$1 ncu_csv=$2 timed counted
  shift 2
  timed=$(timeout 120 "$bin/gemm_sm90_twin" "$@" | tail -n 1) || timed="# FAILED $*"
  counted=$(ncu_values k_gemm 2 "$bin/gemm_sm90_twin" "$@" --reps 1) || counted=",,,"
  echo "$timed" >> "$csv"
  echo "$(cut -d, -f1-10 <<< "$timed"),$counted" >> "$ncu_csv"
  tail -n 1 "$csv"
  tail -n 1 "$ncu_csv"
}

# fabric_build: builds h100_l2_partitions and gemm_sm90_twin and writes this machine's map of the
# L2's partitions to $parts (run_l2_fabric_ncu.sh, run_l2_fabric_ops_ncu.sh).
fabric_build() {
  build_sm90 h100_l2_partitions gemm_sm90_twin
  parts="$bin/partitions.txt"
  "$bin/h100_l2_partitions" map "$parts" > /dev/null
}

# ncu_app KERNEL_REGEX PROGRAM [ARG...]: PROGRAM run once under ncu in application replay (the
# launches in the program's own order and timing, the GPU's own clock, the L2 as the program leaves
# it), $metrics of every launch of a kernel matching KERNEL_REGEX, raw CSV (with the program's
# output) in $bin/ncu.txt for ncu_metrics.py (fabric_point_values, run_gemm_clocks.sh).
ncu_app() {
  local kernel=$1
  shift
  timeout 300 ncu --replay-mode application --clock-control none --cache-control none -k "regex:$kernel" \
    --metrics "$metrics" --csv --page raw --print-units base "$@" > "$bin/ncu.txt" 2>&1
}

# fabric_point_values POINT: the $metrics (comma-separated) of h100_l2_partitions sweep POINT's
# measured kernel under ncu_app, printed comma-separated; non-zero exit if ncu profiled nothing (its
# output stays in $bin/ncu.txt).
fabric_point_values() {
  ncu_app k_measure "$bin/h100_l2_partitions" sweep "$parts" "$1"
  python3 ncu_metrics.py "$bin/ncu.txt" ${metrics//,/ }
}
