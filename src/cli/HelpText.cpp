// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cli/HelpText.hpp"

#include "cli/Compute.hpp"

namespace kssim::cli {

std::string main_description() {
  return "kssim: fused, differentiable SSIM (structural similarity index) computed with Kokkos.\n"
         "Compares images or arrays: mean SSIM, SSIM map, per-image and per-channel means, gradients.";
}

std::string compare_description() {
  return "Compute the SSIM of A and B (or of A and each of B1 B2 ...): the mean over images, channels and map "
         "pixels, and optionally the SSIM map, per-image and per-channel means and the gradients of the mean "
         "with respect to A and B; or their MS-SSIM (--metric ms-ssim), or the SSIM over the pixels a mask "
         "selects (--mask).";
}

std::string tidy_help(const std::string& help) {
  std::string out, line;
  bool blank = true;  // no blank line at the top either
  auto flush = [&] {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty() || !blank) out += line + "\n";
    blank = line.empty();
    line.clear();
  };
  for (char c : help) {
    if (c == '\n') flush();
    else line += c;
  }
  if (!line.empty()) flush();
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

std::string compare_footer() {
  return std::string(R"(INPUTS
  A and B are .npy arrays (little-endian float32 '<f4' or float64 '<f8', C order) or images:
    PNG      8- and 16-bit gray, gray+alpha, RGB, RGBA; 1/2/4-bit gray and palette images are
             expanded to 8 bits; a palette whose colours are all gray loads as one channel
    PGM/PPM  P2, P5, P3, P6, maximum value up to 65535
    JPEG     8-bit gray or color (libjpeg-turbo); CMYK is refused
    TIFF     gray or RGB (+ alpha), 8- or 16-bit unsigned or 32-bit float samples (libtiff)
    WebP     lossy or lossless, RGB or RGBA (libwebp)
    OpenEXR  channels R, G, B or Y (+ A), half or float (OpenEXR)
    PFM      gray (Pf) or RGB (PF) 32-bit floats
  The format is recognised from the file's content, not its name; '-' reads an input from the
  standard input (at most one). A and each B must have the same shape and dtype; the computation
  runs in that dtype. A float16 .npy ('<f2') is widened to float32 as it is read (exactly) and
  computed, reported and written (map, gradients) as float32.
  Axes: N images, C channels, then the spatial axes (H, W) or (D, H, W):
    --dims 2 (default): (H, W), (C, H, W) or (N, C, H, W);
                        with --channel-axis last: (H, W), (H, W, C) or (N, H, W, C)
    --dims 3:           (D, H, W), (C, D, H, W) or (N, C, D, H, W) (.npy only);
                        with --channel-axis last: (D, H, W, C) or (N, D, H, W, C)
  Missing leading axes are 1. An array whose channel-first reading would have more than 4
  channels while its last axis is 1, 3 or 4 (an (H, W, 3) picture from NumPy, PIL, imageio or
  scikit-image) is refused unless --channel-axis says which it is: it is never guessed.
  --channel-axis applies to .npy inputs; images are always decoded channel-first.
  An integer image (PNG, PGM/PPM, JPEG, WebP, 8/16-bit TIFF) loads as float32 of shape
  (1, C, H, W), each sample divided by its maximum (255, 65535 or the PGM/PPM maxval) so that it
  lies in [0, 1] and --data-range 1 fits: C = 1 for gray, 3 for RGB. Float images (OpenEXR,
  PFM, float TIFF) load as float32 with their values as stored: give their --data-range.
  ALPHA IS DROPPED (not composited over any background); --json then says "alpha": "ignored".
  Gamma and color-profile information is ignored: samples are used as stored.
  Arrays containing NaN or infinity are rejected. The inputs' headers are all read, and their
  shapes compared, before any of them is decoded.
  A warning ("kssim: warning: ...", on stderr) says when an input's values span more than
  --data-range, or (data not decoded from integer samples) less than a twentieth of it: SSIM's
  constants C1 and C2 assume the values fill the data range.

SSIM
  A Gaussian window of --window taps (odd, 3 to 31) with standard deviation --sigma, applied
  separably along W, H (and D); C1 = (k1 L)^2 and C2 = (k2 L)^2 with L = --data-range.
  --padding valid: the map covers the positions where the whole window fits, (H-w+1) x (W-w+1),
                   so every spatial axis must be at least --window long (as MATLAB, pytorch-msssim).
                   Map pixel (y, x) is the window centred on input pixel (y + (w-1)/2, x + (w-1)/2):
                   the map starts (w-1)/2 pixels in from every edge (5 for the default window).
  --padding same:  zero padding outside the input; map pixel (y, x) is input pixel (y, x).
  --padding reflect: the input mirrored about its edge pixels, which are not repeated
                   (x[-1] = x[1], PyTorch's "reflect"; torchmetrics' SSIM); map pixel (y, x) is
                   input pixel (y, x). Every spatial axis must be longer than --window / 2.
  --padding replicate: the edge pixels repeated outward (x[-1] = x[0], MATLAB's ssim); map
                   pixel (y, x) is input pixel (y, x).
  --decompose (MPI) takes --padding valid or same only.

METRICS
  --metric ssim    (default) SSIM as above.
  --metric ms-ssim multi-scale SSIM (Wang, Simoncelli and Bovik 2003) with pytorch-msssim's
                   conventions: 5 scales with the weights 0.0448, 0.2856, 0.3001, 0.2363, 0.1333;
                   scale k+1 is the 2x2 (volumes 2x2x2) average of scale k, an odd extent padded
                   with one zero sample in front; per image and channel, the mean contrast-structure
                   term (2 cov + C2) / (v1 + v2 + C2) of scales 1 to 4 and the mean SSIM of scale 5,
                   each clamped at 0 and raised to its weight, multiplied; then the mean over images
                   and channels. Valid windows at every scale: every spatial axis must be longer than
                   (--window - 1) * 16 (160 for the default window). No --map, --mask or --padding
                   other than valid with it; --per-image, --per-channel, --grad-a/-b, --repeat work.

MASKS
  --mask FILE      masked SSIM. FILE (any input format; an integer image loads as samples / max)
                   holds a weight in [0, 1] per pixel: the inputs' spatial shape, 1 channel (used for
                   every channel) or C, 1 image (used for every image) or N. Each map pixel weighs
                   the mask at its window's centre (valid padding: mask pixel (y + (w-1)/2,
                   x + (w-1)/2) for map pixel (y, x)), and the result is the weighted mean of the
                   map (--per-image, --per-channel: over each image, each channel).
  --mask-mode weights      (default) the map is SSIM's own: masked-out pixels still enter their
                   neighbours' windows.
  --mask-mode normalized   the window statistics are masked too (normalized convolution:
                   mu = B(m x) / B(m), and likewise the second moments), so masked-out pixels
                   (missing data, a background) never enter a window, and with --padding same
                   neither do the zeros outside the input (--padding valid or same only). A window
                   without any pixel of weight > 0 has the map value 0 (its centre weighs 0, so it
                   never counts).
  --map writes the map itself (unweighted). A mask that is 0 at every window centre is an error.

ONE REFERENCE, MANY INPUTS
  kssim compare REF D1 D2 ... compares each Dk with REF: REF is decoded and copied to the device
  once, and one SSIM workspace serves every pair. One result per pair, in the order given: a line
  "<mean>  <path of Dk>" (with --json one JSON object per line). All headers are checked first,
  and nothing is printed until every pair has been computed, so an error still prints nothing.
  --map, --grad-a and --grad-b need a single B.

OUTPUT
  stdout, by default: the mean SSIM on one line, as the shortest decimal that reads back as the
  same double. With --per-image one line "image <n>: <mean>" per image follows; with
  --per-channel one line "channel <c>: <mean>" per channel ("image <n> channel <c>: <mean>" when
  N > 1); with --repeat a last line "timing: repeat=<N> median_s=<seconds> min_s=<seconds>".
  --json: one JSON object per pair, on one line, with "metric" ("ssim" or "ms-ssim"), "value"
  (the result, full precision), "ssim" (the same, with --metric ssim), "mask" {"path", "format",
  "shape", "mode"} (with --mask), "scales" and "weights" (with --metric ms-ssim), "shape" (of A,
  as stored), "dtype", "dims", "channel_axis", "padding", "window", "sigma", "k1", "k2",
  "data_range", "map_shape" (not with ms-ssim), "backend" (the Kokkos execution space that ran
  it), "inputs" {"a", "b": {"path", "format", "alpha": "ignored" when the input had alpha, and
  "stored_dtype": "float16" for a float16 .npy}},
  "outputs",
  "per_image" (with --per-image), "per_channel" (with --per-channel: one list of C means per
  image), "threshold" and "below_threshold" (with --threshold) and "timing" {"repeat",
  "median_s", "min_s"} (with --repeat).
  --map FILE.npy   the SSIM map in the inputs' dtype, shaped like A with its spatial axes
                   replaced by the map's (e.g. A (3, 64, 64), valid, window 11: map (3, 54, 54);
                   channel-last inputs give a channel-last map).
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
  --map-channels mean  one map per image (per depth slice for volumes): the mean of the
                   channels' maps, instead of one per channel (.npy: C becomes 1).
  --map-legend     draws a colour bar from SSIM 0 to 1 with ticks and labels at 0, 0.25, 0.5,
                   0.75 and 1 under the tiles of a .png map (the image is at least 200 pixels wide).
  --grad-a FILE.npy, --grad-b FILE.npy
                   d(mean SSIM)/dA and d(mean SSIM)/dB, same shape and dtype as A.
  --repeat N       after the run that produces the results (the warm-up), run the computation N
                   more times, each fenced, and report the median and minimum seconds. Timed:
                   one call of kssim::ssim, or of kssim::ssim_grad (forward + backward) when a
                   gradient is requested (kssim::ms_ssim / ms_ssim_grad, kssim::masked_ssim /
                   masked_ssim_grad with --metric ms-ssim / --mask), workspace set-up included;
                   not timed: file I/O,
                   host-device copies, --map, --per-image and --per-channel.
  Output files are written under temporary names and renamed at the end: after an error none of
  them exists. An output that is the same file as an input (by any path) is refused.

EXECUTION
  Runs on Kokkos' default execution space (in this build: )") + backend_name() + R"(). Kokkos and OpenMP
  read their usual environment variables (KOKKOS_NUM_THREADS, KOKKOS_DEVICE_ID, OMP_NUM_THREADS...).

EXIT STATUS
  0  success (and, with --threshold T, every SSIM >= T).
  1  with --threshold T: an SSIM is below T. The results are printed and the files written
     as on success.
  2  error: bad usage or input: unknown option, bad option value, unreadable, truncated or
     corrupt file, unsupported format, dtype or rank, Fortran-ordered array, A and B of different
     shapes or dtypes, ambiguous channel axis, input smaller than the window (or than MS-SSIM's
     scales need), a mask of the wrong shape, with a value outside [0, 1] or 0 at every window
     centre, an output that is an input, a NaN SSIM from finite inputs (--k1 0 or --k2 0 on flat
     images)... One line
     "kssim: error: ..." goes to stderr, nothing to stdout, and no output file is created.
  3  unexpected internal error (a bug, or out of memory), reported the same way.

EXAMPLES
  kssim compare reference.png distorted.png --map ssim_map.png --map-legend
  kssim compare photo_hwc.npy jpeg_hwc.npy --channel-axis last --per-channel
  kssim compare reference.png d1.jpg d2.jpg d3.jpg --json --threshold 0.9
  kssim compare a.npy b.npy --padding same --window 7 --sigma 1.0 --json --per-image
  kssim compare vol_a.npy vol_b.npy --dims 3 --grad-a grad_a.npy --json --repeat 20
  kssim compare photo.png jpeg.png --metric ms-ssim --per-channel
  kssim compare field_a.npy field_b.npy --mask land.png --mask-mode normalized --map m.png
  some_renderer --png-to-stdout | kssim compare reference.png -
)";
}

}  // namespace kssim::cli
