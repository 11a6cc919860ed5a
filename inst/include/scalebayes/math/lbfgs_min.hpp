// scalebayes/math/lbfgs_min.hpp -- a deterministic L-BFGS minimizer with a strong-Wolfe line search.
//
// lbfgs_minimize(f, x, options, stop) minimizes f starting from x (overwritten with the result). f is any callable
//   double f(const Eigen::VectorXd& x, Eigen::VectorXd& grad)
// returning the value and writing the gradient (grad has x's size). A non-finite value or gradient at a trial point
// is read as "too far": the line search shrinks the step. stop() (optional) is polled once per iteration; returning
// true ends the run with status `stopped`.
//
// Algorithm (Nocedal & Wright, Numerical Optimization, 2nd ed.): the two-loop recursion (Alg. 7.4) over the last
// `memory` pairs (s, y) with H0 = (s'y / y'y) I from the newest pair (eq. 7.20); a pair with s'y <= 1e-10 |s||y|
// is not stored (the memory stays positive definite). The line search is Alg. 3.5 (bracketing) with the zoom of
// Alg. 3.6 using safeguarded cubic interpolation (eq. 3.59; bisection when the cubic is not usable or an end point
// is not finite), strong Wolfe constants c1 = 1e-4, c2 = 0.9, trial step 1 (first iteration: 1 / ||g||_2); a
// point within 1e-12 max(1, |f0|) of f0 that meets the curvature condition is accepted too (Hager & Zhang's
// approximate Wolfe test: near the minimum the decrease is below the rounding of f, the gradient is not). If the
// search fails along an L-BFGS direction, the memory is cleared and steepest descent is tried once before the run
// reports `line_search_failed`; a failed search that still found a sufficient decrease takes that step.
//
// Convergence: max_j |g_j| <= tol * max(1, min(|f|, f_cap)) (checked at the start point too; f_cap = inf by
// default). R's wbb(loss = ) sets f_cap from the loss's scale at the start, so that a loss without a minimum,
// -sum(theta), cannot pass the test by |f| growing without bound. Status codes are stable (they
// are returned to R as integers): converged 0, max_iterations 1, line_search_failed 2, non_finite 3 (the start
// point has a non-finite value or gradient), stopped 4.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace scalebayes {
namespace math {

enum class LbfgsStatus { converged = 0, max_iterations = 1, line_search_failed = 2, non_finite = 3, stopped = 4 };

inline const char* lbfgs_status_name(LbfgsStatus s) {
  switch (s) {
    case LbfgsStatus::converged: return "converged";
    case LbfgsStatus::max_iterations: return "max_iterations";
    case LbfgsStatus::line_search_failed: return "line_search_failed";
    case LbfgsStatus::non_finite: return "non_finite";
    case LbfgsStatus::stopped: return "stopped";
  }
  return "unknown";
}

struct LbfgsOptions {
  int memory = 10;         // m: pairs kept
  int max_iter = 1000;     // iterations (directions) at most
  double tol = 1e-8;       // convergence: max|g| <= tol * max(1, min(|f|, f_cap))
  double f_cap = std::numeric_limits<double>::infinity();  // the largest value scale the test uses
  double c1 = 1e-4;        // sufficient decrease
  double c2 = 0.9;         // curvature (strong Wolfe)
  int max_linesearch = 60; // evaluations per line search at most
};

struct LbfgsResult {
  LbfgsStatus status = LbfgsStatus::max_iterations;
  int iterations = 0;   // directions taken (accepted steps)
  int evaluations = 0;  // calls of f
  double value = std::numeric_limits<double>::quiet_NaN();
  double grad_max = std::numeric_limits<double>::quiet_NaN();  // max|g| at x
};

namespace lbfgs_detail {

inline bool finite_all(const Eigen::VectorXd& v) { return v.allFinite(); }

// Minimizer of the cubic through (a, fa, da) and (b, fb, db), kept inside [a, b] by a 10 % margin; bisection
// when the cubic has no real minimizer there or an input is not finite.
inline double cubic_min(double a, double fa, double da, double b, double fb, double db) {
  const double lo = std::min(a, b), hi = std::max(a, b), width = hi - lo;
  const double mid = 0.5 * (a + b);
  if (!std::isfinite(fa) || !std::isfinite(fb) || !std::isfinite(da) || !std::isfinite(db) || width <= 0) return mid;
  const double d1 = da + db - 3.0 * (fa - fb) / (a - b);
  const double disc = d1 * d1 - da * db;
  if (!(disc >= 0)) return mid;
  const double d2 = (b > a ? 1.0 : -1.0) * std::sqrt(disc);
  const double den = db - da + 2.0 * d2;
  if (den == 0 || !std::isfinite(den)) return mid;
  double t = b - (b - a) * (db + d2 - d1) / den;
  if (!std::isfinite(t)) return mid;
  const double margin = 0.1 * width;
  return std::min(std::max(t, lo + margin), hi - margin);
}

struct Point {
  double alpha = 0, f = 0, d = 0;  // step, value, directional derivative
};

}  // namespace lbfgs_detail

// Line search along d from x (value f0, gradient g0, directional derivative d0 < 0). On success x1, f1, g1 hold
// the accepted point and the return is true.
template <class F>
bool strong_wolfe_search(F& f, const Eigen::VectorXd& x, double f0, double d0, const Eigen::VectorXd& d,
                         double alpha1, const LbfgsOptions& opt, Eigen::VectorXd& x1, double& f1,
                         Eigen::VectorXd& g1, int& evals) {
  using lbfgs_detail::Point;
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::VectorXd gt(x.size());
  Point best;  // the best point with sufficient decrease seen (alpha 0: none)
  Eigen::VectorXd xb, gb;
  double fb = f0;
  auto eval = [&](double a, Point& p) {
    x1.noalias() = x + a * d;
    p.alpha = a;
    p.f = f(x1, gt);
    ++evals;
    p.d = gt.dot(d);
    if (!std::isfinite(p.f) || !std::isfinite(p.d) || !lbfgs_detail::finite_all(gt)) {
      p.f = inf;
      p.d = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (p.f <= f0 + opt.c1 * a * d0 && p.f < fb) {
      best = p;
      fb = p.f;
      xb = x1;
      gb = gt;
    }
  };
  auto accept = [&](const Point& p) {
    f1 = p.f;
    g1 = gt;  // x1 holds the point just evaluated
    (void)p;
    return true;
  };
  // the approximate Wolfe test (Hager & Zhang 2005): near a minimizer the decrease of f drowns in rounding, so a
  // point whose value is within rounding of f0 is accepted on the (accurate) curvature condition alone
  const double f_eps = 1e-12 * std::max(1.0, std::abs(f0));
  auto approx_ok = [&](const Point& p) { return p.f <= f0 + f_eps && std::abs(p.d) <= -opt.c2 * d0; };
  auto zoom = [&](Point lo, Point hi) -> bool {
    while (evals < opt.max_linesearch) {
      const double width = std::abs(hi.alpha - lo.alpha);
      if (width <= 1e-16 * std::max(1.0, std::abs(lo.alpha))) break;
      const double a = lbfgs_detail::cubic_min(lo.alpha, lo.f, lo.d, hi.alpha, hi.f, hi.d);
      Point p;
      eval(a, p);
      if (approx_ok(p)) return accept(p);
      if (!(p.f <= f0 + opt.c1 * a * d0) || p.f >= lo.f) {
        hi = p;
      } else {
        if (std::abs(p.d) <= -opt.c2 * d0) return accept(p);
        if (p.d * (hi.alpha - lo.alpha) >= 0) hi = lo;
        lo = p;
      }
    }
    return false;
  };
  Point prev{0.0, f0, d0};
  double a = alpha1;
  bool ok = false;
  for (int i = 0; evals < opt.max_linesearch; ++i) {
    Point p;
    eval(a, p);
    if (approx_ok(p)) {
      ok = accept(p);
      break;
    }
    if (!(p.f <= f0 + opt.c1 * a * d0) || (i > 0 && p.f >= prev.f)) {
      ok = zoom(prev, p);
      break;
    }
    if (std::abs(p.d) <= -opt.c2 * d0) {
      ok = accept(p);
      break;
    }
    if (p.d >= 0) {
      ok = zoom(p, prev);
      break;
    }
    prev = p;
    a *= 2.0;
  }
  if (ok) return true;
  if (best.alpha > 0) {  // no strong-Wolfe point, but a sufficient decrease: take it
    x1 = xb;
    g1 = gb;
    f1 = best.f;
    return true;
  }
  return false;
}

// Minimizes f from x (overwritten). See the file comment.
template <class F>
LbfgsResult lbfgs_minimize(F&& f, Eigen::VectorXd& x, const LbfgsOptions& opt = LbfgsOptions(),
                           const std::function<bool()>& stop = std::function<bool()>()) {
  LbfgsResult res;
  const Eigen::Index n = x.size();
  const int m = std::max(1, opt.memory);
  Eigen::VectorXd g(n), d(n), x1(n), g1(n);
  double fx = f(x, g);
  res.evaluations = 1;
  res.value = fx;
  if (!std::isfinite(fx) || !g.allFinite()) {
    res.status = LbfgsStatus::non_finite;
    res.grad_max = g.allFinite() ? g.lpNorm<Eigen::Infinity>() : std::numeric_limits<double>::infinity();
    return res;
  }
  res.grad_max = n ? g.lpNorm<Eigen::Infinity>() : 0.0;
  std::vector<Eigen::VectorXd> S(static_cast<std::size_t>(m)), Y(static_cast<std::size_t>(m));
  std::vector<double> rho(static_cast<std::size_t>(m)), alpha(static_cast<std::size_t>(m));
  int count = 0, newest = -1;  // pairs stored; index of the newest in the ring
  for (;;) {
    if (res.grad_max <= opt.tol * std::max(1.0, std::min(std::abs(fx), opt.f_cap))) {
      res.status = LbfgsStatus::converged;
      return res;
    }
    if (res.iterations >= opt.max_iter) {
      res.status = LbfgsStatus::max_iterations;
      return res;
    }
    if (stop && stop()) {
      res.status = LbfgsStatus::stopped;
      return res;
    }
    bool moved = false;
    for (int attempt = 0; attempt < 2 && !moved; ++attempt) {
      // direction: -H g by the two-loop recursion (steepest descent with an empty memory)
      d = -g;
      double a1 = 1.0;
      if (count > 0) {
        for (int k = 0; k < count; ++k) {
          const int j = (newest - k + m) % m;
          alpha[j] = rho[j] * S[j].dot(d);
          d.noalias() -= alpha[j] * Y[j];
        }
        d *= S[newest].dot(Y[newest]) / Y[newest].squaredNorm();
        for (int k = count - 1; k >= 0; --k) {
          const int j = (newest - k + m) % m;
          const double b = rho[j] * Y[j].dot(d);
          d.noalias() += (alpha[j] - b) * S[j];
        }
      } else {
        a1 = 1.0 / std::max(g.norm(), std::numeric_limits<double>::min());
        a1 = std::min(1.0, a1);
      }
      double d0 = g.dot(d);
      if (!(d0 < 0) || !d.allFinite()) {  // not a descent direction (rounding): restart from steepest descent
        count = 0;
        continue;
      }
      int evals = 0;
      double f1 = fx;
      if (strong_wolfe_search(f, x, fx, d0, d, a1, opt, x1, f1, g1, evals)) {
        moved = true;
        res.evaluations += evals;
        Eigen::VectorXd s = x1 - x, y = g1 - g;
        const double sy = s.dot(y);
        if (sy > 1e-10 * s.norm() * y.norm() && sy > 0) {
          newest = (newest + 1) % m;
          S[newest] = std::move(s);
          Y[newest] = std::move(y);
          rho[newest] = 1.0 / sy;
          count = std::min(count + 1, m);
        }
        x.swap(x1);
        g.swap(g1);
        fx = f1;
      } else {
        res.evaluations += evals;
        if (count == 0) break;  // steepest descent failed too
        count = 0;
      }
    }
    if (!moved) {
      res.status = LbfgsStatus::line_search_failed;
      res.value = fx;
      res.grad_max = g.lpNorm<Eigen::Infinity>();
      return res;
    }
    ++res.iterations;
    res.value = fx;
    res.grad_max = g.lpNorm<Eigen::Infinity>();
  }
}

}  // namespace math
}  // namespace scalebayes
