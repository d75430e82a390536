#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the barrier ablation of the fused forward into a COPY of the tree (never the checkout):

    python3 perf_tests/gpu/ablate_barriers.py /tmp/abl      # /tmp/abl: a copy made with `git archive HEAD`

Each of the three team barriers of the forward's tile loop (FusedForward::run) becomes switchable, so that
variant_sweep.sh can time the forward without them: a bound on what a forward with fewer barriers per tile
could gain (perf_tests/README.md, "Where the time goes"). Results are wrong without the barriers; the plan's
self-check is switched off with KSSIM_ABLATION. Switches (-D):
  KSSIM_ABL_NO_STAGE_BARRIER     staging (and the halo carry, tile k-1's item sums) -> row pass
  KSSIM_ABL_NO_ROW_COL_BARRIER   row pass (and tile k-1's total) -> column pass
  KSSIM_ABL_NO_TILE_END_BARRIER  column pass -> the next tile's staging
  KSSIM_ABL_NO_BARRIERS          all three
Stops with an error if the kernel no longer has one of the barriers where it is expected."""
import pathlib
import sys


def replace_once(text, old, new, where):
    if text.count(old) != 1:
        sys.exit(f"ablate_barriers.py: expected exactly one match in {where} for:\n{old}")
    return text.replace(old, new)


def guarded(condition, line):
    return f"#if !defined(KSSIM_ABL_NO_BARRIERS) && !defined({condition})\n{line}#endif\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    if (root / ".git").exists():
        sys.exit("ablate_barriers.py: give it a copy of the tree, not a git checkout")
    ff = root / "include/kssim/impl/schedules/FusedForward.hpp"
    s = ff.read_text()
    stage_end = ("        Kokkos::single(Kokkos::PerTeam(team), [&]() { sums.l1.tile_sums[first_sum + std::size_t(k) * "
                 "tiles_x] = l1; });\n      }\n")
    s = replace_once(s, stage_end + "      team.team_barrier();\n",
                     stage_end + guarded("KSSIM_ABL_NO_STAGE_BARRIER", "      team.team_barrier();\n"), ff)
    row_end = ("                       [&]() { sums.tile_sums[first_sum + std::size_t(k - 1) * tiles_x] = "
               "item_sums.total(); });\n")
    s = replace_once(s, row_end + "      team.team_barrier();\n",
                     row_end + guarded("KSSIM_ABL_NO_ROW_COL_BARRIER", "      team.team_barrier();\n"), ff)
    tile_end = ("      team.team_barrier();  // the next tile overwrites the planes this one read; its item sums are "
                "complete\n")
    s = replace_once(s, tile_end, guarded("KSSIM_ABL_NO_TILE_END_BARRIER", tile_end), ff)
    ff.write_text(s)
    plan = root / "include/kssim/impl/ssim/Plan.hpp"
    p = plan.read_text()
    check = "    if (self_check) {\n      ensure_self_checked<ExecSpace, T>(exec);"
    p = replace_once(p, check, "#if defined(KSSIM_ABLATION)  // ablation builds compute other numbers on purpose\n"
                     "    self_check = false;\n#endif\n" + check, plan)
    plan.write_text(p)
    print("ablate_barriers.py: patched", ff, "and", plan)


if __name__ == "__main__":
    main()
