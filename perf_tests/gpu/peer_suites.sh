#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The peers' own test suites, run against kssim on a CUDA machine (their code is fetched, never committed):
#   fused-ssim tests/test.py and tests/test_3D.py, with only `from fused_ssim import` changed to `from kssim import`;
#   pytorch-msssim tests/tests_loss.py and tests/tests_cuda.py, with `import pytorch_msssim` finding a package made
#   here that re-exports kssim.pytorch_msssim (its comparisons with scikit-image download a photograph, which
#   that machine cannot: unit_tests/python/test_peer_suites.py reproduces them).
#
#   perf_tests/gpu/peer_suites.sh SRC WORK OUT    SRC: fused-ssim and pytorch-msssim, as trees or .tar.gz; WORK: scratch;
#                                                 OUT: one log per suite and peer_suites.csv (suite,status,seconds)
# kssim and torch must be importable (PYTHONPATH). Exit status: the number of suites that failed.
set -uo pipefail
src=$1 work=$2 out=$3
mkdir -p "$work/peer-suites" "$out"
cd "$work/peer-suites" || exit 1
for tree in fused-ssim pytorch-msssim; do
  rm -rf "$tree"
  if [ -d "$src/$tree" ]; then cp -r "$src/$tree" .; else tar xzf "$src/$tree.tar.gz"; fi || {
    echo "peer_suites: no $tree (tree or .tar.gz) in $src"; exit 1; }
done

# fused-ssim's tests, import changed; pytorch_msssim (the real one) is their second reference.
for t in test.py test_3D.py; do
  sed 's/^from fused_ssim import/from kssim import/' "fused-ssim/tests/$t" > "kssim_$t"
  grep -q '^from kssim import' "kssim_$t" || { echo "peer_suites: no fused_ssim import in $t"; exit 1; }
done

# pytorch_msssim answered by kssim's front door for its users (kssim.pytorch_msssim: ssim, ms_ssim, SSIM, MS_SSIM
# under pytorch-msssim's signatures): the suites change nothing but what `import pytorch_msssim` finds.
mkdir -p shim/pytorch_msssim
cat > shim/pytorch_msssim/__init__.py <<'EOF'
from kssim.pytorch_msssim import MS_SSIM, SSIM, ms_ssim, ssim  # noqa: F401
EOF

status=0
echo "suite,status,seconds" > "$out/peer_suites.csv"
run() {  # run NAME DIR PYTHONPATH-PREFIX SCRIPT
  local name=$1 dir=$2 pp=$3 script=$4 t0=$SECONDS rc=0
  (cd "$dir" && PYTHONPATH="$pp${PYTHONPATH:+:$PYTHONPATH}" timeout 600 python3 "$script") > "$out/$name.log" 2>&1 || rc=$?
  local verdict=PASS; [ $rc -eq 0 ] || { verdict="FAIL($rc)"; status=$((status + 1)); }
  echo "$name,$verdict,$((SECONDS - t0))" >> "$out/peer_suites.csv"
  echo "peer suite $name: $verdict in $((SECONDS - t0)) s"
}
here=$PWD
run fused-ssim_test.py "$here" "$here/pytorch-msssim" kssim_test.py
run fused-ssim_test_3D.py "$here" "$here/pytorch-msssim" kssim_test_3D.py
run pytorch-msssim_tests_loss.py "$here/pytorch-msssim/tests" "$here/shim" tests_loss.py
run pytorch-msssim_tests_cuda.py "$here/pytorch-msssim/tests" "$here/shim" tests_cuda.py
exit $status
