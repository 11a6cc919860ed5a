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
// (Theta + D W^{-1} D', dual_normal_band.hpp, about 10x cheaper; in long double beyond the double range) give
// the directions, with one Gondzio centrality corrector per step and a restart on the Givens QR if a step is
// blocked. Mehrotra's
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
#include <memory>
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
// T: double, or long double once the double factorization no longer resolves the system (primal_ip).
template <class T>
class BandedLS {
 public:
  // Factors A = [diag(sd) D; diag(sw)] (rows interleaved) and solves for (c1, c2); the rotations are
  // recorded so that resolve() can solve for another right-hand side with the same matrix (the corrector).
  void solve(const BandedD& D, const T* sw, const T* sd, const T* c1, const T* c2, T* x) {
    const int n = D.n, m = D.m, w = D.width;
    g_.reset(n, w);
    seg_end_.assign(2 * static_cast<std::size_t>(n), 0);
    std::vector<T>& a = g_.a;
    for (int i = 0; i < n; ++i) {
      if (i < m) {
        const double* ci = &D.c[static_cast<std::size_t>(i) * w];
        for (int q = 0; q < w; ++q) a[q] = sd[i] * static_cast<T>(ci[q]);
        g_.rotate_in(i, c2[i]);
      }
      seg_end_[2 * static_cast<std::size_t>(i)] = static_cast<int>(g_.n_records());
      std::fill(a.begin(), a.end(), T(0));
      a[0] = sw[i];
      g_.rotate_in(i, c1[i]);
      seg_end_[2 * static_cast<std::size_t>(i) + 1] = static_cast<int>(g_.n_records());
    }
    g_.solve_r(g_.qc.data(), x);
  }
  // Same matrix, new right-hand side: replays the recorded rotations.
  void resolve(int m, const T* c1, const T* c2, T* x) {
    qf_.resize(g_.ncol);
    g_.replay(seg_end_, [&](std::size_t k) {
      const std::size_t i = k / 2;
      return k % 2 == 0 ? (static_cast<int>(i) < m ? c2[i] : T(0)) : c1[i];
    }, qf_.data());
    g_.solve_r(qf_.data(), x);
  }

 private:
  GivensBandT<T> g_;
  std::vector<int> seg_end_;
  std::vector<T> qf_;
};

// The exact pair gap of (beta, u) in long double (see primal_ip), D beta and D'u row by row (no work
// vectors): P(beta) = 1/2 sum_i w_i (y_i - beta_i)^2 + sum_j lam_j |z_j|, z = D beta;
// gap = sum_j (lam_j |z_j| - u_j z_j) + 1/2 sum_i r_i^2 / w_i, r = W (y - beta) - D'u.
inline void certify_pair_ld(const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                            const Eigen::VectorXd& lam, const Eigen::VectorXd& bb, const Eigen::VectorXd& uu,
                            LD& primal, LD& gap) {
  const int n = D.n, m = D.m, kw = D.width;
  const double* c = D.c.data();
  LD loss = 0, rr = 0, pen = 0, g = 0;
  for (int t = 0; t < n; ++t) {
    LD dt = 0;  // (D'u)_t over the rows t - l of D that touch column t
    for (int l = std::max(0, t - m + 1); l <= std::min(kw - 1, t); ++l)
      dt += static_cast<LD>(c[static_cast<std::size_t>(t - l) * kw + l]) * static_cast<LD>(uu[t - l]);
    const LD e = static_cast<LD>(y[t]) - static_cast<LD>(bb[t]);
    loss += static_cast<LD>(w[t]) * e * e;
    const LD r = static_cast<LD>(w[t]) * e - dt;
    rr += r * r / static_cast<LD>(w[t]);
  }
  for (int j = 0; j < m; ++j) {
    LD zj = 0;
    for (int l = 0; l < kw; ++l) zj += static_cast<LD>(c[static_cast<std::size_t>(j) * kw + l]) * static_cast<LD>(bb[j + l]);
    const LD lj = lam[j];
    pen += lj * std::abs(zj);
    g += lj * std::abs(zj) - static_cast<LD>(uu[j]) * zj;
  }
  primal = loss / 2 + pen;
  gap = std::max(g, LD(0)) + rr / 2;
}

// Largest size n (w_max / w_min)^(1/4) for which the primal interior point uses the dual normal equations in
// long double (k <= 1; see primal_ip). Measured: unweighted n = 2e5, 5e5, 1e6 and Exp(1)-weighted n = 1e5,
// 2e5 (sizes up to 4e6) certify in 20-28 steps, 1.6-2.4x faster than the Givens QR (n = 1e6: 5 s against
// 12.7 s); uneven x with weights over 8 decades (n = 1e4, 3e4) can lose the direction and restart on the QR,
// at most 1.25x the QR alone.
constexpr double QD_LD_MAX = 1e7;

// Solves the weighted problem for a banded D (already row-scaled, see ScaledD). lam: per-row penalties.
// beta_start (optional): a primal warm start.
//
// Each step streams its O(n) vectors as few times as it can (at n = 1e5 and k = 1 these passes, not the banded
// solves, were half the time): the certificate of the new iterate leaves D beta, D'u and the dual residual
// for the next step, the predictor's right-hand side is D beta itself, its step length and predicted
// complementarity come from one pass, and the work vectors of the unused Newton path, of the Gondzio corrector
// and of the polisher are allocated only when needed.
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

  // iterate; z = D beta, dtu = D'u and rd = W (beta - y) + D'u always belong to it (set by start_point and by
  // the certificate of every new iterate)
  Eigen::VectorXd beta(n), u(m), z(m), pp(m), qq(m), a(m), b(m), dtu(n), rd(n);
  bool rd_finite = true;
  // starting point: p - q = D beta, shifted into the interior so that the pairs are balanced
  auto start_point = [&]() {
    if (beta_start && beta_start->size() == n) beta = *beta_start;
    else beta = y;
    u.setZero();
    D.apply(beta.data(), z.data());
    dtu.setZero();
    rd = w.cwiseProduct(beta - y);
    double zabs = 0.0;
    for (int j = 0; j < m; ++j) zabs += std::abs(z[j]);
    zabs = std::max(zabs / m, 1e-12 * (y.cwiseAbs().maxCoeff() + 1.0));
    for (int j = 0; j < m; ++j) {
      pp[j] = std::max(z[j], 0.0) + zabs;
      qq[j] = std::max(-z[j], 0.0) + zabs;
      a[j] = lamb[j];
      b[j] = lamb[j];
    }
    rd_finite = std::isfinite(rd.squaredNorm());
  };
  start_point();
  // lost-direction test (see the loop): dual residual of the last iterate; previous iterate
  double rr_prev = 0;
  bool lost_check = false;  // not on the first step from a starting point
  Eigen::VectorXd prev_beta, prev_u, prev_p, prev_q;
  VecLD prev_bL, prev_uL;
  int ext = 0;  // precision level (see below)
  VecLD bL, uL;  // long-double iterate (ext >= 1)
  auto previous = [&](bool restore) {  // keep (false) or go back to (true) the previous iterate
    auto mv = [restore](auto& cur, auto& prev) {
      if (restore) cur = prev;
      else prev = cur;
    };
    mv(beta, prev_beta);
    mv(u, prev_u);
    mv(pp, prev_p);
    mv(qq, prev_q);
    if (ext) {
      mv(bL, prev_bL);
      mv(uL, prev_uL);
    }
  };

  // certificate: the gap of the pair (beta, u)
  const LD pfloor = gap_floor(y, w);
  auto rel = [&](LD g, LD pr) { return static_cast<double>(g / std::max(pr, pfloor)); };
  // in double, for the current iterate; also refreshes z, dtu and rd for the next step
  double cert_ls = 0, cert_rs = 0;
  auto certify_current = [&](LD& primal, LD& gap) {
    D.apply(beta.data(), z.data());
    D.apply_t(u.data(), dtu.data());
    double ls = 0, rs = 0, ps = 0, gs = 0;
    for (int i = 0; i < n; ++i) {
      const double e = beta[i] - y[i];
      const double r = w[i] * e + dtu[i];
      rd[i] = r;
      ls += w[i] * e * e;
      rs += r * r / w[i];
    }
    for (int j = 0; j < m; ++j) {
      const double t = lam[j] * std::abs(z[j]);
      ps += t;
      gs += t - u[j] * z[j];
    }
    cert_ls = ls;
    cert_rs = rs;
    rd_finite = std::isfinite(rs);
    primal = ls / 2 + ps;
    gap = std::max(gs, 0.0) + rs / 2;
  };
  // bound on the rounding error of that double-precision gap
  auto cert_noise = [&]() {
    double az = 0;  // sum_j (lam_j + |u_j|) (|D| |beta|)_j: scales the rounding error of the penalty terms
    const int kw = D.width;
    for (int j = 0; j < m; ++j) {
      const double* cj = &D.c[static_cast<std::size_t>(j) * kw];
      double t = 0;
      for (int q = 0; q < kw; ++q) t += std::abs(cj[q] * beta[j + q]);
      az += (lam[j] + std::abs(u[j])) * t;
    }
    return 4.0 * (kw + 2) * std::numeric_limits<double>::epsilon() * (az + cert_ls + cert_rs);
  };

  BandedLS<double> ls;
  DualNormalBand qd;
  DualNormalBandT<LD> qdx;
  // Newton directions from the dual normal equations (dual_normal_band.hpp) for k <= 1 where they are measured
  // to hold. Size s = n (w_max / w_min)^(1/4): in double up to s = 3e5 (unweighted n = 1e5 and Exp(1)-weighted
  // n = 1e4 held on every problem tried; unweighted n = 1e6 and Exp(1)-weighted n = 1e5 lost the direction on
  // most), in long double up to QD_LD_MAX (see there). Givens QR otherwise, and as the fallback (a restart) when
  // a dual-normal step is blocked.
  int qd_kind = 0;  // 0: Givens QR (also after a restart), 1: dual normal equations in double, 2: in long double
  if (ctl.newton != 1 && D.width <= 3) {
    const double wr = w.maxCoeff() / w.minCoeff();
    const double size = static_cast<double>(n) * std::sqrt(std::sqrt(wr));
    qd_kind = size <= 3e5 ? 1 : (size <= QD_LD_MAX || ctl.newton == 2) ? 2 : 0;
  }
  auto with_qd = [&](auto&& f) {
    if (qd_kind == 2) f(qdx);
    else f(qd);
  };
  if (qd_kind > 0) with_qd([&](auto& q) { q.prepare(D, w.data()); });
  // keep the slacks strictly interior against rounding in lamb -/+ u. With dual-normal directions at least half
  // the resolution of u near the box (eps lam_j / 2): with the underflow threshold, Theta = p/a reached 1e302 at
  // n = 1e6, k = 1 and the next factorization overflowed two steps short of the target. The Givens QR takes
  // sqrt(1/Theta) and keeps the underflow threshold (the larger floor cost n = 1e5, k = 2 its certificate).
  auto set_slacks = [&]() {
    constexpr double half_eps = 0.5 * std::numeric_limits<double>::epsilon();
    for (int j = 0; j < m; ++j) {
      const double amin = qd_kind > 0 ? half_eps * lamb[j] : std::numeric_limits<double>::min();
      if (!(a[j] > amin)) a[j] = amin;
      if (!(b[j] > amin)) b[j] = amin;
    }
  };
  Eigen::VectorXd th(m), ip(m), iq(m), ia(m), ib(m), ra(m), rb(m), g(m);
  Eigen::VectorXd dbeta(n), du(m), dp(m), dq(m), duaff(m);
  // Gondzio corrector (dual-normal path only)
  Eigen::VectorXd gra, grb, gdu, gdp, gdq;
  if (qd_kind > 0 && ctl.centrality > 0) {
    gra.resize(m); grb.resize(m); gdu.resize(m); gdp.resize(m); gdq.resize(m);
  }
  // Givens QR path
  Eigen::VectorXd sw, isw, sd, c1, c2, ith, tmpm;
  auto qr_work = [&]() {
    if (sw.size() == n) return;
    sw = w.cwiseSqrt();
    isw = sw.cwiseInverse();
    sd.resize(m); c1.resize(n); c2.resize(m); ith.resize(m); tmpm.resize(m);
  };
  // Extended precision, switched on by lost directions (Givens path only; see the loop). The multipliers
  // du = Theta^-1 (D db + g) carry the rounding of D db times Theta^-1 (~ lam^2 / mu, 1e29 at k = 3, n = 1e5),
  // and D'u must match residuals of the size of y while u is of the size of lam (up to n^(k+1) times larger):
  // for k >= 2 at large n the double directions stop satisfying W db + D'du = -rd and the dual residual grows
  // instead of shrinking (measured: n = 1e5, k = 2 from 0.5 to 3.8e8 over 70 steps). Level 1 keeps the iterate
  // (bL, uL) and its residuals (rdL, rpL) in long double and refines every direction once on the unreduced
  // system; level 2 also factors in long double (BandedLS<LD>). The returned pair and every certificate stay
  // those of the double rounding of the iterate.
  VecLD rdL, rpL, dbL, duL, rz, rt, swL, iswL, sdL, c1L, c2L, xbL;
  const VecLD lambL = lamb.cast<LD>();
  Eigen::VectorXd rpd, f1, f2, eb, eu;
  BandedLS<LD> lsx;
  // D beta, D'u and the residuals of the long-double iterate (z holds rp + p - q, the predictor's right-hand side)
  auto ext_residuals = [&]() {
    op.D(bL.data(), rz.data());
    op.Dt(uL.data(), rt.data());
    double rs = 0;
    for (int i = 0; i < n; ++i) {
      rdL[i] = static_cast<LD>(w[i]) * (bL[i] - static_cast<LD>(y[i])) + rt[i];
      rd[i] = static_cast<double>(rdL[i]);
      rs += rd[i] * rd[i] / w[i];
    }
    for (int j = 0; j < m; ++j) {
      rpL[j] = rz[j] - static_cast<LD>(pp[j]) + static_cast<LD>(qq[j]);
      rpd[j] = static_cast<double>(rpL[j]);
      z[j] = static_cast<double>(rpL[j] + static_cast<LD>(pp[j]) - static_cast<LD>(qq[j]));
    }
    rd_finite = std::isfinite(rs);
    return rs;
  };
  // one Givens solve  W db + D' du = -r1v,  D db - Theta du = -r2v  (double or long-double factorization)
  auto qr_solve = [&](const double* r1v, const double* r2v, bool factor, double* db, double* duo) {
    if (ext < 2) {
      for (int j = 0; j < m; ++j) c2[j] = -sd[j] * r2v[j];
      for (int i = 0; i < n; ++i) c1[i] = -r1v[i] * isw[i];
      if (factor) ls.solve(D, sw.data(), sd.data(), c1.data(), c2.data(), db);
      else ls.resolve(m, c1.data(), c2.data(), db);
      D.apply(db, tmpm.data());
      for (int j = 0; j < m; ++j) duo[j] = (tmpm[j] + r2v[j]) * ith[j];
    } else {
      if (factor)
        for (int j = 0; j < m; ++j) sdL[j] = std::sqrt(1 / static_cast<LD>(th[j]));
      for (int j = 0; j < m; ++j) c2L[j] = -sdL[j] * r2v[j];
      for (int i = 0; i < n; ++i) c1L[i] = -r1v[i] * iswL[i];
      if (factor) lsx.solve(D, swL.data(), sdL.data(), c1L.data(), c2L.data(), xbL.data());
      else lsx.resolve(m, c1L.data(), c2L.data(), xbL.data());
      op.D(xbL.data(), rz.data());
      for (int j = 0; j < m; ++j) duo[j] = static_cast<double>((rz[j] + r2v[j]) * sdL[j] * sdL[j]);
      for (int i = 0; i < n; ++i) db[i] = static_cast<double>(xbL[i]);
    }
  };
  // Newton direction (db, duo) for the rows' right-hand side gv = rp + ra/a - rb/b (rd fixed):
  //   W db + D' du = -rd,   D db - Theta du = -gv
  // With dual-normal directions db is left out (dbeta follows from the chosen du, qd.back_substitute()).
  auto direction = [&](const double* gv, Eigen::VectorXd& db, Eigen::VectorXd& duo, bool factor) {
    if (qd_kind > 0) {
      with_qd([&](auto& q) {
        if (factor) {
          q.factor(th.data());
          q.set_r1(rd.data());
        }
        q.solve_neg(gv, duo.data());
      });
      return;
    }
    qr_solve(rd.data(), gv, factor, db.data(), duo.data());
    if (ext == 0) return;
    // one refinement step: the residuals of the unreduced system in long double (rows of D with dp, dq
    // eliminated: rp + D db - Theta du + ra/a - rb/b, where gv - rp = ra/a - rb/b), the correction from the same
    // factorization, the direction accumulated in long double
    dbL = db.cast<LD>();
    duL = duo.cast<LD>();
    op.D(dbL.data(), rz.data());
    op.Dt(duL.data(), rt.data());
    for (int i = 0; i < n; ++i) f1[i] = static_cast<double>(rdL[i] + static_cast<LD>(w[i]) * dbL[i] + rt[i]);
    for (int j = 0; j < m; ++j)
      f2[j] = static_cast<double>(rpL[j] + rz[j] - static_cast<LD>(th[j]) * duL[j] +
                                  (static_cast<LD>(gv[j]) - static_cast<LD>(rpd[j])));
    qr_solve(f1.data(), f2.data(), false, eb.data(), eu.data());
    for (int i = 0; i < n; ++i) {
      dbL[i] += eb[i];
      db[i] = static_cast<double>(dbL[i]);
    }
    for (int j = 0; j < m; ++j) {
      duL[j] += eu[j];
      duo[j] = static_cast<double>(duL[j]);
    }
  };
  // escalation: level 1 from the double iterate, level 2 adds the long-double factorization
  auto escalate = [&]() {
    ++ext;
    if (ext == 1) {
      bL = beta.cast<LD>();
      uL = u.cast<LD>();
      rdL.resize(n); rpL.resize(m); rz.resize(m); rt.resize(n);
      rpd.resize(m); f1.resize(n); f2.resize(m); eb.resize(n); eu.resize(m);
    } else {
      swL = w.cast<LD>().cwiseSqrt();
      iswL = swL.cwiseInverse();
      sdL.resize(m); c1L.resize(n); c2L.resize(m); xbL.resize(n);
    }
  };
  // dp, dq of a direction for the complementarity residuals ra, rb, and the largest step in (0, 1] that keeps
  // p, q, a, b >= 0 (reciprocals ip, iq, ia, ib of the current point: no divisions)
  auto finish = [&](const Eigen::VectorXd& duo, Eigen::VectorXd& dpo, Eigen::VectorXd& dqo) {
    double r = 1.0;
    for (int j = 0; j < m; ++j) {
      const double dj = duo[j];
      dpo[j] = (-ra[j] + pp[j] * dj) * ia[j];
      dqo[j] = (-rb[j] - qq[j] * dj) * ib[j];
      const double r1 = std::max(-dpo[j] * ip[j], -dqo[j] * iq[j]);
      const double r2 = std::max(dj * ia[j], -dj * ib[j]);
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
  // the polisher and its long-double data, made on first use
  struct PolishData {
    VecLD yl, winvl, laml, lambl;
    std::unique_ptr<ActiveSetPolisher<BandedOp>> pol;
  };
  std::unique_ptr<PolishData> pd;
  auto polisher = [&]() -> ActiveSetPolisher<BandedOp>& {
    if (!pd) {
      pd.reset(new PolishData);
      const Eigen::VectorXd winv = w.cwiseInverse();
      op.set_weights(winv.data());
      pd->yl = y.cast<LD>();
      pd->winvl = winv.cast<LD>();
      pd->laml = lam.cast<LD>();
      pd->lambl = lamb.cast<LD>();
      pd->pol.reset(new ActiveSetPolisher<BandedOp>(op, pd->yl, w, pd->winvl, pd->laml, pd->lambl, pfloor));
    }
    return *pd->pol;
  };
  double last_polish_mu = std::numeric_limits<double>::infinity();
  int last_gain = 0;
  // Polishes on the active set (knots) read off the complementarity pairs of the current iterate: knot (+) when
  // p_j / Zs > a_j / lam_j. Keeps the polished pair if its certificate is the best; returns that certificate.
  auto run_polish = [&]() {
    double zs = 0.0;
    for (int j = 0; j < m; ++j) zs = std::max(zs, std::max(pp[j], qq[j]));
    ActiveSetPolisher<BandedOp>& pol = polisher();
    std::vector<char>& act = pol.active;
    std::vector<signed char>& sg = pol.sign;
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
    const double pr = pol.run(u.cast<LD>(), ctl.tol);
#ifdef SB_TRACE
    std::fprintf(stderr, "   polish rel %.3g\n", pr);
#endif
    if (pr < best_rel) {
      best_rel = pr;
      best_beta = pol.beta.cast<double>();
      best_u = pol.u.cast<double>();
      best_primal = pol.primal;
      best_gap = pol.gap;
      best_ld = true;
    }
    return pr;
  };
  for (; it < ctl.max_iter; ++it) {
    double mu = 0.0;
    for (int j = 0; j < m; ++j) {
      ia[j] = 1.0 / a[j];
      ib[j] = 1.0 / b[j];
      th[j] = std::max(pp[j] * ia[j] + qq[j] * ib[j], 1e-280);
      ip[j] = 1.0 / pp[j];
      iq[j] = 1.0 / qq[j];
      mu += pp[j] * a[j] + qq[j] * b[j];
    }
    mu /= 2.0 * m;
    // iterates lost to rounding (an overflowing pair): stop with the best certified pair so far; never hand
    // non-finite rows to the Givens QR, which would sweep them through every column
    if (!std::isfinite(mu) || !rd_finite) break;
    if (qd_kind == 0) {
      qr_work();
      for (int j = 0; j < m; ++j) {
        ith[j] = 1.0 / th[j];
        sd[j] = std::sqrt(ith[j]);
      }
    }
    // predictor (ra = p a, rb = q b): the right-hand side rp + p - q is D beta itself, dp = p (du/a - 1),
    // dq = -q (1 + du/b); the predicted complementarity after a step s is mu (1 - s) + s^2 sum du (dq - dp) / 2m
    direction(z.data(), dbeta, duaff, true);
    double rmax = 1.0, a2 = 0.0;
    for (int j = 0; j < m; ++j) {
      const double s1 = duaff[j] * ia[j], s2 = duaff[j] * ib[j];
      rmax = std::max(rmax, std::max(std::max(1.0 - s1, 1.0 + s2), std::max(s1, -s2)));
      a2 += duaff[j] * (-qq[j] * (1.0 + s2) - pp[j] * (s1 - 1.0));
    }
    const double saff = 1.0 / rmax;
    const double muaff = mu * (1.0 - saff) + saff * saff * a2 / (2.0 * m);
    const double ratio = std::max(0.0, muaff / mu);
    const double sigma = ratio * ratio * ratio;
    // corrector
    const double smu = sigma * mu;
    for (int j = 0; j < m; ++j) {
      const double dpa = pp[j] * (duaff[j] * ia[j] - 1.0), dqa = -qq[j] * (1.0 + duaff[j] * ib[j]);
      ra[j] = pp[j] * a[j] - dpa * duaff[j] - smu;
      rb[j] = qq[j] * b[j] + dqa * duaff[j] - smu;
      const double rpj = ext ? rpd[j] : z[j] - pp[j] + qq[j];
      g[j] = rpj + ra[j] * ia[j] - rb[j] * ib[j];
    }
    direction(g.data(), dbeta, du, false);
    double smax = finish(du, dp, dq);
    // Gondzio (1996) multiple centrality correctors: push the outlying complementarity products of a trial
    // point further along back into [0.1, 10] sigma mu, keep the corrected direction if it allows a longer step
    for (int kc = 0; qd_kind > 0 && kc < ctl.centrality && smax < 1.0; ++kc) {
      const double at = std::min(1.0, 1.1 * smax + 0.1);
      const double tgt = std::max(smu, 1e-300), lo = 0.1 * tgt, hi = 10.0 * tgt;
      for (int j = 0; j < m; ++j) {
        const double v1 = (pp[j] + at * dp[j]) * (a[j] - at * du[j]);
        const double v2 = (qq[j] + at * dq[j]) * (b[j] + at * du[j]);
        double t1 = v1 < lo ? lo - v1 : (v1 > hi ? hi - v1 : 0.0);
        double t2 = v2 < lo ? lo - v2 : (v2 > hi ? hi - v2 : 0.0);
        t1 = std::max(t1, -hi);
        t2 = std::max(t2, -hi);
        gra[j] = ra[j] - t1;
        grb[j] = rb[j] - t2;
        g[j] = (z[j] - pp[j] + qq[j]) + gra[j] * ia[j] - grb[j] * ib[j];
      }
      ra.swap(gra);
      rb.swap(grb);
      direction(g.data(), dbeta, gdu, false);
      const double snew = finish(gdu, gdp, gdq);
      if (snew >= smax + 0.1 * (at - smax)) {
        du.swap(gdu); dp.swap(gdp); dq.swap(gdq);
        smax = snew;
      } else {
        ra.swap(gra);
        rb.swap(grb);
        break;
      }
    }
    if (qd_kind > 0) with_qd([&](auto& q) { q.back_substitute(du.data(), dbeta.data()); });
    double step = std::min(1.0, 0.99 * smax);
    if (!std::isfinite(step) || !std::isfinite(sigma)) break;  // lost to rounding
    if (qd_kind > 0 && step < 0.02) {
      // a blocked step: the dual normal equations have lost the direction (ill-conditioned D W^-1 D').
      // Restart with the Givens QR from the starting point (measured: continuing from the blocked iterate
      // could stall). Certified pairs found so far are kept.
      qd_kind = 0;
      start_point();
      lost_check = false;
      last_gain = it;
      last_polish_mu = std::numeric_limits<double>::infinity();
#ifdef SB_TRACE
      std::fprintf(stderr, "QD -> Givens at step %d\n", it);
#endif
      continue;
    }
    if (ctl.escalate && qd_kind == 0) previous(false);  // the iterate to go back to if this step's directions are lost
    if (ext) {
      for (int i = 0; i < n; ++i) {
        bL[i] += step * dbL[i];
        beta[i] = static_cast<double>(bL[i]);
      }
      for (int j = 0; j < m; ++j) {
        uL[j] += step * duL[j];
        u[j] = static_cast<double>(uL[j]);
        pp[j] += step * dp[j];
        qq[j] += step * dq[j];
        a[j] = static_cast<double>(lambL[j] - uL[j]);
        b[j] = static_cast<double>(lambL[j] + uL[j]);
      }
    } else {
      beta += step * dbeta;
      for (int j = 0; j < m; ++j) {
        u[j] += step * du[j];
        pp[j] += step * dp[j];
        qq[j] += step * dq[j];
        a[j] = lamb[j] - u[j];
        b[j] = lamb[j] + u[j];
      }
    }
    set_slacks();
    certify_current(primal, gap);
    // Lost directions (Givens path): exact Newton directions shrink the dual residual by (1 - step) per step.
    // Where it grows a hundredfold and dominates the certified gap, the factorization no longer resolves the
    // system: go back to the previous iterate and escalate the precision (refinement with a long-double
    // iterate, then the long-double factorization); where even that fails, stop with the best pair (continuing
    // only drifts away).
    const double rr = ext ? ext_residuals() : cert_rs;
    if (ctl.escalate && qd_kind == 0 && lost_check && rr > 100.0 * rr_prev &&
        rr > std::max(static_cast<double>(gap), 1e-3 * ctl.tol * static_cast<double>(primal))) {
#ifdef SB_TRACE
      std::fprintf(stderr, "directions lost at step %d (rr %.3g -> %.3g), precision level %d\n", it, rr_prev, rr, ext + 1);
#endif
      if (ext == 2) {
        ++it;
        break;
      }
      previous(true);
      escalate();
      for (int j = 0; j < m; ++j) {
        a[j] = static_cast<double>(lambL[j] - uL[j]);
        b[j] = static_cast<double>(lambL[j] + uL[j]);
      }
      set_slacks();
      certify_current(primal, gap);
      rr_prev = ext_residuals();
      continue;
    }
    lost_check = true;
    rr_prev = rr;
    double rg = rel(gap, primal);
    // the long-double certificate only where the double one, within its rounding error, may be near tol
    bool ld = false;
    if (rg < 1e-4 && rg < 100.0 * ctl.tol + cert_noise() / std::max(static_cast<double>(primal), 1e-300)) {
      certify_pair_ld(D, y, w, lam, beta, u, primal, gap);
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
        (qd_kind == 0 || it - last_gain >= 2)) {
      last_polish_mu = mu;
      if (run_polish() <= ctl.tol) {
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
    certify_pair_ld(D, y, w, lam, best_beta, best_u, best_primal, best_gap);
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
