#include "cli/HelpText.hpp"

#include "cli/Compute.hpp"

namespace kssim::cli {

std::string main_description() {
  return "kssim: fused, differentiable SSIM (structural similarity index) computed with Kokkos.\n"
         "Compares two images or arrays: mean SSIM, SSIM map, per-image means and gradients.";
}

std::string compare_description() {
  return "Compute the SSIM of A and B: the mean over images, channels and map pixels, and optionally the SSIM "
         "map, per-image means and the gradients of the mean with respect to A and B.";
}

std::string compare_footer() {
  return std::string(R"(INPUTS
  A and B are .npy arrays (little-endian float32 '<f4' or float64 '<f8', C order) or images: PNG
  (8- and 16-bit gray, gray+alpha, RGB, RGBA; 1/2/4-bit gray and palette images are expanded to
  8 bits), PGM (P2, P5) or PPM (P3, P6) with a maximum value up to 65535. The format is recognised from the file's content, not its name. A and B must
  have the same shape and dtype; the computation runs in that dtype.
    --dims 2 (default): arrays (H, W), (C, H, W) or (N, C, H, W)
    --dims 3:           volumes (D, H, W), (C, D, H, W) or (N, C, D, H, W) (.npy only)
  Missing leading axes are 1. An image loads as float32 of shape (1, C, H, W), each sample divided
  by its maximum (255, 65535 or the PGM/PPM maxval) so that it lies in [0, 1] and --data-range 1
  fits: C = 1 for gray, 3 for RGB and palette images. ALPHA IS DROPPED (not composited over any
  background). Gamma and color-profile chunks are ignored: samples are used as stored.
  Arrays containing NaN or infinity are rejected.

SSIM
  A Gaussian window of --window taps (odd, 3 to 31) with standard deviation --sigma, applied
  separably along W, H (and D); C1 = (k1 L)^2 and C2 = (k2 L)^2 with L = --data-range.
  --padding valid: the map covers the positions where the whole window fits, (H-w+1) x (W-w+1),
                   so every spatial axis must be at least --window long (as MATLAB, pytorch-msssim).
  --padding same:  zero padding outside the input; the map has the input's size.

OUTPUT
  stdout, by default: the mean SSIM on one line with 17 significant digits. With --per-image one
  line "image <n>: <mean>" per image follows; with --repeat a last line
  "timing: repeat=<N> median_s=<seconds> min_s=<seconds>".
  --json: one JSON object on one line instead, with "ssim" (full precision), "shape" (of A),
  "dtype", "dims", "padding", "window", "sigma", "k1", "k2", "data_range", "map_shape", "backend"
  (the Kokkos execution space that ran it), "inputs", "outputs", "per_image" (with --per-image)
  and "timing" {"repeat", "median_s", "min_s"} (with --repeat).
  --map FILE.npy   the SSIM map in the inputs' dtype, shaped like A with its spatial axes
                   replaced by the map's (e.g. A (3, 64, 64), valid, window 11: map (3, 54, 54)).
  --map FILE.png   an 8-bit RGB picture of the map, one map pixel per image pixel. Colors are
                   linear between these stops (brighter = more similar):
                     SSIM <= 0  black (0, 0, 0)          0.25  purple (70, 20, 130)
                     SSIM 0.5   crimson (200, 40, 80)    0.75  orange (245, 150, 30)
                     SSIM 1     pale yellow (255, 255, 215): identical
                   Each 2D slice of the map is one tile; tiles are separated by 2-pixel gray
                   (128, 128, 128) gutters. Images: one row of tiles per image n and one column
                   per channel c (R, G, B). Volumes: one row per (n, c), one column per depth
                   slice d. Tile pixel (x, y) is map element (y, x) of its slice. The legend is
                   also stored in the PNG's Description text chunk.
  --grad-a FILE.npy, --grad-b FILE.npy
                   d(mean SSIM)/dA and d(mean SSIM)/dB, same shape and dtype as A.
  --repeat N       after the run that produces the results (the warm-up), run the computation N
                   more times, each fenced, and report the median and minimum seconds. Timed:
                   one call of kssim::ssim, or of kssim::ssim_grad (forward + backward) when a
                   gradient is requested, workspace set-up included; not timed: file I/O,
                   host-device copies, --map and --per-image.
  Output files are written under temporary names and renamed at the end: after an error none of
  them exists.

EXECUTION
  Runs on Kokkos' default execution space (in this build: )") + backend_name() + R"(). Kokkos and OpenMP
  read their usual environment variables (KOKKOS_NUM_THREADS, KOKKOS_DEVICE_ID, OMP_NUM_THREADS...).

EXIT STATUS
  0  success.
  2  bad usage or input: unknown option, bad option value, unreadable, truncated or corrupt file,
     unsupported format, dtype or rank, Fortran-ordered array, A and B of different shapes or
     dtypes, input smaller than the window... One line "kssim: error: ..." goes to stderr,
     nothing to stdout, and no output file is created.
  1  unexpected internal error (for instance out of memory).

EXAMPLES
  kssim compare reference.png distorted.png --map ssim_map.png
  kssim compare a.npy b.npy --padding same --window 7 --sigma 1.0 --json --per-image
  kssim compare vol_a.npy vol_b.npy --dims 3 --grad-a grad_a.npy --json --repeat 20
)";
}

}  // namespace kssim::cli
