import subprocess, re, math, sys
reasons = [
  (r'^store_order_issue_', "what a TMA store costs its thread: silicon's first of a launch holds it 379 cycles (the descriptor's fetch, as tma.descriptor_fetch_latency 234, and the unit's read of the 8 KiB, 82 at 100 B/clk) and each next one back to back 73-93 more (the unit takes one store's command at a time); the model issues in tma.issue_cycles (2) and charges the descriptor to the store's latency. An isolated store in gemm_sm90's epilogue holds its thread 30-40 cycles (phase_logs/chunks)"),
  (r'^epilogue_bg_.*_cvt_op', "the background beside WG1's conversions and fp32 adds (no SMEM): silicon's wgmmas take 1.3-1.9x (the register file's ports, shared with the tensor pipe's accumulators) and the TMA thread's loop 1.2-1.6x (its warp shares sub-partition 0's issue with WG1's warp 0); the model has neither"),
  (r'^epilogue_bg_.*_cvt_cycles', "conversions and adds alone, no SMEM: silicon's slow by 5-29% beside wgmma or TMA traffic (register-file ports, issue slots), which the model does not share"),
  (r'^epilogue_bg_wgmma64_', "wgmma.m64n64k16 SS one in flight: 54 cycles each alone on silicon (the model 46.5: wgmma.latency_ss 60 is the mean of N = 64..256), and beside it WG1's stores take 164 cycles a chunk where its 4 KiB per 54-67 cycles (61-76 B/clk) would leave them 52-67 B/clk (the model 95): the small shape takes more of the port than its bytes"),
  (r'^epilogue_bg_.*_(st|staging)_op', "the wgmmas beside WG1's stores: silicon's take 3-8% longer (the port shared both ways); the model serves the units first (hw/sm/SmemBackground), so its wgmmas keep their rate"),
  (r'^epilogue_bg_tma_load_', "8 KiB L2-resident TMA loads, 4 in flight from one SM: silicon 208 cycles each (39 B/clk), the model 130 (63 B/clk: tma.load_latency and bytes_per_cycle are set on lone boxes); the model's faster loads take more of the SMEM port (their bytes spread over each request's time), so WG1's stores take 127 cycles a chunk against 105; at silicon's rate the rule gives about 97"),
  (r'^epilogue_bg_tma_store_st_cycles', "beside TMA stores WG1's stores take 74 cycles a chunk on silicon (70 alone), the model's 64 in both: the port's 128 B/clk binds the model, silicon's one warpgroup is 9% slower than that alone (epilogue_st_wg1), and the stores' SMEM reads take none of the port in either"),
  (r'^store_order_.*_w1_', "one warp's 8 KiB stores: silicon reads the first out 682 cycles after issue in a launch (then one per 259: the write path's 31.5 B/clk, in order), the model 523-536 (descriptor fetch 234 + 260 + store_latency 39, set from the warm tma_store_latency row): about 150 cycles of a launch's first store are not modeled (as store_l2_latency_cycles in tma_reduce_tolerances.csv)"),
  (r'^store_order_.*_w2_', "two warps' stores issued together: on silicon both warps' i-th stores leave together from the start; in the model they share the write path (WarpSharedPath) only once the TMA unit has started them, and it starts one warp's whole batch (at 100 B/clk) before the other's, so one warp's stores end early and the other's late; the first store's ~150 cycles are missing as in the w1 rows"),
  (r'^epilogue_fence_bar_wg2', "two warpgroups' fences and bar.syncs, no stores: silicon overlaps one warpgroup's fences (6.4 cycles each, one at a time SM-wide) with the other's bars, 96.5-98.6 cycles a chunk; the model's bar.sync waits for all the port's queued cycles, the fences' among them (as silicon's does beside stores: no_tma_wg2), 111"),
  (r'^epilogue_fence_wg', "at 132 SMs the fences take 11-14% longer than on one SM (27.6-28.7 cycles a chunk for 4 warps), which the model's per-SM port does not see; one SM's rows are within 7%"),
  (r'^epilogue_(st_fence|st_bar|no_tma)_wg2', "two warpgroups' stores with fences and no bar.sync: silicon 219 cycles a chunk, its warpgroups in lockstep (the port shared instruction by instruction, every warp's fence after all the stores); the model's port serves each warp's stores whole, first come first served, and each fence takes its 6 cycles behind what is queued: 176. With bar.syncs, which wait for the port's queued cycles (Cta::enlist), the model is within 8% (st_bar 191 against 207, no_tma 239 against 246); at 132 SMs those run 3% longer on silicon"),
  (r'^epilogue_(st_wg1|no_tma_wg1)', "at 132 SMs one warpgroup's chunk takes 4-6% longer than on one SM (74 against 70 cycles for the stores), which the model's per-SM port does not see; one SM's rows are within 10%"),
  (r'^epilogue_(full|no_fence|bar_tma)_', "every SM storing (132): silicon's SMEM reads (wait_group.read) wait for the L2's write rate, 15.5 B/clk per SM (bar_tma rows), the model's only for the SM's write path (31.5); waiting for the store's place in the model's FIFO L2 link stalls GEMM epilogues behind queued loads instead (TmaUnit::on_store_sent); one SM's rows, which the write path binds, are within 7%"),
]
rows = {}
for chip in ['h100', 'h200']:
    out = subprocess.run(['build/bwsim', 'compare', f'tools/calibration/{chip}_epilogue.csv', '--config', f'sim_configs/{chip}.yaml'],
                         capture_output=True, text=True).stdout
    for l in out.splitlines():
        m = re.match(r'(\S+)\s+(\d+)\s+\d+\s+\d+\s+([+-][\d.]+)%', l)
        if not m: continue
        err = abs(float(m.group(3))) / 100
        if err <= 0.10: continue
        key = (m.group(1), m.group(2))
        rows[key] = max(rows.get(key, 0), err)
print("# Rows of {h100,h200}_epilogue.csv (h100_epilogue.cu: the GEMM epilogue's parts, the TMA store order and")
print("# the staging beside wgmma / TMA traffic; tools/calibration/epilogue_tolerances.py writes this file) that")
print("# bwsim is not held to the 10% target for, each with the mechanism the model lacks: the work left.")
print("scenario,param,tolerance,reason")
for (s, p), e in sorted(rows.items()):
    reason = next((r for pat, r in reasons if re.search(pat, s)), None)
    if reason is None: sys.exit(f"no reason for {s}")
    tol = math.ceil((e + 0.02) * 100) / 100
    print(f'{s},{p},{tol:.2f},"{reason}"')
