// scalebayes/genlasso/trend_filter.hpp -- weighted trend filtering of order k on sorted x, a lambda path,
// and the weighted Bayesian bootstrap over it (Newton, Polson & Xu 2021, section 3.3).
//
//   minimize_beta 1/2 sum_i w_i (y_i - beta_i)^2 + lambda sum_j w0_j |(D^{(x,k+1)} beta)_j|
//
// k = 0: exact weighted fused-lasso dynamic programming (fused_dp.hpp), O(n).
// k >= 1 (or on request for k = 0): the interior points of banded_solve.hpp (primal, escalated primal, dual
// fallback; O(n k^2) per Newton step, stopped at a certified relative duality gap).
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <memory>

#include "../parallel/driver.hpp"
#include "../rng/stream.hpp"
#include "../wbb/driver.hpp"
#include "difference.hpp"
#include "banded_solve.hpp"
#include "certificate.hpp"
#include "fused_dp.hpp"
#include "ip_types.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace genlasso {

enum class TFMethod { Auto = 0, DP = 1, IP = 2 };
inline constexpr EnumTable<TFMethod, 3> tf_method_names{
    "method", {{{"auto", TFMethod::Auto}, {"dp", TFMethod::DP}, {"ip", TFMethod::IP}}}};
constexpr const auto& enum_table(TFMethod) { return tf_method_names; }

// One weighted solve. lam: per-difference penalties (length m). op: a BandedOp on D whose weights may
// already be set (weights_set = true) so that a lambda path reuses the Gram matrix.
inline IPResult solve_trend_filter(const BandedD& D, int k, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                   const Eigen::VectorXd& lam, TFMethod method, const IPControl& ctl,
                                   const Eigen::VectorXd* u_start = nullptr) {
  if (y.size() != D.n || w.size() != D.n) throw std::invalid_argument("y and weights must have length n");
  if (lam.size() != D.m) throw std::invalid_argument("lambda must have one entry per difference");
  for (int i = 0; i < D.n; ++i)
    if (!(w[i] > 0) || !std::isfinite(w[i])) throw std::invalid_argument("weights must be positive and finite");
  const bool dp = (method == TFMethod::DP) || (method == TFMethod::Auto && k == 0);
  if (dp) {
    if (k != 0) throw std::invalid_argument("the dynamic programming solver is for k = 0 only");
    IPResult r;
    r.beta.resize(D.n);
    fused_lasso_dp(D.n, y.data(), w.data(), lam.data(), r.beta.data());
    // dual certificate: D' u = W (y - beta)
    Eigen::VectorXd res = w.cwiseProduct(y - r.beta);
    r.u = solve_dt(D, res);
    certify(D, y, w, lam, r);
    r.iter = 0;
    r.converged = true;
    return r;
  }
  ScaledD S(D);
  BandedOp local(S.D);
  return solve_scaled_ip(S, local, y, w, lam, ctl, u_start, false);
}

// Degrees of freedom of a trend-filtering fit (Tibshirani & Taylor 2011): knots + k + 1. A knot is a
// difference whose dual variable sits on the box (|u_j| >= (1 - 1e-6) lam_j) and whose jump is not rounding
// noise (|(D beta)_j| > noise; callers pass 1e-12 max_j |(D y)_j|). D unscaled; lam_j = lambda w0_j.
inline int trend_filter_df(const BandedD& D, int k, const double* beta, const double* u, double lambda,
                           const Eigen::VectorXd& w0, double noise) {
  std::vector<double> z(static_cast<std::size_t>(D.m));
  D.apply(beta, z.data());
  int knots = 0;
  for (int j = 0; j < D.m; ++j) {
    const double lj = lambda * (w0.size() == 1 ? w0[0] : w0[j]);
    if (std::abs(u[j]) >= (1 - 1e-6) * lj && std::abs(z[static_cast<std::size_t>(j)]) > noise) ++knots;
  }
  return knots + k + 1;
}

// Solutions along a decreasing lambda sequence (warm-started from the previous dual solution).
// w0: length 1 (common) or m (per difference).
inline PathResult trend_filter_path(const BandedD& D, int k, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                    const Eigen::VectorXd& w0, const Eigen::VectorXd& lambdas, TFMethod method,
                                    const IPControl& ctl, bool warm = true,
                                    const Eigen::VectorXd* u_unconstrained = nullptr,
                                    const Eigen::VectorXd* beta_poly = nullptr, const StopFn& stop = StopFn()) {
  // beta_poly: the weighted polynomial fit of degree k (poly_projection()); u_unconstrained: its dual
  // (unconstrained_dual()). Where that dual is feasible, |u_j| <= lam_j for all j (lambda >= lambda_max), the
  // polynomial fit is optimal and is returned exactly instead of by the interior point (whose barrier is
  // poorly scaled far above lambda_max).
  const int L = static_cast<int>(lambdas.size());
  PathResult out(D.n, D.m, L);
  ScaledD S(D);
  BandedOp op(S.D);
  Eigen::VectorXd winv = w.cwiseInverse();
  const bool dp = (method == TFMethod::DP) || (method == TFMethod::Auto && k == 0);
  if (!dp) op.set_weights(winv.data());
  Eigen::VectorXd lam(D.m), uprev;
  for (int l = 0; l < L; ++l) {
    if (stop && stop()) {  // between lambda values
      out.interrupted = true;
      break;
    }
    const double lambda = lambdas[l];
    if (!(lambda >= 0) || !std::isfinite(lambda)) throw std::invalid_argument("lambda must be finite and >= 0");
    for (int j = 0; j < D.m; ++j) lam[j] = lambda * (w0.size() == 1 ? w0[0] : w0[j]);
    Eigen::VectorXd ws;
    const Eigen::VectorXd* start = nullptr;
    if (warm && l > 0) {
      const double ratio = lambdas[l - 1] > 0 ? lambda / lambdas[l - 1] : 0.0;
      ws = uprev * ratio;
      start = &ws;
    }
    bool feasible = u_unconstrained != nullptr && beta_poly != nullptr && u_unconstrained->size() == D.m;
    for (int j = 0; feasible && j < D.m; ++j) feasible = std::abs((*u_unconstrained)[j]) <= lam[j];
    IPResult r;
    if (feasible) {
      r.u = *u_unconstrained;
      r.beta = *beta_poly;
      // Optimal by construction: D beta = 0 (a polynomial of degree k), D'u = W (y - beta), |u| <= lam. The
      // numerical certificate would only measure lam_j times the rounding in D beta (large for lam >> 1 or
      // very uneven x), so the gap is reported as exactly 0.
      r.primal = 0.5 * (w.array() * (y - r.beta).array().square()).sum();
      r.gap = 0.0;
      r.rel_gap = 0.0;
      r.iter = 0;
      r.converged = true;
    } else {
      r = dp ? solve_trend_filter(D, k, y, w, lam, method, ctl) : solve_scaled_ip(S, op, y, w, lam, ctl, start, true);
    }
    out.store(l, r);
    uprev = r.u;
  }
  return out;
}

struct TFFit {
  PathResult path;
  Eigen::VectorXi df;        // degrees of freedom per lambda (trend_filter_df)
  double lambda_max = 0;     // exact lambda_max (from the dual of the polynomial fit)
};

// A trend-filtering fit along a lambda path, as R's trend_filter() needs it: D^(x,k+1), the polynomial fit and
// its dual (returned exactly above lambda_max), the path, degrees of freedom per lambda and lambda_max.
// w0: penalty weights (length 1 or n-k-1). stop: polled between lambda values.
inline TFFit trend_filter_fit(const Eigen::VectorXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& w, int k,
                              const Eigen::VectorXd& w0, const Eigen::VectorXd& lambdas, TFMethod method,
                              const IPControl& ctl, bool warm, const StopFn& stop = StopFn()) {
  BandedD D = make_difference(x, k);
  if (w0.size() != 1 && w0.size() != D.m) throw std::invalid_argument("penalty weights must have length 1 or n-k-1");
  const Eigen::VectorXd u0 = unconstrained_dual(D, y, x, w, k);
  const Eigen::VectorXd b0 = poly_projection(y, x, w, k);
  TFFit fit;
  fit.path = trend_filter_path(D, k, y, w, w0, lambdas, method, ctl, warm, &u0, &b0, stop);
  // degrees of freedom per lambda; a jump is rounding noise below 1e-12 max_j |(D y)_j|
  Eigen::VectorXd dy(D.m);
  D.apply(y.data(), dy.data());
  const double noise = 1e-12 * std::max(dy.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  fit.df.setZero(lambdas.size());
  for (int l = 0; l < fit.path.completed; ++l)
    fit.df[l] = trend_filter_df(D, k, fit.path.beta.col(l).data(), fit.path.u.col(l).data(), lambdas[l], w0, noise);
  fit.lambda_max = lambda_max_from_dual(u0, w0);
  return fit;
}

// Cross-validation paths: the lambda path of every fold (fold[i] in 1..nfolds: the fold that holds example i
// out; 0: always kept) and, with include_full, of all data (item nfolds), each a trend_filter_fit() on its
// training examples, run in parallel on `threads` workers (parallel::run_parallel; items are independent
// and deterministic, so the result does not depend on `threads`). The solver is a primal interior point,
// which does not use warm starts (measured: the same Newton steps with warm = true / false), so the folds are
// spread over the workers instead. `solved` (optional) counts the lambda values begun, for a display on the
// main thread; the monitor is polled there, and a stop request reaches the workers between lambda values
// (an interrupted item keeps `completed` < lambdas.size()).
struct TFCVPaths {
  std::vector<TFFit> fits;  // fits[f] for fold f + 1 (f < nfolds), fits[nfolds] the full-data fit
  parallel::RunStatus status;
};
inline TFCVPaths trend_filter_cv_paths(const Eigen::VectorXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                       int k, const Eigen::VectorXd& w0, const Eigen::VectorXd& lambdas,
                                       const std::vector<int>& fold, int nfolds, bool include_full, TFMethod method,
                                       const IPControl& ctl, bool warm, int threads,
                                       std::atomic<long>* solved = nullptr,
                                       const parallel::Monitor& monitor = parallel::Monitor()) {
  if (static_cast<Eigen::Index>(fold.size()) != y.size()) throw std::invalid_argument("fold must have length n");
  TFCVPaths out;
  const std::size_t items = static_cast<std::size_t>(nfolds) + (include_full ? 1u : 0u);
  out.fits.resize(items);
  auto body = [&](std::size_t f, int, const parallel::StopToken& stop) {
    const bool full = static_cast<int>(f) == nfolds;
    std::vector<Eigen::Index> keep;
    for (Eigen::Index i = 0; i < y.size(); ++i)
      if (full || fold[static_cast<std::size_t>(i)] != static_cast<int>(f) + 1) keep.push_back(i);
    const Eigen::Index nt = static_cast<Eigen::Index>(keep.size());
    Eigen::VectorXd xf(nt), yf(nt), wf(nt);
    for (Eigen::Index j = 0; j < nt; ++j) {
      xf[j] = x[keep[static_cast<std::size_t>(j)]];
      yf[j] = y[keep[static_cast<std::size_t>(j)]];
      wf[j] = w[keep[static_cast<std::size_t>(j)]];
    }
    // the fold's penalty weights: per difference only for the full data (cv_trend_filter() gives one otherwise)
    const Eigen::VectorXd w0f = (full || w0.size() == 1) ? w0 : Eigen::VectorXd::Constant(1, w0[0]);
    StopFn poll = [&]() {
      if (solved) solved->fetch_add(1, std::memory_order_relaxed);
      return stop.stop_requested();
    };
    out.fits[f] = trend_filter_fit(xf, yf, wf, k, w0f, lambdas, method, ctl, warm, poll);
  };
  out.status = parallel::run_parallel(items, threads, body, monitor);
  return out;
}

// Weighted Bayesian bootstrap: the weighted solver that wbb::run_draws() (wbb/driver.hpp) calls per draw.
// Draw t gets w_i ~ Exp(1) (n) and the prior weight(s) w0 ~ Exp(1) (one for PriorWeights::common, one per
// difference for separate) from the driver's stream rng::Stream(seed, t), and solves
//   min 1/2 sum_i w_i (y_i - beta_i)^2 + lambda sum_j w0_j |(D beta)_j|.
// The warm start u_hat (the dual solution of the unweighted problem, or empty) times the common w0 is the
// same for every draw, so results do not depend on the number of threads. Each draw's fitted curve is
// written into row i of the caller's draws x n matrix.
struct TFWBBProblem {
  const BandedD& D;
  const ScaledD& S;
  int k;
  const Eigen::VectorXd& y;
  double lambda;
  TFMethod method;
  IPControl ctl;
  const Eigen::VectorXd& u_hat;
};

struct TFWBBOutput {
  Eigen::Map<Eigen::MatrixXd> draws;  // draws x n
  Eigen::Map<Eigen::VectorXd> rel_gap;
  Eigen::Map<Eigen::VectorXi> iter;
  Eigen::Map<Eigen::VectorXd> w0;     // the common prior weight of each draw (NaN for separate)
};

class TFWBBSolver {
 public:
  TFWBBSolver(const TFWBBProblem& pb, TFWBBOutput& out) : pb_(pb), out_(out), lam_(pb.D.m) {}
  Eigen::Index n_obs() const { return pb_.D.n; }
  Eigen::Index n_prior() const { return pb_.D.m; }
  void solve(std::size_t t, const Eigen::VectorXd& w, const Eigen::VectorXd& w0, rng::Stream&) {
    const int m = pb_.D.m;
    const Eigen::Index r = static_cast<Eigen::Index>(t);
    double scale = 1.0;
    if (w0.size() == m) {
      for (int j = 0; j < m; ++j) lam_[j] = pb_.lambda * w0[j];
      out_.w0[r] = NAN;
    } else {
      scale = w0.size() == 1 ? w0[0] : 1.0;
      out_.w0[r] = w0.size() == 1 ? w0[0] : NAN;
      lam_.setConstant(pb_.lambda * scale);
    }
    Eigen::VectorXd start;
    const Eigen::VectorXd* sp = nullptr;
    if (pb_.u_hat.size() == m) {
      start = pb_.u_hat * scale;
      sp = &start;
    }
    IPResult res;
    if (pb_.k == 0 && pb_.method != TFMethod::IP) {
      res = solve_trend_filter(pb_.D, pb_.k, pb_.y, w, lam_, pb_.method, pb_.ctl, sp);
    } else {
      BandedOp op(pb_.S.D);
      res = solve_scaled_ip(pb_.S, op, pb_.y, w, lam_, pb_.ctl, sp, false);
    }
    out_.draws.row(r) = res.beta.transpose();
    out_.rel_gap[r] = res.rel_gap;
    out_.iter[r] = res.iter;
  }

 private:
  const TFWBBProblem& pb_;
  TFWBBOutput& out_;
  Eigen::VectorXd lam_;
};

// Draws st.first_draw .. + st.draws - 1 into `out` (st.prior: common or separate).
inline parallel::RunStatus trend_filter_wbb(const TFWBBProblem& pb, TFWBBOutput& out, const wbb::Settings& st,
                                            const parallel::Monitor& monitor = parallel::Monitor()) {
  return wbb::run_draws(st, [&](int) { return std::unique_ptr<TFWBBSolver>(new TFWBBSolver(pb, out)); }, monitor);
}

}  // namespace genlasso
}  // namespace scalebayes
