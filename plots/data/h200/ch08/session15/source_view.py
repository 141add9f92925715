#!/usr/bin/env python3
"""Session 15's ncu source view of chapter 8's default grouped kernel against DeepGEMM's, on
bal_g4x8192_n4096_k7168 (one launch each; call 2 of session 15, binaries ec496da). Prints the
README's table: per class of SASS instruction, the share of the warp stall samples (the idle
warps at the cluster barrier left out) and the instructions executed per consumer warp and per
128 columns of a 128-deep K block.

Inputs: ours, ncu --page source --csv (../../ncu/ch08_grouped_bal_g4x8192_n4096_k7168_source_ec496da.csv.gz);
DeepGEMM's, the per-opcode counts summed from its CSV (deepgemm_opcodes_ec496da.json; its SASS is
not committed).
"""
import collections, csv, gzip, json, os, re

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.path.join(HERE, '../../ncu/ch08_grouped_bal_g4x8192_n4096_k7168_source_ec496da.csv.gz')
DG = os.path.join(HERE, 'deepgemm_opcodes_ec496da.json')


def klass(op):
    if op == 'WARPGROUP.DEPBAR': return 'WARPGROUP.DEPBAR (waiting for its own wgmma)'
    if op == 'FFMA': return 'FFMA (the promotion)'
    if op == 'QGMMA': return 'QGMMA (issue)'
    if op in ('SYNCS', 'BRA', 'YIELD', 'NOP'): return 'barrier waits and branches (SYNCS, BRA, YIELD, NOP)'
    if op in ('UCGABAR_WAIT', 'UCGABAR_ARV', 'BAR', 'EXIT', 'BSYNC', 'BSSY', 'WARPSYNC'):
        return 'idle warps, exit'
    if op in ('LDS', 'FMUL', 'SHFL'): return 'scales (LDS, FMUL, SHFL)'
    if op.startswith('U') or op == 'R2UR': return 'uniform datapath (descriptors, stage index)'
    if op in ('STSM', 'F2FP', 'UTMASTG', 'UTMALDG', 'UTMACMDFLUSH', 'STS', 'PRMT'):
        return 'epilogue, TMA, PRMT'
    return 'other integer and moves (MOV, LEA, PLOP3, IADD3, S2R, ...)'


def ours_opcodes():
    with gzip.open(OURS, 'rt') as f:
        rows = list(csv.reader(f))
    hdr = rows[1]
    i_src, i_ex = hdr.index('Source'), hdr.index('Instructions Executed')
    i_s = hdr.index('Warp Stall Sampling (All Samples)')
    out = collections.defaultdict(lambda: [0, 0])
    for r in rows[2:]:
        if len(r) < len(hdr): continue
        src = re.sub(r'^@!?U?P\w+\s+', '', r[i_src].strip()).split(' ')[0]
        op = src.split('.')[0]
        if op == 'WARPGROUP' and 'DEPBAR' in src: op = 'WARPGROUP.DEPBAR'
        out[op][0] += int(r[i_ex] or 0)
        out[op][1] += int(r[i_s] or 0)
    return out


def by_class(opcodes):
    ex, sm = collections.Counter(), collections.Counter()
    for op, (e, s) in opcodes.items():
        ex[klass(op)] += e
        sm[klass(op)] += s
    return ex, sm


def main():
    dg = json.load(open(DG))
    oe, os_ = by_class(ours_opcodes())
    de, ds = by_class(dg['opcodes'])
    # Per consumer warp and 4096 output elements of a 128-deep K block (128 FFMA per thread: ours,
    # 4096 tiles of 256 x 128 over 8 consumer warps, is one warp's K block; DeepGEMM's 5632 tiles of
    # 128 x 192 give a warp 3072 elements per K block, 3/4 of that).
    wo = 4096 * 56 * 8
    wd = dg['tiles'] * dg['k_blocks'] * dg['consumer_warps'] * dg['tile_rows'] * dg['tile_cols'] / (256 * 128)
    so = sum(v for k, v in os_.items() if not k.startswith('idle'))
    sd = sum(v for k, v in ds.items() if not k.startswith('idle'))
    print('| instructions | stall samples, ours | stall samples, DeepGEMM | executed per warp and '
          '4096 elements of a K block, ours | the same, DeepGEMM |')
    print('|---|---:|---:|---:|---:|')
    for k in sorted(set(oe) | set(de), key=lambda k: -os_[k]):
        idle = k.startswith('idle')
        print(f"| {k} | {'-' if idle else f'{100 * os_[k] / so:.1f}%'} | "
              f"{'-' if idle else f'{100 * ds[k] / sd:.1f}%'} | {oe[k] / wo:.1f} | {de[k] / wd:.1f} |")
    print(f'| all | 100% | 100% | {sum(oe.values()) / wo:.1f} | {sum(de.values()) / wd:.1f} |')


if __name__ == '__main__':
    main()
