# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The README's install command, checked: `pip install --no-build-isolation src/python` into a fresh virtual
# environment that sees the system's PyTorch (Debian's pip refuses to write into the system's Python), then
# kssim imported from outside the source tree. Arguments: -DPYTHON= -DSOURCE=<repo>/src/python -DWORK=<dir>.
set(venv ${WORK}/venv)
file(REMOVE_RECURSE ${venv})
execute_process(COMMAND ${PYTHON} -m venv --without-pip --system-site-packages ${venv} COMMAND_ERROR_IS_FATAL ANY)
# pip --python: the system's pip installs into the environment; -C build-dir: compile under the CTest tree;
# -O0: this checks the packaging (configure, build, install component, import, a call), not code generation,
# which kssim_python_torch tests on the same sources at -O3; 35 s instead of 90 (2 cores, 2026-12-04).
execute_process(COMMAND ${PYTHON} -m pip --python ${venv}/bin/python install --no-build-isolation
                        -C build-dir=${WORK}/pip-build -C cmake.define.CMAKE_CXX_FLAGS_RELEASE=-O0 ${SOURCE}
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${venv}/bin/python -c [=[
import pathlib, sys, torch, kssim
assert pathlib.Path(kssim.__file__).is_relative_to(sys.prefix), kssim.__file__
x = torch.rand(2, 3, 20, 21, requires_grad=True)
value = kssim.fused_ssim(x, x.detach())
assert value.item() == 1.0, value
value.backward()
print(f"kssim {kssim.__version__} from {kssim.__file__}: {kssim.build_info()}; fused_ssim(x, x) = {value.item()}")
]=] WORKING_DIRECTORY ${WORK} COMMAND_ERROR_IS_FATAL ANY)
