// Glue for the weighted elastic-net solver and the WBB driver (engine: scalebayes/cd, scalebayes/wbb).
#include "sb_glue.h"
#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/wbb/glm.hpp"

namespace cd = scalebayes::cd;
namespace wbb = scalebayes::wbb;

namespace {
cd::Control control_from(const Rcpp::List& c) {
  cd::Control ctrl;
  ctrl.tol = Rcpp::as<double>(c["tol"]);
  ctrl.max_iter = Rcpp::as<int>(c["max_iter"]);
  ctrl.max_outer = Rcpp::as<int>(c["max_outer"]);
  ctrl.intercept = Rcpp::as<bool>(c["intercept"]);
  if (c.containsElementNamed("kkt_tol")) ctrl.kkt_tol = Rcpp::as<double>(c["kkt_tol"]);
  return ctrl;
}
cd::Family family_from(int f) { return f == 1 ? cd::Family::binomial : cd::Family::gaussian; }
}  // namespace

// [[Rcpp::export]]
double cpp_lambda_max(Rcpp::NumericMatrix x, Rcpp::NumericVector y, int family, double alpha, Rcpp::NumericVector w,
                      Rcpp::NumericVector pf, bool intercept) {
  return cd::lambda_max(sbglue::as_map(x), sbglue::as_map(y), family_from(family), alpha, sbglue::as_map(w),
                        sbglue::as_map(pf), intercept);
}

// Fit along a decreasing lambda sequence (length 1 = a single fit).
// [[Rcpp::export]]
Rcpp::List cpp_enet_path(Rcpp::NumericMatrix x, Rcpp::NumericVector y, int family, double alpha, Rcpp::NumericVector w,
                         Rcpp::NumericVector pf, Rcpp::NumericVector lambda, Rcpp::List control) {
  cd::ElasticNet solver(sbglue::as_map(x), sbglue::as_map(y), family_from(family), alpha, control_from(control));
  const Eigen::VectorXd lam = sbglue::as_map(lambda);
  const cd::PathResult r = cd::fit_path(solver, sbglue::as_map(w), sbglue::as_map(pf), lam);
  return Rcpp::List::create(Rcpp::Named("a0") = Rcpp::wrap(r.a0), Rcpp::Named("beta") = Rcpp::wrap(r.beta),
                            Rcpp::Named("kkt") = Rcpp::wrap(r.kkt), Rcpp::Named("iterations") = Rcpp::wrap(r.iterations),
                            Rcpp::Named("converged") = r.converged);
}

// [[Rcpp::export]]
Rcpp::List cpp_enet_cv(Rcpp::NumericMatrix x, Rcpp::NumericVector y, int family, double alpha, Rcpp::NumericVector w,
                       Rcpp::NumericVector pf, Rcpp::IntegerVector foldid, Rcpp::NumericVector lambda,
                       Rcpp::List control, int threads, bool quiet) {
  Eigen::VectorXi fid = Rcpp::as<Eigen::VectorXi>(foldid);
  const Eigen::VectorXd lam = sbglue::as_map(lambda);
  sbglue::Progress prog(static_cast<double>(fid.maxCoeff() + 1), !quiet, "Cross-validation");
  cd::CvResult r;
  try {
    r = cd::cross_validate(sbglue::as_map(x), sbglue::as_map(y), family_from(family), alpha, sbglue::as_map(w),
                           sbglue::as_map(pf), fid, lam, control_from(control), threads, prog.monitor());
  } catch (scalebayes::parallel::Interrupted&) {
    return Rcpp::List::create(Rcpp::Named("interrupted") = true);
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(r.lambda), Rcpp::Named("cvm") = Rcpp::wrap(r.cvm),
                            Rcpp::Named("cvsd") = Rcpp::wrap(r.cvsd), Rcpp::Named("lambda_min") = r.lambda_min,
                            Rcpp::Named("lambda_1se") = r.lambda_1se, Rcpp::Named("index_min") = r.index_min + 1,
                            Rcpp::Named("index_1se") = r.index_1se + 1, Rcpp::Named("interrupted") = false);
}

// WBB draws first + 1 .. first + count for every lambda (decreasing), warm-started from warm_a0 / warm_beta.
// [[Rcpp::export]]
Rcpp::List cpp_wbb_glm(Rcpp::NumericMatrix x, Rcpp::NumericVector y, int family, double alpha, Rcpp::NumericVector pf,
                       Rcpp::NumericVector lambda, Rcpp::NumericVector warm_a0, Rcpp::NumericMatrix warm_beta,
                       int prior, int dist, double seed, double first, int count, int threads, Rcpp::List control,
                       bool quiet) {
  const Eigen::Index L = lambda.size();
  std::vector<cd::Fit> warm(L);
  for (Eigen::Index l = 0; l < L; ++l) {
    warm[l].a0 = warm_a0[l];
    warm[l].beta = sbglue::as_map(warm_beta).col(l);
  }
  wbb::Settings st;
  st.prior = static_cast<wbb::PriorWeights>(prior);
  st.dist = static_cast<wbb::WeightDist>(dist);
  st.seed = sbglue::seed_from_r(seed);
  st.first_draw = static_cast<std::size_t>(first);
  st.draws = static_cast<std::size_t>(count);
  st.threads = threads;
  sbglue::Progress prog(count, !quiet, "WBB draws");
  const wbb::Result r = wbb::run(sbglue::as_map(x), sbglue::as_map(y), family_from(family), alpha,
                                 sbglue::as_map(pf), sbglue::as_map(lambda), warm, st, control_from(control),
                                 prog.monitor());
  return Rcpp::List::create(Rcpp::Named("coef") = Rcpp::wrap(r.coef), Rcpp::Named("kkt") = Rcpp::wrap(r.kkt),
                            Rcpp::Named("iterations") = Rcpp::wrap(r.iterations),
                            Rcpp::Named("not_converged") = r.not_converged, Rcpp::Named("interrupted") = r.interrupted);
}
