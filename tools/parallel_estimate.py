#!/usr/bin/env python3
"""The figures of docs/parallel-simulation.md: python3 tools/parallel_estimate.py [BWSIM]

Measures, with bwsim run --cross-sm, how the events of the issue-21 runs couple the SMs, and how
the host's events per second change with the number of SMs the same work is spread over (host
cache locality); then estimates what a conservative parallel simulation with SM partitions over
8, 32 and 128 host threads would take. The measured columns come from the runs; the estimate's
assumptions are the constants below, each explained in the document.
"""
import json
import math
import subprocess
import sys

BWSIM = sys.argv[1] if len(sys.argv) > 1 else "build/bwsim"
B200, H100 = "sim_configs/b200.yaml", "sim_configs/h100.yaml"

LOOKAHEAD = 150          # cycles: the SM -> L2 request path, half the TMA unit's 294-cycle L2-hit latency
BARRIER_STAGE_US = 0.2   # one cross-core cache-line hand-off per stage of a dissemination barrier
MESSAGE_US = 0.1         # a request or reply through a cross-thread queue (push and pop)
THREADS = (8, 32, 128)


def run(*args):
    out = subprocess.run([BWSIM, "run", *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def poisson_max_ratio(lam, parts):
    """E[max of `parts` independent Poisson(lam)] / lam: the imbalance of one round."""
    if lam <= 0:
        return 1.0
    k_hi = int(lam + 12 * math.sqrt(lam) + 20)
    pmf, cdf, cdfs = math.exp(-lam), 0.0, []
    for k in range(k_hi + 1):
        if k:
            pmf *= lam / k
        cdf += pmf
        cdfs.append(min(cdf, 1.0))
    expected = sum(1.0 - cdfs[k] ** parts for k in range(k_hi + 1))
    return expected / lam


def main():
    runs = [
        ("gemm 8192^3 2-SM (b200)", ["gemm_persistent", "--config", B200, "--m", "8192", "--n", "8192", "--k", "8192"], 74),
        ("fmha 1x16x16384 d128 (b200)", ["fmha", "--config", B200, "--batch", "1", "--heads", "16", "--seqlen", "16384"], 148),
        ("gemm 16384^3 2-SM (b200)", ["gemm_persistent", "--config", B200, "--m", "16384", "--n", "16384", "--k", "16384"], 74),
        ("gemm_sm90 8192^3 (h100)", ["gemm_sm90", "--config", H100, "--m", "8192", "--n", "8192", "--k", "8192"], 22),
    ]
    # Host locality: the same work on fewer SMs (sm.count overridden), events per second.
    locality = {}
    print("## Host events per second against the SMs the work is spread over\n")
    print("| run | SMs | events | wall s | M events/s | vs 148 SMs |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, args in [("fmha 1x16x4096", ["fmha", "--config", B200, "--batch", "1", "--heads", "16", "--seqlen", "4096"]),
                       ("gemm 4096x4096x8192", ["gemm_persistent", "--config", B200, "--m", "4096", "--n", "4096", "--k", "8192"])]:
        base = None
        for sms in (148, 37, 16):
            d = run(*args, "--set", f"sm.count={sms}")
            rate = d["events"] / d["wall_seconds"]
            base = base or rate
            locality[(name.split()[0], sms)] = base / rate  # cost per event relative to 148 SMs
            print(f"| {name} | {sms} | {d['events']} | {d['wall_seconds']:.3f} | {rate / 1e6:.2f} | {rate / base:.2f}x |")

    print("\n## Couplings (bwsim run --cross-sm)\n")
    print("| run | cycles | events | wall s | one SM only | memory request: events, least lead | "
          "memory reply: least lead | cluster: events, least lead | CPC gate: events | launch: events |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = []
    for name, args, units in runs:
        d = run(*args, "--cross-sm")
        c, k = d["cross_sm"], d["cross_sm"]["kinds"]
        share = lambda kind: f"{k[kind]['event_share'] * 100:.1f}%"
        lead = lambda kind: "-" if k[kind]["min_lead"] is None else str(k[kind]["min_lead"])
        print(f"| {name} | {d['cycles']} | {d['events']} | {d['wall_seconds']:.2f} | {c['single_sm_share'] * 100:.1f}% | "
              f"{share('memory_request')}, {lead('memory_request')} | {lead('memory_reply')} | "
              f"{share('cluster')}, {lead('cluster')} | {share('cpc_gate')} | {k['launch']['events']} |")
        results.append((name, d, units))

    print(f"\n## Estimate: conservative windows of {LOOKAHEAD} cycles, SM partitions over host threads\n")
    print("| run | partition units | rounds | events per SM per round | " +
          " | ".join(f"{p} threads: s (speedup)" for p in THREADS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(THREADS))
    for name, d, units in results:
        events, wall, sms = d["events"], d["wall_seconds"], d["sms_used"]
        rounds = max(1, d["cycles"] // LOOKAHEAD)
        per_event = wall / events
        kinds = d["cross_sm"]["kinds"]
        messages = kinds["memory_request"]["operations"] + kinds["memory_reply"]["operations"]
        cells = []
        for p in THREADS:
            parts = min(p, units)
            lam = events / rounds / parts  # events per thread per round
            sms_per_thread = max(1, sms // parts)
            family = "fmha" if name.startswith("fmha") else "gemm"
            near = min((s for s in (148, 37, 16) if s >= sms_per_thread), default=16)
            cost = per_event * locality.get((family, near), 1.0)
            round_s = lam * poisson_max_ratio(lam, parts) * cost + BARRIER_STAGE_US * 1e-6 * math.ceil(math.log2(parts))
            t = rounds * round_s + messages * MESSAGE_US * 1e-6 / parts
            cells.append(f"{t:.3f} ({wall / t:.1f}x)")
        print(f"| {name} | {units} | {rounds} | {events / rounds / sms:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
