#!/usr/bin/env python3
"""The k-block loops' own code in a SASS listing (cuobjdump -sass gemm_sm90_twin on stdin).

For each k_gemm instantiation, every mbarrier wait (SYNCS.PHASECHK.TRANS64.TRYWAIT) followed
within 60 instructions by a TMA load (UTMALDG) or a wgmma (HGMMA): the instructions between them
on the fall-through path (the wait's retry branch included), and the listing of that stretch.
Used by run_gemm_paths.sh.
"""
import re
import sys

functions, name = {}, None
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1)
        functions[name] = []
        continue
    m = re.match(r"\s+/\*([0-9a-f]{4,5})\*/\s+(.*?)\s*;", line)
    if m and name:
        functions[name].append((int(m.group(1), 16), m.group(2)))
for name, code in functions.items():
    if "k_gemm" not in name:
        continue
    print(f"## {name}")
    for i, (address, text) in enumerate(code):
        if "TRYWAIT" not in text:
            continue
        gated = next((j for j in range(i + 1, min(i + 60, len(code))) if re.search(r"UTMALDG|HGMMA", code[j][1])), None)
        if gated is None:
            continue
        print(f"# wait at {address:#06x} -> {code[gated][1].split()[0]} at {code[gated][0]:#06x}: {gated - i - 1} instructions")
        for a, t in code[i:gated + 1]:
            print(f"  {a:#06x}  {t}")
