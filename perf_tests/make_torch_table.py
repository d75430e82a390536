#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The torch-vs-fused-ssim table of one GPU run (perf_tests/gpu/run's bench-cpp.json and bench-torch.json):

  case,padding,shape,kssim_cpp_us,kssim_torch_us,fused_ssim_us,ratio

case fwd or fwd+bwd; kssim_cpp_us the C++ benchmark's time with the L2 flushed (kssim_perf_tests counter
us_flushed) of the kernels kssim.fused_ssim launches: Window::Float32, fused-ssim's window, its default
(family ssim2d-float32; runs without it fall back to family ssim2d, the exact window); kssim_torch_us and fused_ssim_us triton's do_bench median through PyTorch (it flushes the L2
too), from the same process; ratio = kssim_torch_us / fused_ssim_us. Also prints the binding's overhead
(kssim_torch_us - kssim_cpp_us) per row, and writes the C++-vs-peer table with --cpp-csv
(case,padding,shape,kssim_us,fused_ssim_us,ratio: kssim's C++ time, the exact window (the C++ API's
default, family ssim2d), against fused-ssim's). With --volumes-csv, the volumes' table:
case,padding,shape,kssim_stages_us,kssim_fused_us,kssim_us,fused_ssim3d_us,ratio (the C++ times of the stage
and slice-fused schedules forced and of the router's choice, us_flushed; fused_ssim3d's do_bench time through
PyTorch; ratio = kssim_us / fused_ssim3d_us).

  python3 perf_tests/make_torch_table.py bench-cpp.json bench-torch.json --csv torch.csv --cpp-csv cpp.csv \
      --volumes-csv volumes.csv
"""

import argparse
import csv
import json


def cpp_times(path, family):
    with open(path) as f:
        data = json.load(f)
    times = {}
    for b in data.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if len(parts) < 6 or parts[0] != family or parts[2] != "float" or parts[5] not in ("Cuda", "HIP"):
            continue
        if b.get("error_occurred") or "us_flushed" not in b:
            continue
        times[(parts[1], parts[3], parts[4])] = float(b["us_flushed"])
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cpp_json")
    p.add_argument("torch_json")
    p.add_argument("--csv", required=True)
    p.add_argument("--cpp-csv")
    p.add_argument("--volumes-csv")
    args = p.parse_args()
    exact = cpp_times(args.cpp_json, "ssim2d")
    cpp = cpp_times(args.cpp_json, "ssim2d-float32") or exact  # the kernels the drop-in runs
    with open(args.torch_json) as f:
        torch_runs = json.load(f)
    rows, cpp_rows = [], []
    for r in torch_runs["results"]:
        if r.get("family") != "ssim2d":
            continue
        key = (r["mode"], r["padding"], r["shape"])
        k_cpp, k_exact = cpp.get(key), exact.get(key)
        k_torch = r.get("kssim_torch_do_bench_us")
        peer = r.get("fused_ssim_do_bench_us")
        if k_torch is None or peer is None:
            continue
        rows.append(dict(case=r["mode"], padding=r["padding"], shape=r["shape"],
                         kssim_cpp_us=round(k_cpp, 1) if k_cpp else "", kssim_torch_us=round(k_torch, 1),
                         fused_ssim_us=round(peer, 1), ratio=round(k_torch / peer, 3)))
        if k_exact:
            cpp_rows.append(dict(case=r["mode"], padding=r["padding"], shape=r["shape"], kssim_us=round(k_exact, 1),
                                 fused_ssim_us=round(peer, 1), ratio=round(k_exact / peer, 3)))
    rows.sort(key=lambda r: (r["case"], r["shape"], r["padding"]))
    cpp_rows.sort(key=lambda r: (r["case"], r["shape"], r["padding"]))
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    if args.cpp_csv and cpp_rows:
        with open(args.cpp_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(cpp_rows[0].keys()))
            w.writeheader()
            w.writerows(cpp_rows)
    print(f"{torch_runs['context'].get('device', '?')}, torch {torch_runs['context'].get('torch', '?')}")
    print(f"{'case':8s} {'padding':7s} {'shape':14s} {'C++':>8s} {'torch':>8s} {'peer':>8s} {'ratio':>6s} {'overhead':>8s}")
    for r in rows:
        over = r["kssim_torch_us"] - r["kssim_cpp_us"] if r["kssim_cpp_us"] != "" else float("nan")
        print(f"{r['case']:8s} {r['padding']:7s} {r['shape']:14s} {r['kssim_cpp_us']!s:>8s} {r['kssim_torch_us']:8.1f} "
              f"{r['fused_ssim_us']:8.1f} {r['ratio']:6.3f} {over:8.1f}")

    if args.volumes_csv:
        write_volumes(args.cpp_json, torch_runs, args.volumes_csv)


def write_volumes(cpp_json, torch_runs, path):
    """The volumes' table (module docstring) to path, and printed."""
    times = {name: cpp_times(cpp_json, family)
             for name, family in (("stages", "ssim3d@stages"), ("fused", "ssim3d@fused"), ("router", "ssim3d"))}
    rows = []
    for r in torch_runs["results"]:
        peer = r.get("fused_ssim_do_bench_us")
        key = (r["mode"], r["padding"], r["shape"])
        if r.get("family") != "ssim3d" or peer is None or key not in times["router"]:
            continue
        cell = {name: round(t[key], 1) if key in t else "" for name, t in times.items()}
        rows.append(dict(case=r["mode"], padding=r["padding"], shape=r["shape"], kssim_stages_us=cell["stages"],
                         kssim_fused_us=cell["fused"], kssim_us=cell["router"], fused_ssim3d_us=round(peer, 1),
                         ratio=round(times["router"][key] / peer, 3)))
    if not rows:
        print("no volume rows (bench-cpp.json needs ssim3d, bench-torch.json fused_ssim3d)")
        return
    rows.sort(key=lambda r: (r["case"], r["shape"], r["padding"]))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(",".join(str(v) for v in r.values()))


if __name__ == "__main__":
    main()
