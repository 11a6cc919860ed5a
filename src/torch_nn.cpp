// Glue for the LibTorch network engine (scalebayes/nn): the entry points of the user-facing functions (WBB,
// SG-MCMC and variational network fits, prediction, the attack, the VAE and the PyTorch export). Torch is
// included before Rcpp (torch_glue.h, shared with the test hooks in torch_nn_test_hooks.cpp). Built without
// LibTorch, every entry point stops with a message the R layer never shows (it checks torch_available() first
// and raises a classed scalebayes_error_backend).
#include "torch_glue.h"

#ifdef SCALEBAYES_HAVE_TORCH
namespace nn = scalebayes::nn;
using namespace sbtorch;  // the shared helpers (torch_glue.h), called unqualified
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

// The names of the network engine's options (scalebayes/enum_names.hpp tables; see cpp_enum_names() in info.cpp
// for the torch-free ones); an empty list when built without LibTorch.
// [[Rcpp::export]]
Rcpp::List cpp_enum_names_torch() {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  using scalebayes::enum_names;
  return Rcpp::List::create(Rcpp::Named("optimizer") = enum_names<nn::Optimizer>(),
                            Rcpp::Named("weight_mode") = enum_names<nn::WeightMode>(),
                            Rcpp::Named("vi_prior") = enum_names<V::Prior>(),
                            Rcpp::Named("vi_estimator") = enum_names<V::Estimator>());
#else
  return Rcpp::List::create();
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
  const int count = static_cast<int>(Rcpp::as<double>(settings["draws"]));
  nn::NetWbbProblem pb;
  DeviceData data;
  set_run(pb, data, spec, control, x, xdim, y, newx, newdim);
  const nn::DeviceChoice& dev = pb.dev;
  const bool has_new = data.x_new.defined();
  pb.train = train_from(control);
  pb.lambda = lambda;
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
  const RDrawStore kept(count, static_cast<R_xlen_t>(P), static_cast<R_xlen_t>(B), keep_params, dev);
  Rcpp::NumericVector objective(count, NA_REAL), grad_norm(count, NA_REAL), steps(count, 0.0);
  Rcpp::NumericVector history(static_cast<R_xlen_t>(rows) * 2 * count, NA_REAL), epochs(count, 0.0);
  Rcpp::IntegerVector status(count, 0);
  const bool val = pb.validation != nullptr;
  Rcpp::NumericVector val_history(val ? static_cast<R_xlen_t>(rows) * 2 * count : 0, NA_REAL),
      best_epoch(val ? count : 0, NA_REAL);
  if (val && rows == 0) Rcpp::stop("validation needs the history (nn_control(history = TRUE))");
  nn::NetWbbOutput out;
  out.pred = has_new ? pred.begin() : nullptr;
  kept.attach(out);
  out.objective = objective.begin();
  out.grad_norm = grad_norm.begin();
  out.steps = steps.begin();
  out.status = status.begin();
  if (rows > 0) {
    out.history = history.begin();
    out.history_rows = rows;
    out.epochs = epochs.begin();
  }
  if (val) {
    out.val_history = val_history.begin();
    out.best_epoch = best_epoch.begin();
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
  // control$batch: the user's `batch` ("auto", TRUE / FALSE, a group size), resolved by nn::decide_wbb_batch():
  // batched groups (nn/batched.hpp) or one network per thread (nn/wbb.hpp)
  const nn::BatchDecision bd = nn::decide_wbb_batch(batch_choice(control), pb.spec, val);
  const auto rs = bd.batched ? nn::run_net_wbb_batched(pb, out, st, bd.group, monitor)
                             : nn::run_net_wbb(pb, out, st, monitor);
  for (R_xlen_t i = 0; i < count; ++i) {  // not computed or not finite: NA (the status says why)
    if (!std::isfinite(grad_norm[i])) grad_norm[i] = NA_REAL;
    if (!std::isfinite(objective[i])) objective[i] = NA_REAL;
  }
  return Rcpp::List::create(Rcpp::Named("pred") = pred, Rcpp::Named("params") = kept.params_r(),
                            Rcpp::Named("buffers") = kept.buffers_r(),
                            Rcpp::Named("objective") = objective, Rcpp::Named("grad_norm") = grad_norm,
                            Rcpp::Named("steps") = steps, Rcpp::Named("status") = status,
                            Rcpp::Named("history") = history, Rcpp::Named("history_rows") = static_cast<double>(rows),
                            Rcpp::Named("epochs") = epochs, Rcpp::Named("val_history") = val_history,
                            Rcpp::Named("best_epoch") = best_epoch,
                            Rcpp::Named("steps_counted") = static_cast<double>(tp.steps.load()),
                            Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
                            Rcpp::Named("device") = dev.device.str(), Rcpp::Named("batch") = batch_decision_r(bd));
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

// The engine's decision (nn::decide_sgmcmc_batch()) for SG-MCMC chains of a network specification with SG-MCMC
// control `control` (the engine list of R/sgld_sa_nn.R) and nnctl$batch, the user's `batch`; nnctl$chains_total:
// the chains of the whole call (a chunk of one chain through future decides as the call does). The step-size
// warm-up asks it first: a batch forced on chains without a batched form is refused before any pilot runs
// ("[arg batch] ...", an input error in R), and the pilots batch when `supported`.
// [[Rcpp::export]]
Rcpp::List cpp_nn_sgmcmc_batch_decide(Rcpp::List spec, Rcpp::List control, Rcpp::List nnctl) {
#ifdef SCALEBAYES_HAVE_TORCH
  return batch_decision_r(sgmcmc_batch_decision(spec_from(spec), sbglue::sgmcmc_control(control), nnctl));
#else
  Rcpp::stop("scalebayes was built without LibTorch");
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
  nn::NetChainProblem pb;
  DeviceData data;
  set_run(pb, data, spec, nnctl, x, xdim, y, newx, newdim);
  const nn::DeviceChoice& dev = pb.dev;
  const bool has_new = data.x_new.defined();
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
        rho(P), trace(Tr * nn::NT_NCOL), delta(G), scalars(6), buffer_final(B);
    const RDrawStore kept(S, P, B, pb.keep_params, dev);
    nn::NetChainOutput& o = outs[static_cast<std::size_t>(c)];
    o.pred_mean = has_new ? pred_mean.begin() : nullptr;
    o.pred_draws = pb.keep_pred ? pred_draws.begin() : nullptr;
    o.param_mean = param_mean.begin();
    o.param_final = param_final.begin();
    kept.attach(o);
    o.keep_stride = static_cast<std::size_t>(stride);
    o.buffer_final = B > 0 ? buffer_final.begin() : nullptr;
    o.rho = rho.begin();
    o.trace = trace.begin();
    o.delta = delta.begin();
    o.scalars = scalars.begin();
    chains[c] = Rcpp::List::create(Rcpp::Named("pred_mean") = pred_mean, Rcpp::Named("pred_draws") = pred_draws,
                                   Rcpp::Named("param_mean") = param_mean, Rcpp::Named("param_final") = param_final,
                                   Rcpp::Named("param_draws") = kept.params_r(),
                                   Rcpp::Named("rho") = rho,
                                   Rcpp::Named("trace") = trace, Rcpp::Named("delta") = delta,
                                   Rcpp::Named("scalars") = scalars,
                                   Rcpp::Named("buffer_draws") = kept.buffers_r(),
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
  // nnctl$batch: the user's `batch`, resolved by nn::decide_sgmcmc_batch(): batched groups of chains
  // (nn/batched_sgmcmc.hpp) or one network per chain and thread (nn/sgmcmc.hpp)
  const nn::BatchDecision bd = sgmcmc_batch_decision(pb.spec, ctl, nnctl);
  const auto rs = bd.batched ? nn::run_net_sgmcmc_batched(pb, ctl, sbglue::run_settings(run), outs, status,
                                                          bd.group, monitor)
                             : nn::run_net_sgmcmc(pb, ctl, sbglue::run_settings(run), outs, status, monitor);
  Rcpp::CharacterVector messages(ctl.chains);
  for (int c = 0; c < ctl.chains; ++c) messages[c] = status[static_cast<std::size_t>(c)].message;
  return Rcpp::List::create(Rcpp::Named("chains") = chains, Rcpp::Named("messages") = messages,
                            Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
                            Rcpp::Named("device") = dev.device.str(), Rcpp::Named("batch") = batch_decision_r(bd));
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
  V::ViProblem pb;
  DeviceData data;
  set_run(pb, data, spec, control, x, xdim, y, newx, newdim);
  const nn::DeviceChoice& dev = pb.dev;
  pb.train = train_from(control);
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
  const bool pruning = std::isfinite(pb.prune);
  const std::int64_t rows = nn::max_epochs(pb.train, data.train.n()) + (pruning ? pb.retrain_epochs : 0);
  Rcpp::NumericVector mu(P * F, NA_REAL), sigma(P * F, NA_REAL), phi(P * F, NA_REAL), mask(P * F, NA_REAL);
  const RDrawStore store(D * F, P, B, keep, dev);
  Rcpp::NumericVector pred(O * D * F, NA_REAL), pred_mean_q(O * F, NA_REAL), pred_stages(pruning ? 2 * O * F : 0, NA_REAL);
  Rcpp::NumericVector trace(static_cast<R_xlen_t>(rows) * 6 * F, NA_REAL), accuracy(static_cast<R_xlen_t>(rows) * F, NA_REAL);
  Rcpp::NumericVector epochs(F, 0.0), steps(F, 0.0), kept(F, NA_REAL);
  Rcpp::IntegerVector status(F, 0);
  V::ViOutput out;
  out.mu = mu.begin();
  out.sigma = sigma.begin();
  out.phi = phi.begin();
  out.mask = mask.begin();
  store.attach(out);
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
  Rcpp::NumericVector val_history(pb.validation ? static_cast<R_xlen_t>(rows) * 2 * F : 0, NA_REAL),
      best_epoch(pb.validation ? F : 0, NA_REAL);
  if (pb.validation) {
    out.val_history = val_history.begin();
    out.best_epoch = best_epoch.begin();
  }
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
      Rcpp::Named("params") = store.params_r(), Rcpp::Named("buffers") = store.buffers_r(),
      Rcpp::Named("pred") = pred, Rcpp::Named("pred_mean_q") = pred_mean_q, Rcpp::Named("pred_stages") = pred_stages,
      Rcpp::Named("trace") = trace, Rcpp::Named("accuracy") = accuracy, Rcpp::Named("trace_rows") = static_cast<double>(rows),
      Rcpp::Named("epochs") = epochs, Rcpp::Named("steps") = steps, Rcpp::Named("kept") = kept,
      Rcpp::Named("val_history") = val_history, Rcpp::Named("best_epoch") = best_epoch,
      Rcpp::Named("status") = status, Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted(),
      Rcpp::Named("device") = dev.device.str());
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
