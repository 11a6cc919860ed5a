// scalebayes/genlasso/glm_trend.hpp -- Poisson and logistic (binomial) trend filtering of order k, a lambda
// path, and the weighted Bayesian bootstrap over it.
//
//   minimize_beta  sum_i w_i (a_i b(beta_i) - y_i beta_i) + sum_j lam_j |(D^{(x,k+1)} beta)_j|,
//
//   Poisson:  b = exp,              a_i = exposure, y_i = count      (mean a_i exp(beta_i): beta = log rate)
//   binomial: b(t) = log(1 + e^t),  a_i = trials,   y_i = successes  (mean a_i plogis(beta_i): beta = log odds)
//
// (glmgen's parameterization with weights w_i a_i and responses y_i / a_i is the same problem.)
//
// Algorithm: proximal Newton (Lee, Sun & Saunders 2014). At beta, the smooth part is replaced by its second-order
// model, which is a weighted Gaussian trend filter with working response z = beta - g / h and working weights h
// (g, h: gradient and diagonal Hessian of the loss; h floored at 1e-12 max h), solved by solve_trend_filter()
// (exact DP for k = 0, the certified interior points of banded_solve.hpp for k >= 1, warm-started from the
// previous inner dual). The direction d = beta_model - beta is taken with a backtracking (Armijo) line search on
// the true objective with the proximal-Newton decrease Delta = g'd + pen(beta + d) - pen(beta) <= 0, so every
// accepted step decreases the objective.
//
// Certificate (what is certified): after each step, the pair (beta, u), u the inner dual clipped to the box
// |u_j| <= lam_j, is a primal point and a feasible dual point of the GLM problem; its duality gap
//
//   gap = sum_i c_i KL_i + sum_j (lam_j |z_j| - u_j z_j),   c_i = w_i a_i,  z = D beta,  v = W y - D'u,
//   KL_i = Poisson:  e_i - q_i + q_i log(q_i / e_i)  with e_i = exp(beta_i), q_i = v_i / c_i
//          binomial: q log(q / p) + (1 - q) log((1 - q) / (1 - p))  with p = plogis(beta_i), q_i = v_i / c_i
//
// (the Fenchel-Young gaps of the loss terms and of the penalty; every term is >= 0, +inf when v leaves the
// conjugate's domain) bounds P(beta) - P* from above. The outer loop stops when gap / max(P(beta), floor) <= tol,
// P the objective with the loss written as half the deviance (so P >= 0, as the Gaussian 1/2 RSS + pen; the
// shift does not change the gap), floor = 1e-10 times half the null deviance. The gap is accumulated in long double.
// Near the optimum the inner dual of the model at beta_t, paired with beta_{t+1}, has stationarity residual
// O(|d|^2), so the gap falls quadratically with the Newton steps.
//
// lambda >= lambda_max: the polynomial GLM fit of degree k (Newton on the k+1 polynomial coefficients, through
// poly_projection()) is optimal, with dual u0 = D'^{-1} W (y - mu) (solve_dt); lambda_max = max_j |u0_j| / w0_j.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../parallel/driver.hpp"
#include "../rng/stream.hpp"
#include "../wbb/driver.hpp"
#include "certificate.hpp"
#include "difference.hpp"
#include "ip_types.hpp"
#include "trend_filter.hpp"

namespace scalebayes {
namespace genlasso {

enum class GLMFamily { Poisson = 1, Binomial = 2 };
// by name (R: trend_filter_glm(family = ))
inline constexpr EnumTable<GLMFamily, 2> glm_family_names{
    "family", {{{"poisson", GLMFamily::Poisson}, {"binomial", GLMFamily::Binomial}}}};
constexpr const auto& enum_table(GLMFamily) { return glm_family_names; }

// The data of a GLM trend filter: responses y (counts / successes) and a (exposure / trials, > 0).
struct GLMData {
  GLMFamily family = GLMFamily::Poisson;
  Eigen::VectorXd y, a;
};

struct GLMControl {
  double tol = 1e-8;       // target certified relative duality gap
  int max_outer = 100;     // proximal Newton steps
  double armijo = 1e-4;    // sufficient decrease of the line search
  int max_ls = 60;         // backtracking halvings
  TFMethod method = TFMethod::Auto;
  IPControl inner;         // inner solves (tol set from `tol` by inner_tol())
  double inner_ratio = 1e-2;  // inner relative gap target = max(inner_ratio * tol, 1e-13)
};

struct GLMResult {
  Eigen::VectorXd beta, u;
  double gap = std::numeric_limits<double>::infinity();
  double rel_gap = std::numeric_limits<double>::infinity();
  double primal = NAN;      // half deviance + penalty
  int outer = 0;            // proximal Newton steps
  int inner = 0;            // inner interior-point steps, summed
  bool converged = false;
  bool diverged = false;    // |beta| grew past 700 (no finite minimizer: separated data)
  double min_step = 1.0;    // smallest accepted line-search step
};

namespace glm_detail {

inline LD softplus(LD t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// Half the unit deviance of observation i (loss minus the saturated loss), weighted.
inline LD half_dev(GLMFamily f, double y, double a, double w, double beta) {
  const LD b = beta;
  if (f == GLMFamily::Poisson) {
    const LD mu = static_cast<LD>(a) * std::exp(b);
    if (y <= 0) return w * mu;
    return w * (mu - y - y * (std::log(mu) - std::log(static_cast<LD>(y))));
  }
  // binomial: y log(ps / p) + (a - y) log((1 - ps) / (1 - p)), log p = -softplus(-b), log(1-p) = -softplus(b)
  const LD lp = -softplus(-b), l1p = -softplus(b);
  LD s = 0;
  if (y > 0) s += y * (std::log(static_cast<LD>(y) / a) - lp);
  if (a - y > 0) s += (a - y) * (std::log(static_cast<LD>(a - y) / a) - l1p);
  return w * s;
}

inline LD penalty(const BandedD& D, const Eigen::VectorXd& lam, const Eigen::VectorXd& beta) {
  LD pen = 0;
  for (int j = 0; j < D.m; ++j) {
    LD zj = 0;
    for (int l = 0; l < D.width; ++l) zj += static_cast<LD>(D.at(j, l)) * beta[j + l];
    pen += lam[j] * std::abs(zj);
  }
  return pen;
}

inline LD loss(const GLMData& d, const Eigen::VectorXd& w, const Eigen::VectorXd& beta) {
  LD s = 0;
  for (int i = 0; i < beta.size(); ++i) s += half_dev(d.family, d.y[i], d.a[i], w[i], beta[i]);
  return s;
}

// Gradient g = W (mu - y) and Hessian diagonal h of the loss at beta.
inline void grad_hess(const GLMData& d, const Eigen::VectorXd& w, const Eigen::VectorXd& beta, Eigen::VectorXd& g,
                      Eigen::VectorXd& h) {
  const int n = static_cast<int>(beta.size());
  g.resize(n);
  h.resize(n);
  for (int i = 0; i < n; ++i) {
    if (d.family == GLMFamily::Poisson) {
      const double mu = d.a[i] * std::exp(beta[i]);
      g[i] = w[i] * (mu - d.y[i]);
      h[i] = w[i] * mu;
    } else {
      const double p = 1.0 / (1.0 + std::exp(-beta[i]));
      g[i] = w[i] * (d.a[i] * p - d.y[i]);
      h[i] = w[i] * d.a[i] * p * (1.0 - p);
    }
  }
  double hmax = 0.0;
  for (int i = 0; i < n; ++i)
    if (std::isfinite(h[i])) hmax = std::max(hmax, h[i]);
  const double hmin = std::max(1e-12 * hmax, std::numeric_limits<double>::min() * 1e10);
  for (int i = 0; i < n; ++i) h[i] = std::isfinite(h[i]) ? std::max(h[i], hmin) : hmax;
}

// The denominator floor of the relative gap: 1e-10 of half the null deviance (the constant fit).
inline LD gap_floor_glm(const GLMData& d, const Eigen::VectorXd& w) {
  LD sy = 0, sa = 0;
  for (int i = 0; i < d.y.size(); ++i) {
    sy += static_cast<LD>(w[i]) * d.y[i];
    sa += static_cast<LD>(w[i]) * d.a[i];
  }
  LD null = 0;
  if (sy > 0 && sy < (d.family == GLMFamily::Binomial ? sa : std::numeric_limits<LD>::infinity())) {
    const LD r = sy / sa;
    const double b0 = d.family == GLMFamily::Poisson ? static_cast<double>(std::log(r))
                                                      : static_cast<double>(std::log(r / (1 - r)));
    for (int i = 0; i < d.y.size(); ++i) null += half_dev(d.family, d.y[i], d.a[i], w[i], b0);
  }
  return std::max(LD(1e-10) * null, LD(1e-300));
}

}  // namespace glm_detail

// The certificate of the pair (beta, u) (u clipped to |u_j| <= lam_j first, in place): objective P (half deviance +
// penalty) and duality gap, both in long double; see the header comment.
// polynomial = true: beta is a polynomial of degree k by construction (the lambda >= lambda_max fit), D beta = 0
// exactly, and the penalty terms are 0 (evaluated numerically they would only measure lam_j times the rounding in
// D beta, large for lam >> 1, as in trend_filter_path()).
inline void glm_certify(const BandedD& D, const GLMData& d, const Eigen::VectorXd& w, const Eigen::VectorXd& lam,
                        const Eigen::VectorXd& beta, Eigen::VectorXd& u, LD& primal, LD& gap,
                        bool polynomial = false) {
  using glm_detail::softplus;
  const int n = D.n, m = D.m, kw = D.width;
  for (int j = 0; j < m; ++j) u[j] = std::min(std::max(u[j], -lam[j]), lam[j]);
  const double* c = D.c.data();
  LD kl = 0, pen = 0, gp = 0;
  bool finite = true;
  for (int t = 0; t < n && finite; ++t) {
    LD dt = 0;  // (D'u)_t
    for (int l = std::max(0, t - m + 1); l <= std::min(kw - 1, t); ++l)
      dt += static_cast<LD>(c[static_cast<std::size_t>(t - l) * kw + l]) * static_cast<LD>(u[t - l]);
    const LD ci = static_cast<LD>(w[t]) * d.a[t];
    const LD v = static_cast<LD>(w[t]) * d.y[t] - dt;
    const LD q = v / ci, b = beta[t];
    if (d.family == GLMFamily::Poisson) {
      if (q < 0) {
        finite = false;
        break;
      }
      const LD e = std::exp(b);
      kl += ci * std::max(q > 0 ? e - q + q * (std::log(q) - b) : e, LD(0));
    } else {
      if (q < 0 || q > 1) {
        finite = false;
        break;
      }
      const LD lp = -softplus(-b), l1p = -softplus(b);
      LD s = 0;
      if (q > 0) s += q * (std::log(q) - lp);
      if (q < 1) s += (1 - q) * (std::log1p(-q) - l1p);
      kl += ci * std::max(s, LD(0));
    }
  }
  for (int j = 0; j < m && !polynomial; ++j) {
    LD zj = 0;
    for (int l = 0; l < kw; ++l) zj += static_cast<LD>(c[static_cast<std::size_t>(j) * kw + l]) * static_cast<LD>(beta[j + l]);
    pen += lam[j] * std::abs(zj);
    gp += lam[j] * std::abs(zj) - static_cast<LD>(u[j]) * zj;
  }
  primal = glm_detail::loss(d, w, beta) + pen;
  gap = finite ? kl + std::max(gp, LD(0)) : std::numeric_limits<LD>::infinity();
}

// One solve at per-difference penalties lam by proximal Newton from beta0 (u0: optional inner dual warm start).
inline GLMResult glm_trend_solve(const BandedD& D, int k, const GLMData& d, const Eigen::VectorXd& w,
                                 const Eigen::VectorXd& lam, const GLMControl& ctl, const Eigen::VectorXd& beta0,
                                 const Eigen::VectorXd* u0 = nullptr, const StopFn& stop = StopFn()) {
  if (d.y.size() != D.n || d.a.size() != D.n || w.size() != D.n || beta0.size() != D.n)
    throw std::invalid_argument("y, exposure / trials, weights and the start must have length n");
  if (lam.size() != D.m) throw std::invalid_argument("lambda must have one entry per difference");
  GLMResult r;
  r.beta = beta0;
  const LD floor = glm_detail::gap_floor_glm(d, w);
  IPControl ic = ctl.inner;
  ic.tol = std::max(ctl.inner_ratio * ctl.tol, 1e-13);
  Eigen::VectorXd g, h, z, ustart;
  if (u0 && u0->size() == D.m) ustart = *u0;
  LD F = glm_detail::loss(d, w, r.beta) + glm_detail::penalty(D, lam, r.beta);
  for (int it = 0; it < ctl.max_outer; ++it) {
    if (stop && stop()) break;
    glm_detail::grad_hess(d, w, r.beta, g, h);
    z = r.beta - g.cwiseQuotient(h);
    const IPResult in = solve_trend_filter(D, k, z, h, lam, ctl.method, ic, ustart.size() == D.m ? &ustart : nullptr);
    r.inner += in.iter;
    r.outer = it + 1;
    ustart = in.u;
    const Eigen::VectorXd dir = in.beta - r.beta;
    const LD pen0 = glm_detail::penalty(D, lam, r.beta);
    const LD delta = static_cast<LD>(g.dot(dir)) + glm_detail::penalty(D, lam, in.beta) - pen0;
    // backtracking on the true objective (an inexact inner solve can make delta >= 0: then only decrease is asked)
    double s = 1.0;
    LD Fn = 0;
    Eigen::VectorXd bn;
    bool ok = false;
    for (int ls = 0; ls <= ctl.max_ls; ++ls) {
      bn = r.beta + s * dir;
      Fn = glm_detail::loss(d, w, bn) + glm_detail::penalty(D, lam, bn);
      if (std::isfinite(static_cast<double>(Fn)) && Fn <= F + ctl.armijo * s * std::min(delta, LD(0))) {
        ok = true;
        break;
      }
      s *= 0.5;
    }
    if (ok) {
      r.beta = bn;
      F = Fn;
      r.min_step = std::min(r.min_step, s);
    }
    Eigen::VectorXd uc = in.u;
    LD P = 0, G = 0;
    glm_certify(D, d, w, lam, r.beta, uc, P, G);
    const double rel = static_cast<double>(G / std::max(P, floor));
    r.u = uc;  // the latest inner dual, paired with the latest beta
    r.gap = static_cast<double>(G);
    r.rel_gap = rel;
    r.primal = static_cast<double>(P);
    if (r.beta.cwiseAbs().maxCoeff() > 700) {
      r.diverged = true;
      break;
    }
    if (rel <= ctl.tol) break;
    if (!ok) break;  // no decrease possible in double precision: the best certificate stands
  }
  if (r.u.size() != D.m) {  // interrupted before the first step
    r.u = Eigen::VectorXd::Zero(D.m);
    LD P = 0, G = 0;
    glm_certify(D, d, w, lam, r.beta, r.u, P, G);
    r.primal = static_cast<double>(P);
    r.gap = static_cast<double>(G);
    r.rel_gap = static_cast<double>(G / std::max(P, floor));
  }
  r.converged = r.rel_gap <= ctl.tol && !r.diverged;
  return r;
}

// The polynomial GLM fit of degree k (the solution for lambda >= lambda_max) by Newton steps with step halving,
// from beta0, and its dual u0 = D'^{-1} W (y - mu).
struct GLMPolyFit {
  Eigen::VectorXd beta, u;
  bool converged = false;
  double decrement = std::numeric_limits<double>::infinity();  // half the last Newton decrement (predicted decrease)
};

inline GLMPolyFit glm_poly_fit(const BandedD& D, const Eigen::VectorXd& x, int k, const GLMData& d,
                               const Eigen::VectorXd& w, const Eigen::VectorXd& beta0) {
  GLMPolyFit out;
  Eigen::VectorXd beta = beta0, g, h;
  LD F = glm_detail::loss(d, w, beta);
  for (int it = 0; it < 200; ++it) {
    glm_detail::grad_hess(d, w, beta, g, h);
    const Eigen::VectorXd zz = beta - g.cwiseQuotient(h);
    const Eigen::VectorXd dir = poly_projection(zz, x, h, k) - beta;
    // Newton decrement -g'dir = dir' H dir (the weighted projection): converged when half of it, the predicted
    // decrease, is below 1e-14 of the loss
    const double dec2 = -g.dot(dir);
    out.decrement = 0.5 * std::max(dec2, 0.0);
    if (dec2 <= 2e-14 * static_cast<double>(std::max(F, LD(1e-300)))) {
      out.converged = true;
      break;
    }
    double s = 1.0;
    bool ok = false;
    Eigen::VectorXd bn;
    LD Fn = 0;
    for (int ls = 0; ls < 60; ++ls) {
      bn = beta + s * dir;
      Fn = glm_detail::loss(d, w, bn);
      if (std::isfinite(static_cast<double>(Fn)) && Fn <= F) {
        ok = true;
        break;
      }
      s *= 0.5;
    }
    if (!ok) {  // no decrease left in double precision
      out.converged = dec2 <= 1e-8 * static_cast<double>(std::max(F, LD(1e-300)));
      break;
    }
    const bool stalled = !(Fn < F);  // accepted without decrease: the rounding level of the loss
    beta = bn;
    F = Fn;
    if (beta.cwiseAbs().maxCoeff() > 700) break;
    if (stalled) {
      out.converged = dec2 <= 1e-8 * static_cast<double>(std::max(F, LD(1e-300)));
      break;
    }
  }
  glm_detail::grad_hess(d, w, beta, g, h);
  out.beta = beta;
  out.u = solve_dt(D, -g);
  return out;
}

// The start of a path: the constant fit link(sum w y / sum w a) (clamped to +-30 on the link scale).
inline Eigen::VectorXd glm_constant_start(const GLMData& d, const Eigen::VectorXd& w) {
  double sy = 0, sa = 0;
  for (int i = 0; i < d.y.size(); ++i) {
    sy += w[i] * d.y[i];
    sa += w[i] * d.a[i];
  }
  double r = sy / sa, b0;
  if (d.family == GLMFamily::Poisson) {
    b0 = r > 0 ? std::log(r) : -30.0;
  } else {
    r = std::min(std::max(r, 1e-13), 1 - 1e-13);
    b0 = std::log(r / (1 - r));
  }
  return Eigen::VectorXd::Constant(d.y.size(), std::max(-30.0, std::min(30.0, b0)));
}

struct GLMPath {
  Eigen::MatrixXd beta, u;   // n x L, m x L
  Eigen::VectorXd gap, rel_gap, primal, min_step;
  Eigen::VectorXi outer, inner, df;
  std::vector<int> diverged;
  double lambda_max = 0;
  bool poly_converged = false;
  int completed = 0;
  bool interrupted = false;
};

// Solutions along a decreasing lambda sequence, each warm-started from the previous one (beta and inner dual);
// at lambda values where the polynomial fit's dual is feasible, that fit (optimal) is returned.
inline GLMPath glm_trend_path(const Eigen::VectorXd& x, int k, const GLMData& d, const Eigen::VectorXd& w,
                              const Eigen::VectorXd& w0, const Eigen::VectorXd& lambdas, const GLMControl& ctl,
                              const StopFn& stop = StopFn()) {
  const BandedD D = make_difference(x, k);
  if (w0.size() != 1 && w0.size() != D.m) throw std::invalid_argument("penalty weights must have length 1 or n-k-1");
  const int L = static_cast<int>(lambdas.size());
  GLMPath out;
  out.beta.setZero(D.n, L);
  out.u.setZero(D.m, L);
  out.gap.setZero(L);
  out.rel_gap.setZero(L);
  out.primal.setZero(L);
  out.min_step.setOnes(L);
  out.outer.setZero(L);
  out.inner.setZero(L);
  out.df.setZero(L);
  out.diverged.assign(static_cast<std::size_t>(L), 0);
  const GLMPolyFit pf = glm_poly_fit(D, x, k, d, w, glm_constant_start(d, w));
  out.poly_converged = pf.converged;
  out.lambda_max = lambda_max_from_dual(pf.u, w0);
  const LD floor = glm_detail::gap_floor_glm(d, w);
  Eigen::VectorXd lam(D.m), beta = pf.beta, uprev;
  // rounding noise of a jump (degrees of freedom): 1e-10 of the largest difference of the working response
  for (int l = 0; l < L; ++l) {
    if (stop && stop()) {
      out.interrupted = true;
      break;
    }
    const double lambda = lambdas[l];
    if (!(lambda >= 0) || !std::isfinite(lambda)) throw std::invalid_argument("lambda must be finite and >= 0");
    for (int j = 0; j < D.m; ++j) lam[j] = lambda * (w0.size() == 1 ? w0[0] : w0[j]);
    bool feasible = pf.converged;
    for (int j = 0; feasible && j < D.m; ++j) feasible = std::abs(pf.u[j]) <= lam[j];
    GLMResult r;
    if (feasible) {
      r.beta = pf.beta;
      r.u = pf.u;
      LD P = 0, G = 0;
      glm_certify(D, d, w, lam, r.beta, r.u, P, G, true);
      r.primal = static_cast<double>(P);
      // For k >= 2 and large n the substitution D'^{-1} loses the accuracy of u0 (its last k + 1 equations hold
      // only through the orthogonality of W (y - mu) to the polynomials, which rounding breaks), and the pair gap
      // can be large or infinite; the fit is then judged by the Newton decrement of the (k + 1)-parameter
      // polynomial GLM (its predicted decrease, not a bound): the smaller of the two is reported.
      G = std::min(G, static_cast<LD>(pf.decrement));
      r.gap = static_cast<double>(G);
      r.rel_gap = static_cast<double>(G / std::max(P, floor));
      r.converged = r.rel_gap <= ctl.tol;
    } else {
      Eigen::VectorXd us;
      if (uprev.size() == D.m && l > 0 && lambdas[l - 1] > 0) us = uprev * (lambda / lambdas[l - 1]);
      r = glm_trend_solve(D, k, d, w, lam, ctl, beta, us.size() == D.m ? &us : nullptr, stop);
    }
    out.beta.col(l) = r.beta;
    out.u.col(l) = r.u;
    out.gap[l] = r.gap;
    out.rel_gap[l] = r.rel_gap;
    out.primal[l] = r.primal;
    out.outer[l] = r.outer;
    out.inner[l] = r.inner;
    out.min_step[l] = r.min_step;
    out.diverged[static_cast<std::size_t>(l)] = r.diverged ? 1 : 0;
    Eigen::VectorXd zz(D.m);
    D.apply(r.beta.data(), zz.data());
    const double noise = 1e-10 * std::max(1.0, r.beta.cwiseAbs().maxCoeff());
    out.df[l] = trend_filter_df(D, k, r.beta.data(), r.u.data(), lambda, w0, noise);
    out.completed = l + 1;
    if (!r.diverged) beta = r.beta;
    uprev = r.u;
  }
  return out;
}

// Weighted Bayesian bootstrap of a GLM trend filter: draw t gets w_i ~ Exp(1) and the prior weight(s) w0 from the
// driver's stream (seed, t) and solves the problem with weights w (times the exposure / trials) and lam = lambda
// w0, by glm_trend_solve() from the unweighted fit beta_hat (and its inner dual times the common w0): the same
// start for every draw, so the draws do not depend on the number of threads. Draw t's link-scale curve goes into
// row t of the caller's draws x n matrix.
struct GLMWBBProblem {
  const BandedD& D;
  int k;
  const GLMData& data;
  double lambda;
  GLMControl ctl;
  const Eigen::VectorXd& beta_hat;
  const Eigen::VectorXd& u_hat;
};

struct GLMWBBOutput {
  Eigen::Map<Eigen::MatrixXd> draws;  // draws x n (link scale)
  Eigen::Map<Eigen::VectorXd> rel_gap;
  Eigen::Map<Eigen::VectorXi> iter;   // proximal Newton steps
  Eigen::Map<Eigen::VectorXd> w0;     // the common prior weight of each draw (NaN for separate)
  Eigen::Map<Eigen::VectorXi> diverged;  // 1 where |beta| grew past 700 (no finite minimizer)
};

class GLMWBBSolver {
 public:
  GLMWBBSolver(const GLMWBBProblem& pb, GLMWBBOutput& out) : pb_(pb), out_(out), lam_(pb.D.m) {}
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
    if (pb_.u_hat.size() == m) start = pb_.u_hat * scale;
    const GLMResult res = glm_trend_solve(pb_.D, pb_.k, pb_.data, w, lam_, pb_.ctl, pb_.beta_hat,
                                          start.size() == m ? &start : nullptr);
    out_.draws.row(r) = res.beta.transpose();
    out_.rel_gap[r] = res.rel_gap;
    out_.diverged[r] = res.diverged ? 1 : 0;
    out_.iter[r] = res.outer;
  }

 private:
  const GLMWBBProblem& pb_;
  GLMWBBOutput& out_;
  Eigen::VectorXd lam_;
};

inline parallel::RunStatus glm_trend_wbb(const GLMWBBProblem& pb, GLMWBBOutput& out, const wbb::Settings& st,
                                         const parallel::Monitor& monitor = parallel::Monitor()) {
  return wbb::run_draws(st, [&](int) { return std::unique_ptr<GLMWBBSolver>(new GLMWBBSolver(pb, out)); }, monitor);
}

}  // namespace genlasso
}  // namespace scalebayes
