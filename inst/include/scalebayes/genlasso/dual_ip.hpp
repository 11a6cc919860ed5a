// scalebayes/genlasso/dual_ip.hpp -- primal-dual interior-point method for the dual of the weighted
// generalized lasso
//
//   primal:  minimize_beta  1/2 sum_i w_i (y_i - beta_i)^2 + sum_j lam_j |(D beta)_j|
//   dual:    minimize_u     1/2 u' D W^{-1} D' u - u' D y   subject to  |u_j| <= lam_j,
//            beta = y - W^{-1} D' u.
//
// In the style of Kim, Koh, Boyd & Gorinevsky (2009, l1 trend filtering): barrier parameter t, multipliers
// mu1, mu2 for u - lam <= 0 and -u - lam <= 0, Newton steps on the perturbed KKT system reduced to
// (D W^{-1} D' + diag(mu1/(lam-u) + mu2/(lam+u))) du = r, a backtracking line search on the residual norm.
// The linear algebra is supplied by an Op (operators.hpp): a banded Givens QR for trend filtering (O(n k^2) per step) or a
// sparse LDL' for a user matrix D. Every solve returns the certified duality gap of the primal point
// beta(u):  gap = P(beta(u)) - g(u) = sum_j (lam_j |(D beta)_j| - u_j (D beta)_j) >= 0, computed without
// cancellation; the solver stops when gap <= tol * P(beta(u)).
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
#ifdef SB_TRACE
#include <cstdio>
#endif

#include "certificate.hpp"
#include "ip_types.hpp"
#include "operators.hpp"
#include "polisher.hpp"

namespace scalebayes {
namespace genlasso {

namespace detail {
// Certified gap and primal objective for a dual point u: fills beta(u), z = D beta, and G u = D W^{-1} D' u.
template <class Op>
inline void evaluate(Op& op, const VecLD& y, const VecLD& winv, const VecLD& lam, const VecLD& u, VecLD& dtu,
                     VecLD& beta, VecLD& z, VecLD& Gu, const VecLD& Dy, LD& primal, LD& gap) {
  op.Dt(u.data(), dtu.data());
  LD loss = 0;
  for (int i = 0; i < beta.size(); ++i) {
    const LD r = winv[i] * dtu[i];
    beta[i] = y[i] - r;
    loss += r * dtu[i];
  }
  op.D(beta.data(), z.data());
  LD pen = 0, g = 0;
  for (int j = 0; j < z.size(); ++j) {
    pen += lam[j] * std::abs(z[j]);
    g += lam[j] * std::abs(z[j]) - u[j] * z[j];
    Gu[j] = Dy[j] - z[j];
  }
  primal = loss / 2 + pen;
  gap = std::max(g, LD(0));
}
}  // namespace detail

// Solves the weighted generalized lasso. w: observation weights (> 0); lam: per-row penalties (>= 0).
// u_start (optional, size m): warm start, pulled strictly inside the box.
template <class Op>
IPResult dual_ip(Op& op, const Eigen::VectorXd& y_, const Eigen::VectorXd& w, const Eigen::VectorXd& lam_,
                 const IPControl& ctl, const Eigen::VectorXd* u_start = nullptr, bool weights_set = false) {
  const int n = op.n(), m = op.m();
  if (y_.size() != n || w.size() != n) throw std::invalid_argument("y and w must have length n");
  if (lam_.size() != m) throw std::invalid_argument("lambda must have one entry per row of D");
  for (int j = 0; j < m; ++j)
    if (!(lam_[j] >= 0) || !std::isfinite(lam_[j])) throw std::invalid_argument("lambda must be finite and >= 0");
  Eigen::VectorXd winvd = w.cwiseInverse();
  if (!weights_set) op.set_weights(winvd.data());
  const VecLD y = y_.cast<LD>(), winv = winvd.cast<LD>(), lam = lam_.cast<LD>();
  // rows with lam_j == 0 are unconstrained: a tiny box keeps the barrier defined (u_j ~ 0 there)
  VecLD lamb = lam;
  LD lscale = lamb.maxCoeff();
  if (!(lscale > 0)) lscale = 1;
  for (int j = 0; j < m; ++j)
    if (lamb[j] <= LD(1e-300)) lamb[j] = LD(1e-12) * lscale;
  VecLD u = VecLD::Zero(m);
  if (u_start && u_start->size() == m) {
    for (int j = 0; j < m; ++j) {
      const LD b = LD(0.99) * lamb[j];
      u[j] = std::min(std::max(static_cast<LD>((*u_start)[j]), -b), b);
    }
  }
  VecLD dtu(n), beta(n), z(m), Dy(m), Gu(m), f1(m), f2(m), mu1(m), mu2(m);
  VecLD duaff(m), corr1(m), corr2(m), rhsld(m), dmu1(m), dmu2(m), nu(m), nmu1(m), nmu2(m), nGu(m), Gdu(m), dtmp(n), duld(m);
  Eigen::VectorXd du(m), dvec(m), cbot(m), ctop(n);
  const VecLD sqwld = w.cast<LD>().cwiseSqrt();
  VecLD ctopld(n), cbotld(m);
  op.D(y.data(), Dy.data());
  LD primal, gap;
  // relative gap: gap / max(P, 1e-10 * TSS_w / 2) (the floor only matters when y is (nearly) in the null
  // space of D, where P* = 0 and a purely relative gap is undefined)
  const LD pfloor = gap_floor(y_, w);
  auto rel = [&](LD g, LD p) { return static_cast<double>(g / std::max(p, pfloor)); };
  auto finish = [&](IPResult& res, int it) {
    res.beta = beta.template cast<double>();
    res.u = u.template cast<double>();
    res.gap = static_cast<double>(gap);
    res.primal = static_cast<double>(primal);
    res.rel_gap = rel(gap, primal);
    res.converged = res.rel_gap <= ctl.tol;
    res.iter = it;
  };
  IPResult res;
  detail::evaluate(op, y, winv, lam, u, dtu, beta, z, Gu, Dy, primal, gap);
  if (rel(gap, primal) <= ctl.tol) {
    finish(res, 0);
    return res;
  }
  for (int j = 0; j < m; ++j) {
    f1[j] = u[j] - lamb[j];
    f2[j] = -u[j] - lamb[j];
  }
  // centred start: mu_i = 1 / (t (-f_i)) with surrogate gap 2m / t matched to the actual gap
  LD t = 2 * LD(m) / std::max(gap, LD(1e-300));
  for (int j = 0; j < m; ++j) {
    mu1[j] = 1 / (t * (-f1[j]));
    mu2[j] = 1 / (t * (-f2[j]));
  }
  auto resid_norm = [&](const VecLD& Guv, const VecLD& m1, const VecLD& m2, const VecLD& uu, LD tt) {
    // the norm only steers the line search: double precision suffices
    double s = 0;
    const double it = static_cast<double>(1 / tt);
    for (int j = 0; j < m; ++j) {
      const double rd = static_cast<double>(Guv[j] - Dy[j] + m1[j] - m2[j]);
      const double g1 = static_cast<double>(uu[j] - lamb[j]), g2 = static_cast<double>(-uu[j] - lamb[j]);
      const double rc1 = -static_cast<double>(m1[j]) * g1 - it, rc2 = -static_cast<double>(m2[j]) * g2 - it;
      s += rd * rd + rc1 * rc1 + rc2 * rc2;
    }
    return static_cast<LD>(std::sqrt(s));
  };
  // primal polishing (see BandedOp::polish and ActiveSetPolisher)
  ActiveSetPolisher<Op> polisher(op, y, w, winv, lam, lamb, pfloor);
  auto try_polish = [&]() -> double {
    polisher.active.resize(m);
    polisher.sign.resize(m);
    for (int j = 0; j < m; ++j) {
      polisher.active[j] = std::abs(u[j]) >= (1 - LD(1e-6)) * lamb[j];
      polisher.sign[j] = u[j] > 0 ? 1 : -1;
    }
    return polisher.run(u, ctl.tol);
  };
  LD step = 1;
  int it = 0;
  LD last_polish_eta = std::numeric_limits<LD>::infinity();
  VecLD best_u = u;
  double best_rel = rel(gap, primal), last_check_rel = best_rel;
  int last_check_it = 0;
  for (; it < ctl.max_iter; ++it) {
    // surrogate duality gap of the barrier problem
    LD eta = 0;
    for (int j = 0; j < m; ++j) eta -= f1[j] * mu1[j] + f2[j] * mu2[j];
    if (step >= LD(0.2)) t = std::max(LD(ctl.mu) * 2 * LD(m) / eta, LD(1.2) * t);
    // Newton system (G + diag(d)) du = rhs with G = D W^{-1} D', rhs = D beta(u) + barrier terms, solved in
    // least-squares form: rhs = A' c with A = [W^{-1/2} D'; diag(sqrt(d))], c = [W^{1/2} beta(u); bt / sqrt(d)]
    // with complementarity targets c1 (for u - lam <= 0) and c2 (for -u - lam <= 0): 1/t in the barrier
    // method; sigma mu + second-order terms in Mehrotra's predictor-corrector.
    LD c1 = 1 / t;
    for (int j = 0; j < m; ++j) {
      const double i1 = 1.0 / static_cast<double>(f1[j]), i2 = 1.0 / static_cast<double>(f2[j]);
      dvec[j] = -(static_cast<double>(mu1[j]) * i1 + static_cast<double>(mu2[j]) * i2);
    }
    for (int i = 0; i < n; ++i) ctopld[i] = sqwld[i] * beta[i];
    LD t_merit = t;
    if (ctl.mehrotra) {
      // predictor (affine scaling: targets 0)
      for (int j = 0; j < m; ++j) cbotld[j] = 0;
      op.newton(dvec.data(), ctopld, cbotld, duaff, ctl.refine);
      LD aaff = 1;
      for (int j = 0; j < m; ++j) {
        dmu1[j] = -mu1[j] * (1 + duaff[j] / f1[j]);
        dmu2[j] = -mu2[j] * (1 - duaff[j] / f2[j]);
        if (dmu1[j] < 0) aaff = std::min(aaff, -mu1[j] / dmu1[j]);
        if (dmu2[j] < 0) aaff = std::min(aaff, -mu2[j] / dmu2[j]);
        if (duaff[j] > 0) aaff = std::min(aaff, (lamb[j] - u[j]) / duaff[j]);
        if (duaff[j] < 0) aaff = std::min(aaff, (-lamb[j] - u[j]) / duaff[j]);
      }
      LD muaff = 0;
      for (int j = 0; j < m; ++j)
        muaff -= (f1[j] + aaff * duaff[j]) * (mu1[j] + aaff * dmu1[j]) + (f2[j] - aaff * duaff[j]) * (mu2[j] + aaff * dmu2[j]);
      const LD mu_now = eta / (2 * LD(m));
      muaff /= 2 * LD(m);
      const LD ratio = std::max(LD(0), muaff / mu_now);
      const LD sigma = ratio * ratio * ratio;
      c1 = sigma * mu_now;
      t_merit = 1 / std::max(c1, LD(1e-300));
      // corrector targets: sigma mu + dmu_aff * df_aff
      for (int j = 0; j < m; ++j) {
        const LD a1 = c1 + dmu1[j] * duaff[j], a2 = c1 - dmu2[j] * duaff[j];
        corr1[j] = a1;
        corr2[j] = a2;
        cbotld[j] = (a1 / f1[j] - a2 / f2[j]) / std::sqrt(static_cast<LD>(dvec[j]));
      }
      op.resolve(dvec.data(), ctopld, cbotld, duld);
      for (int j = 0; j < m; ++j) {
        dmu1[j] = -(mu1[j] + (corr1[j] + duld[j] * mu1[j]) / f1[j]);
        dmu2[j] = -(mu2[j] + (corr2[j] - duld[j] * mu2[j]) / f2[j]);
      }
    } else {
      for (int j = 0; j < m; ++j) cbotld[j] = (c1 / f1[j] - c1 / f2[j]) / std::sqrt(static_cast<LD>(dvec[j]));
      op.newton(dvec.data(), ctopld, cbotld, duld, ctl.refine);
      for (int j = 0; j < m; ++j) {
        dmu1[j] = -(mu1[j] + (c1 + duld[j] * mu1[j]) / f1[j]);
        dmu2[j] = -(mu2[j] + (c1 - duld[j] * mu2[j]) / f2[j]);
      }
    }
    // largest step keeping mu > 0 and |u| < lam
    step = 1;
    for (int j = 0; j < m; ++j) {
      if (dmu1[j] < 0) step = std::min(step, -LD(0.99) * mu1[j] / dmu1[j]);
      if (dmu2[j] < 0) step = std::min(step, -LD(0.99) * mu2[j] / dmu2[j]);
      if (duld[j] > 0) step = std::min(step, LD(0.99) * (lamb[j] - u[j]) / duld[j]);
      if (duld[j] < 0) step = std::min(step, LD(0.99) * (-lamb[j] - u[j]) / duld[j]);
    }
    const LD r0 = resid_norm(Gu, mu1, mu2, u, t_merit);
    op.Dt(duld.data(), dtmp.data());
    for (int i = 0; i < n; ++i) dtmp[i] *= winv[i];
    op.D(dtmp.data(), Gdu.data());
    int ls = 0;
    for (; ls < ctl.max_ls; ++ls) {
      nu = u + step * duld;
      nmu1 = mu1 + step * dmu1;
      nmu2 = mu2 + step * dmu2;
      nGu = Gu + step * Gdu;
      bool feas = true;
      for (int j = 0; j < m && feas; ++j) feas = (nu[j] < lamb[j]) && (nu[j] > -lamb[j]);
      if (feas && (ctl.mehrotra || resid_norm(nGu, nmu1, nmu2, nu, t_merit) <= (1 - LD(ctl.alpha) * step) * r0)) break;
      step *= LD(ctl.beta);
    }
    if (ls == ctl.max_ls) break;  // no acceptable step: numerical floor reached
    u.swap(nu);
    mu1.swap(nmu1);
    mu2.swap(nmu2);
    for (int j = 0; j < m; ++j) {
      f1[j] = u[j] - lamb[j];
      f2[j] = -u[j] - lamb[j];
    }
    detail::evaluate(op, y, winv, lam, u, dtu, beta, z, Gu, Dy, primal, gap);  // also refreshes G u exactly
#ifdef SB_TRACE
    std::fprintf(stderr, "it %d step %.3g ls %d t %.3g eta %.3g rel %.3g\n", it, (double)step, ls, (double)t,
                 (double)eta, rel(gap, primal));
#endif
    const double rg = rel(gap, primal);
    if (rg <= ctl.tol) {
      ++it;
      best_u = u;
      break;
    }
    if (ctl.polish && eta < LD(ctl.polish_from) * primal && eta < LD(1e-2) * last_polish_eta) {
      last_polish_eta = eta;
      const double pr = try_polish();
#ifdef SB_TRACE
      std::fprintf(stderr, "   polish rel %.3g\n", pr);
#endif
      if (pr <= ctl.tol) {
        ++it;
        best_u = u;
        break;
      }
    }
    if (rg < best_rel) {
      best_rel = rg;
      best_u = u;
    }
    // stall: the barrier gap is far below the target but the certified gap no longer improves (the
    // numerical floor of the Newton directions for badly conditioned D, e.g. k >= 2 on very uneven x)
    if (rg < 0.5 * last_check_rel) {
      last_check_rel = rg;
      last_check_it = it;
    } else if (it - last_check_it > ctl.stall_iter && eta < LD(ctl.tol) * primal) {
      ++it;
      break;
    }
  }
  u = best_u;
  detail::evaluate(op, y, winv, lam, u, dtu, beta, z, Gu, Dy, primal, gap);
  // a last polish from the best iterate when the loop ended above the target (stall or line-search failure)
  if (ctl.polish && rel(gap, primal) > ctl.tol && !(polisher.have && polisher.rel_gap() <= ctl.tol)) try_polish();
  if (polisher.have && polisher.gap / std::max(polisher.primal, pfloor) < gap / std::max(primal, pfloor)) {
    beta = polisher.beta;
    u = polisher.u;
    gap = polisher.gap;
    primal = polisher.primal;
  }
  finish(res, it);
  return res;
}

}  // namespace genlasso
}  // namespace scalebayes
