#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Executed warp instructions per source line of one GPU kernel (NVIDIA), to see where a kernel's
instructions go when it is instruction-bound.

Joins Nsight Compute's per-SASS-instruction counts with the line table that nvdisasm reads from the
binary (build with -lineinfo). On the device, for example for the map pass of the stage benchmarks:

  ncu --section SourceCounters --page source --print-source sass --csv -k regex:ColumnBlur \\
      --launch-count 1 kssim_perf_tests --benchmark_filter='stages/column_map/float/Cuda' > sass.csv
  cuobjdump -xelf all kssim_perf_tests && for c in *.cubin; do nvdisasm -g -c $c > $c.dis; done
  python3 perf_tests/ncu_lines.py sass.csv *.cubin.dis

The kernel's disassembly is found by matching its opcode sequence; the output lists source lines
(innermost inlined location) by instructions executed.
"""
import collections
import csv
import re
import sys


def opcodes(lines):
    return [re.sub(r'^@!?U?P\w+\s+', '', s).split(' ')[0] for s in lines]


def main():
    rows = list(csv.reader(open(sys.argv[1], errors='replace')))
    hdr = next(i for i, r in enumerate(rows) if 'Source' in r and any('Instructions Executed' in c for c in r))
    h = rows[hdr]
    si = h.index('Source')
    ei = [j for j, c in enumerate(h) if c.startswith('Instructions Executed')][0]
    seq = []
    for r in rows[hdr + 1:]:
        if len(r) <= max(si, ei):
            continue
        try:
            seq.append((float(r[ei].replace(',', '')), r[si].strip()))
        except ValueError:
            continue
    target = opcodes([s for _, s in seq])
    match = None
    for path in sys.argv[2:]:
        funcs, cur, line = {}, None, None
        for text in open(path, errors='replace'):
            m = re.match(r'\s*\.text\.(\S+):', text)
            if m:
                cur, line = m.group(1), None
                funcs[cur] = []
                continue
            m = re.search(r'//## File "([^"]+)", line (\d+)', text)
            if m:
                line = (m.group(1).split('/')[-1], int(m.group(2)))
                continue
            m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(.*?);', text)
            if m and cur is not None:
                funcs[cur].append((m.group(1).strip(), line))
        for ins in funcs.values():
            if len(ins) == len(target) and opcodes([s for s, _ in ins]) == target:
                match = ins
    if match is None:
        sys.exit(f'no function with the {len(target)} instructions of the profile found in the disassembly')
    per, total = collections.Counter(), 0.0
    for (n, _), (_, where) in zip(seq, match):
        per[where] += n
        total += n
    print('warp instructions executed', int(total))
    for where, n in per.most_common(40):
        print(f'{n:12.0f} {100 * n / total:5.1f}%  {where[0]}:{where[1]}' if where else f'{n:12.0f}  (no line)')


if __name__ == '__main__':
    main()
