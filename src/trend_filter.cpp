// Glue for trend filtering and the generalized lasso (engine: inst/include/scalebayes/genlasso).
#include "sb_glue.h"
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/genlasso/generalized_lasso.hpp"

namespace gl = scalebayes::genlasso;

namespace {
// `method` from R packs the solver (0 auto, 1 dp, 2 ip) and the Newton-system choice of the primal interior
// point (0 auto, 1 Givens QR only, 2 dual normal equations for k <= 1 without the size rule) as
// solver + 3 * newton (R/trend_filter.R, tf_engine_code()).
gl::IPControl ip_control(double tol, int max_iter, int method = 0) {
  gl::IPControl c;
  c.tol = tol;
  c.max_iter = max_iter;
  c.newton = method / 3;
  return c;
}
Eigen::VectorXd to_vec(const Rcpp::NumericVector& v) { return Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size()); }
// The engine's interrupt callback: polls R's interrupt flag without longjmp-ing through C++ frames; an
// interrupted run is turned into R's interrupt condition by throwing Rcpp's InterruptedException here.
bool stop_on_interrupt() { return sbglue::user_interrupted(); }
gl::TFMethod to_method(int m) {
  m %= 3;
  if (m == 1) return gl::TFMethod::DP;
  if (m == 2) return gl::TFMethod::IP;
  return gl::TFMethod::Auto;
}
}  // namespace

// Dense D^{(x,k+1)} (for tests and small problems).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_tf_difference(Rcpp::NumericVector x, int k) {
  gl::BandedD D = gl::make_difference(to_vec(x), k);
  Rcpp::NumericMatrix out(D.m, D.n);
  for (int i = 0; i < D.m; ++i)
    for (int l = 0; l < D.width; ++l) out(i, i + l) = D.at(i, l);
  return out;
}

// [[Rcpp::export]]
Rcpp::List cpp_tf_lambda_max(Rcpp::NumericVector y, Rcpp::NumericVector x, Rcpp::NumericVector w, int k,
                             Rcpp::NumericVector w0) {
  Eigen::VectorXd xv = to_vec(x), yv = to_vec(y), wv = to_vec(w), w0v = to_vec(w0);
  gl::BandedD D = gl::make_difference(xv, k);
  Eigen::VectorXd u0 = gl::unconstrained_dual(D, yv, xv, wv, k);
  return Rcpp::List::create(Rcpp::Named("lambda_max") = gl::lambda_max_from_dual(u0, w0v),
                            Rcpp::Named("u") = Rcpp::wrap(u0));
}

// [[Rcpp::export]]
Rcpp::List cpp_tf_path(Rcpp::NumericVector y, Rcpp::NumericVector x, Rcpp::NumericVector w, int k,
                       Rcpp::NumericVector w0, Rcpp::NumericVector lambdas, int method, double tol, int max_iter,
                       bool warm) {
  const gl::TFFit f = gl::trend_filter_fit(to_vec(x), to_vec(y), to_vec(w), k, to_vec(w0), to_vec(lambdas),
                                           to_method(method), ip_control(tol, max_iter, method), warm, stop_on_interrupt);
  if (f.path.interrupted) throw Rcpp::internal::InterruptedException();
  const gl::PathResult& r = f.path;
  return Rcpp::List::create(Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("u") = Rcpp::wrap(r.u),
                            Rcpp::Named("gap") = Rcpp::wrap(r.gap), Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap),
                            Rcpp::Named("primal") = Rcpp::wrap(r.primal), Rcpp::Named("iter") = Rcpp::wrap(r.iter),
                            Rcpp::Named("rounding_rel") = Rcpp::wrap(r.rounding_rel), Rcpp::Named("df") = Rcpp::wrap(f.df),
                            Rcpp::Named("lambda_max") = f.lambda_max);
}

// [[Rcpp::export]]
Rcpp::List cpp_tf_wbb(Rcpp::NumericVector y, Rcpp::NumericVector x, int k, double lambda, int draws, bool separate,
                      double seed, int threads, int method, double tol, int max_iter, Rcpp::NumericVector u_hat,
                      bool quiet, double first) {
  Eigen::VectorXd xv = to_vec(x), yv = to_vec(y), uh = to_vec(u_hat);
  gl::BandedD D = gl::make_difference(xv, k);
  sbglue::Progress prog(draws, !quiet, "trend_filter_wbb");
  gl::WBBTFResult r = gl::trend_filter_wbb(D, k, yv, lambda, draws, separate, sbglue::seed_from_r(seed), threads,
                                           to_method(method), ip_control(tol, max_iter, method), uh, prog.monitor(),
                                           static_cast<std::uint64_t>(first));
  return Rcpp::List::create(Rcpp::Named("draws") = Rcpp::wrap(r.draws), Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap),
                            Rcpp::Named("iter") = Rcpp::wrap(r.iter), Rcpp::Named("w0") = Rcpp::wrap(r.w0),
                            Rcpp::Named("completed") = static_cast<double>(r.status.completed),
                            Rcpp::Named("interrupted") = prog.interrupted() || r.status.interrupted);
}

namespace {
Eigen::SparseMatrix<double> sparse_from_csc(int m, int n, const Rcpp::IntegerVector& i, const Rcpp::IntegerVector& p,
                                            const Rcpp::NumericVector& xv) {
  if (p.size() != n + 1) throw std::invalid_argument("penalty matrix: column pointer has the wrong length");
  std::vector<Eigen::Triplet<double>> tr;
  tr.reserve(xv.size());
  for (int j = 0; j < n; ++j)
    for (int q = p[j]; q < p[j + 1]; ++q) {
      if (i[q] < 0 || i[q] >= m) throw std::invalid_argument("penalty matrix: row index out of range");
      if (!std::isfinite(xv[q])) throw std::invalid_argument("penalty matrix must be finite");
      tr.emplace_back(i[q], j, xv[q]);
    }
  Eigen::SparseMatrix<double> D(m, n);
  D.setFromTriplets(tr.begin(), tr.end());
  D.makeCompressed();
  return D;
}
}  // namespace

// Generalized lasso with a sparse D given in compressed-column form (Matrix's dgCMatrix slots).
// [[Rcpp::export]]
Rcpp::List cpp_genlasso_path(Rcpp::NumericVector y, Rcpp::NumericVector w, int m, int n, Rcpp::IntegerVector Di,
                             Rcpp::IntegerVector Dp, Rcpp::NumericVector Dx, Rcpp::NumericVector w0,
                             Rcpp::NumericVector lambdas, double tol, int max_iter, bool warm) {
  const Eigen::SparseMatrix<double> D = sparse_from_csc(m, n, Di, Dp, Dx);
  const gl::PathResult r = gl::generalized_lasso_path(D, to_vec(y), to_vec(w), to_vec(w0), to_vec(lambdas),
                                                        ip_control(tol, max_iter), warm, stop_on_interrupt);
  if (r.interrupted) throw Rcpp::internal::InterruptedException();
  return Rcpp::List::create(Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("u") = Rcpp::wrap(r.u),
                            Rcpp::Named("gap") = Rcpp::wrap(r.gap), Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap),
                            Rcpp::Named("primal") = Rcpp::wrap(r.primal), Rcpp::Named("iter") = Rcpp::wrap(r.iter));
}

// lambda_max of the generalized lasso (engine: genlasso/generalized_lasso.hpp).
// [[Rcpp::export]]
Rcpp::List cpp_genlasso_lambda_max(Rcpp::NumericVector y, Rcpp::NumericVector w, int m, int n, Rcpp::IntegerVector Di,
                                   Rcpp::IntegerVector Dp, Rcpp::NumericVector Dx, Rcpp::NumericVector w0) {
  const Eigen::SparseMatrix<double> D = sparse_from_csc(m, n, Di, Dp, Dx);
  const gl::GenLassoLambdaMax r =
      gl::generalized_lasso_lambda_max(D, to_vec(y), to_vec(w), to_vec(w0), stop_on_interrupt);
  if (r.interrupted) throw Rcpp::internal::InterruptedException();
  return Rcpp::List::create(Rcpp::Named("lambda_max") = r.lambda_max, Rcpp::Named("lower") = r.lower,
                            Rcpp::Named("rel_gap") = r.rel_gap, Rcpp::Named("ridge_bound") = r.ridge_bound,
                            Rcpp::Named("residual") = r.residual, Rcpp::Named("u") = Rcpp::wrap(r.u));
}

// Euclidean norms of the rows of D^{(x,k+1)} (O(n k), for the difference-based noise estimate).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_tf_row_norms(Rcpp::NumericVector x, int k) {
  return Rcpp::wrap(gl::row_norms(gl::make_difference(to_vec(x), k)));
}
