// Glue for trend filtering and the generalized lasso (engine: inst/include/scalebayes/genlasso).
#include "sb_glue.h"
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/genlasso/generalized_lasso.hpp"
#include "scalebayes/genlasso/dual_path.hpp"
#include <atomic>
#include <cstdio>
#include <string>

namespace gl = scalebayes::genlasso;

namespace {
gl::IPControl ip_control(double tol, int max_iter) {
  gl::IPControl c;
  c.tol = tol;
  c.max_iter = max_iter;
  return c;
}
Eigen::VectorXd to_vec(const Rcpp::NumericVector& v) { return Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size()); }

// The trend-filtering solver settings, from R/trend_filter.R's tf_engine_control(): the solver (0 auto,
// 1 dp, 2 ip), the Newton-system choice of the primal interior point (0 auto, 1 Givens QR only, 2 dual normal
// equations for k <= 1 without the size rule), the target relative gap and the step limit.
struct TFEngine {
  gl::TFMethod method = gl::TFMethod::Auto;
  gl::IPControl ctl;
};
TFEngine tf_engine_from(const Rcpp::List& e) {
  TFEngine out;
  out.method = sbglue::enum_arg<gl::TFMethod>(e, "solver");
  out.ctl = ip_control(Rcpp::as<double>(e["tol"]), Rcpp::as<int>(e["max_iter"]));
  out.ctl.newton = static_cast<int>(sbglue::enum_arg<gl::NewtonDirections>(e, "newton"));
  return out;
}
// The engine's interrupt callback: polls R's interrupt flag without longjmp-ing through C++ frames; an
// interrupted run is turned into R's interrupt condition by throwing Rcpp's InterruptedException here.
bool stop_on_interrupt() { return sbglue::user_interrupted(); }
}  // namespace

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
                       Rcpp::NumericVector w0, Rcpp::NumericVector lambdas, Rcpp::List engine, bool warm) {
  const TFEngine eng = tf_engine_from(engine);
  const gl::TFFit f = gl::trend_filter_fit(to_vec(x), to_vec(y), to_vec(w), k, to_vec(w0), to_vec(lambdas),
                                           eng.method, eng.ctl, warm, stop_on_interrupt);
  if (f.path.interrupted) throw Rcpp::internal::InterruptedException();
  const gl::PathResult& r = f.path;
  return Rcpp::List::create(Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("u") = Rcpp::wrap(r.u),
                            Rcpp::Named("gap") = Rcpp::wrap(r.gap), Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap),
                            Rcpp::Named("primal") = Rcpp::wrap(r.primal), Rcpp::Named("iter") = Rcpp::wrap(r.iter),
                            Rcpp::Named("rounding_rel") = Rcpp::wrap(r.rounding_rel), Rcpp::Named("df") = Rcpp::wrap(f.df),
                            Rcpp::Named("lambda_max") = f.lambda_max);
}

// Cross-validation paths of cv_trend_filter(): fold[i] in 1..nfolds (0: always kept); with `full`, also the
// path on all data (the last element). Folds run on `threads` workers, progress over folds x lambdas here on
// the main thread. Returns a list of (beta, u, gap, rel_gap, primal, iter, rounding_rel, df, lambda_max) per path.
// [[Rcpp::export]]
Rcpp::List cpp_tf_cv_paths(Rcpp::NumericVector y, Rcpp::NumericVector x, Rcpp::NumericVector w, int k,
                           Rcpp::NumericVector w0, Rcpp::NumericVector lambdas, Rcpp::List engine, bool warm,
                           Rcpp::IntegerVector fold, int nfolds, bool full, int threads, bool quiet) {
  const TFEngine eng = tf_engine_from(engine);
  const std::vector<int> fv(fold.begin(), fold.end());
  const std::size_t items = static_cast<std::size_t>(nfolds) + (full ? 1u : 0u);
  std::atomic<long> solved{0};
  sbglue::Progress prog(static_cast<double>(items) * lambdas.size(), !quiet, "cross-validation paths");
  auto monitor = [&](std::size_t) { return prog(static_cast<std::size_t>(solved.load())); };
  const gl::TFCVPaths r = gl::trend_filter_cv_paths(to_vec(x), to_vec(y), to_vec(w), k, to_vec(w0), to_vec(lambdas),
                                                    fv, nfolds, full, eng.method, eng.ctl, warm, threads, &solved,
                                                    monitor);
  if (prog.interrupted() || r.status.interrupted) throw Rcpp::internal::InterruptedException();
  Rcpp::List out(static_cast<R_xlen_t>(items));
  for (std::size_t f = 0; f < items; ++f) {
    const gl::PathResult& p = r.fits[f].path;
    out[static_cast<R_xlen_t>(f)] = Rcpp::List::create(
        Rcpp::Named("beta") = Rcpp::wrap(p.beta), Rcpp::Named("u") = Rcpp::wrap(p.u), Rcpp::Named("gap") = Rcpp::wrap(p.gap),
        Rcpp::Named("rel_gap") = Rcpp::wrap(p.rel_gap), Rcpp::Named("primal") = Rcpp::wrap(p.primal),
        Rcpp::Named("iter") = Rcpp::wrap(p.iter), Rcpp::Named("rounding_rel") = Rcpp::wrap(p.rounding_rel),
        Rcpp::Named("df") = Rcpp::wrap(r.fits[f].df), Rcpp::Named("lambda_max") = r.fits[f].lambda_max);
  }
  return out;
}

// WBB draws of the fitted curve (genlasso::trend_filter_wbb over wbb::run_draws), written straight into the
// returned draws x n matrix (columns named `names`); settings: R/wbb_run.R's wbb_engine_settings().
// [[Rcpp::export]]
Rcpp::List cpp_tf_wbb(Rcpp::NumericVector y, Rcpp::NumericVector x, int k, double lambda, Rcpp::List engine,
                      Rcpp::NumericVector u_hat, Rcpp::CharacterVector names, Rcpp::List settings) {
  const scalebayes::wbb::Settings st = sbglue::wbb_settings(settings);
  const TFEngine eng = tf_engine_from(engine);
  Eigen::VectorXd xv = to_vec(x), yv = to_vec(y), uh = to_vec(u_hat);
  const gl::BandedD D = gl::make_difference(xv, k);
  const gl::ScaledD S(D);
  const Eigen::Index T = static_cast<Eigen::Index>(st.draws);
  Rcpp::NumericMatrix draws(static_cast<int>(T), D.n);
  draws.attr("dimnames") = Rcpp::List::create(R_NilValue, names);
  Rcpp::NumericVector rel_gap(T, R_NaN), w0(T, R_NaN);
  Rcpp::IntegerVector iter(T);
  gl::TFWBBProblem pb{D, S, k, yv, lambda, eng.method, eng.ctl, uh};
  gl::TFWBBOutput out{Eigen::Map<Eigen::MatrixXd>(draws.begin(), T, D.n), Eigen::Map<Eigen::VectorXd>(rel_gap.begin(), T),
                      Eigen::Map<Eigen::VectorXi>(iter.begin(), T), Eigen::Map<Eigen::VectorXd>(w0.begin(), T)};
  sbglue::Progress prog(static_cast<double>(T), settings, "trend_filter_wbb");
  const auto status = gl::trend_filter_wbb(pb, out, st, prog.monitor());
  return Rcpp::List::create(Rcpp::Named("draws") = draws, Rcpp::Named("rel_gap") = rel_gap,
                            Rcpp::Named("iter") = iter, Rcpp::Named("w0") = w0,
                            Rcpp::Named("completed") = static_cast<double>(status.completed),
                            Rcpp::Named("prefix") = static_cast<double>(status.prefix),  // draws 1..prefix finished
                            Rcpp::Named("interrupted") = prog.interrupted() || status.interrupted);
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

namespace {
// The exact dual solution path (engine: genlasso/dual_path.hpp) and its R list. A cli progress bar over maxsteps
// knots unless quiet (main thread); the interrupt poll runs before every knot. beta = y - D'u is written straight
// into the R matrix (the engine keeps u only), and the column names (genlasso's round(lambda, 3)) are set here,
// so R never copies the n x K matrix.
Rcpp::List genlasso_dualpath_list(const Eigen::SparseMatrix<double>& D, const Eigen::VectorXd& yv, int maxsteps,
                                  double minlam, bool approx, double btol, int backend, bool quiet) {
  const int m = static_cast<int>(D.rows()), n = static_cast<int>(D.cols());
  gl::DualPathControl ctl;
  ctl.maxsteps = maxsteps;
  ctl.minlam = minlam;
  ctl.approx = approx;
  ctl.btol = btol;
  ctl.backend = backend;
  ctl.keep_beta = false;
  gl::DualPathResult r;
  {
    sbglue::Progress prog(static_cast<double>(maxsteps), !quiet, "generalized lasso path (knots)");
    std::size_t done = 0;
    r = gl::dual_path(D, yv, ctl, [&] { return !prog(done); }, [&](int k, double) { done = static_cast<std::size_t>(k); });
  }
  if (r.interrupted) throw Rcpp::internal::InterruptedException();
  const int K = static_cast<int>(r.lambda.size());
  Rcpp::NumericMatrix u(m, K), beta(n, K);
  Rcpp::List bset(K), bsign(K);
  const Eigen::SparseMatrix<double, Eigen::RowMajor> Dr(D);
  Rcpp::CharacterVector cn(K);
  for (int k = 0; k < K; ++k) {
    std::copy(r.u[k].data(), r.u[k].data() + m, u.begin() + static_cast<long>(k) * m);
    Eigen::Map<Eigen::VectorXd> bk(beta.begin() + static_cast<long>(k) * n, n);
    bk = yv;
    bk.noalias() -= Dr.transpose() * r.u[k];
    Rcpp::IntegerVector b(r.boundary[k].begin(), r.boundary[k].end());
    bset[k] = b + 1;
    bsign[k] = Rcpp::IntegerVector(r.sign[k].begin(), r.sign[k].end());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", r.lambda[k]);  // genlasso's as.character(round(lambda, 3))
    std::string nm(buf);
    if (nm.find('.') != std::string::npos) {
      while (nm.back() == '0') nm.pop_back();
      if (nm.back() == '.') nm.pop_back();
    }
    cn[k] = nm;
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(r.lambda), Rcpp::Named("df") = Rcpp::wrap(r.df),
                            Rcpp::Named("hit") = Rcpp::LogicalVector(r.hit.begin(), r.hit.end()),
                            Rcpp::Named("u") = u, Rcpp::Named("beta") = beta, Rcpp::Named("boundary") = bset,
                            Rcpp::Named("sign") = bsign, Rcpp::Named("complete") = r.complete,
                            Rcpp::Named("dense_used") = r.dense_used, Rcpp::Named("colnames") = cn);
}
}  // namespace

// The path for a sparse D in compressed-column form. backend: 0 auto, 1 banded, 2 dense.
// [[Rcpp::export]]
Rcpp::List cpp_genlasso_dualpath(Rcpp::NumericVector y, int m, int n, Rcpp::IntegerVector Di, Rcpp::IntegerVector Dp,
                                 Rcpp::NumericVector Dx, int maxsteps, double minlam, bool approx, double btol,
                                 int backend, bool quiet) {
  return genlasso_dualpath_list(sparse_from_csc(m, n, Di, Dp, Dx), to_vec(y), maxsteps, minlam, approx, btol, backend,
                                quiet);
}

// The path for a dense D (the reduced D R^-1 of a design matrix X): the dense back end with QR up/downdates.
// [[Rcpp::export]]
Rcpp::List cpp_genlasso_dualpath_dense(Rcpp::NumericVector y, Rcpp::NumericMatrix D, int maxsteps, double minlam,
                                       bool approx, double btol, bool quiet) {
  const Eigen::Map<const Eigen::MatrixXd> Dm(D.begin(), D.nrow(), D.ncol());
  const Eigen::SparseMatrix<double> Ds = Dm.sparseView();
  return genlasso_dualpath_list(Ds, to_vec(y), maxsteps, minlam, approx, btol, 2, quiet);
}
