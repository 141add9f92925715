#!/usr/bin/env python3
"""Old against new binaries from one GPU call (session 19, calls 8 and 9): chapters 7 and 6's
executables in the order old, new, new, old. Usage: abcmp.py DIR (the unpacked ab_<commit>.txz:
`tar xJf ab_51a48c6.txz`, then `abcmp.py ab`). Prints a markdown table per chapter: the mean time
of each side and new / old, beside the same ratio for cuBLASLt in the same runs (its drift)."""
import json,glob,re,sys
def load(f):
    d=json.load(open(f))
    return {b['name'].split('/iterations')[0]: b['real_time'] for b in d['benchmarks'] if 'real_time' in b}
root=sys.argv[1]
for ch,impls in [('ch07',['ch07_block_scaled','cublaslt_block_scaled']),('ch06',['ch06_fast','cublaslt_per_tensor','ch06_promoted','cublaslt_per_tensor_promoted'])]:
    runs={}
    for f in sorted(glob.glob(f'{root}/{ch}_*.json')):
        i,v=re.search(r'_(\d)_(old|new)',f).groups(); runs[(int(i),v)]=load(f)
    shapes=sorted({n.split('/')[1] for r in runs.values() for n in r})
    print(f'| {ch} shape | impl | time old (runs 1, 4) | time new (runs 2, 3) | new / old | its cuBLASLt new / old |')
    print('|---|---|---|---|---:|---:|')
    for s in shapes:
        for imp in impls:
            if imp.startswith('cublaslt'): continue
            peer = 'cublaslt_block_scaled' if ch=='ch07' else ('cublaslt_per_tensor' if imp=='ch06_fast' else 'cublaslt_per_tensor_promoted')
            def g(name,v): return [runs[k][f'{name}/{s}'] for k in sorted(runs) if k[1]==v and f'{name}/{s}' in runs[k]]
            o,n=g(imp,'old'),g(imp,'new'); po,pn=g(peer,'old'),g(peer,'new')
            if len(o)<2 or len(n)<2: continue
            r=(sum(n)/len(n))/(sum(o)/len(o)); pr=(sum(pn)/len(pn))/(sum(po)/len(po))
            print(f"| {s} | {imp} | {', '.join('%.1f'%x for x in o)} | {', '.join('%.1f'%x for x in n)} | {r:.4f} | {pr:.4f} |")
