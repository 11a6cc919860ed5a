// scalebayes/genlasso/primal_ip.hpp -- primal-dual interior point on the PRIMAL of banded weighted
// generalized lasso problems (trend filtering):
//
//   minimize_beta  1/2 sum_i w_i (y_i - beta_i)^2 + sum_j lam_j |(D beta)_j|
//
// written as  D beta = p - q,  p, q >= 0,  with multipliers u (|u_j| <= lam_j) and dual slacks
// a = lam - u, b = lam + u. Perturbed KKT conditions:
//
//   W (beta - y) + D'u = 0,   D beta - p + q = 0,   p a = s mu,   q b = s mu.
//
// Eliminating p, q leaves the banded least-squares problem with normal matrix W + D' Theta^{-1} D,
// Theta = p/a + q/b, solved by a Givens QR (BandedLS, O(n k^2)) because Theta^{-1} reaches 1e16 and more.
// Unlike the dual Newton matrix D W^{-1} D' (condition ~ n^(2k+2)), it is bounded below by W: the directions
// in beta stay accurate at any n, and the ill-conditioning of interior points (Theta -> 0 or oo) is the
// benign kind (Wright 1999). For k <= 1 and moderate n and weight spread the cheaper dual normal equations
// (Theta + D W^{-1} D', dual_normal_band.hpp, about 10x cheaper) give the directions, with one Gondzio
// centrality corrector per step and a restart on the Givens QR if a step is blocked. Mehrotra's
// predictor-corrector; one step length for all variables.
//
// Every iterate (beta, u) with |u| < lam is certified by the exact pair gap
//   P(beta) - g(u) = sum_j (lam_j |z_j| - u_j z_j) + 1/2 sum_i r_i^2 / w_i,  z = D beta, r = W (y - beta) - D'u,
// (non-negative terms), evaluated in long double. Near the optimum the active set (knots) is read off the
// complementarity pairs and the primal is polished exactly on it (dual_ip.hpp, ActiveSetPolisher).
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

#include "difference.hpp"
#include "dual_ip.hpp"
#include "dual_normal_band.hpp"

namespace scalebayes {
namespace genlasso {

// Banded least squares  min_x ||diag(sw) x - c1||^2 + ||diag(sd) D x - c2||^2  by Givens QR, rows taken in
// column order (D-row i, then unit row i). Used instead of a Cholesky of the normal equations
// W + D' S^2 D: the weights sd^2 = 1/theta reach 1e16 and more on rows off the knots (stiff least squares),
// where the normal equations lose the W part (the polynomial null space of D) entirely.
class BandedLS {
 public:
  // Factors A = [diag(sd) D; diag(sw)] (rows interleaved) and solves for (c1, c2); the rotations are
  // recorded so that resolve() can solve for another right-hand side with the same matrix (the corrector).
  void solve(const BandedD& D, const double* sw, const double* sd, const double* c1, const double* c2, double* x) {
    const int n = D.n, m = D.m, w = D.width;
    g_.reset(n, w);
    seg_end_.assign(2 * static_cast<std::size_t>(n), 0);
    std::vector<double>& a = g_.a;
    for (int i = 0; i < n; ++i) {
      if (i < m) {
        const double* ci = &D.c[static_cast<std::size_t>(i) * w];
        for (int q = 0; q < w; ++q) a[q] = sd[i] * ci[q];
        g_.rotate_in(i, c2[i]);
      }
      seg_end_[2 * static_cast<std::size_t>(i)] = static_cast<int>(g_.n_records());
      std::fill(a.begin(), a.end(), 0.0);
      a[0] = sw[i];
      g_.rotate_in(i, c1[i]);
      seg_end_[2 * static_cast<std::size_t>(i) + 1] = static_cast<int>(g_.n_records());
    }
    g_.solve_r(g_.qc.data(), x);
  }
  // Same matrix, new right-hand side: replays the recorded rotations.
  void resolve(int m, const double* c1, const double* c2, double* x) {
    qf_.resize(g_.ncol);
    g_.replay(seg_end_, [&](std::size_t k) {
      const std::size_t i = k / 2;
      return k % 2 == 0 ? (static_cast<int>(i) < m ? c2[i] : 0.0) : c1[i];
    }, qf_.data());
    g_.solve_r(qf_.data(), x);
  }

 private:
  GivensBand g_;
  std::vector<int> seg_end_;
  std::vector<double> qf_;
};

// Solves the weighted problem for a banded D (already row-scaled, see ScaledD). lam: per-row penalties.
// beta_start (optional): a primal warm start.
inline IPResult primal_ip(BandedOp& op, const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                          const Eigen::VectorXd& lam, const IPControl& ctl,
                          const Eigen::VectorXd* beta_start = nullptr) {
  const int n = D.n, m = D.m;
  if (y.size() != n || w.size() != n) throw std::invalid_argument("y and w must have length n");
  if (lam.size() != m) throw std::invalid_argument("lambda must have one entry per row of D");
  for (int j = 0; j < m; ++j)
    if (!(lam[j] >= 0) || !std::isfinite(lam[j])) throw std::invalid_argument("lambda must be finite and >= 0");
  // rows with lam_j == 0 are unconstrained: a tiny box keeps the complementarity pairs defined
  Eigen::VectorXd lamb = lam;
  double lscale = lamb.maxCoeff();
  if (!(lscale > 0)) lscale = 1;
  for (int j = 0; j < m; ++j)
    if (lamb[j] <= 1e-300) lamb[j] = 1e-12 * lscale;

  Eigen::VectorXd beta(n), u(m), z(m), pp(m), qq(m), a(m), b(m);
  // starting point: p - q = D beta, shifted into the interior so that the pairs are balanced
  auto start_point = [&]() {
    if (beta_start && beta_start->size() == n) beta = *beta_start;
    else beta = y;
    u.setZero();
    D.apply(beta.data(), z.data());
    double zabs = 0.0;
    for (int j = 0; j < m; ++j) zabs += std::abs(z[j]);
    zabs = std::max(zabs / m, 1e-12 * (y.cwiseAbs().maxCoeff() + 1.0));
    for (int j = 0; j < m; ++j) {
      pp[j] = std::max(z[j], 0.0) + zabs;
      qq[j] = std::max(-z[j], 0.0) + zabs;
      a[j] = lamb[j];
      b[j] = lamb[j];
    }
  };
  start_point();

  // certificate (long double): gap of the pair (beta, u)
  const LD pfloor = gap_floor(y, w);
  auto rel = [&](LD g, LD pr) { return static_cast<double>(g / std::max(pr, pfloor)); };
  // the pair certificate in precision T (double while far from the optimum, long double near it)
  VecLD bl(n), ul(m), zl(m), dtu(n);
  Eigen::VectorXd zd(m), dtud(n);
  double cert_noise = 0;  // bound on the rounding error of the double-precision gap
  auto certify_pair = [&](const Eigen::VectorXd& bb, const Eigen::VectorXd& uu, bool extended, LD& primal, LD& gap) {
    LD loss = 0, rr = 0, pen = 0, g = 0;
    if (extended) {
      for (int i = 0; i < n; ++i) bl[i] = bb[i];
      for (int j = 0; j < m; ++j) ul[j] = uu[j];
      op.D(bl.data(), zl.data());
      op.Dt(ul.data(), dtu.data());
      for (int i = 0; i < n; ++i) {
        const LD e = static_cast<LD>(y[i]) - bl[i];
        loss += static_cast<LD>(w[i]) * e * e;
        const LD r = static_cast<LD>(w[i]) * e - dtu[i];
        rr += r * r / static_cast<LD>(w[i]);
      }
      for (int j = 0; j < m; ++j) {
        const LD lj = lam[j];
        pen += lj * std::abs(zl[j]);
        g += lj * std::abs(zl[j]) - ul[j] * zl[j];
      }
    } else {
      D.apply(bb.data(), zd.data());
      D.apply_t(uu.data(), dtud.data());
      double ls = 0, rs = 0, ps = 0, gs = 0;
      for (int i = 0; i < n; ++i) {
        const double e = y[i] - bb[i];
        ls += w[i] * e * e;
        const double r = w[i] * e - dtud[i];
        rs += r * r / w[i];
      }
      double az = 0;  // sum_j (lam_j + |u_j|) (|D| |beta|)_j: scales the rounding error of the penalty terms
      const int kw = D.width;
      for (int j = 0; j < m; ++j) {
        ps += lam[j] * std::abs(zd[j]);
        gs += lam[j] * std::abs(zd[j]) - uu[j] * zd[j];
        const double* cj = &D.c[static_cast<std::size_t>(j) * kw];
        double t = 0;
        for (int q = 0; q < kw; ++q) t += std::abs(cj[q] * bb[j + q]);
        az += (lam[j] + std::abs(uu[j])) * t;
      }
      cert_noise = 4.0 * (kw + 2) * std::numeric_limits<double>::epsilon() * (az + ls + rs);
      loss = ls;
      rr = rs;
      pen = ps;
      g = gs;
    }
    primal = loss / 2 + pen;
    gap = std::max(g, LD(0)) + rr / 2;
  };

  BandedLS ls;
  DualNormalBand qd;
  // Newton directions from the dual normal equations (dual_normal_band.hpp) for k <= 1 where they are measured
  // to hold: n (w_max / w_min)^(1/4) <= 3e5 (unweighted n = 1e5 and Exp(1)-weighted n = 1e4 held on every
  // problem tried; unweighted n = 1e6 and Exp(1)-weighted n = 1e5 lost the direction on most). Givens QR
  // otherwise, and as the fallback (a restart) when a dual-normal step is blocked.
  bool use_qd = false;
  if (ctl.newton != 1 && D.width <= 3) {
    const double wr = w.maxCoeff() / w.minCoeff();
    use_qd = ctl.newton == 2 || static_cast<double>(n) * std::sqrt(std::sqrt(wr)) <= 3e5;
  }
  if (use_qd) qd.prepare(D, w.data());
  Eigen::VectorXd th(m), ip(m), iq(m);
  Eigen::VectorXd gra(m), grb(m), gdb(n), gdu(m), gdp(m), gdq(m);
  Eigen::VectorXd sw = w.cwiseSqrt(), isw = sw.cwiseInverse(), sd(m), c1(n), c2(m), ia(m), ib(m), ith(m);
  Eigen::VectorXd nrd(n), rd(n), rp(m), ra(m), rb(m), g(m), tmpm(m), tmpn(n);
  Eigen::VectorXd dbeta(n), du(m), dp(m), dq(m), dbaff(n), duaff(m), dpaff(m), dqaff(m);
  // Solves the Newton system for complementarity residuals ra, rb (rd, rp fixed); fills db, du, dp, dq.
  auto direction = [&](Eigen::VectorXd& db, Eigen::VectorXd& duo, Eigen::VectorXd& dpo, Eigen::VectorXd& dqo,
                       bool factor) {
    for (int j = 0; j < m; ++j) g[j] = rp[j] + ra[j] * ia[j] - rb[j] * ib[j];
    if (use_qd) {
      if (factor) qd.factor(th.data());
      for (int j = 0; j < m; ++j) tmpm[j] = -g[j];
      qd.solve(nrd.data(), tmpm.data(), db.data(), duo.data());
    } else {
      for (int j = 0; j < m; ++j) c2[j] = -sd[j] * g[j];
      for (int i = 0; i < n; ++i) c1[i] = -rd[i] * isw[i];
      if (factor) ls.solve(D, sw.data(), sd.data(), c1.data(), c2.data(), db.data());
      else ls.resolve(m, c1.data(), c2.data(), db.data());
      D.apply(db.data(), tmpm.data());
      for (int j = 0; j < m; ++j) duo[j] = (tmpm[j] + g[j]) * ith[j];
    }
    for (int j = 0; j < m; ++j) {
      dpo[j] = (-ra[j] + pp[j] * duo[j]) * ia[j];
      dqo[j] = (-rb[j] - qq[j] * duo[j]) * ib[j];
    }
  };
  // largest step in (0, 1] that keeps p, q, a, b >= 0 (reciprocals ip, iq, ia, ib of the current point: no
  // divisions in the loop)
  auto max_step = [&](const Eigen::VectorXd& duo, const Eigen::VectorXd& dpo, const Eigen::VectorXd& dqo) {
    double r = 1.0;
    for (int j = 0; j < m; ++j) {
      const double r1 = std::max(-dpo[j] * ip[j], -dqo[j] * iq[j]);
      const double r2 = std::max(duo[j] * ia[j], -duo[j] * ib[j]);
      r = std::max(r, std::max(r1, r2));
    }
    return 1.0 / r;
  };

  IPResult res;
  LD primal = 0, gap = 0;
  double best_rel = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_beta = beta, best_u = u;
  LD best_primal = 0, best_gap = 0;
  bool best_ld = false;  // best pair certified in long double
  int it = 0;
  op.set_weights(w.cwiseInverse().eval().data());
  const VecLD yl = y.cast<LD>(), winvl = w.cwiseInverse().cast<LD>(), laml = lam.cast<LD>(), lambl = lamb.cast<LD>();
  ActiveSetPolisher<BandedOp> polisher(op, yl, w, winvl, laml, lambl, pfloor);
  double last_polish_mu = std::numeric_limits<double>::infinity();
  int last_gain = 0;
  for (; it < ctl.max_iter; ++it) {
    // residuals
    D.apply(beta.data(), z.data());
    D.apply_t(u.data(), tmpn.data());
    for (int i = 0; i < n; ++i) {
      rd[i] = w[i] * (beta[i] - y[i]) + tmpn[i];
      nrd[i] = -rd[i];
    }
    double mu = 0.0;
    for (int j = 0; j < m; ++j) {
      rp[j] = z[j] - pp[j] + qq[j];
      ia[j] = 1.0 / a[j];
      ib[j] = 1.0 / b[j];
      const double t = std::max(pp[j] * ia[j] + qq[j] * ib[j], 1e-280);
      ith[j] = 1.0 / t;
      th[j] = t;
      ip[j] = 1.0 / pp[j];
      iq[j] = 1.0 / qq[j];
      mu += pp[j] * a[j] + qq[j] * b[j];
    }
    mu /= 2.0 * m;
    // iterates lost to rounding (an overflowing pair): stop with the best certified pair so far; never hand
    // non-finite rows to the Givens QR, which would sweep them through every column
    if (!std::isfinite(mu) || !std::isfinite(rd.squaredNorm())) break;
    if (!use_qd)
      for (int j = 0; j < m; ++j) sd[j] = std::sqrt(ith[j]);
    // predictor
    for (int j = 0; j < m; ++j) {
      ra[j] = pp[j] * a[j];
      rb[j] = qq[j] * b[j];
    }
    direction(dbaff, duaff, dpaff, dqaff, true);
    const double saff = max_step(duaff, dpaff, dqaff);
    double muaff = 0.0;
    for (int j = 0; j < m; ++j)
      muaff += (pp[j] + saff * dpaff[j]) * (a[j] - saff * duaff[j]) + (qq[j] + saff * dqaff[j]) * (b[j] + saff * duaff[j]);
    muaff /= 2.0 * m;
    const double ratio = std::max(0.0, muaff / mu);
    const double sigma = ratio * ratio * ratio;
    // corrector
    for (int j = 0; j < m; ++j) {
      ra[j] = pp[j] * a[j] - dpaff[j] * duaff[j] - sigma * mu;
      rb[j] = qq[j] * b[j] + dqaff[j] * duaff[j] - sigma * mu;
    }
    direction(dbeta, du, dp, dq, false);
    double smax = max_step(du, dp, dq);
    // Gondzio (1996) multiple centrality correctors: push the outlying complementarity products of a trial
    // point further along back into [0.1, 10] sigma mu, keep the corrected direction if it allows a longer step
    for (int kc = 0; use_qd && kc < ctl.centrality && smax < 1.0; ++kc) {
      const double at = std::min(1.0, 1.1 * smax + 0.1);
      const double tgt = std::max(sigma * mu, 1e-300), lo = 0.1 * tgt, hi = 10.0 * tgt;
      for (int j = 0; j < m; ++j) {
        const double v1 = (pp[j] + at * dp[j]) * (a[j] - at * du[j]);
        const double v2 = (qq[j] + at * dq[j]) * (b[j] + at * du[j]);
        double t1 = v1 < lo ? lo - v1 : (v1 > hi ? hi - v1 : 0.0);
        double t2 = v2 < lo ? lo - v2 : (v2 > hi ? hi - v2 : 0.0);
        t1 = std::max(t1, -hi);
        t2 = std::max(t2, -hi);
        gra[j] = ra[j] - t1;
        grb[j] = rb[j] - t2;
      }
      ra.swap(gra);
      rb.swap(grb);
      direction(gdb, gdu, gdp, gdq, false);
      const double snew = max_step(gdu, gdp, gdq);
      if (snew >= smax + 0.1 * (at - smax)) {
        dbeta.swap(gdb); du.swap(gdu); dp.swap(gdp); dq.swap(gdq);
        smax = snew;
      } else {
        ra.swap(gra);
        rb.swap(grb);
        break;
      }
    }
    double step = std::min(1.0, 0.99 * smax);
    if (!std::isfinite(step) || !std::isfinite(sigma)) break;  // lost to rounding
    if (use_qd && step < 0.02) {
      // a blocked step: the dual normal equations have lost the direction (ill-conditioned D W^-1 D').
      // Restart with the Givens QR from the starting point (measured: continuing from the blocked iterate
      // could stall). Certified pairs found so far are kept.
      use_qd = false;
      start_point();
      last_gain = it;
      last_polish_mu = std::numeric_limits<double>::infinity();
#ifdef SB_TRACE
      std::fprintf(stderr, "QD -> Givens at step %d\n", it);
#endif
      continue;
    }
    beta += step * dbeta;
    u += step * du;
    pp += step * dp;
    qq += step * dq;
    for (int j = 0; j < m; ++j) {
      a[j] = lamb[j] - u[j];
      b[j] = lamb[j] + u[j];
      // keep strictly interior against rounding in lamb -/+ u
      if (!(a[j] > 0)) a[j] = std::numeric_limits<double>::min();
      if (!(b[j] > 0)) b[j] = std::numeric_limits<double>::min();
    }
    certify_pair(beta, u, false, primal, gap);
    double rg = rel(gap, primal);
    // the long-double certificate only where the double one, within its rounding error, may be near tol
    bool ld = false;
    if (rg < 1e-4 && rg < 100.0 * ctl.tol + cert_noise / std::max(static_cast<double>(primal), 1e-300)) {
      certify_pair(beta, u, true, primal, gap);
      rg = rel(gap, primal);
      ld = true;
    }
#ifdef SB_TRACE
    std::fprintf(stderr, "pit %d step %.3g sigma %.3g mu %.3g rel %.3g\n", it, step, sigma, mu, rg);
#endif
    if (rg < 0.5 * best_rel) last_gain = it;
    if (rg < best_rel) {
      best_rel = rg;
      best_beta = beta;
      best_u = u;
      best_primal = primal;
      best_gap = gap;
      best_ld = ld;
    }
    if (rg <= ctl.tol) {
      ++it;
      break;
    }
    // polishing on the active set read off the complementarity pairs: knot (+) when p_j / Zs > a_j / lam_j
    const double mu_rel = 2.0 * m * mu / std::max(static_cast<double>(primal), 1e-300);
    // (with dual-normal directions only once the gap has stopped halving: there the interior point itself
    // converged on every problem measured, and a polish costs about four of its steps)
    if (ctl.polish && mu_rel < 1e-3 * ctl.polish_from && mu < 1e-2 * last_polish_mu &&
        (!use_qd || it - last_gain >= 2)) {
      last_polish_mu = mu;
      double zs = 0.0;
      for (int j = 0; j < m; ++j) zs = std::max(zs, std::max(pp[j], qq[j]));
      std::vector<char>& act = polisher.active;
      std::vector<signed char>& sg = polisher.sign;
      act.assign(m, 0);
      sg.assign(m, 1);
      for (int j = 0; j < m; ++j) {
        if (pp[j] * lamb[j] > a[j] * zs) {
          act[j] = 1;
          sg[j] = 1;
        } else if (qq[j] * lamb[j] > b[j] * zs) {
          act[j] = 1;
          sg[j] = -1;
        }
      }
      const double pr = polisher.run(u.cast<LD>(), ctl.tol);
#ifdef SB_TRACE
      std::fprintf(stderr, "   polish rel %.3g\n", pr);
#endif
      if (pr < best_rel) {
        best_rel = pr;
        best_beta = polisher.beta.cast<double>();
        best_u = polisher.u.cast<double>();
        best_primal = polisher.primal;
        best_gap = polisher.gap;
        best_ld = true;
      }
      if (pr <= ctl.tol) {
        ++it;
        break;
      }
    }
    if (!(step > 1e-12)) break;
    // stall: no halving of the certified gap in stall_iter * 2 steps (the directions have lost accuracy)
    if (it - last_gain > 2 * ctl.stall_iter) {
      ++it;
      break;
    }
  }
  if (!best_ld && std::isfinite(best_rel)) {  // report a long-double certificate for the pair returned
    certify_pair(best_beta, best_u, true, best_primal, best_gap);
    best_rel = rel(best_gap, best_primal);
  }
  res.beta = best_beta;
  res.u = best_u;
  res.gap = static_cast<double>(best_gap);
  res.primal = static_cast<double>(best_primal);
  res.rel_gap = best_rel;
  res.converged = best_rel <= ctl.tol;
  res.iter = it;
  return res;
}

}  // namespace genlasso
}  // namespace scalebayes
