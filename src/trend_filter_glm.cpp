// Glue for Poisson and logistic trend filtering (engine: inst/include/scalebayes/genlasso/glm_trend.hpp).
#include "sb_glue.h"
#include "scalebayes/genlasso/glm_trend.hpp"

namespace gl = scalebayes::genlasso;

namespace {
Eigen::VectorXd to_vec_glm(const Rcpp::NumericVector& v) { return Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size()); }

// family: by name (genlasso/glm_trend.hpp's glm_family_names); engine: R/trend_filter_glm.R's tf_glm_engine()
// (solver, newton, tol, max_iter, max_outer).
gl::GLMControl glm_control_from(const Rcpp::List& e) {
  gl::GLMControl c;
  c.method = sbglue::enum_arg<gl::TFMethod>(e, "solver");
  c.tol = Rcpp::as<double>(e["tol"]);
  c.inner.max_iter = Rcpp::as<int>(e["max_iter"]);
  c.inner.newton = static_cast<int>(sbglue::enum_arg<gl::NewtonDirections>(e, "newton"));
  c.max_outer = Rcpp::as<int>(e["max_outer"]);
  return c;
}
gl::GLMData glm_data_from(SEXP family, const Rcpp::NumericVector& y, const Rcpp::NumericVector& a) {
  gl::GLMData d;
  d.family = sbglue::enum_from<gl::GLMFamily>(family);
  d.y = to_vec_glm(y);
  d.a = to_vec_glm(a);
  return d;
}
bool stop_on_interrupt_glm() { return sbglue::user_interrupted(); }
}  // namespace

// A lambda path of the GLM trend filter.
// [[Rcpp::export]]
Rcpp::List cpp_tf_glm_path(SEXP family, Rcpp::NumericVector y, Rcpp::NumericVector a, Rcpp::NumericVector x,
                           Rcpp::NumericVector w, int k, Rcpp::NumericVector w0, Rcpp::NumericVector lambdas,
                           Rcpp::List engine) {
  const gl::GLMData d = glm_data_from(family, y, a);
  const gl::GLMPath r = gl::glm_trend_path(to_vec_glm(x), k, d, to_vec_glm(w), to_vec_glm(w0), to_vec_glm(lambdas),
                                           glm_control_from(engine), stop_on_interrupt_glm);
  if (r.interrupted) throw Rcpp::internal::InterruptedException();
  return Rcpp::List::create(
      Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("u") = Rcpp::wrap(r.u), Rcpp::Named("gap") = Rcpp::wrap(r.gap),
      Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap), Rcpp::Named("primal") = Rcpp::wrap(r.primal),
      Rcpp::Named("iter") = Rcpp::wrap(r.outer), Rcpp::Named("inner_iter") = Rcpp::wrap(r.inner),
      Rcpp::Named("min_step") = Rcpp::wrap(r.min_step), Rcpp::Named("df") = Rcpp::wrap(r.df),
      Rcpp::Named("diverged") = Rcpp::LogicalVector(r.diverged.begin(), r.diverged.end()),
      Rcpp::Named("lambda_max") = r.lambda_max, Rcpp::Named("poly_converged") = r.poly_converged);
}

// The certificate (objective, gap) of a given pair (beta, u) of a GLM trend filter (for tests and benchmarks:
// the objective of another solver's fit, with a dual of ours).
// [[Rcpp::export]]
Rcpp::List cpp_tf_glm_certify(SEXP family, Rcpp::NumericVector y, Rcpp::NumericVector a, Rcpp::NumericVector x,
                              Rcpp::NumericVector w, int k, Rcpp::NumericVector lam, Rcpp::NumericVector beta,
                              Rcpp::NumericVector u) {
  const gl::GLMData d = glm_data_from(family, y, a);
  const gl::BandedD D = gl::make_difference(to_vec_glm(x), k);
  Eigen::VectorXd uu = to_vec_glm(u), ll = to_vec_glm(lam);
  if (ll.size() == 1) ll = Eigen::VectorXd::Constant(D.m, ll[0]);
  gl::LD P = 0, G = 0;
  gl::glm_certify(D, d, to_vec_glm(w), ll, to_vec_glm(beta), uu, P, G);
  return Rcpp::List::create(Rcpp::Named("primal") = static_cast<double>(P), Rcpp::Named("gap") = static_cast<double>(G));
}

// WBB draws of the link-scale curve (genlasso::glm_trend_wbb over wbb::run_draws), into the returned draws x n
// matrix (columns `names`); settings: R/wbb_run.R's wbb_engine_settings().
// [[Rcpp::export]]
Rcpp::List cpp_tf_glm_wbb(SEXP family, Rcpp::NumericVector y, Rcpp::NumericVector a, Rcpp::NumericVector x, int k,
                          double lambda, Rcpp::List engine, Rcpp::NumericVector beta_hat, Rcpp::NumericVector u_hat,
                          Rcpp::CharacterVector names, Rcpp::List settings) {
  const scalebayes::wbb::Settings st = sbglue::wbb_settings(settings);
  const gl::GLMData d = glm_data_from(family, y, a);
  const gl::BandedD D = gl::make_difference(to_vec_glm(x), k);
  const Eigen::VectorXd bh = to_vec_glm(beta_hat), uh = to_vec_glm(u_hat);
  const Eigen::Index T = static_cast<Eigen::Index>(st.draws);
  Rcpp::NumericMatrix draws(static_cast<int>(T), D.n);
  draws.attr("dimnames") = Rcpp::List::create(R_NilValue, names);
  Rcpp::NumericVector rel_gap(T, R_NaN), w0(T, R_NaN);
  Rcpp::IntegerVector iter(T), diverged(T);
  gl::GLMWBBProblem pb{D, k, d, lambda, glm_control_from(engine), bh, uh};
  gl::GLMWBBOutput out{Eigen::Map<Eigen::MatrixXd>(draws.begin(), T, D.n), Eigen::Map<Eigen::VectorXd>(rel_gap.begin(), T),
                       Eigen::Map<Eigen::VectorXi>(iter.begin(), T), Eigen::Map<Eigen::VectorXd>(w0.begin(), T),
                       Eigen::Map<Eigen::VectorXi>(diverged.begin(), T)};
  sbglue::Progress prog(static_cast<double>(T), settings, "trend_filter_wbb");
  const auto status = gl::glm_trend_wbb(pb, out, st, prog.monitor());
  return Rcpp::List::create(Rcpp::Named("draws") = draws, Rcpp::Named("rel_gap") = rel_gap,
                            Rcpp::Named("iter") = iter, Rcpp::Named("w0") = w0, Rcpp::Named("diverged") = diverged,
                            Rcpp::Named("completed") = static_cast<double>(status.completed),
                            Rcpp::Named("prefix") = static_cast<double>(status.prefix),  // draws 1..prefix finished
                            Rcpp::Named("interrupted") = prog.interrupted() || status.interrupted);
}
