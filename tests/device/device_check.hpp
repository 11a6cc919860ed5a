// tests/device/device_check.hpp -- what the checks of the device program share: options, synthetic data,
// network specs, comparison and timing, and the report rows.
//
// Every check runs one network engine of the package (inst/include/scalebayes/nn) twice on a reference and a
// target: the CPU and CUDA when a CUDA device is there, else the CPU on one worker thread and on `threads`.
// "agree": a short run in float64 with host noise (nn::set_host_noise: every random number drawn by a CPU
// generator, so both runs use the same numbers); its outputs must agree within `tol` (max |a - b| / max |a|).
// "time": a longer run in float32 with the device's own generator, timed on both (wall clock of the whole
// engine call, the data already on the device); the max relative difference of its outputs is printed for
// information only (float32 training is chaotic over many steps).
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/spec.hpp"
#include "scalebayes/rng/stream.hpp"

namespace devcheck {

namespace nn = scalebayes::nn;

struct Options {
  bool cuda = false;     // compare against CUDA (else: the CPU with `threads` workers)
  bool quick = false;    // smaller timing runs (CI)
  int threads = 2;       // worker threads of the CPU timing runs (and the target of a CPU-only check)
  std::uint64_t seed = 1;
};

// One device of a comparison: the device, float64 or not, the engine's worker threads.
struct Target {
  torch::Device device = torch::kCPU;
  bool float64 = true;
  int threads = 1;
  std::string name() const { return device.is_cuda() ? "cuda" : "cpu/" + std::to_string(threads); }
  nn::DeviceChoice choice() const {
    nn::DeviceChoice d;
    d.device = device;
    d.dtype = float64 ? torch::kDouble : torch::kFloat;
    return d;
  }
};

struct Row {
  std::string engine, check;  // check: "agree" or "time"
  std::string ref, target;    // device names
  double ref_s = NAN, target_s = NAN;
  double rel_diff = NAN, tol = NAN;  // tol NaN: not asserted
  bool pass = true;
  std::string note;
};

// The outputs of one engine run, flattened, and its wall time.
struct Outcome {
  std::vector<double> values;
  double seconds = 0.0;
};

inline double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double scale = 0.0, diff = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool fa = std::isfinite(a[i]), fb = std::isfinite(b[i]);
    if (fa != fb) return INFINITY;
    if (!fa) continue;
    scale = std::max(scale, std::abs(a[i]));
    diff = std::max(diff, std::abs(a[i] - b[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

inline double wall_seconds(const std::function<void()>& f) {
  if (torch::cuda::is_available()) torch::cuda::synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  if (torch::cuda::is_available()) torch::cuda::synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Synthetic data (column-major, examples first, as the engines' callers pass them).
struct Data {
  std::vector<double> x, y;
  std::vector<std::int64_t> dims;
  std::int64_t n() const { return dims[0]; }
};

// Regression: x ~ N(0, 1) (n x p), y = sin(x1) + x2 x3 / 2 + x4 + N(0, 0.3^2) (the Boston network's size).
inline Data regression(std::int64_t n, std::int64_t p, std::uint64_t seed) {
  scalebayes::rng::Stream s(seed, 1000);
  Data d;
  d.dims = {n, p};
  d.x.resize(static_cast<std::size_t>(n * p));
  for (auto& v : d.x) v = s.normal();
  d.y.resize(static_cast<std::size_t>(n));
  auto X = [&](std::int64_t i, std::int64_t j) { return d.x[static_cast<std::size_t>(i + n * j)]; };
  for (std::int64_t i = 0; i < n; ++i)
    d.y[static_cast<std::size_t>(i)] = std::sin(X(i, 0)) + 0.5 * X(i, 1) * X(i, 2) + X(i, 3) + 0.3 * s.normal();
  return d;
}

// Ten classes of side x side images in [0, 1]: class k lights a k-dependent blob, plus uniform noise
// (learnable, MNIST's shape; dims n x 1 x side x side, or n x side^2 with flat = true).
inline Data images(std::int64_t n, std::int64_t side, bool flat, std::uint64_t seed) {
  scalebayes::rng::Stream s(seed, 2000);
  Data d;
  d.dims = flat ? std::vector<std::int64_t>{n, side * side} : std::vector<std::int64_t>{n, 1, side, side};
  d.x.assign(static_cast<std::size_t>(n * side * side), 0.0);
  d.y.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(s.uniform() * 10.0) % 10;
    d.y[static_cast<std::size_t>(i)] = k;
    const double cr = side * (0.25 + 0.5 * (k % 5) / 4.0), cc = side * (k < 5 ? 0.3 : 0.7);
    for (std::int64_t r = 0; r < side; ++r)
      for (std::int64_t c = 0; c < side; ++c) {
        const double dist2 = ((r - cr) * (r - cr) + (c - cc) * (c - cc)) / (side * side / 36.0);
        const double v = std::min(1.0, std::exp(-dist2) + 0.3 * s.uniform());
        d.x[static_cast<std::size_t>(i + n * (r * side + c))] = v;  // column-major over (i, pixel)
      }
  }
  return d;
}

// The first m examples of d.
inline Data head(const Data& d, std::int64_t m) {
  const std::int64_t n = d.n();
  m = std::min(m, n);
  std::int64_t per = 1;
  for (std::size_t k = 1; k < d.dims.size(); ++k) per *= d.dims[k];
  Data h;
  h.dims = d.dims;
  h.dims[0] = m;
  h.x.resize(static_cast<std::size_t>(m * per));
  for (std::int64_t j = 0; j < per; ++j)
    for (std::int64_t i = 0; i < m; ++i) h.x[static_cast<std::size_t>(i + m * j)] = d.x[static_cast<std::size_t>(i + n * j)];
  h.y.assign(d.y.begin(), d.y.begin() + m);
  return h;
}

inline nn::LayerSpec linear(std::int64_t out) { return {nn::LayerKind::linear, out, 0, 1, 0, true}; }
inline nn::LayerSpec act(nn::LayerKind k) { return {k}; }

// An MLP: input {p}, hidden layers with ReLU, `out` outputs.
inline nn::ModelSpec mlp(std::int64_t p, const std::vector<std::int64_t>& hidden, std::int64_t out, nn::Family f) {
  nn::ModelSpec s;
  s.input = {p};
  s.family = f;
  for (auto h : hidden) {
    s.layers.push_back(linear(h));
    s.layers.push_back(act(nn::LayerKind::relu));
  }
  s.layers.push_back(linear(out));
  return s;
}

// A small CNN on 1 x side x side images (10 classes): conv-relu-pool, conv-relu-pool, linear.
inline nn::ModelSpec cnn(std::int64_t side) {
  using K = nn::LayerKind;
  nn::ModelSpec s;
  s.input = {1, side, side};
  s.family = nn::Family::multinomial;
  s.layers = {{K::conv2d, 8, 5, 1, 2, true}, {K::relu}, {K::maxpool2d, 0, 2, 2, 0, false},
              {K::conv2d, 16, 5, 1, 2, true}, {K::relu}, {K::maxpool2d, 0, 2, 2, 0, false},
              {K::flatten}, linear(10)};
  return s;
}

// The checks (one translation unit each group, so they compile in parallel).
std::vector<Row> check_wbb(const Options& o, const Target& ref, const Target& tgt);
std::vector<Row> check_sgmcmc(const Options& o, const Target& ref, const Target& tgt);
std::vector<Row> check_vi(const Options& o, const Target& ref, const Target& tgt);

// Runs `run` on both targets as the "agree" check (float64, host noise) and the "time" check (float32,
// device noise) and returns the two rows. run(target, timing) returns the outputs and time of one run.
inline std::vector<Row> agree_and_time(const std::string& engine, const Options& o, Target ref, Target tgt,
                                       const std::function<Outcome(const Target&, bool)>& run, double tol) {
  std::vector<Row> rows;
  // CPU against CPU (one worker thread against several): a draw or chain is a function of its seed only, so
  // the outputs must be identical
  if (!ref.device.is_cuda() && !tgt.device.is_cuda()) tol = 0.0;
  Row a;
  a.engine = engine;
  a.check = "agree";
  ref.float64 = tgt.float64 = true;
  a.ref = ref.name();
  a.target = tgt.name();
  try {
    nn::set_host_noise(true);
    const Outcome r = run(ref, false), t = run(tgt, false);
    nn::set_host_noise(false);
    a.ref_s = r.seconds;
    a.target_s = t.seconds;
    a.rel_diff = max_rel_diff(r.values, t.values);
    a.tol = tol;
    a.pass = a.rel_diff <= tol;
    a.note = std::to_string(r.values.size()) + " values";
  } catch (const std::exception& e) {
    nn::set_host_noise(false);
    a.pass = false;
    a.note = std::string("error: ") + e.what();
  }
  rows.push_back(a);
  Row b;
  b.engine = engine;
  b.check = "time";
  ref.float64 = tgt.float64 = false;
  b.ref = ref.name();
  b.target = tgt.name();
  try {
    const Outcome r = run(ref, true), t = run(tgt, true);
    b.ref_s = r.seconds;
    b.target_s = t.seconds;
    b.rel_diff = max_rel_diff(r.values, t.values);
    bool finite = true;
    for (double v : t.values) finite = finite && std::isfinite(v);
    const bool cpu_only = !ref.device.is_cuda() && !tgt.device.is_cuda();
    b.pass = finite && (!cpu_only || b.rel_diff == 0.0);  // CPU against CPU: identical in float32 too
    b.note = !finite ? "non-finite outputs on " + tgt.name()
                     : (b.pass ? "float32" : "float32 outputs differ between worker-thread counts");
  } catch (const std::exception& e) {
    b.pass = false;
    b.note = std::string("error: ") + e.what();
  }
  rows.push_back(b);
  return rows;
}

// The "batched = unbatched" check of a batched engine, in float64 on the reference device: run(target, group)
// runs one network per member (group 0) or the members batched in groups of `group`. Batched (groups of 4) must
// agree with unbatched within tol, and groups of 1 and 4 must agree exactly (a member does not depend on its
// group).
inline Row batched_equals_unbatched(const std::string& engine, const Target& ref, double tol,
                                    const std::function<Outcome(const Target&, std::int64_t)>& run) {
  Row b;
  b.engine = engine;
  b.check = "agree";
  Target r64 = ref;
  r64.float64 = true;
  b.ref = r64.name() + " 1x";
  b.target = r64.name() + " batch";
  try {
    const Outcome u = run(r64, 0), g1 = run(r64, 1), g4 = run(r64, 4);
    b.ref_s = u.seconds;
    b.target_s = g4.seconds;
    b.rel_diff = max_rel_diff(u.values, g4.values);
    b.tol = tol;
    const double groups = max_rel_diff(g1.values, g4.values);
    b.pass = b.rel_diff <= b.tol && groups == 0.0;
    char buf[96];
    std::snprintf(buf, sizeof buf, "groups of 1 vs 4: %.1e", groups);
    b.note = buf;
  } catch (const std::exception& e) {
    b.pass = false;
    b.note = std::string("error: ") + e.what();
  }
  return b;
}

}  // namespace devcheck
