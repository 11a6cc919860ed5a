// Glue for blasso(): convert, build the control struct, call scalebayes::gibbs::run_blasso, convert back.
#include "sb_glue.h"
#include "scalebayes/gibbs/blasso.hpp"
#include "scalebayes/gibbs/compare.hpp"  // includes cd/glmnet_path.hpp

namespace {
scalebayes::gibbs::BlassoControl blasso_control_from(const Rcpp::List& ctrl) {
  namespace G = scalebayes::gibbs;
  G::BlassoControl c;
  c.mode = sbglue::enum_arg<G::LambdaMode>(ctrl, "mode");
  c.lambda = Rcpp::as<double>(ctrl["lambda"]);
  c.gamma_shape = Rcpp::as<double>(ctrl["gamma_shape"]);
  c.gamma_rate = Rcpp::as<double>(ctrl["gamma_rate"]);
  c.sigma2_shape = Rcpp::as<double>(ctrl["sigma2_shape"]);
  c.sigma2_scale = Rcpp::as<double>(ctrl["sigma2_scale"]);
  c.intercept = Rcpp::as<bool>(ctrl["intercept"]);
  c.chains = Rcpp::as<int>(ctrl["chains"]);
  c.iter = Rcpp::as<int>(ctrl["iter"]);
  if (ctrl.containsElementNamed("first_chain")) {
    c.first_chain = Rcpp::as<int>(ctrl["first_chain"]);
    c.chain_count = Rcpp::as<int>(ctrl["chain_count"]);
  }
  c.burnin = Rcpp::as<int>(ctrl["burnin"]);
  c.thin = Rcpp::as<int>(ctrl["thin"]);
  c.em_max = Rcpp::as<int>(ctrl["em_max"]);
  c.em_sweeps = Rcpp::as<int>(ctrl["em_sweeps"]);
  c.em_burn = Rcpp::as<int>(ctrl["em_burn"]);
  c.em_tol = Rcpp::as<double>(ctrl["em_tol"]);
  c.lambda_min = Rcpp::as<double>(ctrl["lambda_min"]);
  c.lambda_max = Rcpp::as<double>(ctrl["lambda_max"]);
  c.sigma2_floor = Rcpp::as<double>(ctrl["sigma2_floor"]);
  c.rj = Rcpp::as<bool>(ctrl["rj"]);
  c.rj_moves = Rcpp::as<int>(ctrl["rj_moves"]);
  c.rj_prior = sbglue::enum_arg<G::RjPrior>(ctrl, "rj_prior");
  if (ctrl.containsElementNamed("center_x")) c.center_x = Rcpp::as<bool>(ctrl["center_x"]);
  if (ctrl.containsElementNamed("rj_cap")) c.rj_cap = sbglue::enum_arg<G::RjCap>(ctrl, "rj_cap");
  return c;
}
}  // namespace

// ctrl: the model settings (R/blasso.R's blasso_engine_ctrl()); run: the run list (R/seed.R's run_settings()).
// [[Rcpp::export]]
Rcpp::List cpp_blasso(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y, const Rcpp::List& ctrl,
                      const Rcpp::List& run) {
  namespace G = scalebayes::gibbs;
  G::BlassoControl c = blasso_control_from(ctrl);
  if (ctrl.containsElementNamed("fixed_tau2") && !Rf_isNull(ctrl["fixed_tau2"]))
    c.fixed_tau2 = Rcpp::as<std::vector<double>>(ctrl["fixed_tau2"]);
  const double em_total = c.mode == G::LambdaMode::em ? c.em_burn + static_cast<double>(c.em_max) * c.em_sweeps : 0.0;
  const double run_chains = c.chain_count < 0 ? c.chains - c.first_chain : c.chain_count;
  const double total = static_cast<double>(c.chains) * em_total +
                       run_chains * (c.burnin + static_cast<double>(c.iter) * c.thin);
  sbglue::Progress prog(total, run, "blasso");
  G::BlassoResult r = G::run_blasso(sbglue::as_map(x), sbglue::as_map(y), c, sbglue::run_settings(run), prog.monitor());
  const bool stopped = r.interrupted || prog.interrupted();
  long n_kept = 0;
  for (long k : r.kept) n_kept += k;
  // interrupted before the first kept draw (EM, burn-in): the R side signals the interrupt
  if (stopped && n_kept == 0) return Rcpp::List::create(Rcpp::Named("interrupted") = true);
  if (stopped) {  // keep the draws each chain had kept (rows t < kept[k] of chain k: the full run's draws)
    const Eigen::Index T = c.iter;
    std::vector<Eigen::Index> rows;
    rows.reserve(static_cast<std::size_t>(n_kept));
    for (std::size_t k = 0; k < r.kept.size(); ++k)
      for (long t = 0; t < r.kept[k]; ++t) rows.push_back(static_cast<Eigen::Index>(k) * T + t);
    const Eigen::Index m = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd beta(m, r.beta.cols());
    Eigen::VectorXd icpt(m), s2(m), lam(m);
    Eigen::VectorXi chain(m), size(m);
    for (Eigen::Index i = 0; i < m; ++i) {
      const Eigen::Index q = rows[static_cast<std::size_t>(i)];
      beta.row(i) = r.beta.row(q);
      icpt[i] = r.intercept[q];
      s2[i] = r.sigma2[q];
      lam[i] = r.lambda[q];
      chain[i] = r.chain[q];
      size[i] = r.model_size[q];
    }
    r.beta.swap(beta);
    r.intercept.swap(icpt);
    r.sigma2.swap(s2);
    r.lambda.swap(lam);
    r.chain.swap(chain);
    r.model_size.swap(size);
  }
  return Rcpp::List::create(
      Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("intercept") = Rcpp::wrap(r.intercept),
      Rcpp::Named("sigma2") = Rcpp::wrap(r.sigma2), Rcpp::Named("lambda") = Rcpp::wrap(r.lambda),
      Rcpp::Named("chain") = Rcpp::wrap(r.chain), Rcpp::Named("model_size") = Rcpp::wrap(r.model_size),
      Rcpp::Named("em_lambda") = Rcpp::wrap(r.em_lambda), Rcpp::Named("lambda_start") = r.lambda_start, Rcpp::Named("em_converged") = r.em_converged,
      Rcpp::Named("em_hit_bound") = r.em_hit_bound, Rcpp::Named("accept_rate") = r.accept_rate,
      Rcpp::Named("rj_proposed") = static_cast<double>(r.rj_proposed),
      Rcpp::Named("rj_accepted") = static_cast<double>(r.rj_accepted),
      Rcpp::Named("kept") = Rcpp::wrap(r.kept), Rcpp::Named("interrupted") = stopped);
}


// Datasets first+1 .. first+count of one cell of the WBB-paper simulation (see gibbs/compare.hpp); run
// settings (seed, first, draws = number of datasets, threads, quiet) from R/wbb_run.R's wbb_engine_settings().
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_blasso_compare(int n, int p, std::string setting, int cell_id, const Rcpp::List& blasso_ctrl,
                                       const Rcpp::List& settings, const Rcpp::List& run) {
  namespace G = scalebayes::gibbs;
  const scalebayes::wbb::Settings rs = sbglue::wbb_settings(run);
  G::CompareCell cell;
  cell.n = n;
  cell.p = p;
  cell.setting = static_cast<int>(scalebayes::parse_enum<G::CompareSetting>(setting));
  cell.id = cell_id;
  G::CompareSettings st;
  st.draws = Rcpp::as<int>(settings["draws"]);
  st.nfolds = Rcpp::as<int>(settings["nfolds"]);
  st.nlambda = Rcpp::as<int>(settings["nlambda"]);
  st.run_wbb = Rcpp::as<bool>(settings["run_wbb"]);
  st.run_blasso = Rcpp::as<bool>(settings["run_blasso"]);
  st.blasso_standardize = Rcpp::as<bool>(settings["blasso_standardize"]);
  st.cd.tol = Rcpp::as<double>(settings["cd_tol"]);
  if (settings.containsElementNamed("paper_route")) {
    st.paper_route = Rcpp::as<bool>(settings["paper_route"]);
    st.paper_nfolds = Rcpp::as<int>(settings["paper_nfolds"]);
    st.blasso_burn_draws = Rcpp::as<int>(settings["blasso_burn_draws"]);
  }
  st.blasso = blasso_control_from(blasso_ctrl);
  sbglue::Progress prog(static_cast<double>(rs.draws), run, "datasets");
  scalebayes::parallel::RunStatus status;
  Eigen::MatrixXd out = G::run_compare(cell, rs.first_draw, rs.draws, st, rs, prog.monitor(), &status);
  Rcpp::NumericMatrix res = Rcpp::wrap(out);
  res.attr("interrupted") = status.interrupted || prog.interrupted();
  return res;
}
