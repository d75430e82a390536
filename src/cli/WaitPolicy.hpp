// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How the OpenMP threads of the host backend wait between kernels.

namespace kssim::cli {

// libgomp's default is to spin at every barrier (up to 300000 pause instructions, milliseconds) before
// sleeping. On a machine whose cores other processes also use, a spinning thread takes the core that the
// thread it waits for (or another process) needs: `kssim ssimulacra2` over ten 1080p images took 6.0-7.9 s
// under a load average of 5 on 2 cores, and 3.5-3.8 s with OMP_WAIT_POLICY=passive (threads sleep at
// once; waking one costs microseconds, against a kernel's milliseconds). libgomp reads the variable once,
// when it is loaded, before main() runs: so, when the user has not set it and the host backend is OpenMP,
// the tool sets it to passive and executes itself again (Linux; about 10 ms). (Setting it from the
// executable's .preinit_array, which runs before libgomp's initialiser, does not work: glibc's own
// initialisation then resets the environment to the original one.) Returns when there is nothing to do or
// the new execution cannot start (the tool then runs with the default).
void prefer_passive_openmp_waits(char** argv);

}  // namespace kssim::cli
