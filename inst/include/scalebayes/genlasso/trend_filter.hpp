// scalebayes/genlasso/trend_filter.hpp -- weighted trend filtering of order k on sorted x, a lambda path,
// and the weighted Bayesian bootstrap over it (Newton, Polson & Xu 2021, section 3.3).
//
//   minimize_beta 1/2 sum_i w_i (y_i - beta_i)^2 + lambda sum_j w0_j |(D^{(x,k+1)} beta)_j|
//
// k = 0: exact weighted fused-lasso dynamic programming (fused_dp.hpp), O(n).
// k >= 1 (or on request for k = 0): primal-dual interior point on the primal with banded Givens QR steps
// (primal_ip.hpp), then, if that stops short of the target, the interior point on the dual (dual_ip.hpp);
// O(n k^2) per Newton step, stopped at a certified relative duality gap (the better certificate is kept).
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <memory>

#include "../parallel/driver.hpp"
#include "../rng/stream.hpp"
#include "../wbb/driver.hpp"
#include "difference.hpp"
#include "dual_ip.hpp"
#include "fused_dp.hpp"
#include "primal_ip.hpp"

namespace scalebayes {
namespace genlasso {

enum class TFMethod { Auto = 0, DP = 1, IP = 2 };

// Certified gap for a primal point beta with dual u: gap = sum_j lam_j |(D beta)_j| - u_j (D beta)_j.
inline void certify(const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w, const Eigen::VectorXd& lam,
                    IPResult& r) {
  Eigen::VectorXd z(D.m);
  D.apply(r.beta.data(), z.data());
  double loss = 0.0, pen = 0.0, g = 0.0;
  for (int i = 0; i < D.n; ++i) loss += w[i] * (y[i] - r.beta[i]) * (y[i] - r.beta[i]);
  for (int j = 0; j < D.m; ++j) {
    pen += lam[j] * std::abs(z[j]);
    g += lam[j] * std::abs(z[j]) - r.u[j] * z[j];
  }
  r.primal = 0.5 * loss + pen;
  r.gap = std::max(g, 0.0);
  r.rel_gap = r.gap / std::max(r.primal, static_cast<double>(gap_floor(y, w)));
}

// D with rows scaled to unit max-norm: D~ = diag(r) D, r_j = 1 / max_l |D_jl|. The problem with D~ and
// lam~_j = lam_j / r_j is the same problem; the dual variables are u = diag(r) u~. For unevenly spaced x the
// rows of D^{(x,k+1)} differ by many orders of magnitude and the interior point needs this balancing.
struct ScaledD {
  BandedD D;
  Eigen::VectorXd r;
  explicit ScaledD(const BandedD& D0) : D(D0), r(D0.m) {
    for (int i = 0; i < D.m; ++i) {
      double mx = 0.0;
      for (int l = 0; l < D.width; ++l) mx = std::max(mx, std::abs(D.at(i, l)));
      r[i] = mx > 0 ? 1.0 / mx : 1.0;
      for (int l = 0; l < D.width; ++l) D.c[static_cast<std::size_t>(i) * D.width + l] *= r[i];
    }
  }
};

// The representability floor of a certificate: rounding each beta_i to double (relative error <= 2^-53) can
// change the penalty by up to 2^-53 sum_j lam_j sum_l |D_jl| |beta_{j+l}|. For k >= 2 and large n the optimal
// lambda makes this bound exceed 1e-8 P (the (k+1)-th differences of a smooth double-precision curve are
// rounding noise), and no solver that returns doubles can certify a smaller relative gap. Reported with
// every solve so that such a gap is not mistaken for a solver failure.
inline double rounding_floor(const BandedD& D, const Eigen::VectorXd& beta, const Eigen::VectorXd& lam, double primal) {
  double s = 0.0;
  for (int j = 0; j < D.m; ++j) {
    double t = 0.0;
    for (int l = 0; l < D.width; ++l) t += std::abs(D.at(j, l)) * std::abs(beta[j + l]);
    s += lam[j] * t;
  }
  return std::ldexp(s, -53) / std::max(primal, std::numeric_limits<double>::min());
}

// Interior point on the scaled problem; returns u and the certificate in the original scale.
inline IPResult solve_scaled_ip(const ScaledD& S, BandedOp& op, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                const Eigen::VectorXd& lam, const IPControl& ctl, const Eigen::VectorXd* u_start,
                                bool weights_set) {
  Eigen::VectorXd lt = lam.cwiseQuotient(S.r);
  Eigen::VectorXd us;
  const Eigen::VectorXd* sp = nullptr;
  if (u_start && u_start->size() == S.D.m) {
    us = u_start->cwiseQuotient(S.r);
    sp = &us;
  }
  IPResult r;
  if (ctl.primal_first) {
    r = primal_ip(op, S.D, y, w, lt, ctl);
    // Short of the target and of what rounding beta to double permits: again with the precision escalation on
    // lost directions (Givens path). Not from the start: on n = 1e4, k = 3 with Exp(1) weights the first run's
    // iterate diverges but its polish certifies 4e-10, the escalated run's only 4e-7; on the benchmark's
    // n = 1e5, k = 2 (3.98e-5 after 73 steps) and k = 3 (0.65) the escalated run certifies 3e-11 in 30 steps
    // and 9.5e-3 (the rounding floor, 1.1e-2) in 11 steps.
    auto short_of_floor = [&](const IPResult& x) {
      return !x.converged && !(x.rel_gap <= 2.0 * rounding_floor(S.D, x.beta, lt, x.primal));
    };
    if (short_of_floor(r)) {
      IPControl ce = ctl;
      ce.escalate = true;
      ce.newton = 1;
      IPResult e = primal_ip(op, S.D, y, w, lt, ce);
      e.iter += r.iter;
      if (e.rel_gap < r.rel_gap) r = e;
      else r.iter = e.iter;
    }
    // the dual interior point only where both stopped short of that floor (measured: n = 1e5, k = 3, where the
    // floor is 1e-2, the dual added 17 steps and never improved on it)
    if (short_of_floor(r)) {
      IPResult d = dual_ip(op, y, w, lt, ctl, sp, false);
      // the dual interior point certifies its long-double pair; report the certificate of the pair returned
      // (they differ where rounding to double matters: k = 3, n = 1e6)
      LD dp = 0, dg = 0;
      certify_pair_ld(S.D, y, w, lt, d.beta, d.u, dp, dg);
      d.primal = static_cast<double>(dp);
      d.gap = static_cast<double>(dg);
      d.rel_gap = static_cast<double>(dg / std::max(dp, gap_floor(y, w)));
      d.converged = d.rel_gap <= ctl.tol;
      d.iter += r.iter;
      if (d.rel_gap < r.rel_gap) r = d;
      else r.iter = d.iter;
    }
  } else {
    r = dual_ip(op, y, w, lt, ctl, sp, weights_set);
  }
  r.u = r.u.cwiseProduct(S.r);
  r.rounding_rel = rounding_floor(S.D, r.beta, lt, r.primal);
  return r;
}

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

struct PathResult {
  Eigen::MatrixXd beta;   // n x L
  Eigen::VectorXd gap, rel_gap, primal, rounding_rel;
  Eigen::VectorXi iter;
  Eigen::MatrixXd u;      // m x L (dual solutions, for warm starts)
};

// Solutions along a decreasing lambda sequence (warm-started from the previous dual solution).
// w0: length 1 (common) or m (per difference).
inline PathResult trend_filter_path(const BandedD& D, int k, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                    const Eigen::VectorXd& w0, const Eigen::VectorXd& lambdas, TFMethod method,
                                    const IPControl& ctl, bool warm = true,
                                    const Eigen::VectorXd* u_unconstrained = nullptr,
                                    const Eigen::VectorXd* beta_poly = nullptr) {
  // beta_poly: the weighted polynomial fit of degree k (poly_projection()); u_unconstrained: its dual
  // (unconstrained_dual()). Where that dual is feasible, |u_j| <= lam_j for all j (lambda >= lambda_max), the
  // polynomial fit is optimal and is returned exactly instead of by the interior point (whose barrier is
  // poorly scaled far above lambda_max).
  const int L = static_cast<int>(lambdas.size());
  PathResult out;
  out.beta.resize(D.n, L);
  out.u.resize(D.m, L);
  out.gap.resize(L);
  out.rel_gap.resize(L);
  out.primal.resize(L);
  out.rounding_rel.resize(L);
  out.iter.resize(L);
  ScaledD S(D);
  BandedOp op(S.D);
  Eigen::VectorXd winv = w.cwiseInverse();
  const bool dp = (method == TFMethod::DP) || (method == TFMethod::Auto && k == 0);
  if (!dp) op.set_weights(winv.data());
  Eigen::VectorXd lam(D.m), uprev;
  for (int l = 0; l < L; ++l) {
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
    out.beta.col(l) = r.beta;
    out.u.col(l) = r.u;
    out.gap[l] = r.gap;
    out.rel_gap[l] = r.rel_gap;
    out.primal[l] = r.primal;
    out.rounding_rel[l] = r.rounding_rel;
    out.iter[l] = r.iter;
    uprev = r.u;
  }
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
