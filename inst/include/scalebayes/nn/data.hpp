// scalebayes/nn/data.hpp -- tensors from caller-owned column-major arrays, devices, threads.
//
// The caller (R glue, CLI, tests) owns its memory; these functions copy it into row-major tensors of the
// requested dtype on the requested device and never write into it.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/spec.hpp"

namespace scalebayes {
namespace nn {

// A column-major array with dims (n, d1, ..., dk) (R's layout) as a contiguous row-major tensor
// [n, d1, ..., dk]. Always a copy.
inline torch::Tensor from_col_major(const double* x, const std::vector<std::int64_t>& dims,
                                    const torch::TensorOptions& opt) {
  std::vector<std::int64_t> rev(dims.rbegin(), dims.rend());
  std::vector<std::int64_t> perm(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) perm[i] = static_cast<std::int64_t>(dims.size() - 1 - i);
  torch::Tensor t = torch::from_blob(const_cast<double*>(x), rev, torch::kDouble).permute(perm);
  return t.to(opt, /*non_blocking=*/false, /*copy=*/true).contiguous();
}

// Training data on one device: inputs [n, ...] and responses (class indices as int64 for multinomial,
// values for gaussian / binomial: a vector [n] for one output, a matrix [n, q] for q outputs).
struct Dataset {
  torch::Tensor x, y;
  Family family = Family::gaussian;
  std::int64_t n() const { return x.size(0); }
};

// y: n values, or (gaussian / binomial) an n x q column-major matrix (R's layout) of q responses per example.
inline Dataset make_dataset(const double* x, const std::vector<std::int64_t>& dims, const double* y, Family family,
                            const torch::TensorOptions& opt, std::int64_t q = 1) {
  if (q < 1) throw std::invalid_argument("the response needs at least one column");
  if (q > 1 && family == Family::multinomial)
    throw std::invalid_argument("a multinomial response is one class per example (one column)");
  Dataset d;
  d.family = family;
  d.x = from_col_major(x, dims, opt);
  if (q > 1) {
    d.y = from_col_major(y, {dims[0], q}, opt);
    return d;
  }
  torch::Tensor yy = torch::from_blob(const_cast<double*>(y), {dims[0]}, torch::kDouble);
  if (family == Family::multinomial) {
    d.y = yy.to(torch::TensorOptions().dtype(torch::kLong).device(opt.device()), false, true);
  } else {
    d.y = yy.to(opt, false, true);
  }
  return d;
}

struct DeviceChoice {
  torch::Device device = torch::kCPU;
  torch::Dtype dtype = torch::kFloat;
  torch::TensorOptions options() const { return torch::TensorOptions().dtype(dtype).device(device); }
};

// The one place "auto" is resolved: "cpu" or "cuda" (cuda when this LibTorch sees a CUDA device). Asking
// for cuda without it is an error, never a fall-back. The R layer asks here too (cpp_nn_resolve_device).
inline std::string resolve_device(const std::string& device) {
  if (device == "cpu") return "cpu";
  if (device == "cuda" || device == "auto") {
    if (torch::cuda::is_available()) return "cuda";
    if (device == "auto") return "cpu";
    throw std::invalid_argument(
        "device = \"cuda\" was requested but this LibTorch build has no CUDA device available");
  }
  throw std::invalid_argument("unknown device '" + device + "'");
}

inline DeviceChoice choose_device(const std::string& device, bool float64) {
  DeviceChoice c;
  c.dtype = float64 ? torch::kDouble : torch::kFloat;
  c.device = resolve_device(device) == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  return c;
}

// Where the engines draw their Monte-Carlo noise (SG-MCMC's Langevin / momentum noise, a variational fit's
// weight draws and Gumbel / Bernoulli inclusions, a VAE's latent draws): by default a generator on the device of
// the tensors it perturbs (on a GPU a CUDA generator: fast, but its numbers differ from the CPU generator's for
// the same seed). With host noise on -- a process-wide switch for checks, set_host_noise(true) before a run
// starts -- every draw is made by a CPU generator and copied to the device, so a run on a GPU uses exactly the
// random numbers of the same run on the CPU and the two agree up to floating-point rounding (slower: one copy
// per draw). Dropout masks (Net's own generator) always come from the device.
inline std::atomic<bool>& host_noise_flag() {
  static std::atomic<bool> on{false};
  return on;
}
inline void set_host_noise(bool on) { host_noise_flag().store(on); }
// A fresh generator for an engine's noise on `device` (the CPU's when host noise is on); seed it before use.
inline at::Generator noise_generator(const torch::Device& device) {
  const torch::Device d = host_noise_flag().load() ? torch::Device(torch::kCPU) : device;
  return at::globalContext().defaultGenerator(d).clone();
}
// Standard normals, U(lo, hi) and Bernoulli(p) draws of generator g as tensors with options o (dtype, device):
// drawn where g lives, then moved to o's device.
inline torch::Tensor noise_normal(at::Generator& g, at::IntArrayRef shape, const torch::TensorOptions& o) {
  if (g.device() == o.device()) return torch::randn(shape, g, o);
  return torch::randn(shape, g, o.device(g.device())).to(o.device());
}
inline torch::Tensor noise_uniform(at::Generator& g, at::IntArrayRef shape, double lo, double hi,
                                   const torch::TensorOptions& o) {
  if (g.device() == o.device()) return torch::empty(shape, o).uniform_(lo, hi, g);
  return torch::empty(shape, o.device(g.device())).uniform_(lo, hi, g).to(o.device());
}
inline torch::Tensor noise_bernoulli(at::Generator& g, const torch::Tensor& p) {
  if (g.device() == p.device()) return torch::bernoulli(p, g);
  return torch::bernoulli(p.to(g.device()), g).to(p.device());
}

// Worker threads for networks on a device: one on a GPU (networks run one after another there), else the
// run's threads.
inline int device_worker_threads(const torch::Device& device, int threads) { return device.is_cuda() ? 1 : threads; }

// Torch's intra-op threads for the calling thread (OpenMP's setting is per thread): call it on every worker.
inline void set_worker_threads(int n) {
  if (n < 1) n = 1;
  if (torch::get_num_threads() != n) torch::set_num_threads(n);
}

// Restores the calling thread's torch intra-op thread count when it goes out of scope (an entry point sets
// its own with set_worker_threads(); the caller's setting must survive the call, also when it throws).
class TorchThreadGuard {
 public:
  TorchThreadGuard() : old_(torch::get_num_threads()) {}
  ~TorchThreadGuard() {
    if (old_ > 0 && torch::get_num_threads() != old_) torch::set_num_threads(old_);
  }
  TorchThreadGuard(const TorchThreadGuard&) = delete;
  TorchThreadGuard& operator=(const TorchThreadGuard&) = delete;

 private:
  int old_;
};

}  // namespace nn
}  // namespace scalebayes

#include <dlfcn.h>

namespace scalebayes {
namespace nn {

// LibTorch's CPU matrix products call the system BLAS; a threaded OpenBLAS would add its own threads on
// top of ours. While a guard lives, OpenBLAS (when it is the BLAS in use) runs on one thread; the previous
// setting is restored afterwards. A no-op with any other BLAS.
class BlasThreadGuard {
 public:
  BlasThreadGuard() {
    using get_t = int (*)();
    set_ = reinterpret_cast<set_t>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    auto get = reinterpret_cast<get_t>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (set_ && get) {
      old_ = get();
      set_(1);
    }
  }
  ~BlasThreadGuard() {
    if (set_ && old_ > 0) set_(old_);
  }
  BlasThreadGuard(const BlasThreadGuard&) = delete;
  BlasThreadGuard& operator=(const BlasThreadGuard&) = delete;

 private:
  using set_t = void (*)(int);
  set_t set_ = nullptr;
  int old_ = 0;
};

}  // namespace nn
}  // namespace scalebayes
