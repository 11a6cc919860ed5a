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
// complementarity pairs and the primal is polished exactly on it (polisher.hpp, ActiveSetPolisher).
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

#include "banded_ls.hpp"
#include "certificate.hpp"
#include "difference.hpp"
#include "dual_normal_band.hpp"
#include "ip_types.hpp"
#include "operators.hpp"
#include "polisher.hpp"

namespace scalebayes {
namespace genlasso {

// Largest size n (w_max / w_min)^(1/4) for which the primal interior point uses the dual normal equations in
// long double (k <= 1; see primal_ip). Measured: unweighted n = 2e5, 5e5, 1e6 and Exp(1)-weighted n = 1e5,
// 2e5 (sizes up to 4e6) certify in 20-28 steps, 1.6-2.4x faster than the Givens QR (n = 1e6: 5 s against
// 12.7 s); uneven x with weights over 8 decades (n = 1e4, 3e4) can lose the direction and restart on the QR,
// at most 1.25x the QR alone.
constexpr double QD_LD_MAX = 1e7;
namespace detail {

// The primal interior point as named steps; primal_ip() below runs it. One object per solve. The main loop
// (run()) reads: scale the pairs -> predictor -> corrector (+ Gondzio correctors) -> step length -> take the
// step -> certificate -> lost-direction test (escalation) -> best pair, polish, stopping rules.
//
// Each step streams its O(n) vectors as few times as it can (at n = 1e5 and k = 1 these passes, not the banded
// solves, were half the time): the certificate of the new iterate leaves D beta, D'u and the dual residual
// for the next step, the predictor's right-hand side is D beta itself, its step length and predicted
// complementarity come from one pass, and the work vectors of the unused Newton path, of the Gondzio corrector
// and of the polisher are allocated only when needed.
class PrimalIP {
 public:
  PrimalIP(BandedOp& op, const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
           const Eigen::VectorXd& lam, const IPControl& ctl, const Eigen::VectorXd* beta_start)
      : op(op), D(D), y(y), w(w), lam(lam), ctl(ctl), beta_start(beta_start), n(D.n), m(D.m) {
    if (y.size() != n || w.size() != n) throw std::invalid_argument("y and w must have length n");
    if (lam.size() != m) throw std::invalid_argument("lambda must have one entry per row of D");
    for (int j = 0; j < m; ++j)
      if (!(lam[j] >= 0) || !std::isfinite(lam[j])) throw std::invalid_argument("lambda must be finite and >= 0");
    // rows with lam_j == 0 are unconstrained: a tiny box keeps the complementarity pairs defined
    lamb = lam;
    double lscale = lamb.maxCoeff();
    if (!(lscale > 0)) lscale = 1;
    for (int j = 0; j < m; ++j)
      if (lamb[j] <= 1e-300) lamb[j] = 1e-12 * lscale;
    beta.resize(n); u.resize(m); z.resize(m); pp.resize(m); qq.resize(m); a.resize(m); b.resize(m);
    dtu.resize(n); rd.resize(n);
    start_point();
    pfloor = gap_floor(y, w);
    choose_newton_path();
    th.resize(m); ip.resize(m); iq.resize(m); ia.resize(m); ib.resize(m); ra.resize(m); rb.resize(m); g.resize(m);
    dbeta.resize(n); du.resize(m); dp.resize(m); dq.resize(m); duaff.resize(m);
    if (qd_kind > 0 && ctl.centrality > 0) {
      gra.resize(m); grb.resize(m); gdu.resize(m); gdp.resize(m); gdq.resize(m);
    }
    lambL = lamb.cast<LD>();
    best_beta = beta;
    best_u = u;
  }

  IPResult run() {
    for (; it < ctl.max_iter; ++it) {
      const double mu = scale_pairs();
      // iterates lost to rounding (an overflowing pair): stop with the best certified pair so far; never hand
      // non-finite rows to the Givens QR, which would sweep them through every column
      if (!std::isfinite(mu) || !rd_finite) break;
      if (qd_kind == 0) qr_weights();
      const double sigma = predictor(mu);
      const double smu = sigma * mu;
      double smax = corrector(smu);
      if (qd_kind > 0) smax = centrality_correctors(smu, smax);
      if (qd_kind > 0) with_qd([&](auto& q) { q.back_substitute(du.data(), dbeta.data()); });
      const double step = std::min(1.0, 0.99 * smax);
      if (!std::isfinite(step) || !std::isfinite(sigma)) break;  // lost to rounding
      if (qd_kind > 0 && step < 0.02) {
        restart_on_qr();
        continue;
      }
      if (ctl.escalate && qd_kind == 0) previous(false);  // the iterate to go back to if this step's directions are lost
      take_step(step);
      set_slacks();
      certify_current();
      const double rr = ext ? ext_residuals() : cert_rs;
      if (directions_lost(rr)) {
#ifdef SB_TRACE
        std::fprintf(stderr, "directions lost at step %d (rr %.3g -> %.3g), precision level %d\n", it, rr_prev, rr,
                     ext + 1);
#endif
        if (ext == 2) {  // even the long-double factorization fails: stop with the best pair
          ++it;
          break;
        }
        escalate_from_previous();
        continue;
      }
      lost_check = true;
      rr_prev = rr;
      const bool ld = certificate();
      const double rg = rel(gap, primal);
#ifdef SB_TRACE
      std::fprintf(stderr, "pit %d step %.3g sigma %.3g mu %.3g rel %.3g\n", it, step, sigma, mu, rg);
#endif
      if (rg < 0.5 * best_rel) last_gain = it;
      if (rg < best_rel) keep_best(beta, u, primal, gap, rg, ld);
      if (rg <= ctl.tol) {
        ++it;
        break;
      }
      if (polish_due(mu) && polish() <= ctl.tol) {
        ++it;
        break;
      }
      if (!(step > 1e-12)) break;
      // stall: no halving of the certified gap in stall_iter * 2 steps (the directions have lost accuracy)
      if (it - last_gain > 2 * ctl.stall_iter) {
        ++it;
        break;
      }
    }
    return result();
  }

 private:
  // ---- problem
  BandedOp& op;
  const BandedD& D;
  const Eigen::VectorXd &y, &w, &lam;
  const IPControl& ctl;
  const Eigen::VectorXd* beta_start;
  const int n, m;
  Eigen::VectorXd lamb;  // lam with a tiny box on rows with lam_j == 0
  VecLD lambL;
  LD pfloor = 0;  // denominator floor of the relative gap

  // ---- iterate; z = D beta, dtu = D'u and rd = W (beta - y) + D'u always belong to it (set by start_point and
  // by the certificate of every new iterate)
  Eigen::VectorXd beta, u, z, pp, qq, a, b, dtu, rd;
  bool rd_finite = true;
  int it = 0;

  // ---- certificate of the iterate and the best pair so far
  LD primal = 0, gap = 0;
  double cert_ls = 0, cert_rs = 0;  // weighted loss and squared dual residual of the double certificate
  double best_rel = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_beta, best_u;
  LD best_primal = 0, best_gap = 0;
  bool best_ld = false;  // best pair certified in long double
  int last_gain = 0;     // last step that halved the best certificate

  // ---- Newton system
  // Newton directions from the dual normal equations (dual_normal_band.hpp) for k <= 1 where they are measured
  // to hold, else the Givens QR (BandedLS).
  int qd_kind = 0;  // 0: Givens QR (also after a restart), 1: dual normal equations in double, 2: in long double
  DualNormalBand qd;
  DualNormalBandT<LD> qdx;
  BandedLS<double> qr;
  Eigen::VectorXd th, ip, iq, ia, ib;  // Theta = p/a + q/b and the reciprocals of p, q, a, b
  Eigen::VectorXd ra, rb, g;           // complementarity residuals and the rows' right-hand side
  Eigen::VectorXd dbeta, du, dp, dq, duaff;
  Eigen::VectorXd gra, grb, gdu, gdp, gdq;  // Gondzio corrector (dual-normal path only)
  Eigen::VectorXd sw, isw, sd, c1, c2, ith, tmpm;  // Givens QR path (allocated on first use)

  // ---- precision escalation (Givens path, IPControl::escalate)
  double rr_prev = 0;       // squared dual residual of the last iterate
  bool lost_check = false;  // not on the first step from a starting point
  Eigen::VectorXd prev_beta, prev_u, prev_p, prev_q;
  VecLD prev_bL, prev_uL;
  int ext = 0;   // precision level: 0 double, 1 long-double iterate + refinement, 2 also long-double QR
  VecLD bL, uL;  // long-double iterate (ext >= 1)
  VecLD rdL, rpL, dbL, duL, rz, rt, swL, iswL, sdL, c1L, c2L, xbL;
  Eigen::VectorXd rpd, f1, f2, eb, eu;
  BandedLS<LD> qrx;

  // ---- polishing (made on first use)
  struct PolishData {
    VecLD yl, winvl, laml, lambl;
    std::unique_ptr<ActiveSetPolisher<BandedOp>> pol;
  };
  std::unique_ptr<PolishData> pd;
  double last_polish_mu = std::numeric_limits<double>::infinity();

  double rel(LD gv, LD pr) const { return static_cast<double>(gv / std::max(pr, pfloor)); }

  // Starting point: beta = beta_start or y, u = 0, p - q = D beta shifted into the interior so that the pairs
  // are balanced.
  void start_point() {
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
  }

  // Keep (false) or go back to (true) the previous iterate.
  void previous(bool restore) {
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
  }

  // ---------------------------------------------------------------- Newton system
  // Size s = n (w_max / w_min)^(1/4): dual normal equations in double up to s = 3e5 (unweighted n = 1e5 and
  // Exp(1)-weighted n = 1e4 held on every problem tried; unweighted n = 1e6 and Exp(1)-weighted n = 1e5 lost the
  // direction on most), in long double up to QD_LD_MAX (see there). Givens QR otherwise, and as the fallback (a
  // restart) when a dual-normal step is blocked. IPControl::newton forces either path.
  void choose_newton_path() {
    if (ctl.newton != 1 && D.width <= 3) {
      const double wr = w.maxCoeff() / w.minCoeff();
      const double size = static_cast<double>(n) * std::sqrt(std::sqrt(wr));
      qd_kind = size <= 3e5 ? 1 : (size <= QD_LD_MAX || ctl.newton == 2) ? 2 : 0;
    }
    if (qd_kind > 0) with_qd([&](auto& q) { q.prepare(D, w.data()); });
  }
  template <class F>
  void with_qd(F&& f) {
    if (qd_kind == 2) f(qdx);
    else f(qd);
  }
  // Givens path: work vectors on first use, and the row weights sqrt(1/Theta) of the current point.
  void qr_weights() {
    if (sw.size() != n) {
      sw = w.cwiseSqrt();
      isw = sw.cwiseInverse();
      sd.resize(m); c1.resize(n); c2.resize(m); ith.resize(m); tmpm.resize(m);
    }
    for (int j = 0; j < m; ++j) {
      ith[j] = 1.0 / th[j];
      sd[j] = std::sqrt(ith[j]);
    }
  }
  // One Givens solve  W db + D' du = -r1v,  D db - Theta du = -r2v  (double or long-double factorization;
  // factor = false replays the rotations of the last factorization).
  void qr_solve(const double* r1v, const double* r2v, bool factor, double* db, double* duo) {
    if (ext < 2) {
      for (int j = 0; j < m; ++j) c2[j] = -sd[j] * r2v[j];
      for (int i = 0; i < n; ++i) c1[i] = -r1v[i] * isw[i];
      if (factor) qr.solve(D, sw.data(), sd.data(), c1.data(), c2.data(), db);
      else qr.resolve(m, c1.data(), c2.data(), db);
      D.apply(db, tmpm.data());
      for (int j = 0; j < m; ++j) duo[j] = (tmpm[j] + r2v[j]) * ith[j];
    } else {
      if (factor)
        for (int j = 0; j < m; ++j) sdL[j] = std::sqrt(1 / static_cast<LD>(th[j]));
      for (int j = 0; j < m; ++j) c2L[j] = -sdL[j] * r2v[j];
      for (int i = 0; i < n; ++i) c1L[i] = -r1v[i] * iswL[i];
      if (factor) qrx.solve(D, swL.data(), sdL.data(), c1L.data(), c2L.data(), xbL.data());
      else qrx.resolve(m, c1L.data(), c2L.data(), xbL.data());
      op.D(xbL.data(), rz.data());
      for (int j = 0; j < m; ++j) duo[j] = static_cast<double>((rz[j] + r2v[j]) * sdL[j] * sdL[j]);
      for (int i = 0; i < n; ++i) db[i] = static_cast<double>(xbL[i]);
    }
  }
  // Newton direction (db, duo) for the rows' right-hand side gv = rp + ra/a - rb/b (rd fixed):
  //   W db + D' du = -rd,   D db - Theta du = -gv
  // With dual-normal directions db is left out (dbeta follows from the chosen du, back_substitute()).
  void direction(const double* gv, Eigen::VectorXd& db, Eigen::VectorXd& duo, bool factor) {
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
  }

  // Theta and the reciprocals of the pairs at the current point; returns mu (the mean complementarity).
  double scale_pairs() {
    double mu = 0.0;
    for (int j = 0; j < m; ++j) {
      ia[j] = 1.0 / a[j];
      ib[j] = 1.0 / b[j];
      th[j] = std::max(pp[j] * ia[j] + qq[j] * ib[j], 1e-280);
      ip[j] = 1.0 / pp[j];
      iq[j] = 1.0 / qq[j];
      mu += pp[j] * a[j] + qq[j] * b[j];
    }
    return mu / (2.0 * m);
  }

  // ---------------------------------------------------------------- predictor
  // Affine-scaling direction (ra = p a, rb = q b): the right-hand side rp + p - q is D beta itself (z),
  // dp = p (du/a - 1), dq = -q (1 + du/b); the predicted complementarity after a step s is
  // mu (1 - s) + s^2 sum du (dq - dp) / 2m. Factors the Newton system; returns Mehrotra's sigma.
  double predictor(double mu) {
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
    return ratio * ratio * ratio;
  }

  // ---------------------------------------------------------------- corrector
  // Mehrotra's corrector: complementarity targets sigma mu plus the second-order terms of the predictor, solved
  // with the same factorization. Returns the largest feasible step along it.
  double corrector(double smu) {
    for (int j = 0; j < m; ++j) {
      const double dpa = pp[j] * (duaff[j] * ia[j] - 1.0), dqa = -qq[j] * (1.0 + duaff[j] * ib[j]);
      ra[j] = pp[j] * a[j] - dpa * duaff[j] - smu;
      rb[j] = qq[j] * b[j] + dqa * duaff[j] - smu;
      const double rpj = ext ? rpd[j] : z[j] - pp[j] + qq[j];
      g[j] = rpj + ra[j] * ia[j] - rb[j] * ib[j];
    }
    direction(g.data(), dbeta, du, false);
    return step_length(du, dp, dq);
  }
  // Gondzio (1996) multiple centrality correctors (dual-normal path): push the outlying complementarity
  // products of a trial point further along back into [0.1, 10] sigma mu, keep the corrected direction if it
  // allows a longer step. Returns the step length of the direction kept.
  double centrality_correctors(double smu, double smax) {
    for (int kc = 0; kc < ctl.centrality && smax < 1.0; ++kc) {
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
      const double snew = step_length(gdu, gdp, gdq);
      if (snew >= smax + 0.1 * (at - smax)) {
        du.swap(gdu); dp.swap(gdp); dq.swap(gdq);
        smax = snew;
      } else {
        ra.swap(gra);
        rb.swap(grb);
        break;
      }
    }
    return smax;
  }

  // ---------------------------------------------------------------- step length
  // dp, dq of a direction for the complementarity residuals ra, rb, and the largest step in (0, 1] that keeps
  // p, q, a, b >= 0 (reciprocals ip, iq, ia, ib of the current point: no divisions).
  double step_length(const Eigen::VectorXd& duo, Eigen::VectorXd& dpo, Eigen::VectorXd& dqo) const {
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
  }
  // Moves the iterate by step along (dbeta, du, dp, dq) (in long double from escalation level 1).
  void take_step(double step) {
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
  }
  // Keeps the slacks strictly interior against rounding in lamb -/+ u. With dual-normal directions at least
  // half the resolution of u near the box (eps lam_j / 2): with the underflow threshold, Theta = p/a reached
  // 1e302 at n = 1e6, k = 1 and the next factorization overflowed two steps short of the target. The Givens QR
  // takes sqrt(1/Theta) and keeps the underflow threshold (the larger floor cost n = 1e5, k = 2 its certificate).
  void set_slacks() {
    constexpr double half_eps = 0.5 * std::numeric_limits<double>::epsilon();
    for (int j = 0; j < m; ++j) {
      const double amin = qd_kind > 0 ? half_eps * lamb[j] : std::numeric_limits<double>::min();
      if (!(a[j] > amin)) a[j] = amin;
      if (!(b[j] > amin)) b[j] = amin;
    }
  }
  // A blocked dual-normal step: the dual normal equations have lost the direction (ill-conditioned
  // D W^-1 D'). Restart with the Givens QR from the starting point (measured: continuing from the blocked
  // iterate could stall). Certified pairs found so far are kept.
  void restart_on_qr() {
    qd_kind = 0;
    start_point();
    lost_check = false;
    last_gain = it;
    last_polish_mu = std::numeric_limits<double>::infinity();
#ifdef SB_TRACE
    std::fprintf(stderr, "QD -> Givens at step %d\n", it);
#endif
  }

  // ---------------------------------------------------------------- certificate
  // The pair gap of the current iterate in double; also refreshes z, dtu and rd for the next step.
  void certify_current() {
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
  }
  // Bound on the rounding error of that double-precision gap.
  double cert_noise() const {
    double az = 0;  // sum_j (lam_j + |u_j|) (|D| |beta|)_j: scales the rounding error of the penalty terms
    const int kw = D.width;
    for (int j = 0; j < m; ++j) {
      const double* cj = &D.c[static_cast<std::size_t>(j) * kw];
      double t = 0;
      for (int q = 0; q < kw; ++q) t += std::abs(cj[q] * beta[j + q]);
      az += (lam[j] + std::abs(u[j])) * t;
    }
    return 4.0 * (kw + 2) * std::numeric_limits<double>::epsilon() * (az + cert_ls + cert_rs);
  }
  // The long-double certificate where the double one, within its rounding error, may be near tol (replaces
  // primal and gap). Returns whether it was computed.
  bool certificate() {
    const double rg = rel(gap, primal);
    if (rg < 1e-4 && rg < 100.0 * ctl.tol + cert_noise() / std::max(static_cast<double>(primal), 1e-300)) {
      certify_pair_ld(D, y, w, lam, beta, u, primal, gap);
      return true;
    }
    return false;
  }
  void keep_best(const Eigen::VectorXd& bb, const Eigen::VectorXd& uu, LD pr, LD gp, double rg, bool ld) {
    best_rel = rg;
    best_beta = bb;
    best_u = uu;
    best_primal = pr;
    best_gap = gp;
    best_ld = ld;
  }
  IPResult result() {
    if (!best_ld && std::isfinite(best_rel)) {  // report a long-double certificate for the pair returned
      certify_pair_ld(D, y, w, lam, best_beta, best_u, best_primal, best_gap);
      best_rel = rel(best_gap, best_primal);
    }
    IPResult res;
    res.beta = best_beta;
    res.u = best_u;
    res.gap = static_cast<double>(best_gap);
    res.primal = static_cast<double>(best_primal);
    res.rel_gap = best_rel;
    res.converged = best_rel <= ctl.tol;
    res.iter = it;
    return res;
  }

  // ---------------------------------------------------------------- escalation
  // Extended precision, switched on by lost directions (Givens path only). The multipliers
  // du = Theta^-1 (D db + g) carry the rounding of D db times Theta^-1 (~ lam^2 / mu, 1e29 at k = 3, n = 1e5),
  // and D'u must match residuals of the size of y while u is of the size of lam (up to n^(k+1) times larger):
  // for k >= 2 at large n the double directions stop satisfying W db + D'du = -rd and the dual residual grows
  // instead of shrinking (measured: n = 1e5, k = 2 from 0.5 to 3.8e8 over 70 steps). Level 1 keeps the iterate
  // (bL, uL) and its residuals (rdL, rpL) in long double and refines every direction once on the unreduced
  // system; level 2 also factors in long double (BandedLS<LD>). The returned pair and every certificate stay
  // those of the double rounding of the iterate.
  //
  // Lost directions: exact Newton directions shrink the dual residual by (1 - step) per step. Where it grows a
  // hundredfold and dominates the certified gap, the factorization no longer resolves the system.
  bool directions_lost(double rr) const {
    return ctl.escalate && qd_kind == 0 && lost_check && rr > 100.0 * rr_prev &&
           rr > std::max(static_cast<double>(gap), 1e-3 * ctl.tol * static_cast<double>(primal));
  }
  // Goes back to the previous iterate and raises the precision level (refinement with a long-double iterate,
  // then the long-double factorization).
  void escalate_from_previous() {
    previous(true);
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
    for (int j = 0; j < m; ++j) {
      a[j] = static_cast<double>(lambL[j] - uL[j]);
      b[j] = static_cast<double>(lambL[j] + uL[j]);
    }
    set_slacks();
    certify_current();
    rr_prev = ext_residuals();
  }
  // D beta, D'u and the residuals of the long-double iterate (z holds rp + p - q, the predictor's right-hand
  // side); returns the squared dual residual.
  double ext_residuals() {
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
  }

  // ---------------------------------------------------------------- polishing
  // Due once the barrier gap is below 1e-3 polish_from of P and has fallen a hundredfold since the last polish;
  // with dual-normal directions only once the gap has stopped halving (there the interior point itself
  // converged on every problem measured, and a polish costs about four of its steps).
  bool polish_due(double mu) {
    const double mu_rel = 2.0 * m * mu / std::max(static_cast<double>(primal), 1e-300);
    if (ctl.polish && mu_rel < 1e-3 * ctl.polish_from && mu < 1e-2 * last_polish_mu &&
        (qd_kind == 0 || it - last_gain >= 2)) {
      last_polish_mu = mu;
      return true;
    }
    return false;
  }
  ActiveSetPolisher<BandedOp>& polisher() {
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
  }
  // Polishes on the active set (knots) read off the complementarity pairs of the current iterate: knot (+) when
  // p_j / Zs > a_j / lam_j. Keeps the polished pair if its certificate is the best; returns that certificate.
  double polish() {
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
    if (pr < best_rel) keep_best(pol.beta.cast<double>(), pol.u.cast<double>(), pol.primal, pol.gap, pr, true);
    return pr;
  }
};

}  // namespace detail

// Solves the weighted problem for a banded D (already row-scaled, see ScaledD in banded_solve.hpp).
// lam: per-row penalties. beta_start (optional): a primal warm start.
inline IPResult primal_ip(BandedOp& op, const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                          const Eigen::VectorXd& lam, const IPControl& ctl,
                          const Eigen::VectorXd* beta_start = nullptr) {
  return detail::PrimalIP(op, D, y, w, lam, ctl, beta_start).run();
}

}  // namespace genlasso
}  // namespace scalebayes
