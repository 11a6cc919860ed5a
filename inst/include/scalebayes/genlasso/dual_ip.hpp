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
// The linear algebra is supplied by an Op: a banded Cholesky for trend filtering (O(m k^2) per step) or a
// sparse LDL' for a user matrix D. Every solve returns the certified duality gap of the primal point
// beta(u):  gap = P(beta(u)) - g(u) = sum_j (lam_j |(D beta)_j| - u_j (D beta)_j) >= 0, computed without
// cancellation; the solver stops when gap <= tol * P(beta(u)).
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
#ifdef SB_TRACE
#include <cstdio>
#endif

#include "difference.hpp"
#include "givens_band.hpp"

namespace scalebayes {
namespace genlasso {

struct IPControl {
  double tol = 1e-8;      // relative duality gap
  int max_iter = 200;     // Newton steps
  double mu = 10.0;       // barrier update factor
  double alpha = 0.01;    // line search sufficient decrease
  double beta = 0.5;      // line search backtracking
  int max_ls = 60;
  int refine = 0;         // refinement steps per Newton solve (augmented system, long double residuals)
  bool polish = true;     // primal polishing on the active set (banded D only)
  double polish_from = 1e-3;  // ... tried at every step once the barrier gap is below this fraction of P
  bool mehrotra = true;   // Mehrotra predictor-corrector (measured: about half the Newton steps) instead of the barrier rule
  int stall_iter = 15;    // stop when the certified gap has not halved in this many steps at tiny barrier gap
  int centrality = 1;      // primal interior point with dual-normal directions: Gondzio centrality correctors per
                          // step (one more solve each; n = 1e5, k = 1: 23 -> 21 steps, 2 correctors: 18 steps but
                          // slower overall; with Givens directions they cost steps at n = 1e6, so not used there)
  int newton = 0;  // primal interior point, Newton directions: 0 = dual normal equations (dual_normal_band.hpp)
                   // for k <= 1 where measured to hold, else Givens QR; 1 = Givens QR only; 2 = dual normal
                   // equations for every k <= 1 problem (still restarting on the QR when blocked)
  bool escalate = false;  // primal interior point on the Givens path: on lost directions go back one step and
                          // continue in extended precision (primal_ip.hpp); set for the second primal attempt of
                          // solve_scaled_ip, after a first one without it stopped short
  bool primal_first = true;  // banded D: primal-dual interior point on the primal first (primal_ip.hpp), the dual
                             // interior point only when that does not reach tol (the better certificate wins)
};

struct IPResult {
  Eigen::VectorXd beta;
  Eigen::VectorXd u;       // dual solution
  double gap = NAN;        // absolute duality gap
  double rel_gap = NAN;    // gap / primal objective
  double primal = NAN;
  int iter = 0;
  bool converged = false;
  double rounding_rel = 0;  // relative objective change that rounding beta to double can cause (see rounding_floor)
};

// Extended precision for the iterate and the residuals. The dual variable u is of the size of lambda while
// beta = y - W^{-1} D' u is of the size of y: for k >= 2 the cancellation in D' u (and the rounding of u
// itself) puts a floor of about eps * lambda^2 * ||D||^2 on the certified gap in double precision (measured:
// relative gap stalls near 5e-5 at n = 500, k = 3, lambda = 1e-3 lambda_max). Holding u, the multipliers and
// the residuals in long double (64-bit mantissa on x86) removes that floor at O(n k) extra cost per step;
// the O(n k^2) factorization stays in double (it only supplies search directions).
using LD = long double;
using VecLD = Eigen::Matrix<LD, Eigen::Dynamic, 1>;

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

// Denominator floor of the relative duality gap, gap / max(P, floor): 1e-10 of half the weighted total sum of
// squares (only matters when y is (nearly) in the null space of D, where P* = 0 and a purely relative gap is
// undefined).
inline LD gap_floor(const Eigen::VectorXd& y, const Eigen::VectorXd& w) {
  LD ybar = 0, wsum = 0, tss = 0;
  for (int i = 0; i < y.size(); ++i) {
    ybar += static_cast<LD>(w[i]) * y[i];
    wsum += w[i];
  }
  ybar /= wsum;
  for (int i = 0; i < y.size(); ++i) tss += static_cast<LD>(w[i]) * (y[i] - ybar) * (y[i] - ybar);
  return std::max(LD(1e-10) * tss / 2, LD(1e-300));
}

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
