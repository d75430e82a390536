// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The first-use check of the SSIMULACRA2 kernels: before an execution space computes its first score in a
// process, every functor type of the pipeline is launched inside a layout probe (impl/ssim/SelfCheck.hpp), and a
// functor that the device compiler lays out differently from the host compiler (the mdspan View under nvcc:
// KernelArrays.hpp) makes it throw std::runtime_error naming the kernel, instead of scores computed from
// misread pointers. Less than a millisecond, once per process and execution space.

#include <kssim/impl/ssim/SelfCheck.hpp>
#include <kssim/impl/ssimulacra2/Downscale.hpp>
#include <kssim/impl/ssimulacra2/ErrorMaps.hpp>
#include <kssim/impl/ssimulacra2/Features.hpp>
#include <kssim/impl/ssimulacra2/Linearize.hpp>
#include <kssim/impl/ssimulacra2/Planes.hpp>
#include <kssim/impl/ssimulacra2/RecursiveBlur.hpp>
#include <kssim/impl/ssimulacra2/Xyb.hpp>

namespace kssim::impl::s2 {

// Probes every functor type that a score dispatches (iir_pass: the blocked horizontal and the fused
// vertical pass of each mode); throws std::runtime_error (self_check_failed) on any failure.
template <class ExecSpace>
void run_self_check(const ExecSpace& exec, SelfCheckFault fault = SelfCheckFault::None) {
  probe_layout<ExecSpace, float, InputCheckFunctor>(exec, "ssimulacra2::check_input", fault);
  probe_layout<ExecSpace, float, RowKernel<LinearizeFunctor>>(exec, "ssimulacra2::linearize", fault);
  probe_layout<ExecSpace, float, RowKernel<DownscaleFunctor>>(exec, "ssimulacra2::downscale", fault);
  probe_layout<ExecSpace, float, RowKernel<XybFunctor>>(exec, "ssimulacra2::xyb", fault);
  probe_layout<ExecSpace, float, IirPass<2, IirMode::Reference, true, WriteSink<2>>>(exec, "ssimulacra2::blur_rows<reference>", fault);
  probe_layout<ExecSpace, float, IirPass<2, IirMode::Plain, false, WriteSink<2>>>(exec, "ssimulacra2::blur_columns<reference>", fault);
  probe_layout<ExecSpace, float, IirPass<3, IirMode::Distorted, true, WriteSink<3>>>(exec, "ssimulacra2::blur_rows<distorted>", fault);
  probe_layout<ExecSpace, float, IirPass<3, IirMode::Plain, false, ErrorSink>>(exec, "ssimulacra2::blur_columns<error maps>", fault);
  probe_layout<ExecSpace, float, FeatureFunctor>(exec, "ssimulacra2::features", fault);
  probe_layout<ExecSpace, float, ScoreFunctor<float>>(exec, "ssimulacra2::scores<float>", fault);
  probe_layout<ExecSpace, float, ScoreFunctor<double>>(exec, "ssimulacra2::scores<double>", fault);
}

// Runs the check once per process and execution space; a failed check throws again at every call.
template <class ExecSpace>
void ensure_self_checked(const ExecSpace& exec) {
  static const bool checked = (run_self_check<ExecSpace>(exec), true);
  (void)checked;
}

}  // namespace kssim::impl::s2
