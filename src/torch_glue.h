// src/torch_glue.h -- what the LibTorch glue units share (torch_nn.cpp: the user-facing entry points;
// torch_nn_test_hooks.cpp: the test hooks): R lists -> the engine's network, training and variational settings,
// R arrays -> device tensors. Included first (torch before Rcpp). Built without LibTorch it includes only the
// torch-free glue, and every entry point stops with a message the R layer never shows (it checks
// torch_available() first and raises a classed scalebayes_error_backend).
#pragma once
#ifdef SCALEBAYES_HAVE_TORCH
#include <torch/torch.h>

#include "scalebayes/nn/adversarial.hpp"
#include "scalebayes/nn/batched.hpp"
#include "scalebayes/nn/batched_sgmcmc.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/run.hpp"
#include "scalebayes/nn/sgmcmc.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/nn/vi/fit.hpp"
#include "scalebayes/nn/wbb.hpp"
#endif

#include "nn_glue.h"
#include "sb_glue.h"
#include "sgmcmc_glue.h"

#ifdef SCALEBAYES_HAVE_TORCH
namespace sbtorch {
namespace nn = scalebayes::nn;

inline nn::ModelSpec spec_from(const Rcpp::List& s) { return sbglue::nn_spec_from(s); }

inline nn::TrainConfig train_from(const Rcpp::List& c) {
  nn::TrainConfig t;
  t.optimizer = sbglue::enum_arg<nn::Optimizer>(c, "optimizer");
  t.lr = Rcpp::as<double>(c["lr"]);
  t.momentum = Rcpp::as<double>(c["momentum"]);
  t.beta1 = Rcpp::as<double>(c["beta1"]);
  t.beta2 = Rcpp::as<double>(c["beta2"]);
  t.eps = Rcpp::as<double>(c["eps"]);
  t.alpha = Rcpp::as<double>(c["alpha"]);
  t.epochs = static_cast<std::int64_t>(Rcpp::as<double>(c["epochs"]));
  t.batch_size = static_cast<std::int64_t>(Rcpp::as<double>(c["batch_size"]));
  t.max_steps = static_cast<std::int64_t>(Rcpp::as<double>(c["max_steps"]));
  t.grad_tol = Rcpp::as<double>(c["grad_tol"]);
  t.weight_mode = sbglue::enum_arg<nn::WeightMode>(c, "weight_mode");
  t.certify = Rcpp::as<bool>(c["certify"]);
  t.history = Rcpp::as<bool>(c["history"]);
  if (c.containsElementNamed("merge_single_batch")) t.merge_single_batch = Rcpp::as<bool>(c["merge_single_batch"]);
  if (c.containsElementNamed("patience")) t.patience = static_cast<std::int64_t>(Rcpp::as<double>(c["patience"]));
  return t;
}

inline std::vector<std::int64_t> dims_of(const Rcpp::IntegerVector& d) { return std::vector<std::int64_t>(d.begin(), d.end()); }

// Responses per example: y holds n values, or an n x q matrix (gaussian / binomial with q outputs).
inline std::int64_t y_columns(const Rcpp::NumericVector& y, const Rcpp::IntegerVector& xdim) {
  const R_xlen_t n = xdim[0];
  if (n < 1 || y.size() % n != 0 || y.size() == 0) Rcpp::stop("y must have n values or n x q values");
  return static_cast<std::int64_t>(y.size() / n);
}

// The device and dtype an entry point runs on (list entries device, float64) and its torch threads
// (torch_threads) for the calling thread.
inline nn::DeviceChoice run_device(const Rcpp::List& c) {
  const nn::DeviceChoice dev = nn::choose_device(Rcpp::as<std::string>(c["device"]), Rcpp::as<bool>(c["float64"]));
  nn::set_worker_threads(Rcpp::as<int>(c["torch_threads"]));
  return dev;
}

// Training data and (optional; newdim empty or 0 rows) test inputs on the device, copied from R's arrays.
struct DeviceData {
  nn::Dataset train;
  torch::Tensor x_new;  // undefined without test inputs
  nn::Dataset validation;  // held-out examples (control entries val_x, val_xdim, val_y); has_validation
  bool has_validation = false;
};
inline DeviceData device_data(const nn::ModelSpec& spec, const nn::DeviceChoice& dev, Rcpp::NumericVector x,
                       Rcpp::IntegerVector xdim, Rcpp::NumericVector y, Rcpp::NumericVector newx,
                       Rcpp::IntegerVector newdim) {
  DeviceData d;
  d.train = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), spec.family, dev.options(), y_columns(y, xdim));
  if (newdim.size() > 0 && newdim[0] > 0) d.x_new = nn::from_col_major(newx.begin(), dims_of(newdim), dev.options());
  return d;
}

// The method-free part of a network run (nn/run.hpp: RunSpec) from R: the specification list; the device, dtype
// and this thread's torch threads (device_ctl: device, float64, torch_threads); the data, copied to the device
// into `data`, which the caller keeps alive for the run (r.data points into it).
inline void set_run(nn::RunSpec& r, DeviceData& data, const Rcpp::List& spec, const Rcpp::List& device_ctl,
                    Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y, Rcpp::NumericVector newx,
                    Rcpp::IntegerVector newdim) {
  r.dev = run_device(device_ctl);
  r.spec = spec_from(spec);
  data = device_data(r.spec, r.dev, x, xdim, y, newx, newdim);
  r.data = &data.train;
  r.x_new = data.x_new;
  // held-out examples of nn_control(validation = ) (R/nn_control.R: nn_validation_data()), already scaled as x, y
  if (device_ctl.containsElementNamed("val_xdim")) {
    Rcpp::NumericVector vx = device_ctl["val_x"], vy = device_ctl["val_y"];
    Rcpp::IntegerVector vd = device_ctl["val_xdim"];
    if (vd.size() > 0 && vd[0] > 0) {
      data.validation = nn::make_dataset(vx.begin(), dims_of(vd), vy.begin(), r.spec.family, r.dev.options(),
                                         y_columns(vy, vd));
      data.has_validation = true;
      r.validation = &data.validation;
    }
  }
  r.torch_threads = Rcpp::as<int>(device_ctl["torch_threads"]);
}

// The R vectors behind a DrawStore (nn/run.hpp) of `slots` draws of P parameters and B buffer values, when
// `keep`: doubles for a float64 network, float32 bytes in raw vectors for a float32 one (what R stores).
struct RDrawStore {
  bool f32 = false;
  Rcpp::NumericVector params, buffers;
  Rcpp::RawVector params_f, buffers_f;
  RDrawStore(R_xlen_t slots, R_xlen_t P, R_xlen_t B, bool keep, const nn::DeviceChoice& dev)
      : f32(keep && dev.dtype == torch::kFloat),
        params(keep && !f32 ? slots * P : 0),
        buffers(keep && !f32 ? slots * B : 0),
        params_f(f32 ? slots * P * static_cast<R_xlen_t>(sizeof(float)) : 0),
        buffers_f(f32 ? slots * B * static_cast<R_xlen_t>(sizeof(float)) : 0) {}
  // Points the store at these vectors (a buffer part only when there are buffers).
  void attach(nn::DrawStore& s) const {
    s.params = params.size() > 0 ? const_cast<double*>(&params[0]) : nullptr;
    s.buffers = buffers.size() > 0 ? const_cast<double*>(&buffers[0]) : nullptr;
    s.params_f = params_f.size() > 0 ? reinterpret_cast<float*>(const_cast<Rbyte*>(&params_f[0])) : nullptr;
    s.buffers_f = buffers_f.size() > 0 ? reinterpret_cast<float*>(const_cast<Rbyte*>(&buffers_f[0])) : nullptr;
  }
  Rcpp::RObject params_r() const { return f32 ? Rcpp::RObject(params_f) : Rcpp::RObject(params); }
  Rcpp::RObject buffers_r() const { return f32 ? Rcpp::RObject(buffers_f) : Rcpp::RObject(buffers); }
};

// The user's `batch` argument as R passes it through (R checked its type): "auto", TRUE / FALSE, or a number of
// members per group. Absent (the test hooks' lists): FALSE. nn::decide_batch() resolves it.
inline nn::BatchChoice batch_choice(const Rcpp::List& c) {
  nn::BatchChoice b;
  if (!sbglue::has(c, "batch")) {
    b.mode = nn::BatchChoice::Mode::off;
    return b;
  }
  SEXP v = c["batch"];
  const char* bad = "batch must be \"auto\", TRUE, FALSE or a number of members per batch";
  if (Rf_length(v) != 1) throw std::invalid_argument(bad);
  if (TYPEOF(v) == STRSXP) {
    if (std::string(CHAR(STRING_ELT(v, 0))) != "auto") throw std::invalid_argument(bad);
    return b;
  }
  if (TYPEOF(v) == LGLSXP) {
    const int f = LOGICAL(v)[0];
    if (f == NA_LOGICAL) throw std::invalid_argument(bad);
    b.mode = f ? nn::BatchChoice::Mode::on : nn::BatchChoice::Mode::off;
    return b;
  }
  if (TYPEOF(v) == INTSXP || TYPEOF(v) == REALSXP) {
    const double g = Rf_asReal(v);
    if (!(g >= 1 && g <= 1e7) || g != std::floor(g)) throw std::invalid_argument(bad);
    b.mode = nn::BatchChoice::Mode::on;
    b.group = static_cast<std::int64_t>(g);
    return b;
  }
  throw std::invalid_argument(bad);
}

// The decision for SG-MCMC chains (nnctl$chains_total: the chains of the whole call; absent: ctl.chains).
inline nn::BatchDecision sgmcmc_batch_decision(const nn::ModelSpec& spec, scalebayes::sgmcmc::Control ctl,
                                               const Rcpp::List& nnctl) {
  if (sbglue::has(nnctl, "chains_total")) ctl.chains = Rcpp::as<int>(nnctl["chains_total"]);
  return nn::decide_sgmcmc_batch(batch_choice(nnctl), spec, ctl);
}

// The engine's decision, as the fits record it (settings$batched, batch_group, unbatched).
inline Rcpp::List batch_decision_r(const nn::BatchDecision& d) {
  return Rcpp::List::create(Rcpp::Named("batched") = d.batched, Rcpp::Named("group") = static_cast<double>(d.group),
                            Rcpp::Named("supported") = d.supported,
                            Rcpp::Named("why") = scalebayes::enum_name(d.why), Rcpp::Named("reason") = d.reason);
}

// The name of a network run's progress bar: `head`, then " | <name> <value>" for every part that is a number
// (the most recent epoch's loss, accuracy, ...), so a bar shows what the run has measured so far.
inline std::string bar_name(const std::string& head, std::initializer_list<std::pair<const char*, double>> parts) {
  std::string r = head;
  char b[64];
  for (const auto& p : parts) {
    if (std::isnan(p.second)) continue;
    std::snprintf(b, sizeof b, " | %s %.4g", p.first, p.second);
    r += b;
  }
  return r;
}

// The variational settings list (R/vi.R: vi_run()); entries the test hook leaves out keep their defaults.
inline scalebayes::nn::vi::Settings vi_settings_from(const Rcpp::List& vi) {
  namespace V = scalebayes::nn::vi;
  V::Settings st;
  auto num = [&](const char* k, double& v) {
    if (sbglue::has(vi, k)) v = Rcpp::as<double>(vi[k]);
  };
  st.prior = sbglue::enum_arg<V::Prior>(vi, "prior");
  st.estimator = sbglue::enum_arg<V::Estimator>(vi, "estimator");
  if (sbglue::has(vi, "samples")) st.samples = Rcpp::as<int>(vi["samples"]);
  if (sbglue::has(vi, "bias_spike")) st.bias_spike = Rcpp::as<bool>(vi["bias_spike"]);
  num("tau", st.tau);
  num("prior_sd", st.prior_sd);
  num("mix_pi", st.mix_pi);
  num("mix_sd1", st.mix_sd1);
  num("mix_sd2", st.mix_sd2);
  num("alpha_max", st.alpha_max);
  num("init_sigma", st.init_sigma);
  num("init_phi", st.init_phi);
  num("init_mu", st.init_mu);
  num("noise_sd", st.noise_sd);
  num("kl_weight", st.kl_weight);
  num("kl_warmup", st.kl_warmup);
  return st;
}

}  // namespace sbtorch
#endif
