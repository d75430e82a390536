#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The source tarballs perf_tests/gpu/run takes (`--src`, README.md "Inputs"), made from the git snapshots that the
# session tool `fetch` leaves on this machine, with the CUDA-13 patches applied to both Kokkos trees. carry/ is
# git-ignored: a new checkout has none, and nothing fetched is ever committed.
#
#   fetch github:kokkos/kokkos, github:rahul-goel/fused-ssim, github:OpsiClear/fussim,
#         github:VainF/pytorch-msssim, github:google/googletest, github:google/benchmark   (the session tool)
#   perf_tests/gpu/make_carry.sh [MIRRORS] [PATCHES] [OUT]
#
# MIRRORS: where `fetch` put them (default /work/.mirror, one owner+name/repo git directory each); PATCHES: the
# folder with kokkos-4.6.01-cuda13.patch and kokkos-develop-28848dfa8-cuda13.patch (default ../shared/deps next to
# the repository); OUT: default carry/src. Kokkos 4.6.01 is the tag, develop the snapshot's HEAD (28848dfa8); the
# peers are their snapshots' HEAD (fused-ssim 0ac916a, fussim df8677f when last made). A few seconds.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mirrors=${1:-/work/.mirror}
patches=${2:-$repo/../shared/deps}
out=${3:-$repo/carry/src}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git_dir() {  # the snapshot of owner/name, or a clear error
  local d="$mirrors/${1/\//+}/repo"
  git -C "$d" rev-parse --git-dir > /dev/null 2>&1 || { echo "make_carry.sh: no snapshot of $1 in $d (fetch github:$1 first)" >&2; exit 2; }
  echo "$d"
}

kokkos=$(git_dir kokkos/kokkos)
for tree in "4.6.01 4.6.01 kokkos-4.6.01-cuda13.patch" "develop HEAD kokkos-develop-28848dfa8-cuda13.patch"; do
  set -- $tree
  git -C "$kokkos" archive --prefix="kokkos-$1/" "$2" | tar -x -C "$tmp"
  patch -s -d "$tmp/kokkos-$1" -p1 < "$patches/$3"
  tar -czf "$out/kokkos-$1.tar.gz" -C "$tmp" "kokkos-$1"
  echo "kokkos-$1.tar.gz: $(git -C "$kokkos" rev-parse --short "$2") + $3"
done
for peer in rahul-goel/fused-ssim:fused-ssim OpsiClear/fussim:fussim VainF/pytorch-msssim:pytorch-msssim \
            google/googletest:googletest google/benchmark:benchmark; do
  d=$(git_dir "${peer%%:*}")
  git -C "$d" archive --prefix="${peer#*:}/" HEAD | gzip -1 > "$out/${peer#*:}.tar.gz"
  echo "${peer#*:}.tar.gz: $(git -C "$d" rev-parse --short HEAD)"
done
ls -l "$out"
