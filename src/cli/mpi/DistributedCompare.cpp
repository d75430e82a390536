// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `mpirun -np P kssim compare A.npy B.npy --dims 3 --decompose DxHxW [--map M.npy] [--grad-a GA.npy]
// [--grad-b GB.npy] [--json] [--threshold T] [--repeat N]`.
//
// The arrays are split into P blocks on a Cartesian grid (each axis as evenly as possible); each rank reads
// only its block's rows from the files (pread at their offsets), kssim::mpi computes the whole field's SSIM,
// and the ranks write their blocks of the map and gradients into one .npy each (rank 0 writes the header
// and sizes the file, then every rank pwrites its rows), under temporary names renamed into place once
// every rank has written. With --repeat the timing also gives the time spent in the halo exchanges (the
// slowest rank's, median over the runs). Every step that can fail on some ranks only (files, memory) ends with an
// agreement, so an error is one status on every rank and one `kssim: error:` line printed by rank 0, and no
// output file is left behind.

#include "cli/CompareOptions.hpp"
#include "cli/Distributed.hpp"
#include "cli/NumberText.hpp"
#include "cli/UsageError.hpp"
#include "io/Array.hpp"
#include "io/Error.hpp"
#include "io/Npy.hpp"

#include <kssim/mpi/Distributed.hpp>

#include <Kokkos_Core.hpp>
#include <fcntl.h>
#include <mpi.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <sstream>
#include <vector>

namespace kssim::cli {
namespace {

namespace fs = std::filesystem;
using Exec = Kokkos::DefaultExecutionSpace;

struct Failure {
  int status;
  std::string message;
};

// Runs f on every rank; if it threw on any, every rank throws the same Failure: the lowest failing rank's
// status and message (prefixed by the rank when not every rank failed alike).
template <class F>
void collectively(MPI_Comm comm, F&& f) {
  int status = 0;
  std::string message;
  try {
    f();
  } catch (const Failure& e) {
    status = e.status;
    message = e.message;
  } catch (const UsageError& e) {
    status = 2;
    message = e.what();
  } catch (const io::Error& e) {
    status = 2;
    message = e.what();
  } catch (const std::invalid_argument& e) {
    status = 2;
    message = e.what();
  } catch (const std::bad_alloc&) {
    status = 3;
    message = "out of memory";
  } catch (const std::exception& e) {
    status = 3;
    message = std::string("internal error: ") + e.what();
  }
  int size = 1;
  MPI_Comm_size(comm, &size);
  constexpr int width = 480;
  char mine[width] = {};
  std::strncpy(mine, message.c_str(), width - 1);
  std::vector<int> statuses(size);
  std::vector<char> messages(std::size_t(size) * width);
  MPI_Allgather(&status, 1, MPI_INT, statuses.data(), 1, MPI_INT, comm);
  MPI_Allgather(mine, width, MPI_CHAR, messages.data(), width, MPI_CHAR, comm);
  int first = -1;
  bool alike = true;
  for (int q = 0; q < size; ++q) {
    if (statuses[q] == 0) {
      alike = false;
      continue;
    }
    if (first < 0) first = q;
    alike = alike && std::strcmp(&messages[std::size_t(q) * width], &messages[std::size_t(first) * width]) == 0;
  }
  if (first < 0) return;
  const std::string text(&messages[std::size_t(first) * width]);
  throw Failure{statuses[first], alike ? text : "rank " + std::to_string(first) + ": " + text};
}

// "DxHxW" (volumes) or "HxW" (images): the Cartesian grid.
std::vector<int> parse_grid(const std::string& text, int dims, int ranks) {
  std::vector<int> grid;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6)
      throw UsageError("--decompose '" + text + "': expected " + (dims == 3 ? "DxHxW" : "HxW") +
                       ", positive integers, e.g. " + (dims == 3 ? "1x2x2" : "2x2"));
    grid.push_back(std::stoi(part));
  }
  if (int(grid.size()) != dims)
    throw UsageError("--decompose '" + text + "': " + std::to_string(dims) + " factors expected with --dims " +
                     std::to_string(dims));
  long long product = 1;
  for (int g : grid) {
    if (g < 1) throw UsageError("--decompose '" + text + "': the factors must be >= 1");
    product *= g;
  }
  if (product != ranks)
    throw UsageError("--decompose '" + text + "' makes " + std::to_string(product) + " blocks but mpirun started " +
                     std::to_string(ranks) + " ranks");
  return grid;
}

void refuse_unsupported(const CompareOptions& o) {
  auto refuse = [](const std::string& what) { throw UsageError(what + " is not supported with --decompose"); };
  if (o.b.size() != 1) refuse("more than one B");
  if (o.metric != "ssim") refuse("--metric " + o.metric);
  if (!o.mask.empty()) refuse("--mask");
  if (o.per_image || o.per_channel) refuse("--per-image / --per-channel");
  if (!o.channel_axis.empty() && o.channel_axis != "first") refuse("--channel-axis " + o.channel_axis);
  if (o.map_legend || o.map_channels != "all") refuse("--map-legend / --map-channels");
  for (const std::string* path : {&o.map, &o.grad_a, &o.grad_b})
    if (!path->empty() && fs::path(*path).extension() != ".npy") refuse("an output other than .npy ('" + *path + "')");
  for (const std::string& input : {o.a, o.b[0]})
    if (fs::path(input).extension() != ".npy") refuse("an input other than .npy ('" + input + "')");
  // kssim::mpi takes valid or same padding only; refused here, with the other flags, before any file is read.
  if (o.padding == "reflect" || o.padding == "replicate") refuse("--padding " + o.padding);
  if (o.padding != "valid" && o.padding != "same")
    throw UsageError("unknown --padding '" + o.padding + "' (expected valid, same, reflect or replicate)");
  if (o.dims != 2 && o.dims != 3) throw UsageError("--dims must be 2 or 3");
  if (o.repeat_given && o.repeat < 1) throw UsageError("--repeat must be >= 1");
}

// An open .npy input: its header and the file.
struct NpyInput {
  std::string path;
  io::NpyInfo info;
  int fd = -1;
  ~NpyInput() {
    if (fd >= 0) ::close(fd);
  }
};

void read_exactly(int fd, void* out, std::size_t bytes, std::size_t offset, const std::string& path) {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd, p, bytes, off_t(offset));
    if (got <= 0) throw io::Error("'" + path + "': read failed at byte " + std::to_string(offset));
    p += got;
    bytes -= std::size_t(got);
    offset += std::size_t(got);
  }
}

void open_npy(NpyInput& in) {
  in.fd = ::open(in.path.c_str(), O_RDONLY);
  if (in.fd < 0) throw io::Error("'" + in.path + "': " + std::strerror(errno));
  const off_t size = ::lseek(in.fd, 0, SEEK_END);
  std::vector<std::byte> head(std::size_t(std::min<off_t>(size, 1 << 20)));
  read_exactly(in.fd, head.data(), head.size(), 0, in.path);
  try {
    in.info = io::npy_info(head);
  } catch (const io::Error& e) {
    throw io::Error("'" + in.path + "': " + e.what());
  }
  // The blocks are read from the file as stored; float16 (which the other modes widen as they load) is not.
  if (in.info.dtype == io::DType::Float16)
    throw io::Error("'" + in.path + "': float16 arrays are not read by the distributed mode; save them as float32");
  const std::size_t expected = in.info.data_offset + io::element_count(in.info.shape) * io::dtype_size(in.info.dtype);
  if (std::size_t(size) != expected)
    throw io::Error("'" + in.path + "': " + std::to_string(size) + " bytes, the header announces " +
                    std::to_string(expected));
}

// The rows of a block: for every (n, c, [d,] h) of the block, W-contiguous runs in the file and the block.
struct BlockLayout {
  std::array<int, 5> global{}, lo{}, extent{};  // (N, C, D, H, W); D = 1 for images
  template <class F>
  void for_each_row(F&& f) const {
    std::size_t row = 0;
    for (int n = 0; n < extent[0]; ++n)
      for (int c = 0; c < extent[1]; ++c)
        for (int d = 0; d < extent[2]; ++d)
          for (int h = 0; h < extent[3]; ++h, ++row) {
            const std::size_t at =
                (((std::size_t(n) * global[1] + c) * global[2] + lo[2] + d) * global[3] + lo[3] + h) * global[4] + lo[4];
            f(at, row * std::size_t(extent[4]));
          }
  }
  std::size_t size() const {
    std::size_t s = 1;
    for (int e : extent) s *= std::size_t(e);
    return s;
  }
};

// An output .npy written by every rank: rank 0 creates it under a temporary name, writes the header and
// sizes it; then each rank writes its rows.
struct NpyOutput {
  std::string path, partial;
  std::size_t data_offset = 0;
};

template <class T>
void write_rows(const NpyOutput& out, const BlockLayout& b, const std::vector<T>& values) {
  if (b.size() == 0) return;
  const int fd = ::open(out.partial.c_str(), O_WRONLY);
  if (fd < 0) throw io::Error("'" + out.path + "': " + std::strerror(errno));
  bool ok = true;
  b.for_each_row([&](std::size_t at, std::size_t from) {
    const char* p = reinterpret_cast<const char*>(values.data() + from);
    std::size_t bytes = sizeof(T) * std::size_t(b.extent[4]);
    off_t offset = off_t(out.data_offset + at * sizeof(T));
    while (ok && bytes > 0) {
      const ssize_t put = ::pwrite(fd, p, bytes, offset);
      if (put <= 0) ok = false;
      else {
        p += put;
        bytes -= std::size_t(put);
        offset += put;
      }
    }
  });
  if (::close(fd) != 0) ok = false;
  if (!ok) throw io::Error("'" + out.path + "': write failed: " + std::strerror(errno));
}

NpyOutput create_output(const std::string& path, io::DType dtype, const std::vector<std::size_t>& shape, int rank) {
  NpyOutput out{path, path + ".kssim-partial", 0};
  const std::vector<std::byte> header = io::encode_npy_header(dtype, shape);
  out.data_offset = header.size();
  if (rank == 0) {
    std::FILE* f = std::fopen(out.partial.c_str(), "wb");
    if (!f) throw io::Error("'" + path + "': " + std::strerror(errno));
    const bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
                    ::ftruncate(fileno(f), off_t(header.size() + io::element_count(shape) * io::dtype_size(dtype))) == 0;
    if (std::fclose(f) != 0 || !ok) throw io::Error("'" + path + "': " + std::strerror(errno));
  }
  return out;
}

struct Request {
  const CompareOptions* o;
  MPI_Comm cart;
  int rank, size;
  std::vector<int> grid;
  std::array<int, 5> extents{};  // (N, C, D, H, W) of the whole field
  std::vector<std::size_t> file_shape;  // A's shape as in the file
  Options opts;
};

// Even split of `global` into `parts`: the first global % parts parts get one more.
std::pair<int, int> share(int global, int parts, int k) {
  const int base = global / parts, extra = global % parts;
  return {k * base + std::min(k, extra), base + (k < extra ? 1 : 0)};
}

template <class T, int Rank>
DistributedOutcome compute(Request& r, NpyInput& a, NpyInput& b) {
  using View = std::conditional_t<Rank == 4, Kokkos::View<T****, Kokkos::LayoutRight>,
                                  Kokkos::View<T*****, Kokkos::LayoutRight>>;
  const CompareOptions& o = *r.o;
  int coords[3] = {0, 0, 0};
  MPI_Cart_coords(r.cart, r.rank, Rank - 2, coords);
  BlockLayout block;
  block.global = r.extents;
  block.extent = r.extents;
  kssim::mpi::Offset<View> offset{};
  for (int s = 0; s < Rank - 2; ++s) {
    const int axis = 5 - (Rank - 2) + s;
    const auto [lo, extent] = share(r.extents[axis], r.grid[s], coords[s]);
    block.lo[axis] = lo;
    block.extent[axis] = extent;
    offset[s] = lo;
  }
  auto make_view = [&](const std::string& label, const std::array<int, 5>& e) {
    if constexpr (Rank == 4) return View(label, e[0], e[1], e[3], e[4]);
    else return View(label, e[0], e[1], e[2], e[3], e[4]);
  };
  View x, y, map, grad_a, grad_b;
  std::array<int, 5> map_extent{};
  collectively(r.cart, [&] {
    x = make_view("a", block.extent);
    y = make_view("b", block.extent);
    for (auto [in, view] : {std::pair{&a, &x}, std::pair{&b, &y}}) {
      std::vector<T> host(block.size());
      block.for_each_row([&](std::size_t at, std::size_t to) {
        read_exactly(in->fd, host.data() + to, sizeof(T) * std::size_t(block.extent[4]),
                     in->info.data_offset + at * sizeof(T), in->path);
      });
      auto mirror = Kokkos::create_mirror_view(*view);
      std::memcpy(mirror.data(), host.data(), host.size() * sizeof(T));
      Kokkos::deep_copy(*view, mirror);
    }
  });
  // The map block (collective) and the outputs' Views.
  kssim::mpi::MapBlock<Rank> mb;
  collectively(r.cart, [&] { mb = kssim::mpi::map_block(r.cart, offset, x, r.opts); });
  map_extent = {mb.extent[0], mb.extent[1], 1, mb.extent[Rank - 2], mb.extent[Rank - 1]};
  if constexpr (Rank == 5) map_extent[2] = mb.extent[2];
  std::array<int, 5> map_lo{0, 0, 0, mb.offset[Rank - 4], mb.offset[Rank - 3]};
  if constexpr (Rank == 5) map_lo[2] = mb.offset[0];
  collectively(r.cart, [&] {
    if (!o.map.empty()) map = make_view("map", map_extent);
    if (!o.grad_a.empty()) grad_a = make_view("grad_a", block.extent);
    if (!o.grad_b.empty()) grad_b = make_view("grad_b", block.extent);
  });

  Exec exec;
  double mean = 0;
  std::vector<double> seconds, exchange_seconds;
  const int runs = o.repeat_given ? o.repeat + 1 : 1;  // the first run doubles as the warm-up
  auto& clock = kssim::impl::mpi::ExchangeClock::get();
  clock.enabled = o.repeat_given;
  for (int run = 0; run < runs; ++run) {
    MPI_Barrier(r.cart);
    clock.seconds = 0;
    const auto start = std::chrono::steady_clock::now();
    collectively(r.cart, [&] {
      mean = kssim::mpi::ssim_map_grad(exec, r.cart, offset, x, y, map, grad_a, grad_b, r.opts);
    });
    double local[2] = {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), clock.seconds};
    double slowest[2] = {0, 0};
    MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, r.cart);
    if (run > 0) {
      seconds.push_back(slowest[0]);
      exchange_seconds.push_back(slowest[1]);
    }
  }
  if (!std::isfinite(mean))
    throw Failure{2, "the SSIM is not finite although the inputs were read as numbers: NaN or Inf in an input, or "
                     "values too large for the dtype"};

  // The outputs: the map in A's layout (its last axes: A may lack N and C), the gradients in A's shape.
  const io::DType dtype = std::is_same_v<T, float> ? io::DType::Float32 : io::DType::Float64;
  BlockLayout map_layout;
  map_layout.global = r.extents;
  for (int axis = 5 - (Rank - 2); axis < 5; ++axis)
    if (r.opts.padding == Padding::Valid) map_layout.global[axis] -= r.opts.window_size - 1;
  map_layout.lo = map_lo;
  map_layout.extent = map_extent;
  std::vector<std::size_t> map_shape;
  for (int i = 0; i < 5; ++i)
    if (Rank == 5 || i != 2) map_shape.push_back(std::size_t(map_layout.global[i]));
  map_shape.erase(map_shape.begin(), map_shape.end() - std::ptrdiff_t(r.file_shape.size()));
  struct Pending {
    const std::string* path;
    View view;
    BlockLayout layout;
    std::vector<std::size_t> shape;
  };
  std::vector<Pending> pending;
  if (!o.map.empty()) pending.push_back({&o.map, map, map_layout, map_shape});
  if (!o.grad_a.empty()) pending.push_back({&o.grad_a, grad_a, block, r.file_shape});
  if (!o.grad_b.empty()) pending.push_back({&o.grad_b, grad_b, block, r.file_shape});
  std::vector<NpyOutput> outputs;
  try {
    collectively(r.cart, [&] {
      for (const Pending& p : pending) outputs.push_back(create_output(*p.path, dtype, p.shape, r.rank));
    });
    collectively(r.cart, [&] {
      for (std::size_t k = 0; k < pending.size(); ++k) {
        auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pending[k].view);
        std::vector<T> values(mirror.data(), mirror.data() + pending[k].layout.size());
        write_rows(outputs[k], pending[k].layout, values);
      }
    });
    collectively(r.cart, [&] {
      if (r.rank == 0)
        for (const NpyOutput& out : outputs) fs::rename(out.partial, out.path);
    });
  } catch (...) {
    if (r.rank == 0)
      for (const Pending& p : pending) {
        std::error_code ec;
        fs::remove(*p.path + ".kssim-partial", ec);
      }
    throw;
  }

  DistributedOutcome outcome;
  const bool below = o.threshold && mean < *o.threshold;
  outcome.status = below ? 1 : 0;
  if (r.rank != 0) return outcome;
  std::sort(seconds.begin(), seconds.end());
  std::sort(exchange_seconds.begin(), exchange_seconds.end());
  if (o.json) {
    nlohmann::ordered_json j;
    j["metric"] = "ssim";
    j["value"] = mean;
    j["ssim"] = mean;
    j["shape"] = r.file_shape;
    j["dtype"] = io::dtype_name(dtype);
    j["dims"] = o.dims;
    j["channel_axis"] = "first";
    j["padding"] = o.padding;
    j["window"] = r.opts.window_size;
    j["sigma"] = r.opts.sigma;
    j["k1"] = r.opts.k1;
    j["k2"] = r.opts.k2;
    j["data_range"] = r.opts.data_range;
    j["map_shape"] = map_shape;
    j["backend"] = Exec::name();
    j["ranks"] = r.size;
    j["decompose"] = r.grid;
    j["inputs"] = {{"a", {{"path", o.a}, {"format", "npy"}}}, {"b", {{"path", o.b[0]}, {"format", "npy"}}}};
    nlohmann::ordered_json outs = nlohmann::ordered_json::object();
    if (!o.map.empty()) outs["map"] = o.map;
    if (!o.grad_a.empty()) outs["grad_a"] = o.grad_a;
    if (!o.grad_b.empty()) outs["grad_b"] = o.grad_b;
    j["outputs"] = outs;
    if (o.threshold) {
      j["threshold"] = *o.threshold;
      j["below_threshold"] = below;
    }
    if (!seconds.empty())
      j["timing"] = {{"repeat", o.repeat}, {"median_s", seconds[seconds.size() / 2]}, {"min_s", seconds.front()},
                     {"exchange_median_s", exchange_seconds[exchange_seconds.size() / 2]}};
    outcome.out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    outcome.out = number_text(mean) + "\n";
    if (!seconds.empty())
      outcome.out += "timing: repeat=" + std::to_string(o.repeat) + " median_s=" +
                     number_text(seconds[seconds.size() / 2]) + " min_s=" + number_text(seconds.front()) +
                     " exchange_median_s=" + number_text(exchange_seconds[exchange_seconds.size() / 2]) + "\n";
  }
  return outcome;
}

DistributedOutcome run(const CompareOptions& o) {
  Request r;
  r.o = &o;
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  NpyInput a{o.a}, b{o.b.empty() ? std::string() : o.b[0]};
  collectively(MPI_COMM_WORLD, [&] {
    refuse_unsupported(o);
    r.grid = parse_grid(o.decompose, o.dims, r.size);
    r.opts.window_size = o.window;
    r.opts.sigma = o.sigma;
    r.opts.k1 = o.k1;
    r.opts.k2 = o.k2;
    r.opts.data_range = o.data_range;
    r.opts.padding = o.padding == "same" ? Padding::Same : Padding::Valid;
    validate(r.opts);
  });
  collectively(MPI_COMM_WORLD, [&] {
    open_npy(a);
    open_npy(b);
    if (a.info.dtype != b.info.dtype || a.info.shape != b.info.shape)
      throw UsageError("A and B must have the same dtype and shape: '" + a.path + "' is " +
                       io::shape_string(a.info.shape) + " " + io::dtype_name(a.info.dtype) + ", '" + b.path + "' is " +
                       io::shape_string(b.info.shape) + " " + io::dtype_name(b.info.dtype));
    const std::size_t rank = a.info.shape.size();
    if (rank < std::size_t(o.dims) || rank > std::size_t(o.dims) + 2)
      throw UsageError("with --dims " + std::to_string(o.dims) + " the arrays must have " + std::to_string(o.dims) +
                       " to " + std::to_string(o.dims + 2) + " axes ([N,] [C,] " + (o.dims == 3 ? "D, " : "") +
                       "H, W), got " + io::shape_string(a.info.shape));
    std::vector<std::size_t> full(std::size_t(o.dims) + 2 - rank, 1);
    full.insert(full.end(), a.info.shape.begin(), a.info.shape.end());
    for (std::size_t v : full)
      if (v == 0 || v > 2147483647u) throw UsageError("the arrays' extents must be in [1, 2^31), got " + io::shape_string(a.info.shape));
    r.extents = {int(full[0]), int(full[1]), o.dims == 3 ? int(full[2]) : 1, int(full[full.size() - 2]),
                 int(full.back())};
    for (int s = 0; s < o.dims; ++s) {
      const int axis = 5 - o.dims + s;
      if (r.grid[s] > r.extents[axis])
        throw UsageError("--decompose '" + o.decompose + "' splits an axis of " + std::to_string(r.extents[axis]) +
                         " cells into " + std::to_string(r.grid[s]) + " blocks");
    }
  });
  r.file_shape = a.info.shape;
  std::vector<int> periods(r.grid.size(), 0);
  MPI_Cart_create(MPI_COMM_WORLD, int(r.grid.size()), r.grid.data(), periods.data(), 0, &r.cart);
  DistributedOutcome outcome;
  const bool single = a.info.dtype == io::DType::Float32;
  if (o.dims == 2) outcome = single ? compute<float, 4>(r, a, b) : compute<double, 4>(r, a, b);
  else outcome = single ? compute<float, 5>(r, a, b) : compute<double, 5>(r, a, b);
  MPI_Comm_free(&r.cart);
  return outcome;
}

}  // namespace

int run_distributed_compare(const CompareOptions& o, char**, const std::function<int(const DistributedOutcome&)>& emit) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  DistributedOutcome outcome;
  {
    Kokkos::ScopeGuard kokkos(Kokkos::InitializationSettings().set_disable_warnings(true));
    try {
      outcome = run(o);
    } catch (const Failure& f) {
      outcome = {f.status, {}, rank == 0 ? f.message : std::string()};
    } catch (const std::invalid_argument& e) {  // kssim::mpi's own checks: the same on every rank
      outcome = {2, {}, rank == 0 ? e.what() : std::string()};
    }
  }
  const int status = emit(outcome);
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 has printed
  MPI_Finalize();
  return status;
}

}  // namespace kssim::cli
