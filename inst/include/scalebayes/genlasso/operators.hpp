// scalebayes/genlasso/operators.hpp -- the linear algebra of the interior points on a penalty matrix D:
// products with D and D' (double and long double), the Newton systems of the dual interior point in
// least-squares form, and the primal solve on an active set used by the polisher.
//
//   BandedOp  -- banded D (trend filtering): Givens QR of A = [W^-1/2 D'; diag(sqrt d)] with recorded rotations
//                (replayed for the corrector, unwound for polishing), forward substitution for D'u = v.
//   SparseOp  -- a user's sparse D (generalized lasso): SimplicialLDLT of D W^-1 D' + diag(d); no polishing.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>
#ifdef SB_TRACE
#include <cstdio>
#endif

#include "difference.hpp"
#include "givens_band.hpp"
#include "ip_types.hpp"

namespace scalebayes {
namespace genlasso {

// Banded operator for trend filtering.
class BandedOp {
 public:
  explicit BandedOp(const BandedD& D) : D_(D) {}
  int m() const { return D_.m; }
  int n() const { return D_.n; }
  template <class T>
  void D(const T* v, T* out) const {
    const int w = D_.width;
    for (int i = 0; i < D_.m; ++i) {
      const double* ci = &D_.c[static_cast<std::size_t>(i) * w];
      T s = 0;
      for (int l = 0; l < w; ++l) s += static_cast<T>(ci[l]) * v[i + l];
      out[i] = s;
    }
  }
  // gather form (out[l] = sum_i D(i, l) u_i over the k+2 rows touching column l): no read-modify-write
  // of long doubles, which stalls store forwarding
  template <class T>
  void Dt(const T* u, T* out) const {
    const int w = D_.width, p = w - 1, m = D_.m;
    const double* c = D_.c.data();
    for (int l = 0; l < D_.n; ++l) {
      const int i0 = std::max(0, l - p), i1 = std::min(l, m - 1);
      T s = 0;
      for (int i = i0; i <= i1; ++i) s += static_cast<T>(c[static_cast<std::size_t>(i) * w + (l - i)]) * u[i];
      out[l] = s;
    }
  }
  // Solves D'u = v by forward substitution on the first m rows of D' (lower-trapezoidal, nonzero diagonal);
  // the last k+1 equations hold when v is orthogonal to the null space of D. Returns true.
  bool solve_dt(const LD* v, LD* u) const {
    const int p = D_.width - 1, w = D_.width;
    const double* c = D_.c.data();
    for (int l = 0; l < D_.m; ++l) {
      LD s = v[l];
      for (int i = std::max(0, l - p); i < l; ++i) s -= static_cast<LD>(c[static_cast<std::size_t>(i) * w + (l - i)]) * u[i];
      u[l] = s / static_cast<LD>(c[static_cast<std::size_t>(l) * w]);
    }
    return true;
  }
  void set_weights(const double* winv) {
    sqrt_winv_.resize(D_.n);
    sqrt_winv_ld_.resize(D_.n);
    for (int i = 0; i < D_.n; ++i) {
      sqrt_winv_[i] = std::sqrt(winv[i]);
      sqrt_winv_ld_[i] = std::sqrt(static_cast<LD>(winv[i]));
    }
  }
  // The Newton matrix is A'A with A = [W^{-1/2} D'; diag(sqrt(d))] ((n+m) x m, banded). It is factored by
  // Givens QR of A (never forming D W^{-1} D', whose condition number is the square of A's and exceeds
  // 1/eps for k >= 2 at moderate n): R is upper banded with half-bandwidth k+1, O((n+m) k^2) work.
  // solve_ls: du = argmin ||A du - [c_top; c_bot]||  (the Newton step, since rhs = A'c).
  void solve_ls(const double* d, const double* c_top, const double* c_bot, double* du) {
    const int m = D_.m, n = D_.n, p = D_.width - 1, w = p + 1;
    g_.reset(m, w);
    seg_end_.assign(2 * static_cast<std::size_t>(n), 0);
    left_.assign(2 * static_cast<std::size_t>(n), 0.0);
    std::vector<double>& a = g_.a;
    for (int i = 0; i < n; ++i) {
      // row i of W^{-1/2} D': columns j in [max(0, i-p), min(i, m-1)], value D(j, i-j) / sqrt(w_i)
      const int c0 = std::max(0, i - p), c1 = std::min(i, m - 1);
      if (c0 <= c1) {
        std::fill(a.begin(), a.end(), 0.0);
        for (int j = c0; j <= c1; ++j) a[j - c0] = D_.at(j, i - j) * sqrt_winv_[i];
        left_[2 * i] = g_.rotate_in(c0, c_top[i]);
      } else {
        left_[2 * i] = c_top[i];
      }
      seg_end_[2 * i] = static_cast<int>(g_.n_records());
      if (i < m) {
        std::fill(a.begin(), a.end(), 0.0);
        a[0] = std::sqrt(d[i]);
        left_[2 * i + 1] = g_.rotate_in(i, c_bot[i]);
      }
      seg_end_[2 * i + 1] = static_cast<int>(g_.n_records());
    }
    g_.solve_r(g_.qc.data(), du);
  }
  // Applies Q to [v1 (m, the R rows); leftovers] by unwinding the recorded rotations of the last solve_ls.
  // use_left: take the recorded leftovers of each row (the Q2' c part), else zeros. Outputs the top block
  // (n rows) and the diagonal block (m rows).
  void unwind(const double* v1, bool use_left, double* out_top, double* out_bot) const {
    const int m = D_.m, n = D_.n;
    std::vector<double> qf(v1, v1 + m);
    for (int i = n - 1; i >= 0; --i) {
      for (int part = 1; part >= 0; --part) {
        const std::size_t k = 2 * static_cast<std::size_t>(i) + part;
        const std::size_t beg = k > 0 ? static_cast<std::size_t>(seg_end_[k - 1]) : 0;
        const std::size_t end = static_cast<std::size_t>(seg_end_[k]);
        double gamma = use_left ? left_[k] : 0.0;
        for (std::size_t r = end; r-- > beg;) {
          const int c = g_.col[r];
          if (c < 0) {
            gamma = qf[-c - 1];
            qf[-c - 1] = 0.0;
          } else {
            const double gp = qf[c - 1];
            qf[c - 1] = g_.cs[r] * gp - g_.sn[r] * gamma;
            gamma = g_.sn[r] * gp + g_.cs[r] * gamma;
          }
        }
        if (part == 0) out_top[i] = gamma;
        else if (i < m) out_bot[i] = gamma;
      }
    }
  }
  // Primal polishing: for an active set A (|u_j| = lam_j), the primal solution is
  // beta = y~ - W^{-1} D_I' nu with D_I beta = 0, y~ = y - W^{-1} D_A' (lam_A s_A); W^{1/2} beta is the residual
  // of min ||W^{-1/2} D_I' nu - W^{1/2} y~||, obtained from the QR without forming nu (columns in A are pinned
  // by rows of weight sqrt(M2)), then refined once in long double (r <- r - Q1 R^{-T} A'r).
  // Returns W^{1/2} beta in r_top (long double) and nu.
  bool polish(const double* c_top, const std::vector<char>& active, double M2, LD* r_top, double* nu) {
    const int m = D_.m, n = D_.n;
    pd_.assign(m, 0.0);
    for (int j = 0; j < m; ++j) pd_[j] = active[j] ? M2 : 0.0;
    pz_.assign(m, 0.0);
    px_.resize(m);
    solve_ls(pd_.data(), c_top, pz_.data(), px_.data());
    std::vector<double> zero(m, 0.0), rt(n), rb(m);
    unwind(zero.data(), true, rt.data(), rb.data());
    VecLD rtl(n), rbl(m), xl(m), tmp(n), g(m);
    for (int i = 0; i < n; ++i) rtl[i] = rt[i];
    for (int j = 0; j < m; ++j) {
      xl[j] = px_[j];
      rbl[j] = -std::sqrt(static_cast<LD>(pd_[j])) * xl[j];
    }
    for (int ref = 0; ref < 2; ++ref) {
      // g = A' r in long double
      for (int i = 0; i < n; ++i) tmp[i] = sqrt_winv_ld_[i] * rtl[i];
      D(tmp.data(), g.data());
      std::vector<double> h(m), dt(n), db(m);
      for (int j = 0; j < m; ++j) h[j] = static_cast<double>(g[j] + std::sqrt(static_cast<LD>(pd_[j])) * rbl[j]);
#ifdef SB_TRACE
      { double nh = 0, ng = 0; for (int j = 0; j < m; ++j) { nh = std::max(nh, std::abs(h[j])); if (!active[j]) ng = std::max(ng, (double)std::abs(g[j])); }
        std::fprintf(stderr, "       pref %d |A'r|inf %.3g  inactive %.3g\n", ref, nh, ng); }
#endif
      solve_rt(h.data());
      unwind(h.data(), false, dt.data(), db.data());
      for (int i = 0; i < n; ++i) rtl[i] -= dt[i];
      for (int j = 0; j < m; ++j) rbl[j] -= db[j];
      solve_r(h.data());
      for (int j = 0; j < m; ++j) xl[j] += h[j];
    }
    for (int i = 0; i < n; ++i) r_top[i] = rtl[i];
    for (int j = 0; j < m; ++j) nu[j] = static_cast<double>(xl[j]);
    return true;
  }
  // qf = Q1' f for f = [f_top (n); f_bot (m)], replaying the recorded rotations.
  void apply_qt(const double* f_top, const double* f_bot, double* qf) const {
    const int m = D_.m;
    g_.replay(seg_end_, [&](std::size_t k) {
      const std::size_t i = k / 2;
      return k % 2 == 0 ? f_top[i] : (static_cast<int>(i) < m ? f_bot[i] : 0.0);
    }, qf);
  }
  // x = R^{-1} b (in place)
  void solve_r(double* b) const { g_.solve_r(b, b); }
  // x = R^{-T} b (in place)
  void solve_rt(double* b) const { g_.solve_rt(b); }
  // Newton step: du = argmin ||A du - c||, c given in extended precision, refined on the augmented system
  // [I A; A' 0][r; du] = [c; 0] with residuals in long double (Bjorck): converges at rate ~ eps * cond(A),
  // whereas refining the normal equations converges at ~ eps * cond(A)^2 and fails for k >= 2 at large lambda.
  void newton(const double* d, const VecLD& c_top, const VecLD& c_bot, VecLD& du, int refine) {
    const int m = D_.m, n = D_.n;
    ct_.resize(n);
    cb_.resize(m);
    for (int i = 0; i < n; ++i) ct_[i] = static_cast<double>(c_top[i]);
    for (int j = 0; j < m; ++j) cb_[j] = static_cast<double>(c_bot[j]);
    dd_.resize(m);
    solve_ls(d, ct_.data(), cb_.data(), dd_.data());
    du.resize(m);
    for (int j = 0; j < m; ++j) du[j] = dd_[j];
    if (refine <= 0) return;
    sqd_.resize(m);
    for (int j = 0; j < m; ++j) sqd_[j] = std::sqrt(static_cast<LD>(d[j]));
    // r = c - A du
    rt_.resize(n);
    rb_.resize(m);
    at_.resize(n);
    Dt(du.data(), at_.data());
    for (int i = 0; i < n; ++i) rt_[i] = c_top[i] - sqrt_winv_ld_[i] * at_[i];
    for (int j = 0; j < m; ++j) rb_[j] = c_bot[j] - sqd_[j] * du[j];
    ft_.resize(n);
    fb_.resize(m);
    gv_.resize(m);
    hq_.resize(m);
    qf_.resize(m);
    VecLD tmp(n);
    for (int it = 0; it < refine; ++it) {
      // f = c - r - A du ; g = -A' r
      Dt(du.data(), at_.data());
      for (int i = 0; i < n; ++i) ft_[i] = static_cast<double>(c_top[i] - rt_[i] - sqrt_winv_ld_[i] * at_[i]);
      for (int j = 0; j < m; ++j) fb_[j] = static_cast<double>(c_bot[j] - rb_[j] - sqd_[j] * du[j]);
      for (int i = 0; i < n; ++i) tmp[i] = sqrt_winv_ld_[i] * rt_[i];
      D(tmp.data(), gv_.data());
      for (int j = 0; j < m; ++j) hq_[j] = -static_cast<double>(gv_[j] + sqd_[j] * rb_[j]);
#ifdef SB_TRACE
      {
        double nf = 0, ng = 0;
        for (int i = 0; i < n; ++i) nf += ft_[i] * ft_[i];
        for (int j = 0; j < m; ++j) { nf += fb_[j] * fb_[j]; ng += hq_[j] * hq_[j]; }
        std::fprintf(stderr, "   refine %d |f| %.3g |g| %.3g\n", it, std::sqrt(nf), std::sqrt(ng));
      }
#endif
      solve_rt(hq_.data());                           // h = R^{-T} g
      apply_qt(ft_.data(), fb_.data(), qf_.data());  // Q1' f
      for (int j = 0; j < m; ++j) qf_[j] -= hq_[j];
      solve_r(qf_.data());                            // dx = R^{-1} (Q1' f - h)
      // dr = f - A dx
      for (int j = 0; j < m; ++j) dd_[j] = qf_[j];
      for (int j = 0; j < m; ++j) du[j] += dd_[j];
      Dt(dd_.data(), ct_.data());
      for (int i = 0; i < n; ++i) rt_[i] += static_cast<LD>(ft_[i]) - sqrt_winv_ld_[i] * static_cast<LD>(ct_[i]);
      for (int j = 0; j < m; ++j) rb_[j] += static_cast<LD>(fb_[j]) - sqd_[j] * static_cast<LD>(dd_[j]);
    }
  }
  // Second solve with the factorization of the last newton()/solve_ls() (same d), new right-hand side.
  void resolve(const double*, const VecLD& c_top, const VecLD& c_bot, VecLD& du) {
    const int m = D_.m, n = D_.n;
    ct_.resize(n);
    cb_.resize(m);
    qf_.resize(m);
    for (int i = 0; i < n; ++i) ct_[i] = static_cast<double>(c_top[i]);
    for (int j = 0; j < m; ++j) cb_[j] = static_cast<double>(c_bot[j]);
    apply_qt(ct_.data(), cb_.data(), qf_.data());
    solve_r(qf_.data());
    du.resize(m);
    for (int j = 0; j < m; ++j) du[j] = qf_[j];
  }
  // Solves R'R x = r in place (for iterative refinement of the normal equations).
  void solve_normal(double* r) const {
    g_.solve_rt(r);
    g_.solve_r(r, r);
  }

 private:
  // (the QR in long double was measured: no gain in the certified gap, only time)
  const BandedD& D_;
  GivensBand g_;
  std::vector<double> sqrt_winv_;
  std::vector<LD> sqrt_winv_ld_;
  std::vector<int> seg_end_;
  std::vector<double> ct_, cb_, dd_, ft_, fb_, hq_, qf_, left_, pd_, pz_, px_;
  VecLD sqd_, rt_, rb_, at_, gv_;
};

// Sparse operator for a user-supplied penalty matrix D (m x n).
class SparseOp {
 public:
  using SpMat = Eigen::SparseMatrix<double>;
  using SpMatLD = Eigen::SparseMatrix<LD>;
  explicit SparseOp(const SpMat& D) : D_(D), Dt_(D.transpose()), Dld_(D.cast<LD>()), Dtld_(Dld_.transpose()) {}
  int m() const { return static_cast<int>(D_.rows()); }
  int n() const { return static_cast<int>(D_.cols()); }
  void D(const LD* v, LD* out) const {
    Eigen::Map<VecLD>(out, m()) = Dld_ * Eigen::Map<const VecLD>(v, n());
  }
  void Dt(const LD* u, LD* out) const {
    Eigen::Map<VecLD>(out, n()) = Dtld_ * Eigen::Map<const VecLD>(u, m());
  }
  void set_weights(const double* winv) {
    sqrt_winv_.resize(n());
    for (int i = 0; i < n(); ++i) sqrt_winv_[i] = std::sqrt(winv[i]);
    Eigen::Map<const Eigen::VectorXd> wi(winv, n());
    SpMat DW = D_ * wi.asDiagonal();
    G_ = (DW * Dt_).pruned();
    // make sure the diagonal is stored (so G + diag has the same pattern every time)
    SpMat I(m(), m());
    I.setIdentity();
    G_ = G_ + 0.0 * I;
    G_.makeCompressed();
    analyzed_ = false;
  }
  void factor(const double* d) {
    S_ = G_;
    for (int i = 0; i < m(); ++i) S_.coeffRef(i, i) += d[i];
    if (!analyzed_) {
      ldlt_.analyzePattern(S_);
      analyzed_ = true;
    }
    ldlt_.factorize(S_);
    if (ldlt_.info() != Eigen::Success) throw std::runtime_error("sparse LDL' factorization failed");
  }
  void solve_normal(double* r) const {
    Eigen::Map<Eigen::VectorXd> rv(r, m());
    Eigen::VectorXd x = ldlt_.solve(rv);
    rv = x;
  }
  bool polish(const double*, const std::vector<char>&, double, LD*, double*) { return false; }
  bool solve_dt(const LD*, LD*) const { return false; }
  void resolve(const double* d, const VecLD& c_top, const VecLD& c_bot, VecLD& du) { newton(d, c_top, c_bot, du, 0); }
  // Newton step du = argmin ||A du - c||, A = [W^{-1/2} D'; diag(sqrt d)], via the normal equations with a
  // sparse LDL' and iterative refinement of their residual in long double.
  void newton(const double* d, const VecLD& c_top, const VecLD& c_bot, VecLD& du, int refine) {
    const int nn = n(), mm = m();
    VecLD t(nn), rhs(mm), Gd(mm);
    for (int i = 0; i < nn; ++i) t[i] = c_top[i] * static_cast<LD>(sqrt_winv_[i]);
    D(t.data(), rhs.data());
    for (int j = 0; j < mm; ++j) rhs[j] += std::sqrt(static_cast<LD>(d[j])) * c_bot[j];
    factor(d);
    Eigen::VectorXd x(mm);
    for (int j = 0; j < mm; ++j) x[j] = static_cast<double>(rhs[j]);
    solve_normal(x.data());
    du = x.cast<LD>();
    for (int it = 0; it < refine; ++it) {
      Dt(du.data(), t.data());
      for (int i = 0; i < nn; ++i) t[i] *= static_cast<LD>(sqrt_winv_[i]) * static_cast<LD>(sqrt_winv_[i]);
      D(t.data(), Gd.data());
      for (int j = 0; j < mm; ++j) x[j] = static_cast<double>(rhs[j] - Gd[j] - static_cast<LD>(d[j]) * du[j]);
      solve_normal(x.data());
      for (int j = 0; j < mm; ++j) du[j] += x[j];
    }
  }
  // Newton step from the least-squares form (normal equations with a sparse LDL' here).
  void solve_ls(const double* d, const double* c_top, const double* c_bot, double* du) {
    factor(d);
    Eigen::VectorXd ct(n());
    for (int i = 0; i < n(); ++i) ct[i] = c_top[i] * sqrt_winv_[i];
    Eigen::Map<Eigen::VectorXd> out(du, m());
    out = D_ * ct;
    for (int j = 0; j < m(); ++j) out[j] += std::sqrt(d[j]) * c_bot[j];
    solve_normal(du);
  }

 private:
  const SpMat& D_;
  SpMat Dt_;
  SpMatLD Dld_, Dtld_;
  std::vector<double> sqrt_winv_;
  SpMat G_, S_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
  bool analyzed_ = false;
};

}  // namespace genlasso
}  // namespace scalebayes
