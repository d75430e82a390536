// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-only check: instantiates every public kssim entry point, and with it every kernel, for
// Kokkos::DefaultExecutionSpace. cmake/compile-check builds this translation unit with -c against Kokkos
// configurations for CUDA (sm_90) and HIP (gfx1100, gfx90a); nothing here is ever run or linked.
//
// Covered: float and double; rank 4 (N, C, H, W) and rank 5 (N, C, D, H, W); LayoutRight and LayoutLeft
// (plus const inputs and a LayoutStride View); kssim::ssim (host-returning and rank-0 View overloads),
// ssim_map, ssim_per_image, ssim_per_channel, ssim_grad, and kssim::SSIM<...>::forward / backward;
// kssim::ssimulacra2 and kssim::Ssimulacra2Reference<...>::compare; MS-SSIM (kssim::ms_ssim*, MSSSIM) and
// masked SSIM (kssim::masked_ssim*, MaskedSSIM, both mask modes) and the fused L1 + SSIM loss
// (kssim::l1_ssim_loss*, L1SSIMLoss) for both value types and ranks; SSIM and masked SSIM of 16-bit images
// (half and bfloat16, rank 4 and 5, 16-bit and float outputs) where the backend has them.

// Value types: KSSIM_CHECK_FLOAT, KSSIM_CHECK_DOUBLE and KSSIM_CHECK_16BIT select which ones this compile
// instantiates (none defined: all three). cmake/compile-check splits them between its targets so that every
// kernel family is compiled for every target in float, and double and 16-bit on fewer targets.
#if !defined(KSSIM_CHECK_FLOAT) && !defined(KSSIM_CHECK_DOUBLE) && !defined(KSSIM_CHECK_16BIT)
#define KSSIM_CHECK_FLOAT
#define KSSIM_CHECK_DOUBLE
#define KSSIM_CHECK_16BIT
#endif

#include <kssim/kssim.hpp>
#include <kssim/impl/mpi/BoxCopy.hpp>  // kssim::mpi's one kernel (the rest of kssim::mpi needs mpi.h)

#include <Kokkos_Core.hpp>
#include <array>
#include <type_traits>

namespace kssim_compile_check {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

template <class T, int Rank>
using data_t = std::conditional_t<Rank == 4, T****, T*****>;

template <class T, class Layout, int Rank>
using Image = Kokkos::View<data_t<T, Rank>, Layout, Mem>;

// Keeps the results observable so that nothing is discarded before instantiation.
inline volatile double sink = 0;

template <class T, class Layout, int Rank>
void instantiate(const Exec& exec) {
  using V = Image<T, Layout, Rank>;
  using CV = Image<const T, Layout, Rank>;
  V a, b, map, g1, g2;
  CV ca = a, cb = b;
  Kokkos::View<double, Mem> mean_d;
  Kokkos::View<T, Mem> mean_t;
  Kokkos::View<double*, Mem> per_image_d;
  Kokkos::View<T*, Mem> per_image_t;
  Kokkos::View<double**, Mem> per_channel_d;
  Kokkos::View<T**, Layout, Mem> per_channel_t;
  kssim::Options opts;
  opts.padding = kssim::Padding::Same;

  // The one-call functions.
  sink = kssim::ssim(exec, a, b);
  sink = kssim::ssim(exec, ca, cb, opts);
  kssim::ssim(exec, a, b, mean_d);
  kssim::ssim(exec, ca, b, mean_t, opts);
  kssim::ssim_map(exec, a, b, map);
  kssim::ssim_map(exec, ca, cb, map, opts);
  kssim::ssim_per_image(exec, a, b, per_image_d);
  kssim::ssim_per_image(exec, ca, cb, per_image_t, opts);
  kssim::ssim_per_channel(exec, a, b, per_channel_d);
  kssim::ssim_per_channel(exec, ca, cb, per_channel_t, opts);
  sink = kssim::ssim_grad(exec, a, b, g1);
  sink = kssim::ssim_grad(exec, a, b, g1, g2);
  sink = kssim::ssim_grad(exec, ca, cb, {}, g2, opts);

  // The reusable object.
  std::array<int, Rank> extents{};
  kssim::SSIM<Exec, T, Rank> loss(exec, extents, opts, kssim::Gradients::Both);
  loss.forward(a, b);
  loss.forward(ca, cb, map);
  sink = loss.value_on_host();
  loss.backward(g1);
  loss.backward(g1, g2, kssim::Accumulate::Yes, -0.2);
  loss.backward(loss.value(), g1, g2, kssim::Accumulate::Yes);
  loss.backward(Kokkos::View<const float, Mem>(), g1);  // a float32 upstream factor

  kssim::SSIM<Exec, T, Rank> forward_only(exec, extents, {}, kssim::Gradients::None);
  forward_only.forward(a, b);
}

// MS-SSIM and masked SSIM: every entry point (their kernels do not depend on the layout).
template <class T, int Rank>
void instantiate_ms_ssim_and_masked(const Exec& exec) {
  using V = Image<T, Kokkos::LayoutRight, Rank>;
  using CV = Image<const T, Kokkos::LayoutRight, Rank>;
  V a, b, map, mask, g1, g2;
  CV ca = a, cb = b, cm = mask;
  Kokkos::View<double, Mem> mean;
  Kokkos::View<double*, Mem> per_image;
  Kokkos::View<double**, Mem> per_channel;
  std::array<int, Rank> extents{};

  kssim::MSSSIMOptions mo;
  sink = kssim::ms_ssim(exec, a, b);
  kssim::ms_ssim(exec, ca, cb, mean, mo);
  kssim::ms_ssim_per_image(exec, a, b, per_image);
  kssim::ms_ssim_per_channel(exec, ca, cb, per_channel, mo);
  sink = kssim::ms_ssim_grad(exec, a, b, g1, g2, mo);
  kssim::MSSSIM<Exec, T, Rank> ms(exec, extents, mo, kssim::Gradients::Both);
  ms.forward(ca, cb);
  ms.backward(g1, g2, kssim::Accumulate::Yes, -0.5);
  ms.backward(ms.value(), g1);

  for (kssim::MaskMode mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized}) {
    sink = kssim::masked_ssim(exec, a, b, mask, mode);
    kssim::masked_ssim(exec, ca, cb, cm, mode, mean);
    kssim::masked_ssim_map(exec, a, b, cm, mode, map);
    kssim::masked_ssim_per_image(exec, a, b, mask, mode, per_image);
    kssim::masked_ssim_per_channel(exec, a, b, mask, mode, per_channel);
    sink = kssim::masked_ssim_grad(exec, ca, cb, cm, mode, g1, g2);
  }
  kssim::MaskedSSIM<Exec, T, Rank> masked(exec, extents, kssim::MaskMode::Normalized, {}, kssim::Gradients::Both);
  masked.forward(a, b, cm);
  masked.forward(ca, cb, mask, map);
  masked.backward(g1, g2, kssim::Accumulate::Yes, 0.5);
  masked.backward(masked.value(), g1);

  kssim::L1SSIMLossOptions lo;
  sink = kssim::l1_ssim_loss(exec, a, b);
  kssim::l1_ssim_loss(exec, ca, cb, mean, lo);
  sink = kssim::l1_ssim_loss_grad(exec, ca, cb, g1, g2, lo);
  kssim::L1SSIMLoss<Exec, T, Rank> l1(exec, extents, lo, kssim::Gradients::Both);
  l1.forward(ca, cb);
  l1.backward(g1, g2, kssim::Accumulate::Yes, 0.5);
  l1.backward(l1.value(), g1);
  l1.backward(Kokkos::View<const float, Mem>(), g1);
}

// A strided (e.g. subview) image: the kernels are the same, the host-side unification differs.
template <class T>
void instantiate_strided(const Exec& exec) {
  using S = Kokkos::View<T****, Kokkos::LayoutStride, Mem>;
  Image<T, Kokkos::LayoutRight, 4> full;
  S a = Kokkos::subview(full, Kokkos::ALL, Kokkos::pair<int, int>(0, 1), Kokkos::ALL, Kokkos::ALL);
  S g = a;
  sink = kssim::ssim(exec, a, a);
  sink = kssim::ssim_grad(exec, a, a, g, g);
}

// 16-bit images (kssim/impl/core/Storage.hpp): every SSIM entry point with 16-bit and float maps and gradients,
// and masked SSIM's kernels (below), for the 16-bit types the default execution space takes (Kokkos' half_t /
// bhalf_t on GPUs; on host spaces those where Kokkos has them, else the host compiler's _Float16 / __bf16);
// nothing where there is none.
template <class S>
inline constexpr bool usable_16bit_v =
    kssim::is_16bit_storage_v<S> && (!kssim::impl::is_host_16bit_v<S> || !kssim::impl::is_gpu_space_v<Exec>);
template <bool Half>
using storage_16bit_t =
    std::conditional_t<usable_16bit_v<std::conditional_t<Half, kssim::kokkos_half_t, kssim::kokkos_bhalf_t>>,
                       std::conditional_t<Half, kssim::kokkos_half_t, kssim::kokkos_bhalf_t>,
                       std::conditional_t<Half, kssim::host_float16_t, kssim::host_bfloat16_t>>;

template <bool Half, int Rank>
void instantiate_16bit(const Exec& exec) {
  using S = storage_16bit_t<Half>;
  if constexpr (usable_16bit_v<S>) {
    using V = Image<S, Kokkos::LayoutRight, Rank>;
    using F = Image<float, Kokkos::LayoutRight, Rank>;
    V a, b, map, g1, g2;
    Image<const S, Kokkos::LayoutLeft, Rank> ca, cb;
    F fmap, f1, f2;
    Kokkos::View<double, Mem> mean;
    Kokkos::View<double*, Mem> per_image;
    Kokkos::View<float**, Mem> per_channel;
    kssim::Options opts;
    opts.padding = kssim::Padding::Same;
    sink = kssim::ssim(exec, a, b);
    kssim::ssim(exec, ca, cb, mean, opts);
    kssim::ssim_map(exec, a, b, map);
    kssim::ssim_map(exec, ca, cb, fmap, opts);
    kssim::ssim_per_image(exec, a, b, per_image);
    kssim::ssim_per_channel(exec, ca, cb, per_channel);
    sink = kssim::ssim_grad(exec, a, b, g1, g2);
    sink = kssim::ssim_grad(exec, ca, cb, f1, f2, opts);
    std::array<int, Rank> extents{};
    kssim::SSIM<Exec, S, Rank> loss(exec, extents, opts, kssim::Gradients::Both);
    loss.forward(a, b, map);
    loss.backward(g1, g2, kssim::Accumulate::Yes, -0.2);
    loss.backward(loss.value(), g1);
    kssim::SSIM<Exec, S, Rank, float> to_float(exec, extents, {}, kssim::Gradients::Image1);
    to_float.forward(ca, cb, fmap);
    to_float.backward(f1);

    // Masked SSIM: its kernels, 16-bit outputs only (float outputs differ only in their stores, left to real
    // builds as CUDA's 16-bit kernels are); rank 4 only, its kernels take rank-5 arrays whatever the Views' rank.
    if constexpr (Rank == 4) {
      V mask;
      for (kssim::MaskMode mode : {kssim::MaskMode::Weights, kssim::MaskMode::Normalized}) {
        sink = kssim::masked_ssim_grad(exec, a, b, mask, mode, g1, g2, opts);
        kssim::MaskedSSIM<Exec, S, Rank> masked(exec, extents, mode, opts, kssim::Gradients::Both);
        masked.forward(a, b, mask, map);
        masked.backward(masked.value(), g1, g2, kssim::Accumulate::Yes);
      }
    }
  }
}

#if defined(KSSIM_CHECK_FLOAT)
// SSIMULACRA2: the uncached call and the cached reference (float images, LayoutRight and LayoutLeft).
void instantiate_ssimulacra2(const Exec& exec) {
  Kokkos::View<float****, Kokkos::LayoutRight, Mem> a;
  Kokkos::View<const float****, Kokkos::LayoutLeft, Mem> b;
  Kokkos::View<double*, Mem> s;
  Kokkos::View<float*, Mem> f;
  kssim::ssimulacra2(exec, a, a, s);
  kssim::ssimulacra2(exec, b, b, f);
  kssim::Ssimulacra2Reference<Exec> ref(exec, a);
  ref.compare(exec, a, s);
  ref.compare(exec, b, f);
  // The host space of the same build (host-only functions must not be reached from device-annotated code).
  using Host = Kokkos::DefaultHostExecutionSpace;
  Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace> ha;
  Kokkos::View<double*, Kokkos::HostSpace> hs;
  kssim::Ssimulacra2Reference<Host> href(Host(), ha);
  href.compare(Host(), ha, hs);
}
#endif

// kssim::mpi's halo packing, unpacking and gradient sums (impl/mpi/BoxCopy.hpp).
template <class T>
void instantiate_mpi_box_copy(const Exec& exec) {
  using namespace kssim::impl::mpi;
  kssim::impl::mpi::Box box{{0, 0, 0}, {1, 2, 3}};
  T* data = nullptr;
  const PlacedArray<T> dst = packed(data, 1, 1, box);
  const PlacedArray<const T> src{{dst.array.ptr, {1, 1, 1, 2, 3}, {6, 6, 6, 3, 1}}, {0, 0, 0}};
  copy_box(exec, src, dst, box, true);
  zero_box(exec, dst, box);
}

#if defined(KSSIM_CHECK_FLOAT)
template void instantiate<float, Kokkos::LayoutRight, 4>(const Exec&);
template void instantiate<float, Kokkos::LayoutLeft, 4>(const Exec&);
template void instantiate<float, Kokkos::LayoutRight, 5>(const Exec&);
template void instantiate<float, Kokkos::LayoutLeft, 5>(const Exec&);
template void instantiate_ms_ssim_and_masked<float, 4>(const Exec&);
template void instantiate_ms_ssim_and_masked<float, 5>(const Exec&);
template void instantiate_strided<float>(const Exec&);
template void instantiate_mpi_box_copy<float>(const Exec&);
#endif
#if defined(KSSIM_CHECK_DOUBLE)
template void instantiate<double, Kokkos::LayoutRight, 4>(const Exec&);
template void instantiate<double, Kokkos::LayoutLeft, 4>(const Exec&);
template void instantiate<double, Kokkos::LayoutRight, 5>(const Exec&);
template void instantiate<double, Kokkos::LayoutLeft, 5>(const Exec&);
template void instantiate_ms_ssim_and_masked<double, 4>(const Exec&);
template void instantiate_ms_ssim_and_masked<double, 5>(const Exec&);
template void instantiate_strided<double>(const Exec&);
template void instantiate_mpi_box_copy<double>(const Exec&);
#endif
#if defined(KSSIM_CHECK_16BIT)
template void instantiate_16bit<true, 4>(const Exec&);
template void instantiate_16bit<true, 5>(const Exec&);
template void instantiate_16bit<false, 4>(const Exec&);
template void instantiate_16bit<false, 5>(const Exec&);
#endif

}  // namespace kssim_compile_check
