// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kssim command-line tool: `kssim compare A B [options]`. See HelpText.cpp or `kssim compare --help`.

#include "cli/Compare.hpp"
#include "cli/CompareOptions.hpp"
#include "cli/Distributed.hpp"
#include "cli/HelpText.hpp"
#include "cli/Ssimulacra2Command.hpp"
#include "cli/UsageError.hpp"
#include "cli/WaitPolicy.hpp"
#include "io/Error.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#ifndef KSSIM_VERSION
#define KSSIM_VERSION "unknown"
#endif

namespace {

// Errors: one line on stderr (status 2 for usage and input errors, 3 for internal ones). Messages are folded
// onto one line.
int report(const std::string& message, int status) {
  std::string line;
  bool space = false;
  for (char c : message) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == ' ' && (space || line.empty())) continue;
    space = c == ' ';
    line += c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.rfind("kssim: ", 0) == 0) line.erase(0, 7);  // kssim's own messages carry the prefix already
  std::fprintf(stderr, "kssim: error: %s\n", line.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  kssim::cli::prefer_passive_openmp_waits(argv);
  using kssim::cli::CompareOptions;
  CompareOptions o;

  CLI::App app(kssim::cli::main_description(), "kssim");
  app.set_version_flag("--version", "kssim " KSSIM_VERSION);
  app.require_subcommand(1);
  app.footer("Run 'kssim compare --help' for the options, input formats, outputs and exit status, with examples.");
  app.get_formatter()->column_width(32);
#if CLI11_VERSION_MAJOR > 2 || (CLI11_VERSION_MAJOR == 2 && CLI11_VERSION_MINOR >= 5)
  app.get_formatter()->enable_footer_formatting(false);  // the help text is laid out by hand
  app.get_formatter()->enable_description_formatting(false);
#endif

  CLI::App* compare = app.add_subcommand("compare", "Compare two images or arrays with SSIM");
  compare->description(kssim::cli::compare_description());
  compare->footer(kssim::cli::compare_footer());
  compare->add_option("A", o.a, "Reference input: .npy array or image (PNG, PGM/PPM, JPEG, TIFF, WebP, OpenEXR, PFM); - reads stdin")
      ->required()
      ->type_name("FILE");
  compare->add_option("B", o.b, "Input(s) compared with A, each on its own: same shape and dtype as A")
      ->required()
      ->expected(1, -1)
      ->type_name("FILE");
  compare->add_option("--metric", o.metric, "ssim, or ms-ssim (multi-scale SSIM, pytorch-msssim's five scales)")
      ->type_name("ssim|ms-ssim")
      ->capture_default_str();
  compare->add_option("--mask", o.mask, "Weights in [0, 1] (PNG or .npy, 1 or C channels): masked SSIM")
      ->type_name("FILE");
  compare->add_option("--mask-mode", o.mask_mode,
                      "weights (weighted mean of the map) or normalized (masked window statistics too)")
      ->type_name("weights|normalized");
  compare->add_option("--padding", o.padding,
                      "valid (map where the window fits), or a map of the input's size: same (zero padding), "
                      "reflect (mirrored about the edge pixels) or replicate (edge pixels repeated)")
      ->type_name("valid|same|reflect|replicate")
      ->capture_default_str();
  compare->add_option("--window", o.window, "Gaussian window size, odd, 3 to 31")->type_name("N")->capture_default_str();
  compare->add_option("--sigma", o.sigma, "Gaussian standard deviation, > 0")->type_name("S")->capture_default_str();
  compare->add_option("--k1", o.k1, "C1 = (k1 * data_range)^2")->type_name("K")->capture_default_str();
  compare->add_option("--k2", o.k2, "C2 = (k2 * data_range)^2")->type_name("K")->capture_default_str();
  compare->add_option("--data-range", o.data_range, "Dynamic range L of the values, > 0")
      ->type_name("L")
      ->capture_default_str();
  compare->add_option("--max-workspace", o.max_workspace,
                      "Workspace limit in bytes (suffixes KB, MB, GB: 1024-based); larger problems run in slabs. "
                      "Default: half the free memory")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false));
  compare->add_option("--dims", o.dims, "2: images (N, C, H, W); 3: volumes (N, C, D, H, W)")
      ->type_name("2|3")
      ->capture_default_str();
  compare->add_option("--channel-axis", o.channel_axis, "Where a .npy array's channels are: first (C, H, W) or last (H, W, C)")
      ->type_name("first|last");
  compare->add_flag("--json", o.json, "Print one JSON object per pair instead of the bare mean");
  compare->add_flag("--per-image", o.per_image, "Also report the mean SSIM of each image n");
  compare->add_flag("--per-channel", o.per_channel, "Also report the mean SSIM of each channel c (of each image n)");
  compare->add_option("--threshold", o.threshold, "Exit with status 1 when an SSIM is below T (results still printed)")
      ->type_name("T");
  compare->add_option("--map", o.map, "Write the SSIM map: .npy (values) or .png (colormap)")->type_name("FILE");
  compare->add_option("--map-channels", o.map_channels, "all (one map per channel) or mean (their mean)")
      ->type_name("all|mean")
      ->capture_default_str();
  compare->add_flag("--map-legend", o.map_legend, "Draw a colour bar with its scale under a --map .png");
  compare->add_option("--grad-a", o.grad_a, "Write d(mean SSIM)/dA as .npy")->type_name("FILE.npy");
  compare->add_option("--grad-b", o.grad_b, "Write d(mean SSIM)/dB as .npy")->type_name("FILE.npy");
  compare->add_option("--decompose", o.decompose,
                      "Under mpirun: split .npy arrays over the ranks, a Cartesian grid DxHxW (--dims 3) or HxW")
      ->type_name("DxHxW");
  CLI::Option* repeat = compare->add_option("--repeat", o.repeat, "Time N runs after a warm-up (median, min)")
                            ->type_name("N");

  kssim::cli::Ssimulacra2CliOptions s2;
  CLI::App* ssimulacra2 = app.add_subcommand("ssimulacra2", "SSIMULACRA2 of distorted images against one reference");
  ssimulacra2->footer(
      "Prints one score per distorted image, in argument order (%.8f, as libjxl's ssimulacra2 tool), or with\n"
      "--json one JSON object per line. Scores reach 100 for identical images; about 90: visually lossless,\n"
      "70: high, 50: medium, 30: low quality. Images must be at least 8 x 8 pixels; below 113 x 113 they have\n"
      "fewer than 6 scales, scored as the tool scores them. Alpha is composited as the tool does. Errors:\n"
      "exit status 2, one 'kssim: error:' line.\n"
      "Example: kssim ssimulacra2 original.png q50.png q80.png --json");
  ssimulacra2->add_option("REF", s2.reference, "Reference image: PNG/PGM/PPM, sRGB")->required()->type_name("FILE");
  ssimulacra2->add_option("DIST", s2.distorted, "Distorted images, same size as REF")->required()->type_name("FILE");
  ssimulacra2->add_flag("--json", s2.json, "Print one JSON object per distorted image");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // `kssim --help` is the short overview; `kssim compare --help` the whole reference.
    std::cout << kssim::cli::tidy_help(app.help());
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << kssim::cli::tidy_help(app.help("", CLI::AppFormatMode::All));
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << "kssim " KSSIM_VERSION "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (app.get_subcommands().empty()) {
      if (argc > 1 && argv[1][0] != '-')
        message = std::string("unknown command '") + argv[1] + "' (usage: kssim compare A B [options]; see kssim --help)";
      else if (dynamic_cast<const CLI::RequiredError*>(&e))
        message = "a command is required: kssim compare A B [options] (see kssim --help)";
    }
    return report(message, 2);
  }
  o.repeat_given = repeat->count() > 0;

  try {
    if (ssimulacra2->parsed()) {
      const std::string out = kssim::cli::run_ssimulacra2(s2);
      std::fwrite(out.data(), 1, out.size(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 3;
    }
    if (!o.decompose.empty())  // every rank returns the same status; rank 0 prints
      return kssim::cli::run_distributed_compare(o, argv, [](const kssim::cli::DistributedOutcome& d) {
        if (!d.error.empty()) return report(d.error, d.status);
        std::fwrite(d.out.data(), 1, d.out.size(), stdout);
        return std::fflush(stdout) == 0 ? d.status : 3;
      });
    const kssim::cli::CompareOutcome outcome = kssim::cli::run_compare(o);
    for (const std::string& w : outcome.warnings) std::fprintf(stderr, "kssim: warning: %s\n", w.c_str());
    std::fwrite(outcome.out.data(), 1, outcome.out.size(), stdout);
    return std::fflush(stdout) == 0 ? outcome.status : 3;
  } catch (const kssim::cli::UsageError& e) {
    return report(e.what(), 2);
  } catch (const kssim::io::Error& e) {
    return report(e.what(), 2);
  } catch (const std::invalid_argument& e) {
    return report(e.what(), 2);
  } catch (const std::bad_alloc&) {
    return report("out of memory", 3);
  } catch (const std::exception& e) {
    return report(std::string("internal error: ") + e.what(), 3);
  }
}
