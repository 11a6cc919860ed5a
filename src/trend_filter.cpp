// Glue for trend filtering and the generalized lasso (engine: inst/include/scalebayes/genlasso).
#include "sb_glue.h"
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/genlasso/lambda_max_lp.hpp"

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
  const int solver = Rcpp::as<int>(e["solver"]);
  out.method = solver == 1 ? gl::TFMethod::DP : (solver == 2 ? gl::TFMethod::IP : gl::TFMethod::Auto);
  out.ctl = ip_control(Rcpp::as<double>(e["tol"]), Rcpp::as<int>(e["max_iter"]));
  out.ctl.newton = Rcpp::as<int>(e["newton"]);
  return out;
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
                       Rcpp::NumericVector w0, Rcpp::NumericVector lambdas, Rcpp::List engine, bool warm) {
  const TFEngine eng = tf_engine_from(engine);
  Eigen::VectorXd xv = to_vec(x), yv = to_vec(y), wv = to_vec(w), w0v = to_vec(w0), lv = to_vec(lambdas);
  gl::BandedD D = gl::make_difference(xv, k);
  if (w0v.size() != 1 && w0v.size() != D.m) throw std::invalid_argument("penalty weights must have length 1 or n-k-1");
  const Eigen::VectorXd u0 = gl::unconstrained_dual(D, yv, xv, wv, k);
  const Eigen::VectorXd b0 = gl::poly_projection(yv, xv, wv, k);
  gl::PathResult r =
      gl::trend_filter_path(D, k, yv, wv, w0v, lv, eng.method, eng.ctl, warm, &u0, &b0);
  // degrees of freedom per lambda, and lambda_max from the dual already at hand (no second pass from R)
  Eigen::VectorXd dy(D.m);
  D.apply(yv.data(), dy.data());
  const double noise = 1e-12 * std::max(dy.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  Rcpp::IntegerVector df(lv.size());
  for (int l = 0; l < lv.size(); ++l) df[l] = gl::trend_filter_df(D, k, r.beta.col(l).data(), r.u.col(l).data(), lv[l], w0v, noise);
  return Rcpp::List::create(Rcpp::Named("beta") = Rcpp::wrap(r.beta), Rcpp::Named("u") = Rcpp::wrap(r.u),
                            Rcpp::Named("gap") = Rcpp::wrap(r.gap), Rcpp::Named("rel_gap") = Rcpp::wrap(r.rel_gap),
                            Rcpp::Named("primal") = Rcpp::wrap(r.primal), Rcpp::Named("iter") = Rcpp::wrap(r.iter),
                            Rcpp::Named("rounding_rel") = Rcpp::wrap(r.rounding_rel), Rcpp::Named("df") = df,
                            Rcpp::Named("lambda_max") = gl::lambda_max_from_dual(u0, w0v));
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
  sbglue::Progress prog(static_cast<double>(T), !Rcpp::as<bool>(settings["quiet"]), "trend_filter_wbb");
  const auto status = gl::trend_filter_wbb(pb, out, st, prog.monitor());
  return Rcpp::List::create(Rcpp::Named("draws") = draws, Rcpp::Named("rel_gap") = rel_gap,
                            Rcpp::Named("iter") = iter, Rcpp::Named("w0") = w0,
                            Rcpp::Named("completed") = static_cast<double>(status.completed),
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
  Eigen::SparseMatrix<double> D = sparse_from_csc(m, n, Di, Dp, Dx);
  Eigen::VectorXd yv = to_vec(y), wv = to_vec(w), w0v = to_vec(w0), lv = to_vec(lambdas);
  if (yv.size() != n || wv.size() != n) throw std::invalid_argument("y and weights must have ncol(D) entries");
  if (w0v.size() != 1 && w0v.size() != m) throw std::invalid_argument("penalty weights must have length 1 or nrow(D)");
  gl::SparseOp op(D);
  Eigen::VectorXd winv = wv.cwiseInverse();
  op.set_weights(winv.data());
  const int L = static_cast<int>(lv.size());
  Eigen::MatrixXd beta(n, L), U(m, L);
  Eigen::VectorXd gap(L), rel(L), primal(L);
  Eigen::VectorXi iter(L);
  Eigen::VectorXd lam(m), uprev;
  gl::IPControl ctl = ip_control(tol, max_iter);
  for (int l = 0; l < L; ++l) {
    Rcpp::checkUserInterrupt();  // between lambda values (main thread)
    for (int j = 0; j < m; ++j) lam[j] = lv[l] * (w0v.size() == 1 ? w0v[0] : w0v[j]);
    Eigen::VectorXd ws;
    const Eigen::VectorXd* start = nullptr;
    if (warm && l > 0) {
      ws = uprev * (lv[l - 1] > 0 ? lv[l] / lv[l - 1] : 0.0);
      start = &ws;
    }
    gl::IPResult r = gl::dual_ip(op, yv, wv, lam, ctl, start, true);
    beta.col(l) = r.beta;
    U.col(l) = r.u;
    gap[l] = r.gap;
    rel[l] = r.rel_gap;
    primal[l] = r.primal;
    iter[l] = r.iter;
    uprev = r.u;
  }
  return Rcpp::List::create(Rcpp::Named("beta") = Rcpp::wrap(beta), Rcpp::Named("u") = Rcpp::wrap(U),
                            Rcpp::Named("gap") = Rcpp::wrap(gap), Rcpp::Named("rel_gap") = Rcpp::wrap(rel),
                            Rcpp::Named("primal") = Rcpp::wrap(primal), Rcpp::Named("iter") = Rcpp::wrap(iter));
}

// lambda_max of the generalized lasso: a feasible dual from D W^{-1} D' u = D y (a tiny ridge makes it unique
// when D has more rows than rank), then the exact value min ||u / w0||_inf over D'u = D'u0 (lambda_max_lp.hpp).
// [[Rcpp::export]]
Rcpp::List cpp_genlasso_lambda_max(Rcpp::NumericVector y, Rcpp::NumericVector w, int m, int n, Rcpp::IntegerVector Di,
                                   Rcpp::IntegerVector Dp, Rcpp::NumericVector Dx, Rcpp::NumericVector w0) {
  Eigen::SparseMatrix<double> D = sparse_from_csc(m, n, Di, Dp, Dx);
  Eigen::VectorXd yv = to_vec(y), wv = to_vec(w), w0v = to_vec(w0);
  Eigen::VectorXd winv = wv.cwiseInverse();
  const Eigen::SparseMatrix<double> G0 = D * winv.asDiagonal() * D.transpose();
  double dmax = 0.0;
  for (int j = 0; j < m; ++j) dmax = std::max(dmax, G0.coeff(j, j));
  Eigen::SparseMatrix<double> I(m, m);
  I.setIdentity();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(G0 + (1e-10 * std::max(dmax, 1e-300)) * I);
  if (ldlt.info() != Eigen::Success) throw std::runtime_error("factorization of D W^-1 D' failed");
  const Eigen::VectorXd Dy = D * yv;
  Eigen::VectorXd u = ldlt.solve(Dy);
  // iterative refinement against the unridged G0: the ridge alone biases u by about 1e-10 cond(G) (measured
  // 0.2% in lambda_max for second differences at n = 200)
  double rprev = std::numeric_limits<double>::infinity();
  for (int it = 0; it < 100; ++it) {
    const Eigen::VectorXd r = Dy - G0 * u;
    const double rn = r.cwiseAbs().maxCoeff();
    if (!(rn < 0.5 * rprev)) break;
    rprev = rn;
    u += ldlt.solve(r);
  }
  // relative residual of the normal equations: large when D W^-1 D' is too ill-conditioned for double
  // precision (e.g. 4th differences as a generic matrix at n = 200, condition ~ n^8)
  const double resid = (Dy - G0 * u).cwiseAbs().maxCoeff() / std::max(Dy.cwiseAbs().maxCoeff(), 1e-300);
  // the ridge solution is one feasible dual: exact when D has full row rank, an upper bound otherwise; the
  // linear program gives the exact value in both cases (lambda_max_lp.hpp)
  const double ridge_bound = gl::lambda_max_from_dual(u, w0v);
  gl::LambdaMaxLP lp = gl::lambda_max_lp(D, u, w0v, 1e-12, 200, [] { Rcpp::checkUserInterrupt(); });
  return Rcpp::List::create(Rcpp::Named("lambda_max") = lp.lambda_max, Rcpp::Named("lower") = lp.lower,
                            Rcpp::Named("rel_gap") = lp.rel_gap, Rcpp::Named("ridge_bound") = ridge_bound,
                            Rcpp::Named("residual") = resid, Rcpp::Named("u") = Rcpp::wrap(lp.u));
}

// Euclidean norms of the rows of D^{(x,k+1)} (O(n k), for the difference-based noise estimate).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_tf_row_norms(Rcpp::NumericVector x, int k) {
  gl::BandedD D = gl::make_difference(to_vec(x), k);
  Rcpp::NumericVector out(D.m);
  for (int i = 0; i < D.m; ++i) {
    double s = 0.0;
    for (int l = 0; l < D.width; ++l) s += D.at(i, l) * D.at(i, l);
    out[i] = std::sqrt(s);
  }
  return out;
}
