// Glue for sgld_sa(): R lists -> sgmcmc::Control, call the engine, convert back. No algorithmic code here.
#include "sb_glue.h"
#include "scalebayes/sgmcmc/glm.hpp"

namespace sg = scalebayes::sgmcmc;

namespace {

double num(const Rcpp::List& l, const char* name) { return Rcpp::as<double>(l[name]); }

sg::Control build_control(const Rcpp::List& c) {
  sg::Control ctl;
  const std::string fam = Rcpp::as<std::string>(c["family"]);
  ctl.family = fam == "binomial" ? sg::Family::binomial : sg::Family::gaussian;
  const std::string meth = Rcpp::as<std::string>(c["method"]);
  ctl.method = meth == "sa" ? sg::Method::sa : (meth == "em" ? sg::Method::em : sg::Method::none);
  ctl.sa.em = ctl.method == sg::Method::em;
  ctl.sampler = Rcpp::as<std::string>(c["sampler"]) == "sghmc" ? sg::Sampler::sghmc : sg::Sampler::sgld;
  ctl.iterations = static_cast<long>(num(c, "iterations"));
  ctl.batch_size = static_cast<long>(num(c, "batch_size"));
  ctl.burnin = static_cast<long>(num(c, "burnin"));
  ctl.thin = static_cast<long>(num(c, "thin"));
  ctl.trace_every = static_cast<long>(num(c, "trace_every"));
  const std::string st = Rcpp::as<std::string>(c["step_schedule"]);
  ctl.step.type = st == "constant" ? sg::StepSchedule::Type::constant
                                   : (st == "stepwise" ? sg::StepSchedule::Type::stepwise
                                                       : sg::StepSchedule::Type::polynomial);
  ctl.step.eps0 = num(c, "step_size");
  ctl.step.gamma = num(c, "step_power");
  ctl.step.decay = num(c, "step_decay");
  Rcpp::NumericVector ms = c["step_milestones"];
  for (double v : ms) ctl.step.milestones.push_back(static_cast<long>(v));
  ctl.sa.A = num(c, "sa_A");
  ctl.sa.Z = num(c, "sa_Z");
  ctl.sa.alpha = num(c, "sa_alpha");
  ctl.sa.cap = num(c, "sa_cap");
  ctl.temperature.tau0 = num(c, "temperature");
  ctl.temperature.r = num(c, "anneal");
  ctl.pruning.on = Rcpp::as<bool>(c["prune"]);
  ctl.pruning.S = num(c, "prune_S");
  ctl.pruning.D = num(c, "prune_D");
  ctl.pruning.U = num(c, "prune_U");
  ctl.friction = num(c, "friction");
  ctl.noise_estimate = num(c, "noise_estimate");
  ctl.hyper.v0 = num(c, "v0");
  ctl.hyper.v1 = num(c, "v1");
  ctl.hyper.a = num(c, "a");
  ctl.hyper.b = num(c, "b");
  ctl.hyper.nu = num(c, "nu");
  ctl.hyper.lambda = num(c, "lambda");
  ctl.hyper.kappa0_start = num(c, "kappa0_init");  // NaN: implied by rho_init
  ctl.hyper.kappa1_start = num(c, "kappa1_init");
  ctl.prior_var = num(c, "prior_var");
  ctl.sigma_init = num(c, "sigma_init");
  ctl.delta_init = num(c, "delta_init");
  ctl.rho_init = num(c, "rho_init");
  ctl.fixed_sigma = Rcpp::as<bool>(c["fixed_sigma"]);
  ctl.sa_start = static_cast<long>(num(c, "sa_start"));
  Rcpp::IntegerVector keep = c["keep"];  // 1-based, output order
  for (int v : keep) ctl.keep.push_back(static_cast<long>(v) - 1);
  ctl.chains = Rcpp::as<int>(c["chains"]);
  ctl.chain_offset = static_cast<long>(num(c, "chain_offset"));
  return ctl;
}

Rcpp::NumericVector as_r(const Eigen::VectorXd& v) { return Rcpp::NumericVector(v.data(), v.data() + v.size()); }
Rcpp::NumericMatrix as_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(m.rows(), m.cols());
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

}  // namespace

// control: the model settings (R/sgld_sa.R); run: the run list (R/seed.R's run_settings()).
// [[Rcpp::export]]
Rcpp::List cpp_sgld_sa(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y, const Rcpp::IntegerVector& sparse,
                       bool intercept, const Rcpp::NumericMatrix& x_test, const Rcpp::NumericMatrix& beta_init,
                       const Rcpp::List& control, const Rcpp::List& run) {
  sg::Control ctl = build_control(control);
  std::vector<int> mask(sparse.begin(), sparse.end());
  Eigen::MatrixXd xt_test = sbglue::as_map(x_test);
  sg::GlmData d = sg::make_data(sbglue::as_map(x), sbglue::as_map(y), mask, intercept, xt_test, ctl.family);
  Eigen::MatrixXd binit = sbglue::as_map(beta_init);
  sbglue::Progress prog(static_cast<double>(ctl.iterations) * ctl.chains, run, "SG-MCMC");
  sg::RunResult rr = sg::run_sgld_sa(d, ctl, sbglue::run_settings(run), binit, prog.monitor());
  Rcpp::List chains(rr.chains.size());
  for (std::size_t c = 0; c < rr.chains.size(); ++c) {
    const sg::ChainResult& r = rr.chains[c];
    chains[c] = Rcpp::List::create(
        Rcpp::Named("draws") = as_r(r.draws), Rcpp::Named("post_mean") = as_r(r.post_mean),
        Rcpp::Named("post_sd") = as_r(r.post_sd), Rcpp::Named("trace") = as_r(r.trace),
        Rcpp::Named("beta") = as_r(r.beta), Rcpp::Named("rho") = as_r(r.rho), Rcpp::Named("kappa0") = as_r(r.kappa0),
        Rcpp::Named("kappa1") = as_r(r.kappa1), Rcpp::Named("sigma") = r.sigma,
        Rcpp::Named("delta") = r.delta, Rcpp::Named("pred_link") = as_r(r.pred_link),
        Rcpp::Named("pred_mean") = as_r(r.pred_mean), Rcpp::Named("saved") = static_cast<double>(r.saved),
        Rcpp::Named("iterations_done") = static_cast<double>(r.iterations_done),
        Rcpp::Named("diverged") = r.diverged, Rcpp::Named("diverged_at") = static_cast<double>(r.diverged_at),
        Rcpp::Named("message") = r.message);
  }
  return Rcpp::List::create(Rcpp::Named("chains") = chains,
                            Rcpp::Named("interrupted") = rr.interrupted || prog.interrupted());
}

// Internal (tests): n standard normals from the SG-MCMC ziggurat on stream (seed, 0).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_sgmcmc_normals(int n, double seed) {
  scalebayes::rng::Stream rs(sbglue::seed_from_r(seed), 0);
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = sg::Ziggurat::normal(rs);
  return out;
}
