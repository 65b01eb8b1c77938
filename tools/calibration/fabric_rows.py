#!/usr/bin/env python3
"""The `bwsim compare` rows of an h100_l2_partitions sweep of fabric modes (run_l2_fabric.sh,
run_partition_paces.sh): each point's l2_bytes_per_cycle (bytes read / the slowest CTA's clock64
span), the median over the sweep's rounds, as l2_fabric_<mode>_bytes_per_cycle,<MiB>,<value>.
Usage: fabric_rows.py SWEEP.csv SCRIPT   (SCRIPT: the script that ran it, named in the header)
"""
import collections
import statistics
import sys



def rows(lines):
    """(mode, MiB) -> the median bytes per cycle of the sweep's row lines, in their first order"""
    values = collections.defaultdict(list)
    for line in lines:
        if line.startswith("row,"):
            f = line.split(",")
            values[(f[2], int(f[3]))].append(float(f[10]))
    return {key: round(statistics.median(v)) for key, v in values.items()}


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    lines = open(argv[0]).read().splitlines()
    print(f"# Derived from {argv[0].split('/')[-1]} ({argv[1]}; the same run): each point's l2_bytes_per_cycle")
    print("# (bytes read / the slowest CTA's clock64 span), the median over its rounds")
    print("\n".join(line for line in lines if line.startswith(("# date", "# nvidia-smi,", "# gpu"))))
    print("scenario,param,value")
    for (mode, mib), value in rows(lines).items():
        print(f"l2_fabric_{mode}_bytes_per_cycle,{mib},{value}")


if __name__ == "__main__":
    main(sys.argv[1:])
