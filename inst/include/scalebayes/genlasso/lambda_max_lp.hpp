// scalebayes/genlasso/lambda_max_lp.hpp -- exact lambda_max of the weighted generalized lasso for any sparse D.
//
// For lambda >= lambda_max the solution is beta0, the W-projection of y onto null(D), and lambda_max is the
// smallest lambda for which beta0 has a dual certificate:
//
//   lambda_max = min_u  max_j |u_j| / w0_j   subject to  D'u = v,   v = W (y - beta0).
//
// When D has full row rank u is unique and this is a formula. Otherwise (graphs with cycles, 2-D grids: more
// rows than rank) u ranges over an affine set and lambda_max is the value of a linear program. Its dual is
//
//   max_z  v'z  subject to  sum_j w0_j |(D z)_j| <= 1,
//
// so every z gives a lower bound v'z / ||w0 o Dz||_1 and every u with D'u = v an upper bound (weak duality:
// v'z = u'Dz <= max_j |u_j|/w0_j ||w0 o Dz||_1). For the incidence matrix of a graph this is the max-flow /
// min-cut value max_S |v(S)| / w0(cut(S)) (Gale 1957), which the tests use as an independent check.
//
// Solved by a primal-dual interior point (Mehrotra predictor-corrector) on
//   min t  s.t.  D'u = v,  a = t w0 - u >= 0,  b = t w0 + u >= 0,
// multipliers z (equalities), alpha, beta >= 0 (bounds). Eliminating the bound variables leaves the sparse
// normal matrix M = D' Sigma^{-1} D (n x n, Sigma = alpha/a + beta/b) and one scalar (dt) by a Schur
// complement; M is factored by Eigen's SimplicialLDLT (AMD ordering, pattern analysed once) with a ridge of
// 1e-15 of its largest diagonal entry (M is singular along null(D), where v'z does not depend on z).
// The result is returned as the upper bound of an exactly feasible u (the last iterate corrected onto
// D'u = v), with the lower bound of the last z: the true lambda_max lies between them.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#ifdef SB_TRACE
#include <cstdio>
#endif

namespace scalebayes {
namespace genlasso {

struct LambdaMaxLP {
  double lambda_max = 0;  // upper bound: max_j |u_j| / w0_j for a u with D'u = v (to rounding)
  double lower = 0;       // lower bound v'z / ||w0 o Dz||_1
  double rel_gap = 0;     // (lambda_max - lower) / lambda_max
  int iter = 0;
  Eigen::VectorXd u;      // the dual certificate attaining lambda_max
  bool interrupted = false;
};

// u0: any solution of D'u = v (e.g. the ridge solution of D W^{-1} D' u = D y); v is taken as D'u0 so that the
// equality constraints are consistent to rounding. w0: penalty weights (length 1 = common, or m).
// stop: called once per Newton step; returning true ends the iteration (interrupted = true; the bounds
// returned are those of the last iterate, still valid).
inline LambdaMaxLP lambda_max_lp(const Eigen::SparseMatrix<double>& D, const Eigen::VectorXd& u0,
                                 const Eigen::VectorXd& w0in, double tol = 1e-12, int max_iter = 200,
                                 const std::function<bool()>& stop = std::function<bool()>()) {
  using SpMat = Eigen::SparseMatrix<double>;
  const int m = static_cast<int>(D.rows()), n = static_cast<int>(D.cols());
  if (u0.size() != m) throw std::invalid_argument("u0 must have one entry per row of D");
  Eigen::VectorXd w0(m);
  for (int j = 0; j < m; ++j) {
    w0[j] = w0in.size() == 1 ? w0in[0] : w0in[j];
    if (!(w0[j] > 0) || !std::isfinite(w0[j])) throw std::invalid_argument("penalty weights must be positive");
  }
  const SpMat Dt = D.transpose();
  const Eigen::VectorXd v = Dt * u0;
  LambdaMaxLP out;
  auto upper_of = [&](const Eigen::VectorXd& u) { return u.cwiseQuotient(w0).cwiseAbs().maxCoeff(); };
  out.u = u0;
  out.lambda_max = m > 0 ? upper_of(u0) : 0.0;
  if (m == 0 || !(out.lambda_max > 0)) return out;  // y in the null space of D: lambda_max = 0
  // rows of D that are entirely zero do not enter D'u: their u_j is free, best 0
  Eigen::VectorXd rownnz = Eigen::VectorXd::Zero(m);
  for (int c = 0; c < D.outerSize(); ++c)
    for (SpMat::InnerIterator it(D, c); it; ++it) rownnz[it.row()] += std::abs(it.value());

  // scale so that the start has t = 1: the iteration is then free of the units of y
  const double scale = out.lambda_max;
  Eigen::VectorXd u = u0 / scale, vs = v / scale;
  for (int j = 0; j < m; ++j)
    if (rownnz[j] == 0) u[j] = 0;
  double t = 1.05 * std::max(u.cwiseQuotient(w0).cwiseAbs().maxCoeff(), 1e-300);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd al = Eigen::VectorXd::Constant(m, 0.5 / w0.sum()), be = al;
  Eigen::VectorXd a(m), b(m), Sg(m), iS(m), dl(m), g(m), e(m), f(m), hw(m), du(m), dal(m), dbe(m), dz(n), h(n),
      sp(n), x1(n), x2(n), Fu(m), rp(n), tmp(m);
  Eigen::VectorXd du_a(m), dal_a(m), dbe_a(m);
  Eigen::SimplicialLDLT<SpMat> ldlt;
  bool analysed = false;
  SpMat M, In(n, n);
  In.setIdentity();
  double best_lower = 0, dt = 0, dt_a = 0;
  int it = 0;
  for (; it < max_iter; ++it) {
    if (stop && stop()) {
      out.interrupted = true;
      break;
    }
    a = t * w0 - u;
    b = t * w0 + u;
    const double mu = (al.dot(a) + be.dot(b)) / (2.0 * m);
    // lower bound from z
    const Eigen::VectorXd Dz = D * z;
    const double l1 = Dz.cwiseProduct(w0).cwiseAbs().sum();
    if (l1 > 0) {
      const double lb = vs.dot(z) / l1;
      best_lower = std::max(best_lower, lb);
    }
    rp = vs - Dt * u;
    const double Ft = 1.0 - w0.dot(al + be);
    Fu = -Dz + al - be;
    const double pinf = rp.cwiseAbs().maxCoeff() / std::max(vs.cwiseAbs().maxCoeff(), 1e-300);
#ifdef SB_TRACE
    std::fprintf(stderr, "lp it %d t %.12g lower %.12g pinf %.3g mu %.3g\n", it, t, best_lower, pinf, mu);
#endif
    // (the remaining infeasibility is removed exactly after the loop)
    if ((t - best_lower) <= tol * t && pinf <= 1e-8) break;
    for (int j = 0; j < m; ++j) {
      Sg[j] = al[j] / a[j] + be[j] / b[j];
      dl[j] = al[j] / a[j] - be[j] / b[j];
      iS[j] = 1.0 / Sg[j];
      hw[j] = iS[j] * dl[j] * w0[j];
    }
    M = Dt * iS.asDiagonal() * D;
    double dmax = 0;
    for (int i = 0; i < n; ++i) dmax = std::max(dmax, M.coeff(i, i));
    M = M + (1e-15 * std::max(dmax, 1e-300)) * In;
    if (!analysed) {
      ldlt.analyzePattern(M);
      analysed = true;
    }
    ldlt.factorize(M);
    if (ldlt.info() != Eigen::Success) break;
    h = Dt * hw;
    x2 = ldlt.solve(h);
    const double hx2 = h.dot(x2);
    double q = 0;
    for (int j = 0; j < m; ++j) q += w0[j] * w0[j] * (Sg[j] - dl[j] * dl[j] * iS[j]);
    // one Newton solve for complementarity targets ca, cb
    auto solve = [&](const Eigen::VectorXd& ca, const Eigen::VectorXd& cb, Eigen::VectorXd& du_o,
                     Eigen::VectorXd& dal_o, Eigen::VectorXd& dbe_o, double& dt_o) {
      for (int j = 0; j < m; ++j) {
        e[j] = ca[j] / a[j] - cb[j] / b[j];
        f[j] = ca[j] / a[j] + cb[j] / b[j];
        g[j] = -Fu[j] - e[j];
      }
      tmp = iS.cwiseProduct(g);
      sp = rp - Dt * tmp;
      x1 = ldlt.solve(sp);
      const double st = -Ft + w0.dot(f) + hw.dot(g);
      dt_o = (st + h.dot(x1)) / (q + hx2);
      dz = x1 - x2 * dt_o;
      const Eigen::VectorXd Ddz = D * dz;
      for (int j = 0; j < m; ++j) {
        du_o[j] = iS[j] * (g[j] + Ddz[j] + dl[j] * w0[j] * dt_o);
        const double da = w0[j] * dt_o - du_o[j], db = w0[j] * dt_o + du_o[j];
        dal_o[j] = (ca[j] - al[j] * da) / a[j];
        dbe_o[j] = (cb[j] - be[j] * db) / b[j];
      }
    };
    auto max_step = [&](const Eigen::VectorXd& du_o, const Eigen::VectorXd& dal_o, const Eigen::VectorXd& dbe_o,
                        double dt_o) {
      double s = 1.0;
      for (int j = 0; j < m; ++j) {
        const double da = w0[j] * dt_o - du_o[j], db = w0[j] * dt_o + du_o[j];
        if (da < 0) s = std::min(s, -a[j] / da);
        if (db < 0) s = std::min(s, -b[j] / db);
        if (dal_o[j] < 0) s = std::min(s, -al[j] / dal_o[j]);
        if (dbe_o[j] < 0) s = std::min(s, -be[j] / dbe_o[j]);
      }
      return s;
    };
    // predictor
    Eigen::VectorXd ca = -al.cwiseProduct(a), cb = -be.cwiseProduct(b);
    solve(ca, cb, du_a, dal_a, dbe_a, dt_a);
    const double sa = max_step(du_a, dal_a, dbe_a, dt_a);
    double mua = 0;
    for (int j = 0; j < m; ++j) {
      const double da = w0[j] * dt_a - du_a[j], db = w0[j] * dt_a + du_a[j];
      mua += (al[j] + sa * dal_a[j]) * (a[j] + sa * da) + (be[j] + sa * dbe_a[j]) * (b[j] + sa * db);
    }
    mua /= 2.0 * m;
    const double ratio = std::max(0.0, mua / mu), sigma = ratio * ratio * ratio;
    // corrector
    for (int j = 0; j < m; ++j) {
      const double da = w0[j] * dt_a - du_a[j], db = w0[j] * dt_a + du_a[j];
      ca[j] = sigma * mu - al[j] * a[j] - dal_a[j] * da;
      cb[j] = sigma * mu - be[j] * b[j] - dbe_a[j] * db;
    }
    solve(ca, cb, du, dal, dbe, dt);
    const double s = std::min(1.0, 0.99 * max_step(du, dal, dbe, dt));
    if (!(s > 1e-14) || !std::isfinite(dt) || !du.allFinite() || !dz.allFinite()) break;
    u += s * du;
    t += s * dt;
    z += s * dz;
    al += s * dal;
    be += s * dbe;
  }
  out.iter = it;
  // exact feasibility: u + D (D'D)^+ (v - D'u), the least-norm correction (a few refinement passes against the
  // ridge that makes D'D definite along null(D)); it moves u by the size of the remaining infeasibility only
  {
    SpMat L = Dt * D;
    double dmax = 0;
    for (int i = 0; i < n; ++i) dmax = std::max(dmax, L.coeff(i, i));
    L = L + (1e-13 * std::max(dmax, 1e-300)) * In;
    Eigen::SimplicialLDLT<SpMat> lf(L);
    if (lf.info() == Eigen::Success) {
      for (int pass = 0; pass < 3; ++pass) {
        rp = vs - Dt * u;
        x1 = lf.solve(rp);
        u += D * x1;
      }
    }
  }
  const double ub = upper_of(u) * scale;
  // keep whichever feasible dual is better (the start is exactly feasible)
  if (ub < out.lambda_max && (Dt * (u * scale) - v).cwiseAbs().maxCoeff() <= 1e-9 * v.cwiseAbs().maxCoeff()) {
    out.lambda_max = ub;
    out.u = u * scale;
  }
  out.lower = best_lower * scale;
  out.rel_gap = (out.lambda_max - out.lower) / out.lambda_max;
  return out;
}

}  // namespace genlasso
}  // namespace scalebayes
