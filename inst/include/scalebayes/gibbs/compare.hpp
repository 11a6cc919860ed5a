// scalebayes/gibbs/compare.hpp -- the simulation study of Newton, Polson & Xu (2021), section 3.1 (Tables 1-3):
// WBB (lasso penalty, separate prior weights, lambda by CV on the unweighted lasso) against the Bayesian lasso.
//
// One dataset = one work item, keyed by (seed, cell, dataset index) so any split over threads, chunks or
// machines gives the same numbers. For dataset b of a cell:
//   * X (n x p) and a test X* (n x p): rows N(0, Sigma), Sigma_ij = 0.1 * 0.8^|i-j|, drawn exactly as a
//     stationary AR(1) across columns; y = X beta + e, e ~ N(0, s2 I), s2 = ||X beta||^2 / (2 n) from the
//     training X (signal-to-noise 2); y* likewise with the same s2.
//   * WBB: columns standardized by their unweighted means / SDs; lambda = lambda_min of 10-fold CV on the
//     unweighted lasso (100 log-spaced values down to lambda_max * (1e-4 if n > p else 1e-2)); then T draws
//     argmin sum_i w_i (y_i - a0 - x_i'b)^2 / 2 + lambda sum_j w0_j |b_j|, w, w0 iid Exp(1), through the WBB
//     driver (wbb/driver.hpp) and the elastic-net weighted solver of wbb() (wbb/glm.hpp).
//   * Bayesian lasso: gibbs::run_blasso with one chain, T kept draws (settings from BlassoControl).
//   Metrics per method: coefficient MSE of the posterior mean (mean over j), prediction MSE on the test set
//   (posterior-mean prediction incl. intercept), and the share of coefficients whose central 95% interval
//   (type-7 quantiles of the T draws) covers the truth.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdint>
#include <vector>

#include "scalebayes/cd/glmnet_path.hpp"
#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/gibbs/blasso.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/wbb/glm.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace gibbs {

// CompareCell::setting by name (R: blasso_compare(settings = )); the int values are CompareCell::setting's codes.
enum class CompareSetting { a_i = 0, a_ii = 1, b = 2 };
inline constexpr EnumTable<CompareSetting, 3> compare_setting_names{
    "setting", {{{"A(i)", CompareSetting::a_i}, {"A(ii)", CompareSetting::a_ii}, {"B", CompareSetting::b}}}};
constexpr const auto& enum_table(CompareSetting) { return compare_setting_names; }

struct CompareCell {
  int n = 50, p = 40;
  int setting = 0;  // 0 = A(i), 1 = A(ii), 2 = B
  int id = 0;       // cell index used in the random-stream key
};

struct CompareSettings {
  int draws = 200;               // T per method
  int nfolds = 10, nlambda = 100;
  bool run_wbb = true, run_blasso = true;
  bool blasso_standardize = false;  // scale columns to unit L2 norm after centring (monomvn's normalize)
  BlassoControl blasso;          // chains is forced to 1 (and each dataset's sampler runs on one thread)
  cd::Control cd;
  // route "paper_code": the computation of the authors' script (see compare_one_paper); then blasso_burn_draws
  // thinned draws are discarded before the `draws` kept ones (monomvn's T = 500, draws 301-500 kept)
  bool paper_route = false;
  int paper_nfolds = 3;
  int blasso_burn_draws = 300;
};

// metrics: per dataset, columns: wbb (coef mse, pred mse, coverage, lambda, seconds), blasso (same; lambda is the
// EB value or the posterior mean of lambda)
constexpr int kCompareCols = 10;

inline Eigen::VectorXd compare_beta(const CompareCell& c) {
  Eigen::VectorXd b = Eigen::VectorXd::Zero(c.p);
  if (c.setting == 2) {
    b.setOnes();
  } else {
    for (int j = 0; j < std::min(10, c.p); ++j) b[j] = (c.setting == 1 && j >= 5) ? 10.0 : 1.0;
  }
  return b;
}

// rows N(0, Sigma), Sigma_ij = 0.1 * 0.8^|i-j|: x_1 = sqrt(0.1) z_1, x_j = 0.8 x_{j-1} + sqrt(0.1 * 0.36) z_j
inline void compare_design(rng::Stream& s, Eigen::MatrixXd& x) {
  const double s0 = std::sqrt(0.1), s1 = std::sqrt(0.1 * (1.0 - 0.64));
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    x(i, 0) = s0 * s.normal();
    for (Eigen::Index j = 1; j < x.cols(); ++j) x(i, j) = 0.8 * x(i, j - 1) + s1 * s.normal();
  }
}

// type-7 quantile of v (copied, partially sorted)
inline double quantile7(std::vector<double> v, double prob) {
  const double h = (v.size() - 1) * prob;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  const double a = v[lo];
  if (lo + 1 >= v.size()) return a;
  const double b = *std::min_element(v.begin() + lo + 1, v.end());
  return a + (h - lo) * (b - a);
}

// Coverage as the authors' script computes it: the mean over all (i, j) of [lo_j <= beta_i <= hi_j], every
// true coefficient against every coefficient's interval (a p x p indicator matrix).
inline double coverage_all_pairs(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, const Eigen::VectorXd& beta) {
  const Eigen::Index p = beta.size();
  double cover = 0.0;
  for (Eigen::Index j = 0; j < p; ++j)
    for (Eigen::Index i = 0; i < p; ++i) cover += (lo[j] <= beta[i] && beta[i] <= hi[j]);
  return cover / (static_cast<double>(p) * p);
}

// draws: T x (p + 1), column 0 the intercept. Fills 3 metrics. all_pairs: coverage by coverage_all_pairs.
inline void compare_metrics(const Eigen::MatrixXd& draws, const Eigen::VectorXd& beta, const Eigen::MatrixXd& xt,
                            const Eigen::VectorXd& yt, double* out, bool all_pairs = false) {
  const Eigen::Index T = draws.rows(), p = beta.size();
  const Eigen::VectorXd m = draws.colwise().mean().transpose();
  out[0] = (m.tail(p) - beta).squaredNorm() / p;
  const Eigen::VectorXd pred = (xt * m.tail(p)).array() + m[0];
  out[1] = (yt - pred).squaredNorm() / yt.size();
  int cover = 0;
  std::vector<double> col(T);
  Eigen::VectorXd los(p), his(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    for (Eigen::Index t = 0; t < T; ++t) col[t] = draws(t, j + 1);
    const double lo = quantile7(col, 0.025), hi = quantile7(col, 0.975);
    if (lo <= beta[j] && beta[j] <= hi) ++cover;
    los[j] = lo;
    his[j] = hi;
  }
  out[2] = all_pairs ? coverage_all_pairs(los, his, beta) : static_cast<double>(cover) / p;
}

inline std::uint64_t compare_key(const CompareCell& c, std::size_t b) {
  return (static_cast<std::uint64_t>(c.id) << 32) ^ static_cast<std::uint64_t>(b);
}

// Seed of the WBB draws of dataset `key` (the driver then keys draw t by Stream(this seed, t)).
inline std::uint64_t compare_wbb_seed(std::uint64_t seed, std::uint64_t key) { return rng::Stream(seed, key, 3).next(); }

// One dataset: training (x, y) and test (xt, yt) rows, n each, from stream (seed, key, 0). The noise variance
// is ||X beta||^2 / (2 n) over the training rows, or (noise_all_rows, the authors' script) over all 2n rows.
struct CompareData {
  Eigen::VectorXd beta;
  Eigen::MatrixXd x, xt;
  Eigen::VectorXd y, yt;
};

inline CompareData compare_data(const CompareCell& c, std::uint64_t seed, std::uint64_t key, bool noise_all_rows) {
  const int n = c.n, p = c.p;
  rng::Stream s(seed, key, 0);
  CompareData d;
  d.beta = compare_beta(c);
  d.x.resize(n, p);
  d.xt.resize(n, p);
  compare_design(s, d.x);
  compare_design(s, d.xt);
  const Eigen::VectorXd mu = d.x * d.beta, mut = d.xt * d.beta;
  const double s2 = noise_all_rows ? (mu.squaredNorm() + mut.squaredNorm()) / (2.0 * 2.0 * n)
                                   : mu.squaredNorm() / (2.0 * n);
  const double sd = std::sqrt(s2);
  d.y.resize(n);
  d.yt.resize(n);
  for (int i = 0; i < n; ++i) d.y[i] = mu[i] + sd * s.normal();
  for (int i = 0; i < n; ++i) d.yt[i] = mut[i] + sd * s.normal();
  return d;
}

// The five numbers of one arm: the three metrics of its draws dr (compare_metrics), its lambda, and the seconds
// since t0.
inline void compare_finish(const Eigen::MatrixXd& dr, const CompareData& d, double* out, bool all_pairs, double lambda,
                           std::chrono::steady_clock::time_point t0) {
  compare_metrics(dr, d.beta, d.xt, d.yt, out, all_pairs);
  out[3] = lambda;
  out[4] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The Bayesian-lasso settings of one dataset's single chain of `draws` kept draws.
inline BlassoControl compare_blasso_base(const CompareSettings& st) {
  BlassoControl bc = st.blasso;
  bc.chains = 1;
  bc.iter = st.draws;
  return bc;
}

// monomvn's normalize = TRUE: each column's L2 norm after centring (1 for a constant column).
inline Eigen::VectorXd l2_column_scale(const Eigen::MatrixXd& x) {
  Eigen::VectorXd scale(x.cols());
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double nrm = (x.col(j).array() - x.col(j).mean()).matrix().norm();
    scale[j] = nrm > 0 ? nrm : 1.0;
  }
  return scale;
}

// Route "paper_code", one dataset: the computation of the authors' script (wbb_simu.R of Newton, Polson & Xu,
// in wiscstatman/optimizetointegrate, cjs/WBB), re-implemented on this package's engines:
//   * data: as compare_one, but the noise variance is ||X beta||^2 / (2 * 2n) over the training AND test rows
//     (the script draws 2n rows at once);
//   * WBB: lambda = lambda.min of cv.glmnet(intercept = FALSE, nfolds = 3) on all 2n rows (training and test);
//     each draw is glmnet(x, y, weights = Exp(1), penalty.factor = Exp(1), intercept = FALSE) on its DEFAULT
//     path read at coef(s = lambda) (cd/glmnet_path.hpp: beyond the end of the path, its last solution);
//   * Bayesian lasso: monomvn::blasso(x, y, T = 500, icept = FALSE) with draws 301-500 kept: st.blasso (the
//     "monomvn" preset: RJ, lambda^2 ~ Gamma(2, 0.1), improper 1/sigma2, active sets up to n - 1), columns
//     centred and scaled to unit L2 norm, thin = min(p, n - 1), blasso_burn_draws thinned draws discarded; and
//     icept = FALSE as monomvn's C code has it: y is NOT centred (its mean stays in the residuals) while the
//     sigma2 draw keeps n - 1 degrees of freedom (BlassoControl::center_x);
//   * metrics: predictions x* b without intercept (the script drops it), coverage over all p x p pairs
//     (coverage_all_pairs).
// Called by compare_one with the dataset (compare_data(..., true)) and out already set to NaN.
inline bool compare_one_paper(const CompareCell& c, const CompareSettings& st, std::uint64_t seed, std::uint64_t key,
                              const CompareData& data, double* out, const parallel::StopToken& stop) {
  using clock = std::chrono::steady_clock;
  const int n = c.n, p = c.p, T = st.draws;
  const Eigen::MatrixXd &x = data.x, &xt = data.xt;
  const Eigen::VectorXd &y = data.y, &yt = data.yt;

  if (st.run_wbb) {
    const auto t0 = clock::now();
    Eigen::MatrixXd xa(2 * n, p);
    xa << x, xt;
    Eigen::VectorXd ya(2 * n);
    ya << y, yt;
    rng::Stream sf(seed, key, 1);
    Eigen::VectorXi fold(2 * n);
    for (int i = 0; i < 2 * n; ++i) fold[i] = i % st.paper_nfolds;
    for (int i = 2 * n - 1; i > 0; --i) std::swap(fold[i], fold[static_cast<int>(sf.uniform() * (i + 1))]);
    const double lam = cd::glmnet_cv_lambda_min(xa, ya, fold, st.cd);
    if (stop.stop_requested()) return false;
    Eigen::MatrixXd dr = Eigen::MatrixXd::Zero(T, p + 1);  // column 0 (intercept) stays 0
    const std::uint64_t wseed = compare_wbb_seed(seed, key);
    Eigen::VectorXd w(n), pf(p);
    for (int t = 0; t < T; ++t) {
      if (stop.stop_requested()) return false;
      rng::Stream sw(wseed, static_cast<std::uint64_t>(t));
      for (int i = 0; i < n; ++i) w[i] = sw.exponential();
      for (int j = 0; j < p; ++j) pf[j] = sw.exponential();
      const cd::GlmnetPath path = cd::glmnet_path(x, y, w, pf, st.cd, cd::GlmnetPathRule(), Eigen::VectorXd(), lam);
      dr.row(t).tail(p) = cd::glmnet_coef(path, lam).transpose();
    }
    compare_finish(dr, data, out, true, lam, t0);
  }

  if (st.run_blasso) {
    const auto t0 = clock::now();
    BlassoControl bc = compare_blasso_base(st);
    if (bc.thin < 1) bc.thin = std::max(1, std::min(p, n - 1));
    bc.burnin = st.blasso_burn_draws * bc.thin;
    if (bc.sigma2_shape < 0) {  // monomvn's default with RJ: ab = c(0, 0)
      bc.sigma2_shape = 0.0;
      bc.sigma2_scale = 0.0;
    }
    // icept = FALSE as monomvn has it: x centred, y NOT centred, n - 1 degrees of freedom for sigma2, no intercept
    bc.intercept = false;
    bc.center_x = true;
    const Eigen::VectorXd scale = l2_column_scale(x);
    const Eigen::MatrixXd xb = x * scale.cwiseInverse().asDiagonal();
    if (bc.mode == LambdaMode::em) bc.lambda = 0.0;
    rng::Stream sb(seed, key, 2);
    parallel::RunSettings brun;
    brun.seed = sb.next();
    brun.threads = 1;
    const BlassoResult r = run_blasso(xb, y, bc, brun, [&](std::size_t) { return !stop.stop_requested(); });
    if (r.interrupted) return false;
    Eigen::MatrixXd dr = Eigen::MatrixXd::Zero(T, p + 1);  // no intercept in the predictions
    for (int j = 0; j < p; ++j) dr.col(j + 1) = r.beta.col(j) / scale[j];
    compare_finish(dr, data, out + 5, true, r.lambda.mean(), t0);
  }
  return true;
}

// One dataset of the run with seed `seed`: writes kCompareCols numbers into out. Returns false if `stop` cut it
// short (out is then partial).
inline bool compare_one(const CompareCell& c, std::size_t b, const CompareSettings& st, std::uint64_t seed,
                        double* out, const parallel::StopToken& stop = parallel::StopToken()) {
  using clock = std::chrono::steady_clock;
  const int n = c.n, p = c.p, T = st.draws;
  const std::uint64_t key = compare_key(c, b);
  const CompareData data = compare_data(c, seed, key, st.paper_route);
  for (int k = 0; k < kCompareCols; ++k) out[k] = std::numeric_limits<double>::quiet_NaN();
  if (st.paper_route) return compare_one_paper(c, st, seed, key, data, out, stop);
  const Eigen::MatrixXd& x = data.x;
  const Eigen::VectorXd& y = data.y;

  if (st.run_wbb) {
    const auto t0 = clock::now();
    // standardize with unweighted means and (population) SDs, fixed for all draws
    const Eigen::VectorXd center = x.colwise().mean().transpose();
    Eigen::MatrixXd xs = x.rowwise() - center.transpose();
    Eigen::VectorXd scale = (xs.colwise().squaredNorm() / n).cwiseSqrt().transpose();
    for (int j = 0; j < p; ++j)
      if (!(scale[j] > 0)) scale[j] = 1.0;
    xs = xs * scale.cwiseInverse().asDiagonal();
    const Eigen::VectorXd unit = Eigen::VectorXd::Ones(n), pf1 = Eigen::VectorXd::Ones(p);
    rng::Stream sf(seed, key, 1);
    // folds: a random permutation of rep(0..K-1)
    Eigen::VectorXi fold(n);
    for (int i = 0; i < n; ++i) fold[i] = i % st.nfolds;
    for (int i = n - 1; i > 0; --i) std::swap(fold[i], fold[static_cast<int>(sf.uniform() * (i + 1))]);
    const double lmax = cd::lambda_max(xs, y, cd::Family::gaussian, 1.0, unit, pf1, true);
    const Eigen::VectorXd lseq = cd::lambda_sequence(lmax, st.nlambda, n > p ? 1e-4 : 1e-2);
    parallel::RunSettings one;  // folds on this worker's thread (CV uses no randomness of its own)
    one.seed = seed;
    one.threads = 1;
    const cd::CvResult cv = cd::cross_validate(xs, y, cd::Family::gaussian, 1.0, unit, pf1, fold, lseq, st.cd, one,
                                               [&](std::size_t) { return !stop.stop_requested(); });
    if (cv.status.interrupted) return false;
    const double lam = cv.lambda_min;
    // the T draws: the WBB driver with the elastic-net weighted solver (wbb/glm.hpp), one worker (datasets
    // are the parallel items), draw t keyed by rng::Stream(compare_wbb_seed(seed, key), t)
    wbb::GlmProblem pb{xs, y, cd::Family::gaussian, 1.0, pf1, Eigen::VectorXd::Constant(1, lam), cd::Fit(), st.cd,
                       center, scale, Eigen::VectorXd(), 0, false, cd::MultinomialFit()};
    cd::ElasticNet(xs, y, cd::Family::gaussian, 1.0, st.cd).solve(unit, pf1, lam, pb.warm);
    Eigen::MatrixXd dr(T, p + 1);
    Eigen::VectorXd kkt(T);
    Eigen::VectorXi iters(T), notconv(T);
    wbb::GlmOutput wout{{Eigen::Map<Eigen::MatrixXd>(dr.data(), T, p + 1)}, Eigen::Map<Eigen::VectorXd>(kkt.data(), T),
                        Eigen::Map<Eigen::VectorXi>(iters.data(), T), Eigen::Map<Eigen::VectorXi>(notconv.data(), T)};
    wbb::Settings ws;
    ws.seed = compare_wbb_seed(seed, key);
    ws.draws = static_cast<std::size_t>(T);
    ws.threads = 1;
    ws.prior = wbb::PriorWeights::separate;
    // the stop request reaches the draws through the driver's monitor (polled every 100 ms)
    const parallel::RunStatus wrs = wbb::run_glm(pb, wout, ws, [&](std::size_t) { return !stop.stop_requested(); });
    if (wrs.interrupted || stop.stop_requested()) return false;
    compare_finish(dr, data, out, false, lam, t0);
  }

  if (st.run_blasso) {
    const auto t0 = clock::now();
    BlassoControl bc = compare_blasso_base(st);
    Eigen::VectorXd scale = Eigen::VectorXd::Ones(p);
    Eigen::MatrixXd xb = x;
    if (st.blasso_standardize) {
      scale = l2_column_scale(x);
      xb = x * scale.cwiseInverse().asDiagonal();
    }
    // auto sigma2 prior (as blasso() does): a proper IG(1, 0.1 var(y)) when p >= n unless one is given
    if (bc.sigma2_shape < 0) {
      const double vy = (y.array() - y.mean()).square().sum() / (n - 1.0);
      if (p >= n) {
        bc.sigma2_shape = 1.0;
        bc.sigma2_scale = 0.1 * vy;
      } else {
        bc.sigma2_shape = 0.0;
        bc.sigma2_scale = 0.0;
      }
      bc.sigma2_floor = p >= n ? 1e-10 * vy : 0.0;
    }
    if (bc.thin < 1) bc.thin = std::max(1, std::min(p, n - 1));  // monomvn's default thinning
    if (bc.mode == LambdaMode::em) bc.lambda = 0.0;  // ridge_lambda_start
    rng::Stream sb(seed, key, 2);
    parallel::RunSettings brun;  // one chain on this worker's thread
    brun.seed = sb.next();
    brun.threads = 1;
    // the sampler's own driver polls this run's stop flag every 100 ms (its chain checks it every sweep)
    const BlassoResult r = run_blasso(xb, y, bc, brun, [&](std::size_t) { return !stop.stop_requested(); });
    if (r.interrupted) return false;
    Eigen::MatrixXd dr(T, p + 1);
    dr.col(0) = r.intercept;
    for (int j = 0; j < p; ++j) dr.col(j + 1) = r.beta.col(j) / scale[j];
    compare_finish(dr, data, out + 5, false, r.lambda.mean(), t0);
  }
  return true;
}

// Datasets first .. first + count - 1 of one cell on run.threads threads (dataset b keyed by run.seed); returns
// count x kCompareCols (row-major by dataset).
inline Eigen::MatrixXd run_compare(const CompareCell& c, std::size_t first, std::size_t count,
                                   const CompareSettings& st, const parallel::RunSettings& run,
                                   const parallel::Monitor& monitor, parallel::RunStatus* status = nullptr) {
  Eigen::MatrixXd out(count, kCompareCols);
  out.setConstant(std::numeric_limits<double>::quiet_NaN());
  auto body = [&](std::size_t i, int, const parallel::StopToken& stop) {
    double row[kCompareCols];
    if (!compare_one(c, first + i, st, run.seed, row, stop)) return;
    for (int k = 0; k < kCompareCols; ++k) out(static_cast<Eigen::Index>(i), k) = row[k];
  };
  const parallel::RunStatus rs = parallel::run_parallel(count, run.threads, body, monitor);
  if (status) *status = rs;
  return out;
}

}  // namespace gibbs
}  // namespace scalebayes
