// Test hooks of the torch-free engine (see test_hooks.h): entry points that only tests/testthat and a few
// bench/ scripts call, to check one engine piece against a reference written independently -- the parallel
// driver and the random streams (test-engine.R), the inverse-Gaussian draws and the glmnet-path, CV and
// coverage pieces of the Bayesian-lasso study (test-blasso.R, test-blasso-figures.R), a study dataset as the
// study draws it (bench/blasso_monomvn_paired.R), the KLE basis of the PDE data (test-pde.R), the SG-MCMC
// ziggurat normals (test-sgld-sa.R) and the dense trend-filtering difference matrix (test-trend-filter.R,
// test-genlasso-path.R). The WBB driver's test solvers are in wbb_driver_check.cpp, the LibTorch hooks in
// torch_nn_test_hooks.cpp. Compiled only with SCALEBAYES_TEST_HOOKS (configure); this file also holds
// sb_test_hooks_init(), compiled in every build.
#ifdef SCALEBAYES_TEST_HOOKS
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sb_glue.h"  // RcppEigen before Rcpp (test_hooks.h)
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/gibbs/compare.hpp"  // includes cd/glmnet_path.hpp
#include "scalebayes/pde/darcy.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/sgmcmc/storage.hpp"
#include "test_hooks.h"
#else
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#endif

// Called by the package's R_init_scalebayes (RcppExports.cpp, from the Rcpp::init attribute) after it registered
// the Rcpp exports: with the test hooks compiled in, R may also look up the sbtest_* symbols by name.
// [[Rcpp::init]]
void sb_test_hooks_init(DllInfo* dll) {
#ifdef SCALEBAYES_TEST_HOOKS
  R_useDynamicSymbols(dll, TRUE);
#else
  (void)dll;
#endif
}

#ifdef SCALEBAYES_TEST_HOOKS
namespace {
namespace gl = scalebayes::genlasso;
namespace sg = scalebayes::sgmcmc;
Eigen::VectorXd to_vec(const Rcpp::NumericVector& v) { return Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size()); }

// ---- the parallel driver and the random streams (test-engine.R, test-nn.R)

// Runs n items on `threads` workers; the monitor asks to stop once `stop_after` items are done (never if
// negative); item `throw_at` throws (never if negative). Returns the number of completed items and whether
// a stop happened.
Rcpp::List cpp_test_driver(int n, int threads, int stop_after, int throw_at) {
  std::vector<int> hit(n, 0);
  auto body = [&](std::size_t i, int) {
    if (static_cast<int>(i) == throw_at) throw std::runtime_error("item failed on purpose");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    hit[i] = 1;
  };
  auto monitor = [&](std::size_t done) { return stop_after < 0 || static_cast<int>(done) < stop_after; };
  const auto st = scalebayes::parallel::run_parallel(static_cast<std::size_t>(n), threads, body, monitor, 5);
  return Rcpp::List::create(Rcpp::Named("completed") = static_cast<double>(st.completed),
                            Rcpp::Named("interrupted") = st.interrupted,
                            Rcpp::Named("hit") = Rcpp::wrap(hit));
}
// n draws of one distribution from stream (seed, stream): kind 0 uniform, 1 normal, 2 exponential,
// 3 gamma(a), 4 beta(a, b), 5 inverse Gaussian(a = mu, b = lambda).
Rcpp::NumericVector cpp_test_rng(int kind, int n, double a, double b, double seed, double stream) {
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), static_cast<std::uint64_t>(stream));
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) {
    switch (kind) {
      case 0: out[i] = s.uniform(); break;
      case 1: out[i] = s.normal(); break;
      case 2: out[i] = s.exponential(); break;
      case 3: out[i] = s.gamma(a); break;
      case 4: out[i] = s.beta(a, b); break;
      default: out[i] = s.inverse_gaussian(a, b);
    }
  }
  return out;
}
// ---- the Bayesian lasso and its study (test-blasso.R, test-blasso-figures.R, bench/blasso_monomvn_paired.R)

// n draws of rng::Stream::inverse_gaussian(mu, shape) from stream (seed, 0).
Rcpp::NumericVector cpp_rinvgauss(int n, double mu, double shape, double seed) {
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), 0);
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = s.inverse_gaussian(mu, shape);
  return out;
}
// glmnet's default gaussian lasso path without intercept (cd/glmnet_path.hpp) on (x, y, w, pf), and
// coef(fit, s = s). user_lambda: empty for the default path. Returns the path lambdas, the p x L coefficients
// and the coefficients at s.
Rcpp::List cpp_glmnet_path_coef(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y,
                                const Rcpp::NumericVector& w, const Rcpp::NumericVector& pf, double s,
                                const Rcpp::NumericVector& user_lambda, double tol) {
  namespace cd = scalebayes::cd;
  cd::Control ctrl;
  ctrl.tol = tol;
  const Eigen::VectorXd ul = Rcpp::as<Eigen::VectorXd>(user_lambda);
  const cd::GlmnetPath path = cd::glmnet_path(sbglue::as_map(x), sbglue::as_map(y), sbglue::as_map(w),
                                              sbglue::as_map(pf), ctrl, cd::GlmnetPathRule(), ul);
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(path.lambda), Rcpp::Named("beta") = Rcpp::wrap(path.beta),
                            Rcpp::Named("coef") = Rcpp::wrap(cd::glmnet_coef(path, s)));
}
// cv.glmnet(x, y, intercept = FALSE, foldid)$lambda.min as cd::glmnet_cv_lambda_min computes it
// (foldid 1-based, as in R).
double cpp_glmnet_cv_lambda_min(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& y,
                                const Rcpp::IntegerVector& foldid, double tol) {
  namespace cd = scalebayes::cd;
  cd::Control ctrl;
  ctrl.tol = tol;
  Eigen::VectorXi f(foldid.size());
  for (R_xlen_t i = 0; i < foldid.size(); ++i) f[i] = foldid[i] - 1;
  return cd::glmnet_cv_lambda_min(sbglue::as_map(x), sbglue::as_map(y), f, ctrl);
}
// The paper route's coverage rule (gibbs::coverage_all_pairs) for intervals [lo, hi] and truth beta.
double cpp_coverage_all_pairs(const Rcpp::NumericVector& lo, const Rcpp::NumericVector& hi,
                              const Rcpp::NumericVector& beta) {
  return scalebayes::gibbs::coverage_all_pairs(sbglue::as_map(lo), sbglue::as_map(hi), sbglue::as_map(beta));
}
// Dataset b (0-based: dataset b + 1) of one cell of the WBB-paper simulation exactly as
// run_compare draws it (gibbs::compare_data), so that other software can be run on the same data.
Rcpp::List cpp_compare_data(int n, int p, std::string setting, int cell_id, double seed, double b, bool paper_route) {
  namespace G = scalebayes::gibbs;
  G::CompareCell cell;
  cell.n = n;
  cell.p = p;
  cell.setting = static_cast<int>(scalebayes::parse_enum<G::CompareSetting>(setting));
  cell.id = cell_id;
  if (!(b >= 0) || b > 2147483647.0) Rcpp::stop("internal: invalid dataset index");
  const std::uint64_t s = sbglue::seed_from_r(seed);
  const G::CompareData d = G::compare_data(cell, s, G::compare_key(cell, static_cast<std::size_t>(b)), paper_route);
  return Rcpp::List::create(Rcpp::Named("x") = Rcpp::wrap(d.x), Rcpp::Named("y") = Rcpp::wrap(d.y),
                            Rcpp::Named("xt") = Rcpp::wrap(d.xt), Rcpp::Named("yt") = Rcpp::wrap(d.yt),
                            Rcpp::Named("beta") = Rcpp::wrap(d.beta));
}
// ---- the PDE data (test-pde.R)

// The leading eigenpairs of the separable Gaussian kernel at the cell centres.
Rcpp::List cpp_kle_basis(int nx, int ny, double l1, double l2, double variance, int terms, int nystrom) {
  const scalebayes::pde::Kle2d kle(nx, ny, l1, l2, variance, terms, nystrom);
  Rcpp::NumericMatrix basis(kle.basis.rows(), kle.basis.cols());
  std::copy(kle.basis.data(), kle.basis.data() + kle.basis.size(), basis.begin());
  return Rcpp::List::create(
      Rcpp::Named("values") = Rcpp::NumericVector(kle.values.data(), kle.values.data() + kle.values.size()),
      Rcpp::Named("index1") = Rcpp::IntegerVector(kle.index1.begin(), kle.index1.end()),
      Rcpp::Named("index2") = Rcpp::IntegerVector(kle.index2.begin(), kle.index2.end()),
      Rcpp::Named("values1") = Rcpp::NumericVector(kle.values1.data(), kle.values1.data() + kle.values1.size()),
      Rcpp::Named("values2") = Rcpp::NumericVector(kle.values2.data(), kle.values2.data() + kle.values2.size()),
      Rcpp::Named("basis") = basis);
}
// ---- SG-MCMC (test-sgld-sa.R)

// n standard normals from the SG-MCMC ziggurat on stream (seed, 0).
Rcpp::NumericVector cpp_sgmcmc_normals(int n, double seed) {
  scalebayes::rng::Stream rs(sbglue::seed_from_r(seed), 0);
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = sg::Ziggurat::normal(rs);
  return out;
}
// ---- trend filtering (test-trend-filter.R, test-genlasso-path.R, bench/trend_filter.R)

// Dense D^{(x,k+1)} (for tests and small problems; the package builds D in R/penalty_matrices.R).
Rcpp::NumericMatrix cpp_tf_difference(Rcpp::NumericVector x, int k) {
  gl::BandedD D = gl::make_difference(to_vec(x), k);
  Rcpp::NumericMatrix out(D.m, D.n);
  for (int i = 0; i < D.m; ++i)
    for (int l = 0; l < D.width; ++l) out(i, i + l) = D.at(i, l);
  return out;
}
}  // namespace

SB_TEST_HOOK(cpp_test_driver)
SB_TEST_HOOK(cpp_test_rng)
SB_TEST_HOOK(cpp_rinvgauss)
SB_TEST_HOOK(cpp_glmnet_path_coef)
SB_TEST_HOOK(cpp_glmnet_cv_lambda_min)
SB_TEST_HOOK(cpp_coverage_all_pairs)
SB_TEST_HOOK(cpp_compare_data)
SB_TEST_HOOK(cpp_kle_basis)
SB_TEST_HOOK(cpp_sgmcmc_normals)
SB_TEST_HOOK(cpp_tf_difference)
#endif  // SCALEBAYES_TEST_HOOKS
