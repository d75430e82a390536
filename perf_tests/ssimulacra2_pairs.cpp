// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SSIMULACRA2 parity with libjxl's `ssimulacra2` tool on any execution space, without image libraries: scores
// the pre-decoded pairs of unit_tests/ssimulacra2/make_gpu_pairs.py on Kokkos::DefaultExecutionSpace (the GPU
// in a CUDA build) and compares them with the tool's scores, which that script computed on the host.
//
//   kssim_ssimulacra2_pairs PAIRS_DIR [--throughput] [--batch 8] [--repeat 5] [--tolerance 0.05]
//
// Prints each pair's score, the tool's and |difference|, then the largest difference. --throughput also
// times 1920x1080 comparisons (synthetic images): uncached one at a time, and a cached reference compared
// with one image at a time and with batches. The last line is one JSON object with the results.
// Exit status: 0 parity within the tolerance, 1 a difference above it or a score that is not finite,
// 2 bad input (missing folder, unreadable pairs.csv or .npy file, an image the library rejects).

#include <kssim/Ssimulacra2.hpp>

#include "SyntheticImages.hpp"
#include "io/Error.hpp"
#include "io/Npy.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Images = Kokkos::View<float****, Kokkos::LayoutRight, Mem>;

// Bad input: reported as one line, exit status 2.
struct InputError {
  std::string message;
};

struct Args {
  std::string dir;
  bool throughput = false;
  int batch = 8, repeat = 5;
  double tolerance = 0.05;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError{s + " needs a value"};
      return argv[++i];
    };
    if (s == "--throughput")
      a.throughput = true;
    else if (s == "--batch")
      a.batch = std::atoi(value().c_str());
    else if (s == "--repeat")
      a.repeat = std::atoi(value().c_str());
    else if (s == "--tolerance")
      a.tolerance = std::atof(value().c_str());
    else if (!s.empty() && s[0] == '-')
      throw InputError{"unknown option " + s};
    else if (a.dir.empty())
      a.dir = s;
    else
      throw InputError{"one pairs folder only (got " + a.dir + " and " + s + ")"};
  }
  if (a.dir.empty())
    throw InputError{"usage: kssim_ssimulacra2_pairs PAIRS_DIR [--throughput] [--batch N] [--repeat N] [--tolerance T]"};
  if (a.batch < 1 || a.repeat < 1) throw InputError{"--batch and --repeat must be at least 1"};
  return a;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError{"cannot read " + path + " (make it with unit_tests/ssimulacra2/make_gpu_pairs.py)"};
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// One row of pairs.csv.
struct PairRow {
  std::string pair, reference, distorted;
  double tool = 0;
};

std::vector<PairRow> read_pairs(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw InputError{dir + ": no such folder (make it with unit_tests/ssimulacra2/make_gpu_pairs.py)"};
  const std::string path = dir + "/pairs.csv";
  std::istringstream text(read_text(path));
  std::vector<PairRow> rows;
  bool header = false;
  int number = 0;
  for (std::string line; std::getline(text, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != "pair,reference,distorted,ssimulacra2")
        throw InputError{path + ": line " + std::to_string(number) + " is not the header pair,reference,distorted,ssimulacra2"};
      header = true;
      continue;
    }
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    char* end = nullptr;
    const double tool = f.size() == 4 ? std::strtod(f[3].c_str(), &end) : 0.0;
    if (f.size() != 4 || end == f[3].c_str() || *end != '\0')
      throw InputError{path + ": line " + std::to_string(number) + " is not pair,reference,distorted,score"};
    rows.push_back({f[0], f[1], f[2], tool});
  }
  if (rows.empty()) throw InputError{path + " lists no pairs"};
  return rows;
}

// An image file of the pairs: a float32 .npy of shape (1, 3, H, W), copied to the execution space.
Images load_image(const std::string& path) {
  const std::string bytes = read_text(path);
  const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  try {
    const kssim::io::NpyInfo info = kssim::io::npy_info(data);
    if (info.dtype != kssim::io::DType::Float32 || info.shape.size() != 4 || info.shape[0] != 1 || info.shape[1] != 3)
      throw InputError{path + ": expected a float32 array of shape (1, 3, H, W), got " +
                       kssim::io::dtype_name(info.dtype) + " " + kssim::io::shape_string(info.shape)};
    const kssim::io::Array a = kssim::io::parse_npy(data);
    const auto& v = std::get<std::vector<float>>(a.values);
    Images d(Kokkos::view_alloc(Kokkos::WithoutInitializing, path), 1, 3, a.shape[2], a.shape[3]);
    Kokkos::deep_copy(d, Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::HostSpace>(v.data(), 1, 3,
                                                                                              a.shape[2], a.shape[3]));
    return d;
  } catch (const kssim::io::Error& e) {
    throw InputError{path + ": " + e.what()};
  }
}

struct Parity {
  int pairs = 0;
  double max_diff = 0;
  bool finite = true;
};

// Scores every row with a cached reference (rebuilt when the reference file changes), one image per
// compare(); rows sharing a pair name keep their lowest score, as the tool does for the backgrounds of an
// image with alpha.
Parity check_parity(const Exec& exec, const Args& args) {
  const std::vector<PairRow> rows = read_pairs(args.dir);
  std::vector<std::string> order;
  std::map<std::string, double> ours, tool;
  std::map<std::string, std::string> sizes;
  std::string current;
  std::optional<kssim::Ssimulacra2Reference<Exec>> ref;
  Kokkos::View<double*, Mem> score("score", 1);
  for (const PairRow& r : rows) {
    if (!ref || r.reference != current) {
      const Images image = load_image(args.dir + "/" + r.reference);
      if (ref)
        ref->set_reference(exec, image);
      else
        ref.emplace(exec, image);
      current = r.reference;
    }
    const Images dist = load_image(args.dir + "/" + r.distorted);
    if (int(dist.extent(2)) != ref->height() || int(dist.extent(3)) != ref->width())
      throw InputError{r.distorted + " and " + r.reference + " differ in size"};
    ref->compare(exec, dist, score);
    const double s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), score)(0);
    if (!ours.count(r.pair)) {
      order.push_back(r.pair);
      ours[r.pair] = s;
      tool[r.pair] = r.tool;
      sizes[r.pair] = std::to_string(ref->width()) + "x" + std::to_string(ref->height());
    } else {
      ours[r.pair] = std::isnan(s) ? s : std::min(ours[r.pair], s);
    }
  }
  Parity p;
  std::printf("%-28s %10s %14s %14s %10s\n", "pair", "size", "kssim", "ssimulacra2", "|diff|");
  for (const std::string& name : order) {
    const double d = std::abs(ours[name] - tool[name]);
    std::printf("%-28s %10s %14.8f %14.8f %10.2e\n", name.c_str(), sizes[name].c_str(), ours[name], tool[name], d);
    p.finite = p.finite && std::isfinite(ours[name]);
    p.max_diff = std::isfinite(d) ? std::max(p.max_diff, d) : INFINITY;
    ++p.pairs;
  }
  std::printf("%s: %d pairs, max |kssim - ssimulacra2| = %.3g (tolerance %g)%s\n", Exec::name(), p.pairs, p.max_diff,
              args.tolerance, p.finite ? "" : ", some scores are not finite");
  return p;
}

using kssim_perf::median_seconds;

struct Throughput {
  double uncached = 0, cached_single = 0, batched = 0;  // comparisons per second
};

// 1920x1080: kssim::ssimulacra2 on one pair at a time (the reference's pyramid rebuilt every time), a cached
// reference compared with one image at a time, and with batches of args.batch images. Values are not
// checked per call (check_values = false), as in a loop over known-good frames.
Throughput measure_throughput(const Exec& exec, const Args& args) {
  constexpr int w = 1920, h = 1080, warmups = 2;
  const Images ref = kssim_perf::synthetic_images<Mem>(1, h, w, 1);
  const Images dist = kssim_perf::synthetic_images<Mem>(args.batch, h, w, 2);
  const auto first = Kokkos::subview(dist, Kokkos::make_pair(0, 1), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  Kokkos::View<double*, Mem> scores("scores", args.batch);
  const auto one = Kokkos::subview(scores, Kokkos::make_pair(0, 1));
  kssim::Ssimulacra2Options opts;
  opts.check_values = false;
  Throughput t;
  t.uncached = 1 / median_seconds(warmups, args.repeat, [&] { kssim::ssimulacra2(exec, ref, first, one, opts); });
  kssim::Ssimulacra2Reference<Exec> cached(exec, ref, 0, opts);
  t.cached_single = 1 / median_seconds(warmups, args.repeat, [&] { cached.compare(exec, first, one); });
  t.batched = args.batch / median_seconds(warmups, args.repeat, [&] { cached.compare(exec, dist, scores); });
  std::printf("%s 1920x1080: %.2f comparisons/s one at a time (uncached), %.2f/s cached reference one at a time, "
              "%.2f/s cached reference in batches of %d (median of %d after %d warm-ups)\n",
              Exec::name(), t.uncached, t.cached_single, t.batched, args.batch, args.repeat, warmups);
  return t;
}

int run(const Args& args) {
  const Exec exec;
  const Parity p = check_parity(exec, args);
  const bool pass = p.finite && p.max_diff <= args.tolerance;
  std::ostringstream json;
  json.precision(10);
  json << "{\"program\": \"kssim_ssimulacra2_pairs\", \"backend\": \"" << Exec::name() << "\", \"pairs\": " << p.pairs
       << ", \"max_abs_diff\": ";
  if (std::isfinite(p.max_diff))
    json << p.max_diff;
  else
    json << "null";
  json << ", \"all_finite\": " << (p.finite ? "true" : "false") << ", \"tolerance\": " << args.tolerance
       << ", \"pass\": " << (pass ? "true" : "false");
  if (args.throughput) {
    const Throughput t = measure_throughput(exec, args);
    json << ", \"throughput_1080p\": {\"uncached_per_s\": " << t.uncached << ", \"cached_single_per_s\": "
         << t.cached_single << ", \"batched_per_s\": " << t.batched << ", \"batch\": " << args.batch
         << ", \"repeat\": " << args.repeat << ", \"check_values\": false}";
  }
  json << "}";
  std::printf("%s\n", json.str().c_str());
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    return run(parse_args(argc, argv));
  } catch (const InputError& e) {
    std::fprintf(stderr, "kssim_ssimulacra2_pairs: error: %s\n", e.message.c_str());
    return 2;
  } catch (const std::invalid_argument& e) {  // the library rejected an image (too small, values outside [0, 1])
    std::fprintf(stderr, "kssim_ssimulacra2_pairs: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // the library's other errors (a failed self-check, a refused launch)
    std::fprintf(stderr, "kssim_ssimulacra2_pairs: %s\n", e.what());
    return 1;
  }
}
