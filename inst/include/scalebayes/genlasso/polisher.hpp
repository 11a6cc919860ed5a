// scalebayes/genlasso/polisher.hpp -- primal polishing on an active set (knots) with a pair certificate,
// shared by the primal (primal_ip.hpp) and the dual (dual_ip.hpp) interior points.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>
#ifdef SB_TRACE
#include <cstdio>
#endif

#include "ip_types.hpp"

namespace scalebayes {
namespace genlasso {

// Primal polishing with a pair certificate, shared by the dual and the primal interior points. For an
// active set A (knots, |u_j| = lam_j) with signs s, the primal solution on A is computed directly
// (Op::polish: W^{1/2} beta~ is a least-squares residual from the banded QR); a few active-set corrections
// follow (drop knots whose jump has the wrong sign, add differences whose multiplier leaves the box). The
// pair (beta~, u) is certified by
//   P(beta~) - g(u) = sum_j (lam_j |z~_j| - u_j z~_j) + 1/2 sum_i r_i^2 / w_i,  z~ = D beta~, r = W (y - beta~) - D'u,
// non-negative terms in which the dual residual enters squared. Dual candidates: the interior-point iterate u
// and the polished dual (lam s on A, nu on I), both clipped to the box. Keeps the best pair over all calls.
template <class Op>
class ActiveSetPolisher {
 public:
  ActiveSetPolisher(Op& op, const VecLD& y, const Eigen::VectorXd& w, const VecLD& winv, const VecLD& lam,
                    const VecLD& lamb, LD pfloor)
      : op_(op), y_(y), winv_(winv), lam_(lam), lamb_(lamb), pfloor_(pfloor) {
    const int n = op.n(), m = op.m();
    sqw_ = w.cast<LD>().cwiseSqrt();
    winv_max_ = winv.maxCoeff();
    pol_beta_.resize(n);
    pvec_.resize(m);
    ptmp_.resize(n);
    pz_.resize(m);
    pc_.resize(n);
    pnu_.resize(m);
    pr_top_.resize(n);
    pu_.resize(m);
    cand_u_.resize(m);
    ufs_.resize(m);
  }
  std::vector<char> active;        // set by the caller before run()
  std::vector<signed char> sign;   // +1 / -1 on active rows
  bool have = false;               // a polished pair exists
  VecLD beta, u;                   // best polished pair
  LD primal = 0, gap = 0;
  double rel_gap() const { return static_cast<double>(gap / std::max(primal, pfloor_)); }
  // Polishes on (active, sign) with up to 3 corrections; u_ip: the interior-point dual iterate (a
  // candidate). Returns the best relative gap of this call.
  double run(const VecLD& u_ip, double tol) {
    const int m = op_.m();
    double best = 1.0;
    for (int round = 0; round < 3; ++round) {
      const double rr = once(u_ip);
      best = std::min(best, rr);
      if (rr <= tol) break;
      // a first set this far off (gap of the order of the objective) is not repaired by a few swaps: measured at
      // n = 1e5, k = 1, where the two further rounds cost a third of the solve and never helped
      if (round == 0 && rr >= 0.5) break;
      bool changed = false;
      for (int j = 0; j < m; ++j) {
        if (active[j] && sign[j] * pz_[j] < 0) {
          active[j] = 0;
          changed = true;
        } else if (!active[j] && std::abs(pnu_[j]) > lamb_[j]) {
          // (the forward-substitution dual was tried here instead of nu: measured worse for k = 3, n = 1e4)
          active[j] = 1;
          sign[j] = pnu_[j] > 0 ? 1 : -1;
          changed = true;
        }
      }
      if (!changed) break;
    }
    return best;
  }

 private:
  double once(const VecLD& u_ip) {
    const int n = op_.n(), m = op_.m();
    for (int j = 0; j < m; ++j) pvec_[j] = active[j] ? (sign[j] > 0 ? lamb_[j] : -lamb_[j]) : LD(0);
    op_.Dt(pvec_.data(), ptmp_.data());
    for (int i = 0; i < n; ++i) pc_[i] = static_cast<double>(sqw_[i] * (y_[i] - winv_[i] * ptmp_[i]));
    if (!op_.polish(pc_.data(), active, static_cast<double>(1e8 * winv_max_), pr_top_.data(), pnu_.data())) return 1.0;
    // same scaling as inside the QR (sqrt of the double-rounded 1/w), so that D_I beta~ = 0 carries over
    for (int i = 0; i < n; ++i) pol_beta_[i] = pr_top_[i] * std::sqrt(winv_[i]);
    op_.D(pol_beta_.data(), pz_.data());
    LD loss = 0, pen = 0;
    for (int i = 0; i < n; ++i) loss += (y_[i] - pol_beta_[i]) * (y_[i] - pol_beta_[i]) / winv_[i];
    for (int j = 0; j < m; ++j) pen += lam_[j] * std::abs(pz_[j]);
    const LD pprimal = loss / 2 + pen;
    // third candidate: the dual that the polished primal implies, D'u = W (y - beta~) by forward
    // substitution (accurate to rounding relative to lam, however ill-conditioned D is), scaled into the box
    for (int i = 0; i < n; ++i) ptmp_[i] = (y_[i] - pol_beta_[i]) / winv_[i];
    have_fs_ = op_.solve_dt(ptmp_.data(), ufs_.data());
    if (have_fs_) {
      LD c = 1;
      for (int j = 0; j < m; ++j)
        if (std::abs(ufs_[j]) * c > lam_[j]) c = lam_[j] / std::abs(ufs_[j]);
      fs_scale_ = c;
    }
    LD bestg = -1;
    for (int cand = 0; cand < 3; ++cand) {
      if (cand == 2 && !have_fs_) break;
      for (int j = 0; j < m; ++j) {
        LD v = u_ip[j];
        if (cand == 1) v = active[j] ? pvec_[j] : static_cast<LD>(pnu_[j]);
        if (cand == 2) v = fs_scale_ * ufs_[j];
        pu_[j] = std::min(std::max(v, -lam_[j]), lam_[j]);
      }
      op_.Dt(pu_.data(), ptmp_.data());
      LD g = 0, rr = 0;
      for (int i = 0; i < n; ++i) {
        const LD r = (y_[i] - pol_beta_[i]) / winv_[i] - ptmp_[i];
        rr += r * r * winv_[i];
      }
      for (int j = 0; j < m; ++j) g += lam_[j] * std::abs(pz_[j]) - pu_[j] * pz_[j];
      const LD gp = std::max(g, LD(0)) + rr / 2;
#ifdef SB_TRACE
      int na = 0;
      for (int j = 0; j < m; ++j) na += active[j];
      std::fprintf(stderr, "     cand %d |A| %d g %.3g rr/2 %.3g P %.3g\n", cand, na, (double)g, (double)(rr / 2),
                   (double)pprimal);
#endif
      if (bestg < 0 || gp < bestg) {
        bestg = gp;
        cand_u_ = pu_;
      }
    }
    const double rnew = static_cast<double>(bestg / std::max(pprimal, pfloor_));
    if (!have || rnew < rel_gap()) {
      primal = pprimal;
      gap = bestg;
      u = cand_u_;
      beta = pol_beta_;
      have = true;
    }
    return rnew;
  }
  Op& op_;
  const VecLD &y_, &winv_, &lam_, &lamb_;
  LD pfloor_;
  VecLD sqw_, pol_beta_, pvec_, ptmp_, pz_, pr_top_, pu_, cand_u_, ufs_;
  LD fs_scale_ = 1;
  bool have_fs_ = false;
  LD winv_max_ = 1;
  Eigen::VectorXd pc_, pnu_;
};

}  // namespace genlasso
}  // namespace scalebayes
