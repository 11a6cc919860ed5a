// Glue for the LibTorch network engine (scalebayes/nn). The only translation unit that sees torch; torch is
// included before Rcpp. Built without LibTorch, every entry point stops with a message the R layer never
// shows (it checks torch_available() first and raises a classed scalebayes_error_backend).
#ifdef SCALEBAYES_HAVE_TORCH
#include <torch/torch.h>

#include "scalebayes/nn/adversarial.hpp"
#include "scalebayes/nn/batched.hpp"
#include "scalebayes/nn/batched_sgmcmc.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/sgmcmc.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/nn/vi/fit.hpp"
#include "scalebayes/nn/wbb.hpp"
#endif

#include "nn_glue.h"
#include "sb_glue.h"
#include "sgmcmc_glue.h"

#ifdef SCALEBAYES_HAVE_TORCH
namespace nn = scalebayes::nn;

namespace {

nn::ModelSpec spec_from(const Rcpp::List& s) { return sbglue::nn_spec_from(s); }

nn::TrainConfig train_from(const Rcpp::List& c) {
  nn::TrainConfig t;
  t.optimizer = static_cast<nn::Optimizer>(Rcpp::as<int>(c["optimizer"]));
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
  t.weight_mode = static_cast<nn::TrainConfig::WeightMode>(Rcpp::as<int>(c["weight_mode"]));
  t.certify = Rcpp::as<bool>(c["certify"]);
  t.history = Rcpp::as<bool>(c["history"]);
  if (c.containsElementNamed("merge_single_batch")) t.merge_single_batch = Rcpp::as<bool>(c["merge_single_batch"]);
  return t;
}

std::vector<std::int64_t> dims_of(const Rcpp::IntegerVector& d) { return std::vector<std::int64_t>(d.begin(), d.end()); }

// Responses per example: y holds n values, or an n x q matrix (gaussian / binomial with q outputs).
std::int64_t y_columns(const Rcpp::NumericVector& y, const Rcpp::IntegerVector& xdim) {
  const R_xlen_t n = xdim[0];
  if (n < 1 || y.size() % n != 0 || y.size() == 0) Rcpp::stop("y must have n values or n x q values");
  return static_cast<std::int64_t>(y.size() / n);
}

// The device and dtype an entry point runs on (list entries device, float64) and its torch threads
// (torch_threads) for the calling thread.
nn::DeviceChoice run_device(const Rcpp::List& c) {
  const nn::DeviceChoice dev = nn::choose_device(Rcpp::as<std::string>(c["device"]), Rcpp::as<bool>(c["float64"]));
  nn::set_worker_threads(Rcpp::as<int>(c["torch_threads"]));
  return dev;
}

// Training data and (optional; newdim empty or 0 rows) test inputs on the device, copied from R's arrays.
struct DeviceData {
  nn::Dataset train;
  torch::Tensor x_new;  // undefined without test inputs
};
DeviceData device_data(const nn::ModelSpec& spec, const nn::DeviceChoice& dev, Rcpp::NumericVector x,
                       Rcpp::IntegerVector xdim, Rcpp::NumericVector y, Rcpp::NumericVector newx,
                       Rcpp::IntegerVector newdim) {
  DeviceData d;
  d.train = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), spec.family, dev.options(), y_columns(y, xdim));
  if (newdim.size() > 0 && newdim[0] > 0) d.x_new = nn::from_col_major(newx.begin(), dims_of(newdim), dev.options());
  return d;
}


// The name of a network run's progress bar: `head`, then " | <name> <value>" for every part that is a number
// (the most recent epoch's loss, accuracy, ...), so a bar shows what the run has measured so far.
std::string bar_name(const std::string& head, std::initializer_list<std::pair<const char*, double>> parts) {
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
scalebayes::nn::vi::Settings vi_settings_from(const Rcpp::List& vi) {
  namespace V = scalebayes::nn::vi;
  V::Settings st;
  auto num = [&](const char* k, double& v) {
    if (sbglue::has(vi, k)) v = Rcpp::as<double>(vi[k]);
  };
  st.prior = static_cast<V::Prior>(Rcpp::as<int>(vi["prior"]));
  st.estimator = static_cast<V::Estimator>(Rcpp::as<int>(vi["estimator"]));
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

}  // namespace
#endif

// [[Rcpp::export]]
Rcpp::List cpp_torch_info() {
#ifdef SCALEBAYES_HAVE_TORCH
  const bool cuda = torch::cuda::is_available();
  return Rcpp::List::create(
      Rcpp::Named("available") = true,
      Rcpp::Named("version") = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                               std::to_string(TORCH_VERSION_PATCH),
      Rcpp::Named("cuda") = cuda, Rcpp::Named("cuda_devices") = cuda ? static_cast<int>(torch::cuda::device_count()) : 0,
      Rcpp::Named("threads") = torch::get_num_threads());
#else
  return Rcpp::List::create(Rcpp::Named("available") = false, Rcpp::Named("version") = NA_STRING,
                            Rcpp::Named("cuda") = false, Rcpp::Named("cuda_devices") = 0, Rcpp::Named("threads") = 0);
#endif
}

// "cpu" or "cuda" for a requested "cpu", "cuda" or "auto" (the engine's one rule, nn::resolve_device).
// [[Rcpp::export]]
std::string cpp_nn_resolve_device(std::string device) {
#ifdef SCALEBAYES_HAVE_TORCH
  return nn::resolve_device(device);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Parameter count, penalized groups, output size and parameter names of a network specification (validates it).
// [[Rcpp::export]]
Rcpp::List cpp_nn_describe(Rcpp::List spec) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  nn::Net net(spec_from(spec), torch::kCPU, torch::kFloat);
  Rcpp::CharacterVector names;
  Rcpp::NumericVector sizes;
  Rcpp::LogicalVector pen;
  for (const auto& g : net->groups()) {
    names.push_back(g.name);
    sizes.push_back(static_cast<double>(g.tensor.numel()));
    pen.push_back(g.penalized);
  }
  Rcpp::CharacterVector bnames;  // batch-norm running statistics (Net::copy_buffers_to order)
  Rcpp::NumericVector bsizes;
  for (const auto& b : net->buffer_shapes()) {
    bnames.push_back(b.first);
    bsizes.push_back(static_cast<double>(b.second));
  }
  return Rcpp::List::create(Rcpp::Named("n_parameters") = static_cast<double>(net->n_parameters()),
                            Rcpp::Named("n_penalized") = static_cast<int>(net->n_penalized_groups()),
                            Rcpp::Named("out") = static_cast<int>(net->out_dim()), Rcpp::Named("group") = names,
                            Rcpp::Named("size") = sizes, Rcpp::Named("penalized") = pen,
                            Rcpp::Named("buffer") = bnames, Rcpp::Named("buffer_size") = bsizes);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// WBB draws first + 1 .. first + count of a network (engine: nn/wbb.hpp over wbb/driver.hpp).
// x: the training inputs as an R array with dims xdim (n first); newx likewise (n_new may be 0).
// [[Rcpp::export]]
Rcpp::List cpp_nn_wbb(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                      Rcpp::NumericVector newx, Rcpp::IntegerVector newdim, Rcpp::List control, double lambda,
                      Rcpp::List settings) {
#ifdef SCALEBAYES_HAVE_TORCH
  nn::TorchThreadGuard torch_threads0;  // the caller's torch thread count comes back, also on an error
  nn::BlasThreadGuard blas1;
  const nn::DeviceChoice dev = run_device(control);
  const int count = static_cast<int>(Rcpp::as<double>(settings["draws"]));
  nn::NetWbbProblem pb;
  pb.spec = spec_from(spec);
  pb.dev = dev;
  const DeviceData data = device_data(pb.spec, dev, x, xdim, y, newx, newdim);
  pb.data = &data.train;
  pb.x_new = data.x_new;
  const bool has_new = data.x_new.defined();
  pb.train = train_from(control);
  pb.lambda = lambda;
  pb.torch_threads = Rcpp::as<int>(control["torch_threads"]);
  pb.normalize_weights = Rcpp::as<bool>(control["normalize_weights"]);

  nn::Net probe(pb.spec, torch::kCPU, torch::kFloat);
  const double P = static_cast<double>(probe->n_parameters());
  pb.train.merge_single_batch = probe->needs_two_examples();  // batch norm: no one-example minibatch
  const double n_new = has_new ? newdim[0] : 0;
  const bool keep_params = Rcpp::as<bool>(control["keep_weights"]);
  const std::int64_t n = data.train.n();
  const std::int64_t rows = pb.train.history ? nn::max_epochs(pb.train, n) : 0;  // R checked the size
  Rcpp::NumericVector pred(has_new ? static_cast<R_xlen_t>(n_new * probe->out_dim() * count) : 0);
  const double B = static_cast<double>(probe->n_buffer_values());
  // kept draws: float32 bytes for a float32 network (what R stores), doubles for a float64 one
  const bool f32 = keep_params && dev.dtype == torch::kFloat;
  Rcpp::NumericVector params(keep_params && !f32 ? static_cast<R_xlen_t>(P * count) : 0);
  Rcpp::NumericVector buffers(keep_params && !f32 ? static_cast<R_xlen_t>(B * count) : 0);
  Rcpp::RawVector params_f(f32 ? static_cast<R_xlen_t>(P * count * sizeof(float)) : 0);
  Rcpp::RawVector buffers_f(f32 ? static_cast<R_xlen_t>(B * count * sizeof(float)) : 0);
  Rcpp::NumericVector objective(count, NA_REAL), grad_norm(count, NA_REAL), steps(count, 0.0);
  Rcpp::NumericVector history(static_cast<R_xlen_t>(rows) * 2 * count, NA_REAL), epochs(count, 0.0);
  Rcpp::IntegerVector status(count, 0);
  nn::NetWbbOutput out;
  out.pred = has_new ? pred.begin() : nullptr;
  out.params = keep_params && !f32 ? params.begin() : nullptr;
  out.buffers = keep_params && !f32 && B > 0 ? buffers.begin() : nullptr;
  out.params_f = f32 ? reinterpret_cast<float*>(params_f.begin()) : nullptr;
  out.buffers_f = f32 && B > 0 ? reinterpret_cast<float*>(buffers_f.begin()) : nullptr;
  out.objective = objective.begin();
  out.grad_norm = grad_norm.begin();
  out.steps = steps.begin();
  out.status = status.begin();
  if (rows > 0) {
    out.history = history.begin();
    out.history_rows = rows;
    out.epochs = epochs.begin();
  }

  scalebayes::wbb::Settings st = sbglue::wbb_settings(settings);
  st.threads = nn::device_worker_threads(dev.device, st.threads);  // one network at a time on the GPU
  // The bar counts optimizer steps over all draws (steps a draw did not need once it stopped early count as
  // done); its name shows the finished draws and the most recent epoch's mean loss and accuracy.
  nn::TrainProgress tp;
  pb.progress = &tp;
  const double per_draw = static_cast<double>(nn::total_steps(pb.train, n));
  sbglue::Progress prog(per_draw * count, settings, "WBB draws");
  std::string shown;
  auto monitor = [&](std::size_t done) {
    const std::string buf = bar_name("WBB draws " + std::to_string(done) + "/" + std::to_string(count),
                                     {{"loss", tp.loss.load()}, {"acc", tp.accuracy.load()}});
    if (shown != buf) {
      shown = buf;
      prog.set_name(shown);
    }
    return prog(static_cast<std::size_t>(tp.steps.load() + tp.skipped.load()));
  };
  // control$batch: 0 one network per thread (nn/wbb.hpp); g > 0 batched groups of g members; -1 batched, one
  // group per worker thread (nn/batched.hpp). R's wbb_nn() resolves batch = "auto" / TRUE / FALSE to it.
  const int batch = sbglue::has(control, "batch") ? Rcpp::as<int>(control["batch"]) : 0;
  const auto rs = batch != 0 ? nn::run_net_wbb_batched(pb, out, st, batch > 0 ? batch : 0, monitor)
                             : nn::run_net_wbb(pb, out, st, monitor);
  for (R_xlen_t i = 0; i < count; ++i) {  // not computed or not finite: NA (the status says why)
    if (!std::isfinite(grad_norm[i])) grad_norm[i] = NA_REAL;
    if (!std::isfinite(objective[i])) objective[i] = NA_REAL;
  }
  return Rcpp::List::create(Rcpp::Named("pred") = pred,
                            Rcpp::Named("params") = f32 ? Rcpp::RObject(params_f) : Rcpp::RObject(params),
                            Rcpp::Named("buffers") = f32 ? Rcpp::RObject(buffers_f) : Rcpp::RObject(buffers),
                            Rcpp::Named("objective") = objective, Rcpp::Named("grad_norm") = grad_norm,
                            Rcpp::Named("steps") = steps, Rcpp::Named("status") = status,
                            Rcpp::Named("history") = history, Rcpp::Named("history_rows") = static_cast<double>(rows),
                            Rcpp::Named("epochs") = epochs,
                            Rcpp::Named("steps_counted") = static_cast<double>(tp.steps.load()),
                            Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
                            Rcpp::Named("device") = dev.device.str());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Whether a network specification trains batched (nn/batched.hpp), and if not, why.
// [[Rcpp::export]]
Rcpp::List cpp_nn_batch_support(Rcpp::List spec) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::BatchSupport b = nn::batch_support(spec_from(spec));
  return Rcpp::List::create(Rcpp::Named("ok") = b.ok, Rcpp::Named("reason") = b.reason);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Objective F (sum scale) and its gradient at the given parameters, for weights w and prior weights w0
// (test hook for the weighted loss; float64).
// [[Rcpp::export]]
Rcpp::List cpp_nn_objective(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                            Rcpp::NumericVector w, Rcpp::NumericVector params, double lambda, Rcpp::NumericVector w0) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::DeviceChoice dev = nn::choose_device("cpu", true);
  const nn::ModelSpec ms = spec_from(spec);
  nn::Net net(ms, dev.device, dev.dtype);
  if (params.size() != net->n_parameters()) Rcpp::stop("params has the wrong length");
  net->copy_from(params.begin());
  const nn::Dataset data =
      nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), ms.family, dev.options(), y_columns(y, xdim));
  nn::Penalty pen;
  pen.lambda = lambda;
  pen.w0.assign(w0.begin(), w0.end());
  torch::Tensor wt = torch::from_blob(w.begin(), {w.size()}, torch::kDouble).clone();
  Rcpp::NumericVector grad(params.size());
  const double f = nn::objective_and_gradient(net, data, wt, pen, grad.begin());
  return Rcpp::List::create(Rcpp::Named("objective") = f, Rcpp::Named("gradient") = grad);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Predictions of stored draws (params: P x T, one column per draw; buffers: B x T batch-norm running statistics,
// or 0 columns) on newx (an R array, n first).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_nn_predict(Rcpp::List spec, Rcpp::NumericMatrix params, Rcpp::NumericMatrix buffers,
                                   Rcpp::NumericVector newx, Rcpp::IntegerVector newdim, bool float64) {
#ifdef SCALEBAYES_HAVE_TORCH
  nn::BlasThreadGuard blas1;
  const nn::ModelSpec ms = spec_from(spec);
  const nn::DeviceChoice dev = nn::choose_device("cpu", float64);
  const torch::Tensor x = nn::from_col_major(newx.begin(), dims_of(newdim), dev.options());
  Rcpp::NumericVector out(static_cast<R_xlen_t>(params.ncol()) * newdim[0] * ms.n_out());
  if (buffers.ncol() > 0 && buffers.ncol() != params.ncol()) Rcpp::stop("buffers must have one column per draw");
  nn::predict_draws(ms, dev, params.begin(), static_cast<std::size_t>(params.nrow()),
                    static_cast<std::size_t>(params.ncol()), x, out.begin(),
                    buffers.ncol() > 0 && buffers.nrow() > 0 ? buffers.begin() : nullptr);
  return out;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Whether SG-MCMC chains of a network specification with SG-MCMC control `control` (the engine list of
// R/sgld_sa_nn.R) run batched (nn/batched_sgmcmc.hpp), and if not, why.
// [[Rcpp::export]]
Rcpp::List cpp_nn_sgmcmc_batch_support(Rcpp::List spec, Rcpp::List control) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::BatchSupport b = nn::batched_sgmcmc_support(spec_from(spec), sbglue::sgmcmc_control(control));
  return Rcpp::List::create(Rcpp::Named("ok") = b.ok, Rcpp::Named("reason") = b.reason);
#else
  return Rcpp::List::create(Rcpp::Named("ok") = false, Rcpp::Named("reason") = "scalebayes was built without LibTorch");
#endif
}

// SG-MCMC chains of a network (engine: nn/sgmcmc.hpp over sgmcmc/chain.hpp). control: the SG-MCMC list of
// R/sgld_sa_nn.R (as for the GLM); nnctl: device, float64, torch_threads, keep_pred, keep_params, optional init
// (starting parameters, n_parameters x chains); run: the run
// list (R/seed.R). Returns one list per chain.
// [[Rcpp::export]]
Rcpp::List cpp_nn_sgmcmc(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                         Rcpp::NumericVector newx, Rcpp::IntegerVector newdim, Rcpp::List control, Rcpp::List nnctl,
                         Rcpp::List run) {
#ifdef SCALEBAYES_HAVE_TORCH
  const scalebayes::sgmcmc::Control ctl = sbglue::sgmcmc_control(control);
  ctl.validate();
  nn::TorchThreadGuard torch_threads0;  // the caller's torch thread count comes back, also on an error
  nn::BlasThreadGuard blas1;
  const nn::DeviceChoice dev = run_device(nnctl);
  nn::NetChainProblem pb;
  pb.spec = spec_from(spec);
  pb.dev = dev;
  const DeviceData data = device_data(pb.spec, dev, x, xdim, y, newx, newdim);
  pb.data = &data.train;
  pb.x_new = data.x_new;
  const bool has_new = data.x_new.defined();
  pb.torch_threads = Rcpp::as<int>(nnctl["torch_threads"]);
  pb.keep_pred = has_new && Rcpp::as<bool>(nnctl["keep_pred"]);
  pb.keep_params = Rcpp::as<bool>(nnctl["keep_params"]);
  Rcpp::NumericVector obs_weights;  // optional per-example weights of the log-likelihood (R checked them)
  if (sbglue::has(nnctl, "weights")) {
    obs_weights = Rcpp::NumericVector(nnctl["weights"]);
    if (obs_weights.size() != xdim[0]) Rcpp::stop("weights must have one entry per example");
    pb.weights = torch::from_blob(obs_weights.begin(), {obs_weights.size()}, torch::kDouble).to(dev.options(), false, true);
  }

  nn::Net probe(pb.spec, torch::kCPU, torch::kFloat);
  const R_xlen_t P = static_cast<R_xlen_t>(probe->n_parameters());
  const R_xlen_t G = static_cast<R_xlen_t>(probe->groups().size());
  const R_xlen_t B = static_cast<R_xlen_t>(probe->n_buffer_values());
  const R_xlen_t m = has_new ? static_cast<R_xlen_t>(newdim[0]) * probe->out_dim() : 0;
  const R_xlen_t Tr = ctl.n_traced();
  // stored draws: every keep_stride-th saved iteration (R: keep_draws = a number of draws per chain)
  const R_xlen_t stride = sbglue::has(nnctl, "keep_stride") ? static_cast<R_xlen_t>(Rcpp::as<double>(nnctl["keep_stride"])) : 1;
  if (stride < 1) Rcpp::stop("keep_stride must be at least 1");
  const R_xlen_t S = (ctl.n_saved() + stride - 1) / stride;
  const bool f32 = pb.keep_params && dev.dtype == torch::kFloat;  // kept draws as float32 bytes (what R stores)
  Rcpp::NumericVector init_params;  // P x chains (R checked the shape), or absent: default initialization
  if (sbglue::has(nnctl, "init")) {
    init_params = Rcpp::NumericVector(nnctl["init"]);
    if (init_params.size() != P * ctl.chains) Rcpp::stop("init must have n_parameters x chains values");
    pb.init_params = init_params.begin();
  }
  std::vector<nn::NetChainOutput> outs(static_cast<std::size_t>(ctl.chains));
  Rcpp::List chains(ctl.chains);
  for (int c = 0; c < ctl.chains; ++c) {
    Rcpp::NumericVector pred_mean(m, NA_REAL), pred_draws(pb.keep_pred ? S * m : 0), param_mean(P), param_final(P),
        param_draws(pb.keep_params && !f32 ? S * P : 0), rho(P), trace(Tr * nn::NT_NCOL), delta(G), scalars(6),
        buffer_draws(pb.keep_params && !f32 ? S * B : 0), buffer_final(B);
    Rcpp::RawVector param_draws_f(f32 ? S * P * static_cast<R_xlen_t>(sizeof(float)) : 0),
        buffer_draws_f(f32 ? S * B * static_cast<R_xlen_t>(sizeof(float)) : 0);
    nn::NetChainOutput& o = outs[static_cast<std::size_t>(c)];
    o.pred_mean = has_new ? pred_mean.begin() : nullptr;
    o.pred_draws = pb.keep_pred ? pred_draws.begin() : nullptr;
    o.param_mean = param_mean.begin();
    o.param_final = param_final.begin();
    o.param_draws = pb.keep_params && !f32 ? param_draws.begin() : nullptr;
    o.param_draws_f = f32 ? reinterpret_cast<float*>(param_draws_f.begin()) : nullptr;
    o.buffer_draws_f = f32 && B > 0 ? reinterpret_cast<float*>(buffer_draws_f.begin()) : nullptr;
    o.keep_stride = static_cast<std::size_t>(stride);
    o.buffer_draws = pb.keep_params && !f32 && B > 0 ? buffer_draws.begin() : nullptr;
    o.buffer_final = B > 0 ? buffer_final.begin() : nullptr;
    o.rho = rho.begin();
    o.trace = trace.begin();
    o.delta = delta.begin();
    o.scalars = scalars.begin();
    chains[c] = Rcpp::List::create(Rcpp::Named("pred_mean") = pred_mean, Rcpp::Named("pred_draws") = pred_draws,
                                   Rcpp::Named("param_mean") = param_mean, Rcpp::Named("param_final") = param_final,
                                   Rcpp::Named("param_draws") = f32 ? Rcpp::RObject(param_draws_f) : Rcpp::RObject(param_draws),
                                   Rcpp::Named("rho") = rho,
                                   Rcpp::Named("trace") = trace, Rcpp::Named("delta") = delta,
                                   Rcpp::Named("scalars") = scalars,
                                   Rcpp::Named("buffer_draws") = f32 ? Rcpp::RObject(buffer_draws_f) : Rcpp::RObject(buffer_draws),
                                   Rcpp::Named("buffer_final") = buffer_final);
  }
  std::vector<scalebayes::sgmcmc::ChainStatus> status;
  nn::NetStatus shown;
  outs[0].status = &shown;
  sbglue::Progress prog(static_cast<double>(ctl.iterations) * ctl.chains, run, "SG-MCMC network");
  long last_shown = 0;
  auto monitor = [&](std::size_t done) {
    const long it = shown.iteration.load();
    if (it != last_shown) {  // chain 1's last trace point: loss, accuracy, sparsity
      last_shown = it;
      char buf[160];
      const double acc = shown.accuracy.load(), sp = shown.sparsity.load();
      std::snprintf(buf, sizeof buf, "SG-MCMC network | loss %.4g%s%s ", shown.loss.load(),
                    std::isnan(acc) ? "" : (" | acc " + std::to_string(acc).substr(0, 5)).c_str(),
                    std::isnan(sp) ? "" : (" | sparsity " + std::to_string(sp).substr(0, 5)).c_str());
      prog.set_name(buf);
    }
    return prog(done);
  };
  // nnctl$batch: 0 one network per chain and thread (nn/sgmcmc.hpp); g > 0 batched groups of g chains; -1
  // batched, one group per worker thread (nn/batched_sgmcmc.hpp). R's sgld_sa() resolves batch = "auto" / TRUE /
  // FALSE to it.
  const int batch = sbglue::has(nnctl, "batch") ? Rcpp::as<int>(nnctl["batch"]) : 0;
  const auto rs = batch != 0 ? nn::run_net_sgmcmc_batched(pb, ctl, sbglue::run_settings(run), outs, status,
                                                          batch > 0 ? batch : 0, monitor)
                             : nn::run_net_sgmcmc(pb, ctl, sbglue::run_settings(run), outs, status, monitor);
  Rcpp::CharacterVector messages(ctl.chains);
  for (int c = 0; c < ctl.chains; ++c) messages[c] = status[static_cast<std::size_t>(c)].message;
  return Rcpp::List::create(Rcpp::Named("chains") = chains, Rcpp::Named("messages") = messages,
                            Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
                            Rcpp::Named("device") = dev.device.str());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Variational fits (engine: nn/vi/fit.hpp): one fit per entry of vi$log_lambda (the other settings are
// shared), each from rng::Stream(seed, i). control: the nn_control() engine list; vi: the vi_control() engine
// list plus log_lambda (a vector), draws, prune (NA: none), retrain_epochs; run: seed, threads, quiet.
// [[Rcpp::export]]
Rcpp::List cpp_nn_vi(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                     Rcpp::NumericVector newx, Rcpp::IntegerVector newdim, Rcpp::List control, Rcpp::List vi,
                     Rcpp::List run) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  nn::TorchThreadGuard torch_threads0;
  nn::BlasThreadGuard blas1;
  const nn::DeviceChoice dev = run_device(control);
  V::ViProblem pb;
  pb.spec = spec_from(spec);
  pb.dev = dev;
  const DeviceData data = device_data(pb.spec, dev, x, xdim, y, newx, newdim);
  pb.data = &data.train;
  pb.x_new = data.x_new;
  pb.train = train_from(control);
  pb.torch_threads = Rcpp::as<int>(control["torch_threads"]);
  pb.draws = static_cast<std::int64_t>(Rcpp::as<double>(vi["draws"]));
  pb.prune = Rcpp::as<double>(vi["prune"]);
  if (!std::isfinite(pb.prune)) pb.prune = NAN;
  pb.retrain_epochs = static_cast<std::int64_t>(Rcpp::as<double>(vi["retrain_epochs"]));
  const V::Settings st = vi_settings_from(vi);
  Rcpp::NumericVector log_lambda = vi["log_lambda"];
  for (double ll : log_lambda) {
    V::Settings s1 = st;
    s1.log_lambda = ll;
    pb.fits.push_back(s1);
  }
  const R_xlen_t F = static_cast<R_xlen_t>(pb.fits.size());
  nn::Net probe(pb.spec, torch::kCPU, torch::kFloat);
  { V::Variational check(probe, pb.fits[0]); }  // the settings' errors before any thread starts
  const R_xlen_t P = static_cast<R_xlen_t>(probe->n_parameters());
  const R_xlen_t B = static_cast<R_xlen_t>(probe->n_buffer_values());
  const bool has_new = data.x_new.defined();
  const R_xlen_t O = has_new ? static_cast<R_xlen_t>(newdim[0]) * probe->out_dim() : 0;
  const R_xlen_t D = static_cast<R_xlen_t>(pb.draws);
  const bool keep = Rcpp::as<bool>(vi["keep_draws"]);
  const bool f32 = keep && dev.dtype == torch::kFloat;
  const bool pruning = std::isfinite(pb.prune);
  const std::int64_t rows = nn::max_epochs(pb.train, data.train.n()) + (pruning ? pb.retrain_epochs : 0);
  Rcpp::NumericVector mu(P * F, NA_REAL), sigma(P * F, NA_REAL), phi(P * F, NA_REAL), mask(P * F, NA_REAL);
  Rcpp::NumericVector params(keep && !f32 ? P * D * F : 0), buffers(keep && !f32 ? B * D * F : 0);
  Rcpp::RawVector params_f(f32 ? P * D * F * static_cast<R_xlen_t>(sizeof(float)) : 0),
      buffers_f(f32 ? B * D * F * static_cast<R_xlen_t>(sizeof(float)) : 0);
  Rcpp::NumericVector pred(O * D * F, NA_REAL), pred_mean_q(O * F, NA_REAL), pred_stages(pruning ? 2 * O * F : 0, NA_REAL);
  Rcpp::NumericVector trace(static_cast<R_xlen_t>(rows) * 6 * F, NA_REAL), accuracy(static_cast<R_xlen_t>(rows) * F, NA_REAL);
  Rcpp::NumericVector epochs(F, 0.0), steps(F, 0.0), kept(F, NA_REAL);
  Rcpp::IntegerVector status(F, 0);
  V::ViOutput out;
  out.mu = mu.begin();
  out.sigma = sigma.begin();
  out.phi = phi.begin();
  out.mask = mask.begin();
  out.params = keep && !f32 ? params.begin() : nullptr;
  out.buffers = keep && !f32 && B > 0 ? buffers.begin() : nullptr;
  out.params_f = f32 ? reinterpret_cast<float*>(params_f.begin()) : nullptr;
  out.buffers_f = f32 && B > 0 ? reinterpret_cast<float*>(buffers_f.begin()) : nullptr;
  out.pred = O > 0 ? pred.begin() : nullptr;
  out.pred_mean_q = O > 0 ? pred_mean_q.begin() : nullptr;
  out.pred_stages = pruning && O > 0 ? pred_stages.begin() : nullptr;
  out.trace_rows = rows;
  out.trace = trace.begin();
  out.accuracy = accuracy.begin();
  out.epochs = epochs.begin();
  out.steps = steps.begin();
  out.kept = kept.begin();
  out.status = status.begin();
  nn::TrainProgress tp;
  pb.progress = &tp;
  const double per_fit = static_cast<double>(nn::total_steps(pb.train, data.train.n()) +
                                             (pruning ? pb.retrain_epochs * nn::steps_per_epoch(pb.train, data.train.n()) : 0));
  const scalebayes::parallel::RunSettings rs0 = sbglue::run_settings(run);
  const int threads = nn::device_worker_threads(dev.device, rs0.threads);
  const std::string label = Rcpp::as<std::string>(vi["label"]);
  sbglue::Progress prog(per_fit * static_cast<double>(F), run, label.c_str());
  std::string shown;
  auto monitor = [&](std::size_t done) {
    const std::string head = F > 1 ? label + " " + std::to_string(done) + "/" + std::to_string(F) : label;
    const std::string buf = bar_name(head, {{"-ELBO/n", tp.loss.load()}, {"acc", tp.accuracy.load()},
                                            {"kept", tp.sparsity.load()}});
    if (shown != buf) {
      shown = buf;
      prog.set_name(shown);
    }
    return prog(static_cast<std::size_t>(tp.steps.load() + tp.skipped.load()));
  };
  const auto rs = V::run_vi(pb, out, rs0.seed, threads, monitor);
  return Rcpp::List::create(
      Rcpp::Named("mu") = mu, Rcpp::Named("sigma") = sigma, Rcpp::Named("phi") = phi, Rcpp::Named("mask") = mask,
      Rcpp::Named("params") = f32 ? Rcpp::RObject(params_f) : Rcpp::RObject(params),
      Rcpp::Named("buffers") = f32 ? Rcpp::RObject(buffers_f) : Rcpp::RObject(buffers),
      Rcpp::Named("pred") = pred, Rcpp::Named("pred_mean_q") = pred_mean_q, Rcpp::Named("pred_stages") = pred_stages,
      Rcpp::Named("trace") = trace, Rcpp::Named("accuracy") = accuracy, Rcpp::Named("trace_rows") = static_cast<double>(rows),
      Rcpp::Named("epochs") = epochs, Rcpp::Named("steps") = steps, Rcpp::Named("kept") = kept,
      Rcpp::Named("status") = status, Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
      Rcpp::Named("device") = dev.device.str());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the variational engine (float64, CPU): a network at mean parameters `params` (Net::copy_to
// order) with q's rho and logit (one value per parameter; logit ignored unless the prior is spike_slab) and the
// vi settings list of cpp_nn_vi (log_lambda its first entry). what = "kl": KL(q || p) (one value); "grad": `reps`
// replications of the gradient of the minibatch NLL mean over all of x with respect to (mu, rho), a reps x 2P
// matrix; "gamma": `reps` hard Gumbel-softmax inclusions of the variational weights, reps x (weights of q).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_vi_test(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                                Rcpp::NumericVector params, Rcpp::NumericVector rho, Rcpp::NumericVector logit,
                                Rcpp::List vi, std::string what, int reps, double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  nn::TorchThreadGuard torch_threads0;
  nn::set_worker_threads(1);
  const nn::ModelSpec ms = spec_from(spec);
  nn::Net net(ms, torch::kCPU, torch::kDouble);
  V::Settings st = vi_settings_from(vi);
  st.log_lambda = Rcpp::NumericVector(vi["log_lambda"])[0];
  V::Variational v(net, st);
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), 0);
  net->init_from(s);
  v.init_from(s);
  const std::int64_t P = net->n_parameters();
  if (params.size() != P || rho.size() != P || logit.size() != P) Rcpp::stop("params, rho and logit need P values");
  net->copy_from(params.begin());
  std::vector<std::int64_t> start;
  std::int64_t a = 0;
  for (const auto& g : net->groups()) {
    start.push_back(a);
    a += g.tensor.numel();
  }
  {
    torch::NoGradGuard ng;
    for (auto& g : v.groups()) {
      const auto sz = net->groups()[g.g].tensor.sizes();
      g.rho.copy_(torch::from_blob(rho.begin() + start[g.g], sz, torch::kDouble));
      if (g.logit.defined()) g.logit.copy_(torch::from_blob(logit.begin() + start[g.g], sz, torch::kDouble));
    }
  }
  if (what == "kl") {
    Rcpp::NumericMatrix r(1, 1);
    torch::NoGradGuard ng;
    r(0, 0) = v.kl().item<double>();
    return r;
  }
  if (what == "gamma") {
    // the flat inclusion draw of training (logit groups in group order), mapped back to group order
    std::int64_t m = v.n_logit();
    Rcpp::NumericMatrix r(reps, m);
    torch::NoGradGuard ng;
    for (int k = 0; k < reps; ++k) {
      const torch::Tensor t = m > 0 ? v.gamma_flat().to(torch::kDouble).contiguous() : torch::Tensor();
      std::int64_t c = 0;
      for (auto& g : v.groups()) {
        if (!g.logit.defined()) continue;
        for (std::int64_t j = 0; j < g.numel; ++j) r(k, c + j) = t.data_ptr<double>()[g.off + j];
        c += g.numel;
      }
    }
    return r;
  }
  if (what != "grad") Rcpp::stop("unknown test");
  const nn::DeviceChoice dev = nn::choose_device("cpu", true);
  nn::Dataset d = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), ms.family, dev.options(), y_columns(y, xdim));
  V::ViObjective obj(net, v, d);
  V::SampleHook hook(v, net);
  Rcpp::NumericMatrix r(reps, 2 * P);
  std::vector<double> row(static_cast<std::size_t>(2 * P));
  auto put = [&](std::int64_t at, const torch::Tensor& g) {  // one contiguous copy per tensor
    const torch::Tensor c = g.detach().to(torch::kDouble).contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), row.begin() + at);
  };
  for (int k = 0; k < reps; ++k) {
    net->zero_grad();
    v.zero_rho_grad();
    torch::Tensor l = obj.nll_examples(net->forward(d.x, hook), d.y).mean();
    l.backward();
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t gi = 0; gi < net->groups().size(); ++gi) {
      const torch::Tensor gr = net->groups()[gi].tensor.grad();
      if (gr.defined()) put(start[gi], gr);
    }
    for (auto& g : v.groups()) {
      const torch::Tensor gr = v.rho_grad(g);
      if (gr.defined()) put(P + start[g.g], gr);
    }
    for (std::int64_t j = 0; j < 2 * P; ++j) r(k, j) = row[static_cast<std::size_t>(j)];
  }
  return r;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// FGSM against the model average of stored draws (engine: nn/adversarial.hpp). params: P x T, one column per
// draw; buffers: B x T batch-norm running statistics (or 0 columns); x: an R array (n first) with dims xdim; y: 0-based classes (multinomial) or 0/1; zeta: perturbation
// sizes; clip: (lo, hi); keep_x: also return the adversarial inputs (row-major, zeta after zeta); source: the
// 1-based columns the attack is built from (empty: all); predicted_label: attack the predicted class.
// [[Rcpp::export]]
Rcpp::List cpp_nn_adversarial(Rcpp::List spec, Rcpp::NumericMatrix params, Rcpp::NumericMatrix buffers,
                              Rcpp::NumericVector x,
                              Rcpp::IntegerVector xdim, Rcpp::NumericVector y, Rcpp::NumericVector zeta,
                              Rcpp::NumericVector clip, double batch, std::string device, bool float64, bool keep_x,
                              Rcpp::IntegerVector source, bool predicted_label) {
#ifdef SCALEBAYES_HAVE_TORCH
  nn::BlasThreadGuard blas1;
  const nn::ModelSpec ms = spec_from(spec);
  const nn::DeviceChoice dev = nn::choose_device(device, float64);
  const nn::Dataset data = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), ms.family, dev.options());
  nn::AdversarialConfig cfg;
  cfg.zeta.assign(zeta.begin(), zeta.end());
  cfg.lo = clip[0];
  cfg.hi = clip[1];
  cfg.batch = static_cast<std::int64_t>(batch);
  for (int t : source) cfg.source.push_back(static_cast<std::size_t>(t - 1));
  cfg.predicted_label = predicted_label;
  Rcpp::NumericVector acc(zeta.size()), dacc(zeta.size());
  Rcpp::NumericVector xadv(keep_x ? static_cast<R_xlen_t>(x.size()) * zeta.size() : 0);
  nn::AdversarialOutput out;
  out.accuracy = acc.begin();
  out.draw_accuracy = dacc.begin();
  out.x_adv = keep_x ? xadv.begin() : nullptr;
  nn::fgsm_model_average(ms, dev, params.begin(), static_cast<std::size_t>(params.nrow()),
                         static_cast<std::size_t>(params.ncol()), data, cfg, out,
                         buffers.ncol() > 0 && buffers.nrow() > 0 ? buffers.begin() : nullptr);
  return Rcpp::List::create(Rcpp::Named("accuracy") = acc, Rcpp::Named("mean_draw_accuracy") = dacc,
                            Rcpp::Named("x_adv") = xadv, Rcpp::Named("device") = dev.device.str());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Raw outputs of one network with the given parameters on x (test hook for dropout): the network's generator
// is seeded as for draw `stream` of `seed` (Net::init_from), then the parameters are set; train: training
// mode (dropout masks drawn) or prediction mode. Returns n x out, row-major.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_nn_forward(Rcpp::List spec, Rcpp::NumericVector params, Rcpp::NumericVector x,
                                   Rcpp::IntegerVector xdim, bool train, double seed, double stream, bool float64) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  const nn::ModelSpec ms = spec_from(spec);
  const nn::DeviceChoice dev = nn::choose_device("cpu", float64);
  nn::Net net(ms, dev.device, dev.dtype);
  if (params.size() != net->n_parameters()) Rcpp::stop("params has the wrong length");
  scalebayes::rng::Stream s(static_cast<std::uint64_t>(seed), static_cast<std::uint64_t>(stream));
  net->init_from(s);
  net->copy_from(params.begin());
  if (train) net->train(); else net->eval();
  const torch::Tensor out =
      net->forward(nn::from_col_major(x.begin(), dims_of(xdim), dev.options())).to(torch::kCPU, torch::kDouble).contiguous();
  return Rcpp::NumericVector(out.data_ptr<double>(), out.data_ptr<double>() + out.numel());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the storage concept (sgmcmc/storage.hpp): the same operations on the same float64 inputs through
// the Eigen policy and the LibTorch policy (CPU, double). a, b, c: arrays of one length; alpha, sigma, delta:
// numbers. Returns list(eigen = ..., torch = ...), each with dot, axpy (b + alpha a), where_scalar
// (alpha > 0 ? sigma : delta), where_array (c > 0 ? a : b), group_dot (a.b + c.c over two groups), prior_grad,
// inclusion, and after one SA step (omega = alpha) rho, kappa0, kappa1, delta, sigma.
// [[Rcpp::export]]
Rcpp::List cpp_test_storage_ops(Rcpp::NumericVector a, Rcpp::NumericVector b, Rcpp::NumericVector c, double alpha,
                                double sigma, double delta) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace sg = scalebayes::sgmcmc;
  const Eigen::Index n = a.size();
  if (b.size() != n || c.size() != n) Rcpp::stop("a, b, c must have one length");
  auto eig = [&](const Rcpp::NumericVector& v) { return Eigen::ArrayXd(Eigen::Map<const Eigen::ArrayXd>(v.begin(), n)); };
  auto ten = [&](const Rcpp::NumericVector& v) {
    return torch::from_blob(const_cast<double*>(v.begin()), {static_cast<std::int64_t>(n)}, torch::kDouble).clone();
  };
  auto vec = [](const torch::Tensor& t) {
    const torch::Tensor u = t.detach().contiguous();
    return Rcpp::NumericVector(u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
  };
  auto vecE = [](const Eigen::ArrayXd& x) { return Rcpp::NumericVector(x.data(), x.data() + x.size()); };
  sg::SSGLHyper h;
  h.v0 = 0.1;
  h.v1 = 10;
  sg::SAInput<sg::EigenOps> inE;
  inE.n_total = 100;
  inE.resid_ss = 42;
  sg::SAInput<nn::TorchOps> inT;
  inT.n_total = 100;
  inT.resid_ss = torch::full({}, 42.0, torch::kDouble);
  Rcpp::List out(2);
  {  // Eigen
    using O = sg::EigenOps;
    std::vector<sg::Group<O>> gs(2);
    gs[0].value = eig(a);
    gs[1].value = eig(c);
    for (auto& g : gs) g.grad = O::zeros_like(g.value);
    Eigen::ArrayXd y = eig(b);
    O::axpy(alpha, eig(a), y);
    const auto v = sg::GroupVector<O>::values(gs);
    sg::init_latents<O>(gs[0], 0.5, delta, h);
    sg::init_latents<O>(gs[1], 0.3, delta, h);
    O::ssgl_prior_grad(gs[0].grad, gs[0].value, gs[0].kappa0, gs[0].kappa1, sigma);
    const Eigen::ArrayXd inc = O::inclusion_prob(gs[0].value, sigma, delta, h.v0, h.v1);
    double sg_ = sigma;
    sg::sa_update<O>(gs, sg_, alpha, h, inE, true);
    out[0] = Rcpp::List::create(
        Rcpp::Named("dot") = O::dot(eig(a), eig(b)), Rcpp::Named("axpy") = vecE(y),
        Rcpp::Named("where_scalar") = O::where(alpha, sigma, delta),
        Rcpp::Named("where_array") = vecE(O::where(eig(c), eig(a), eig(b))), Rcpp::Named("group_dot") = v.dot(v),
        Rcpp::Named("prior_grad") = vecE(gs[0].grad), Rcpp::Named("inclusion") = vecE(inc),
        Rcpp::Named("rho") = vecE(gs[0].rho), Rcpp::Named("kappa0") = vecE(gs[0].kappa0),
        Rcpp::Named("kappa1") = vecE(gs[1].kappa1), Rcpp::Named("delta") = gs[1].delta, Rcpp::Named("sigma") = sg_);
  }
  {  // LibTorch, float64 on the CPU
    using O = nn::TorchOps;
    auto sc = [](double v) { return torch::full({}, v, torch::kDouble); };
    std::vector<sg::Group<O>> gs(2);
    gs[0].value = ten(a);
    gs[1].value = ten(c);
    for (auto& g : gs) g.grad = O::zeros_like(g.value);
    torch::Tensor y = ten(b);
    O::axpy(sc(alpha), ten(a), y);
    const auto v = sg::GroupVector<O>::values(gs);
    sg::init_latents<O>(gs[0], 0.5, sc(delta), h);
    sg::init_latents<O>(gs[1], 0.3, sc(delta), h);
    O::ssgl_prior_grad(gs[0].grad, gs[0].value, gs[0].kappa0, gs[0].kappa1, sc(sigma));
    const torch::Tensor inc = O::inclusion_prob(gs[0].value, sc(sigma), sc(delta), h.v0, h.v1);
    torch::Tensor sg_ = sc(sigma);
    sg::sa_update<O>(gs, sg_, alpha, h, inT, true);
    out[1] = Rcpp::List::create(
        Rcpp::Named("dot") = O::value(O::dot(ten(a), ten(b))), Rcpp::Named("axpy") = vec(y),
        Rcpp::Named("where_scalar") = O::value(O::where(sc(alpha), sc(sigma), sc(delta))),
        Rcpp::Named("where_array") = vec(O::where(ten(c), ten(a), ten(b))),
        Rcpp::Named("group_dot") = O::value(v.dot(v)), Rcpp::Named("prior_grad") = vec(gs[0].grad),
        Rcpp::Named("inclusion") = vec(inc), Rcpp::Named("rho") = vec(gs[0].rho),
        Rcpp::Named("kappa0") = vec(gs[0].kappa0), Rcpp::Named("kappa1") = vec(gs[1].kappa1),
        Rcpp::Named("delta") = O::value(gs[1].delta), Rcpp::Named("sigma") = O::value(sg_));
  }
  out.names() = Rcpp::CharacterVector::create("eigen", "torch");
  return out;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the damped L-BFGS memory (sgmcmc/lbfgs.hpp) through the Eigen and the LibTorch storage (CPU,
// float64): the pairs are the columns of S and Y (oldest first), split into two groups after `split` rows; the
// memory keeps `memory` of them. Returns list(eigen = , torch = ), each with G (G~ v), S (S~ z), diag (diag G~), gamma and sybar
// (s'ybar of the kept pairs).
// [[Rcpp::export]]
Rcpp::List cpp_test_lbfgs_ops(Rcpp::NumericMatrix S, Rcpp::NumericMatrix Y, Rcpp::NumericVector v,
                              Rcpp::NumericVector z, int memory, double r, double gamma_min, int split) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace sg = scalebayes::sgmcmc;
  const long d = S.nrow(), m = S.ncol();
  if (Y.nrow() != d || Y.ncol() != m || v.size() != d || z.size() != d || split < 0 || split > d)
    Rcpp::stop("S, Y, v, z must have matching sizes and 0 <= split <= nrow(S)");
  auto run = [&](auto ops_tag, auto to_array, auto to_host, auto scalar0) {
    using O = decltype(ops_tag);
    using GV = sg::GroupVector<O>;
    auto gv = [&](const double* p) {
      GV g;
      g.parts.push_back(to_array(p, split));
      g.parts.push_back(to_array(p + split, d - split));
      return g;
    };
    auto host = [&](const GV& g) {
      Rcpp::NumericVector out(d);
      long o = 0;
      for (const auto& part : g.parts) {
        const std::vector<double> h = to_host(part);
        for (double e : h) out[o++] = e;
      }
      return out;
    };
    sg::DampedLbfgs<O> mem(memory, r, gamma_min);
    for (long k = 0; k < m; ++k) mem.push(gv(&S(0, k)), gv(&Y(0, k)));
    mem.prepare(scalar0());
    Rcpp::NumericVector sy(mem.size());
    for (int i = 0; i < mem.size(); ++i) sy[i] = O::value(mem.sybar(i));
    return Rcpp::List::create(Rcpp::Named("G") = host(mem.apply_G(gv(v.begin()))),
                              Rcpp::Named("S") = host(mem.apply_S(gv(z.begin()))),
                              Rcpp::Named("diag") = host(mem.diag_G(gv(v.begin()))),
                              Rcpp::Named("gamma") = O::value(mem.gamma()), Rcpp::Named("sybar") = sy);
  };
  Rcpp::List out(2);
  out[0] = run(
      sg::EigenOps{}, [](const double* p, long n) { return Eigen::ArrayXd(Eigen::Map<const Eigen::ArrayXd>(p, n)); },
      [](const Eigen::ArrayXd& a) { return std::vector<double>(a.data(), a.data() + a.size()); },
      []() { return 0.0; });
  out[1] = run(
      nn::TorchOps{},
      [](const double* p, long n) {
        return torch::from_blob(const_cast<double*>(p), {static_cast<std::int64_t>(n)}, torch::kDouble).clone();
      },
      [](const torch::Tensor& t) {
        const torch::Tensor u = t.detach().contiguous();
        return std::vector<double>(u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
      },
      []() { return torch::zeros({}, torch::kDouble); });
  out.names() = Rcpp::CharacterVector::create("eigen", "torch");
  return out;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the network model's second gradient (nn/sgmcmc.hpp, NetModel::gradient): a chain model of the
// network (seed, chain 0, its substream for the initial weights) draws minibatch idx (1-based) replayable, then
// asks for the gradient again on the same minibatch. Returns both gradients (flattened, group order), whether the
// dropout generator's state and the batch-norm buffers after the second gradient equal those after the first,
// and the recorded minibatch count before and after (the second gradient records nothing). weights: per-example
// weights of the log-likelihood (length 0: none).
// [[Rcpp::export]]
Rcpp::List cpp_test_net_regradient(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim,
                                   Rcpp::NumericVector y, Rcpp::IntegerVector idx, Rcpp::NumericVector weights,
                                   double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  nn::NetChainProblem pb;
  pb.spec = spec_from(spec);
  pb.dev = nn::choose_device("cpu", true);
  const nn::Dataset data = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), pb.spec.family, pb.dev.options());
  pb.data = &data;
  if (weights.size() > 0)
    pb.weights = torch::from_blob(weights.begin(), {weights.size()}, torch::kDouble).clone();
  scalebayes::sgmcmc::Control ctl;
  scalebayes::rng::Stream init(static_cast<std::uint64_t>(seed), 0, 1);
  nn::NetModel model(pb, ctl, init);
  std::vector<long> ix(idx.begin(), idx.end());
  for (auto& v : ix) v -= 1;
  const long n = static_cast<long>(ix.size());
  auto grads = [&]() {
    std::vector<double> g;
    for (auto& gr : model.groups()) {
      const torch::Tensor t = gr.grad.contiguous();
      g.insert(g.end(), t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
    }
    return Rcpp::NumericVector(g.begin(), g.end());
  };
  auto state = [&]() {
    std::vector<torch::Tensor> st;
    for (const auto& b : model.net()->buffers()) st.push_back(b.clone());
    if (model.net()->has_dropout()) st.push_back(model.net()->dropout_generator().get_state());
    return st;
  };
  auto same = [](const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!torch::equal(a[i], b[i])) return false;
    return true;
  };
  model.minibatch(ix, n, true);
  const Rcpp::NumericVector g1 = grads();
  const auto st1 = state();
  double loss1 = NAN, acc1 = NAN;
  model.gradient(ix, n);
  const Rcpp::NumericVector g2 = grads();
  const bool unchanged = same(st1, state());
  const long recorded = model.recorded_examples();  // only the first pass was recorded
  model.take_means(&loss1, &acc1);
  model.minibatch(ix, n, false);     // a fresh minibatch draws new masks
  const Rcpp::NumericVector g3 = grads();
  return Rcpp::List::create(Rcpp::Named("first") = g1, Rcpp::Named("second") = g2, Rcpp::Named("fresh") = g3,
                            Rcpp::Named("state_unchanged") = unchanged, Rcpp::Named("recorded_loss") = loss1,
                            Rcpp::Named("recorded_examples") = static_cast<double>(recorded),
                            Rcpp::Named("n_buffers") = static_cast<int>(st1.size()));
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

#ifdef SCALEBAYES_HAVE_TORCH
namespace {

// TEST-ONLY objective of cpp_nn_train_check(): a network without hidden layers (one linear layer, p -> 1) plus
// an offset c that the OBJECTIVE owns (a tensor outside the network, updated by the same optimizer):
//     f_i = x_i' beta + b + c,   G(beta, b, c) = sum_i (y_i - f_i)^2 / 2 + (lambda / 2) (||beta||^2 + c^2).
// Its minimizer is known in closed form: c = 0 (b is unpenalized and absorbs the level), and (b, beta) the
// ridge solution solve(X1'X1 + lambda diag(0, 1, ..., 1), X1'y) with X1 = cbind(1, x). The minibatch loss is
// the unbiased estimate of G / n; written here with its own tensor code (not nn/objective.hpp's).
class RidgeOffsetObjective {
 public:
  RidgeOffsetObjective(nn::Net& net, const nn::Dataset& d, double lambda, double offset)
      : net_(net), d_(d), lambda_(lambda) {
    c_ = torch::full({}, offset, d.x.options()).set_requires_grad(true);
  }
  std::int64_t n() const { return d_.n(); }
  torch::Device device() const { return d_.x.device(); }
  std::vector<torch::Tensor> parameters() {
    std::vector<torch::Tensor> p = net_->parameters();
    p.push_back(c_);
    return p;
  }
  void start() { net_->train(); }
  void begin_epoch(scalebayes::rng::Stream&) {}  // no random numbers of its own
  nn::MinibatchLoss minibatch(const torch::Tensor& idx, const nn::StepInfo&) {
    const torch::Tensor xb = d_.x.index_select(0, idx), yb = d_.y.index_select(0, idx);
    nn::MinibatchLoss m;
    m.loss = (yb - net_->forward(xb).select(1, 0) - c_).pow(2).mean() * 0.5 +
             (lambda_ / (2.0 * static_cast<double>(n()))) * (weight().pow(2).sum() + c_.pow(2));
    return m;  // no accuracy
  }
  nn::Certificate certify(std::int64_t) {
    nn::Certificate ct;
    for (auto& p : parameters())
      if (p.grad().defined()) p.grad().zero_();
    const torch::Tensor r = d_.y - net_->forward(d_.x).select(1, 0) - c_;
    const torch::Tensor g = r.pow(2).sum() * 0.5 + (lambda_ / 2.0) * (weight().pow(2).sum() + c_.pow(2));
    (g / static_cast<double>(n())).backward();
    double g2 = 0.0;
    for (auto& p : parameters()) {
      if (p.grad().defined()) {
        g2 += p.grad().pow(2).sum().item<double>();
        p.grad().zero_();
      }
    }
    ct.objective = g.item<double>();
    ct.grad_norm = std::sqrt(g2);
    return ct;
  }
  double offset() const { return c_.item<double>(); }

 private:
  torch::Tensor weight() { return net_->groups().front().tensor; }
  nn::Net& net_;
  const nn::Dataset& d_;
  double lambda_;
  torch::Tensor c_;
};

}  // namespace
#endif

// TEST HOOK (not for users): trains the test-only RidgeOffsetObjective above through the real training loop
// (nn::train_loop) on x (n x p) and y, from the network parameters params0 (p weights, then the bias) and
// offset0, with the training settings of nn_engine_control() and the minibatch order from stream (seed, 0).
// Returns the final parameters, the offset, the loop's counts, its per-epoch history and certificate, and the
// progress counter's steps.
// [[Rcpp::export]]
Rcpp::List cpp_nn_train_check(Rcpp::NumericMatrix x, Rcpp::NumericVector y, Rcpp::NumericVector params0,
                              double offset0, double lambda, Rcpp::List control, double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::DeviceChoice dev = nn::choose_device("cpu", Rcpp::as<bool>(control["float64"]));
  nn::ModelSpec ms;
  ms.family = nn::Family::gaussian;
  ms.input = {static_cast<std::int64_t>(x.ncol())};
  ms.layers = {{nn::LayerKind::linear, 1, 0, 1, 0, true}};
  nn::Net net(ms, dev.device, dev.dtype);
  if (params0.size() != net->n_parameters()) Rcpp::stop("params0 must have ncol(x) + 1 values");
  net->copy_from(params0.begin());
  const nn::Dataset d = nn::make_dataset(x.begin(), {x.nrow(), x.ncol()}, y.begin(), ms.family, dev.options());
  const nn::TrainConfig tc = train_from(control);
  RidgeOffsetObjective obj(net, d, lambda, offset0);
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), 0);
  nn::TrainProgress tp;
  const nn::TrainResult r = nn::train_loop(obj, tc, s, scalebayes::parallel::StopToken(), true, &tp);
  Rcpp::NumericVector params(params0.size());
  net->copy_to(params.begin());
  Rcpp::NumericVector hl, ha;
  for (const auto& e : r.history) {
    hl.push_back(e.loss);
    ha.push_back(e.accuracy);
  }
  return Rcpp::List::create(
      Rcpp::Named("params") = params, Rcpp::Named("offset") = obj.offset(),
      Rcpp::Named("steps") = static_cast<double>(r.steps), Rcpp::Named("epochs") = static_cast<double>(r.epochs),
      Rcpp::Named("converged") = r.converged, Rcpp::Named("diverged") = r.diverged,
      Rcpp::Named("objective") = r.objective, Rcpp::Named("grad_norm") = r.grad_norm,
      Rcpp::Named("history_loss") = hl, Rcpp::Named("history_accuracy") = ha,
      Rcpp::Named("steps_counted") = static_cast<double>(tp.steps.load()),
      Rcpp::Named("steps_skipped") = static_cast<double>(tp.skipped.load()));
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

#ifdef SCALEBAYES_HAVE_TORCH
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <fstream>
#include <map>
#endif

// Writes one parameter vector of a network (params: Net::copy_to order, as a fit's weights columns) and its
// batch-norm buffers as a PyTorch state dict file at path: a Dict<string, Tensor> in the zip container of
// Python's torch.save(), which torch.load() reads. It is what torch::pickle_save() writes, except that the dict is
// pickled without LibTorch's type tag (Pickler's tag_aggregates): the tag is a call of
// torch.jit._pickle.restore_type_tag, which torch.load(weights_only=True), the default since PyTorch 2.6,
// refuses; untagged, the file holds only a plain dict of tensors (rebuilt by torch._utils._rebuild_tensor_v2). Keys are those of the matching torch.nn.Sequential: the
// 0-based position of the layer in the engine's layer list, then the torch name ("3.weight",
// "1.running_mean"); parameters and then buffers per layer, layer by layer. buffers: a list named by the
// engine's buffer names ("layer2_batchnorm1d.running_mean", ".running_var", ".num_batches_tracked"), each a
// numeric vector of the buffer's size; running_mean and running_var are required for every batch-norm layer,
// num_batches_tracked keeps the module's 0 when absent. Tensors are float32, or float64 with float64 = TRUE
// (num_batches_tracked: int64). Returns the keys written.
// [[Rcpp::export]]
Rcpp::CharacterVector cpp_nn_export(Rcpp::List spec, Rcpp::NumericVector params, Rcpp::List buffers, bool float64,
                                    std::string path) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  const nn::ModelSpec ms = spec_from(spec);
  const nn::NetPlan p = nn::plan(ms);
  nn::Net net(ms, torch::kCPU, float64 ? torch::kDouble : torch::kFloat);
  if (params.size() != net->n_parameters())
    throw std::invalid_argument("params has " + std::to_string(params.size()) + " values, the network " +
                                std::to_string(net->n_parameters()) + " parameters");
  net->copy_from(params.begin());
  std::map<std::string, Rcpp::NumericVector> given;
  if (buffers.size() > 0) {
    const Rcpp::CharacterVector bn = buffers.names();
    for (R_xlen_t i = 0; i < buffers.size(); ++i) given[Rcpp::as<std::string>(bn[i])] = Rcpp::NumericVector(buffers[i]);
  }
  const auto children = net->named_children();
  c10::Dict<std::string, at::Tensor> dict;
  Rcpp::CharacterVector keys;
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    const std::string& base = p.layers[i].base;
    const auto* child = children.find(base);
    if (!child) continue;  // a layer without a module (activation, pooling, flatten, reshape, dropout)
    const std::string prefix = std::to_string(i) + ".";
    for (const auto& kv : (*child)->named_parameters(/*recurse=*/false)) {
      dict.insert(prefix + kv.key(), kv.value().detach().clone().contiguous());
      keys.push_back(prefix + kv.key());
    }
    for (const auto& kv : (*child)->named_buffers(/*recurse=*/false)) {
      const std::string name = base + "." + kv.key();
      torch::Tensor b = kv.value().detach().clone().contiguous();
      if (kv.key() == "num_batches_tracked") b = b.to(torch::kLong);  // Net::to(dtype) made it floating point
      const auto it = given.find(name);
      if (it != given.end()) {
        if (static_cast<std::int64_t>(it->second.size()) != b.numel())
          throw std::invalid_argument("buffer " + name + " has " + std::to_string(it->second.size()) + " values, the layer " +
                                      std::to_string(b.numel()));
        const std::vector<std::int64_t> sizes(b.sizes().begin(), b.sizes().end());
        b.copy_(torch::from_blob(it->second.begin(), sizes, torch::kDouble));  // (rounds to int64 for the counter)
      } else if (kv.key() != "num_batches_tracked") {
        throw std::invalid_argument("buffer " + name + " is missing");
      }
      dict.insert(prefix + kv.key(), b);
      keys.push_back(prefix + kv.key());
    }
  }
  std::vector<char> pkl;
  torch::jit::Pickler pickler([&](const char* b, std::size_t n) { pkl.insert(pkl.end(), b, b + n); }, nullptr, nullptr,
                              nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(dict));
  pickler.stop();
  std::vector<char> bytes;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* b, std::size_t n) {
      const char* c = static_cast<const char*>(b);
      bytes.insert(bytes.end(), c, c + n);
      return n;
    });
    torch::jit::writeArchiveAndTensors("data", pkl.data(), pkl.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot open " + path + " for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error("could not write " + path);
  return keys;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// ==== Variational autoencoder (vae(), R/vae.R; engine: nn/vi/vae.hpp) ==========================================
// This section is self-contained: its own include and helpers; nothing above depends on it.
#include <functional>
#include <numeric>
#ifdef SCALEBAYES_HAVE_TORCH
#include "scalebayes/nn/vi/vae.hpp"
#endif

// The VAE fit: encoder and decoder specs (engine lists of nn_engine_spec(); the encoder ends in 2 * latent
// outputs, the decoder takes latent inputs and ends in D = prod(xdim[-1]) outputs), x (values in [0, 1], R's
// column-major n x ... array), control: the nn_control() engine list; vae: latent, samples, label; run: seed,
// threads, quiet. Returns both networks' parameters and buffers, the trace (rows x 4 row-major: epoch, ELBO, NLL,
// KL per example), the loop's per-epoch loss, epochs, steps, status and whether the run was interrupted.
// [[Rcpp::export]]
Rcpp::List cpp_nn_vae(Rcpp::List enc_spec, Rcpp::List dec_spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim,
                      Rcpp::List control, Rcpp::List vae, Rcpp::List run) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  nn::TorchThreadGuard torch_threads0;
  nn::BlasThreadGuard blas1;
  const nn::DeviceChoice dev = run_device(control);
  V::VaeProblem pb;
  pb.encoder = spec_from(enc_spec);
  pb.decoder = spec_from(dec_spec);
  pb.latent = static_cast<std::int64_t>(Rcpp::as<double>(vae["latent"]));
  pb.samples = Rcpp::as<int>(vae["samples"]);
  pb.dev = dev;
  pb.x = nn::from_col_major(x.begin(), dims_of(xdim), dev.options());
  pb.train = train_from(control);
  pb.torch_threads = Rcpp::as<int>(control["torch_threads"]);
  const std::int64_t n = pb.x.size(0);
  V::check_vae_specs(pb.encoder, pb.decoder, pb.latent, pb.x[0].numel());  // before any thread starts
  nn::Net pe(pb.encoder, torch::kCPU, torch::kFloat), pd(pb.decoder, torch::kCPU, torch::kFloat);
  const std::int64_t rows = nn::max_epochs(pb.train, n);
  Rcpp::NumericVector enc_params(pe->n_parameters(), NA_REAL), dec_params(pd->n_parameters(), NA_REAL),
      enc_buffers(pe->n_buffer_values()), dec_buffers(pd->n_buffer_values()),
      trace(static_cast<R_xlen_t>(rows) * 4, NA_REAL), loss(static_cast<R_xlen_t>(rows), NA_REAL), epochs(1, 0.0),
      steps(1, 0.0);
  Rcpp::IntegerVector status(1, 0);
  V::VaeOutput out;
  out.enc_params = enc_params.begin();
  out.dec_params = dec_params.begin();
  out.enc_buffers = enc_buffers.size() ? enc_buffers.begin() : nullptr;
  out.dec_buffers = dec_buffers.size() ? dec_buffers.begin() : nullptr;
  out.trace_rows = rows;
  out.trace = trace.begin();
  out.loss = loss.begin();
  out.epochs = epochs.begin();
  out.steps = steps.begin();
  out.status = status.begin();
  nn::TrainProgress tp;
  pb.progress = &tp;
  const scalebayes::parallel::RunSettings rs0 = sbglue::run_settings(run);
  const int threads = nn::device_worker_threads(dev.device, rs0.threads);
  const std::string label = Rcpp::as<std::string>(vae["label"]);
  sbglue::Progress prog(static_cast<double>(nn::total_steps(pb.train, n)), run, label.c_str());
  std::string shown;
  auto monitor = [&](std::size_t) {
    const std::string buf = bar_name(label, {{"ELBO/example", -tp.loss.load()}});
    if (shown != buf) {
      shown = buf;
      prog.set_name(shown);
    }
    return prog(static_cast<std::size_t>(tp.steps.load() + tp.skipped.load()));
  };
  const auto rs = V::run_vae(pb, out, rs0.seed, threads, monitor);
  return Rcpp::List::create(
      Rcpp::Named("enc_params") = enc_params, Rcpp::Named("dec_params") = dec_params,
      Rcpp::Named("enc_buffers") = enc_buffers, Rcpp::Named("dec_buffers") = dec_buffers,
      Rcpp::Named("trace") = trace, Rcpp::Named("loss") = loss, Rcpp::Named("trace_rows") = static_cast<double>(rows),
      Rcpp::Named("epochs") = epochs[0], Rcpp::Named("steps") = steps[0], Rcpp::Named("status") = status[0],
      Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(), Rcpp::Named("device") = dev.device.str());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Encoder and decoder of a stored VAE fit applied on the CPU (float64 or float32 as trained). what = "encode":
// x (n x ... column-major, xdim) -> list(mean, sd), n x latent each; "decode": x is an n x latent matrix of z
// -> list(prob) n x D; "generate": n = xdim[0] draws z ~ N(0, I) from rng::Stream(seed, 0) -> list(z, prob);
// "elbo": x as for "encode" -> list(elbo) an n x 3 matrix (ELBO, NLL, KL per example) estimated with `samples`
// draws per example from rng::Stream(seed, 0).
// [[Rcpp::export]]
Rcpp::List cpp_nn_vae_apply(Rcpp::List enc_spec, Rcpp::List dec_spec, Rcpp::NumericVector enc_params,
                            Rcpp::NumericVector enc_buffers, Rcpp::NumericVector dec_params,
                            Rcpp::NumericVector dec_buffers, std::string what, Rcpp::NumericVector x,
                            Rcpp::IntegerVector xdim, int samples, double seed, bool float64) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  nn::TorchThreadGuard torch_threads0;
  nn::BlasThreadGuard blas1;
  nn::set_worker_threads(1);
  const nn::ModelSpec es = spec_from(enc_spec), ds = spec_from(dec_spec);
  const std::int64_t latent = ds.input.at(0);
  const auto dt = float64 ? torch::kDouble : torch::kFloat;
  const auto opt = torch::TensorOptions().dtype(dt);
  nn::Net enc(es, torch::kCPU, dt), dec(ds, torch::kCPU, dt);
  auto load = [](nn::Net& net, const Rcpp::NumericVector& p, const Rcpp::NumericVector& b, const char* who) {
    if (p.size() != net->n_parameters())
      throw std::invalid_argument(std::string("the stored ") + who + " has " + std::to_string(p.size()) +
                                  " parameters, its network " + std::to_string(net->n_parameters()));
    net->copy_from(p.begin());
    if (net->n_buffer_values() > 0) {
      if (b.size() != net->n_buffer_values()) throw std::invalid_argument(std::string("the stored ") + who + "'s buffers do not fit");
      net->copy_buffers_from(b.begin());
    }
  };
  load(enc, enc_params, enc_buffers, "encoder");
  load(dec, dec_params, dec_buffers, "decoder");
  auto to_r = [](const torch::Tensor& t) {  // [n, k] -> n x k R matrix
    const torch::Tensor c = t.to(torch::kCPU, torch::kDouble).t().contiguous();
    Rcpp::NumericMatrix m(static_cast<int>(t.size(0)), static_cast<int>(t.size(1)));
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), m.begin());
    return m;
  };
  const std::uint64_t sd = static_cast<std::uint64_t>(seed);
  if (what == "encode" || what == "elbo") {
    V::check_vae_specs(es, ds, latent, std::accumulate(xdim.begin() + 1, xdim.end(), std::int64_t(1), std::multiplies<std::int64_t>()));
    const torch::Tensor xt = nn::from_col_major(x.begin(), dims_of(xdim), opt);
    if (what == "encode") {
      const auto e = V::encode(enc, xt, latent);
      return Rcpp::List::create(Rcpp::Named("mean") = to_r(e.first), Rcpp::Named("sd") = to_r(e.second));
    }
    scalebayes::rng::Stream s(sd, 0);
    return Rcpp::List::create(Rcpp::Named("elbo") = to_r(V::elbo(enc, dec, xt, latent, samples, s)));
  }
  if (what == "decode") {
    if (xdim.size() != 2 || xdim[1] != latent) throw std::invalid_argument("z must have one column per latent dimension");
    const torch::Tensor z = nn::from_col_major(x.begin(), dims_of(xdim), opt);
    return Rcpp::List::create(Rcpp::Named("prob") = to_r(V::decode(dec, z)));
  }
  if (what == "generate") {
    scalebayes::rng::Stream s(sd, 0);
    const auto g = V::generate(dec, xdim[0], latent, s);
    return Rcpp::List::create(Rcpp::Named("z") = to_r(g.first), Rcpp::Named("prob") = to_r(g.second));
  }
  throw std::invalid_argument("unknown what '" + what + "'");
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}
