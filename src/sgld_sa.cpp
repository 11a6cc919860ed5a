// Glue for sgld_sa(): R lists -> sgmcmc::Control, call the engine, convert back. No algorithmic code here.
#include "sb_glue.h"
#include "sgmcmc_glue.h"
#include "scalebayes/sgmcmc/glm.hpp"

namespace sg = scalebayes::sgmcmc;

namespace {

Rcpp::NumericVector as_r(const Eigen::VectorXd& v) { return Rcpp::NumericVector(v.data(), v.data() + v.size()); }
Rcpp::NumericMatrix as_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(m.rows(), m.cols());
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

// The engine's data and control-variate state, kept between the calls of one sgld_sa() (cpp_sgld_sa_prepare()).
struct PreparedGlm {
  sg::GlmData d;
  sg::CvState cv;
  sg::GramState gram;
};

}  // namespace

// The data in engine order and the control-variate state at cv_center (empty: none), made once for the warm-up's
// pilots and the chains of one call: at N = 1e6, p = 20 each engine call transposed the design and passed over
// every row for the centre's gradient again (R/sgmcmc_cv.R). gram: also the Gram form of a gaussian
// regression's full-data gradient (sgmcmc/glm.hpp: GramState), N P^2 once instead of once per pilot.
// [[Rcpp::export]]
SEXP cpp_sgld_sa_prepare(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y, const Rcpp::IntegerVector& sparse,
                         bool intercept, SEXP family, const Rcpp::NumericVector& cv_center,
                         bool gram = false) {
  std::vector<int> mask(sparse.begin(), sparse.end());
  const sg::Family fam = sbglue::enum_from<sg::Family>(family);
  Rcpp::XPtr<PreparedGlm> out(new PreparedGlm(), true);
  out->d = sg::make_data(sbglue::as_map(x), sbglue::as_map(y), mask, intercept, Eigen::MatrixXd(0, x.ncol()), fam);
  out->cv = sg::make_cv_state(out->d, std::vector<double>(cv_center.begin(), cv_center.end()));
  if (gram) {
    if (fam != sg::Family::gaussian) throw std::invalid_argument("the Gram form is for a gaussian regression");
    out->gram = sg::make_gram_state(out->d);
  }
  return out;
}

// control: the model settings (R/sgld_sa.R); run: the run list (R/seed.R's run_settings()).
// [[Rcpp::export]]
Rcpp::List cpp_sgld_sa(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y, const Rcpp::IntegerVector& sparse,
                       bool intercept, const Rcpp::NumericMatrix& x_test, const Rcpp::NumericMatrix& beta_init,
                       const Rcpp::List& control, const Rcpp::List& run, SEXP prepared = R_NilValue) {
  sg::Control ctl = sbglue::sgmcmc_glm_control(control);
  Eigen::MatrixXd xt_test = sbglue::as_map(x_test);
  Eigen::MatrixXd binit = sbglue::as_map(beta_init);
  sbglue::Progress prog(static_cast<double>(ctl.iterations) * ctl.chains, run, "SG-MCMC");
  sg::RunResult rr;
  if (!Rf_isNull(prepared)) {
    // the data (and control-variate state) made once by cpp_sgld_sa_prepare() for the warm-up and the chains
    Rcpp::XPtr<PreparedGlm> pp(prepared);
    if (pp->d.family != ctl.family) throw std::invalid_argument("prepared data of another family");
    sg::set_test_rows(pp->d, xt_test);
    rr = sg::run_sgld_sa(pp->d, ctl, sbglue::run_settings(run), binit, prog.monitor(), &pp->cv, &pp->gram);
  } else {
    std::vector<int> mask(sparse.begin(), sparse.end());
    sg::GlmData d = sg::make_data(sbglue::as_map(x), sbglue::as_map(y), mask, intercept, xt_test, ctl.family);
    rr = sg::run_sgld_sa(d, ctl, sbglue::run_settings(run), binit, prog.monitor());
  }
  Rcpp::List chains(rr.chains.size());
  for (std::size_t c = 0; c < rr.chains.size(); ++c) {
    const sg::ChainResult& r = rr.chains[c];
    chains[c] = Rcpp::List::create(
        Rcpp::Named("draws") = as_r(r.draws), Rcpp::Named("post_mean") = as_r(r.post_mean),
        Rcpp::Named("post_sd") = as_r(r.post_sd), Rcpp::Named("trace") = as_r(r.trace),
        Rcpp::Named("beta") = as_r(r.beta), Rcpp::Named("rho") = as_r(r.rho), Rcpp::Named("rho_mean") = as_r(r.rho_mean), Rcpp::Named("kappa0") = as_r(r.kappa0),
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

// The sampler table (sgmcmc/steps.hpp: sampler_table()), the one list of samplers R reads (R/sgmcmc_control.R).
// [[Rcpp::export]]
Rcpp::DataFrame cpp_sgmcmc_samplers() {
  const auto& t = sg::sampler_table();
  const R_xlen_t n = static_cast<R_xlen_t>(t.size());
  Rcpp::CharacterVector name(n), label(n);
  Rcpp::LogicalVector per_example(n), momentum(n), preconditioned(n), metric(n), rmsprop(n), batched(n),
      noise_estimate(n);
  Rcpp::NumericVector net_lr(n), net_lr_summed(n);
  for (R_xlen_t i = 0; i < n; ++i) {
    const sg::SamplerInfo& s = t[static_cast<std::size_t>(i)];
    name[i] = s.name;
    label[i] = s.label;
    per_example[i] = s.per_example;
    momentum[i] = s.momentum;
    preconditioned[i] = s.preconditioned;
    metric[i] = s.metric;
    rmsprop[i] = s.rmsprop;
    batched[i] = s.batched;
    noise_estimate[i] = s.noise_estimate;
    net_lr[i] = s.net_lr;
    net_lr_summed[i] = std::isnan(s.net_lr_summed) ? NA_REAL : s.net_lr_summed;
  }
  return Rcpp::DataFrame::create(Rcpp::Named("name") = name, Rcpp::Named("label") = label,
                                 Rcpp::Named("per_example") = per_example, Rcpp::Named("momentum") = momentum,
                                 Rcpp::Named("preconditioned") = preconditioned, Rcpp::Named("metric") = metric,
                                 Rcpp::Named("rmsprop") = rmsprop,
                                 Rcpp::Named("batched") = batched, Rcpp::Named("noise_estimate") = noise_estimate,
                                 Rcpp::Named("net_lr") = net_lr,
                                 Rcpp::Named("net_lr_summed") = net_lr_summed,
                                 Rcpp::Named("stringsAsFactors") = false);
}
