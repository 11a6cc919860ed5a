// scalebayes/genlasso/dual_normal_band.hpp -- the Newton system of the primal interior point (primal_ip.hpp)
//
//   [ W   D'    ] [dbeta]   [r1]
//   [ D  -Theta ] [du   ] = [r2],      W, Theta diagonal and positive, D banded (m rows of width kw),
//
// solved through its dual normal equations: eliminating dbeta (pivots w_i) leaves
//
//   (Theta + D W^-1 D') du = D W^-1 r1 - r2,      dbeta = W^-1 (r1 - D' du),
//
// a banded SPD matrix of half-bandwidth kw - 1 factored by LDL' without square roots in O(m kw^2). This is the
// LDL' of the quasi-definite augmented matrix in the order beta before u (Vanderbei 1995: every symmetric order
// is factorizable), and about 10x cheaper than the Givens QR of BandedLS. It never adds Theta^-1 (1e16 and more
// off the knots) to W, so dbeta keeps the polynomial null space of D; du itself inherits the conditioning of
// D W^-1 D' (~ n^(2k+2)), which the interior point tolerates for k <= 1 (in double up to n = 1e5, in long double
// up to n = 1e6; with a fallback to BandedLS when a step is blocked) but not for k >= 2. Header-only, std only.
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "difference.hpp"

// full unrolling of the fixed-width kernels (R builds with -O2, where GCC does not unroll nested loops)
#if defined(__GNUC__) && !defined(__clang__)
#define SB_DN_UNROLL _Pragma("GCC unroll 8")
#else
#define SB_DN_UNROLL
#endif

namespace scalebayes {
namespace genlasso {

// T: the arithmetic of the factorization and solves (double; long double where the double one loses the
// direction, see primal_ip.hpp). Inputs and outputs are double.
template <class T>
class DualNormalBandT {
 public:
  // Forms D W^-1 D' (constant through an interior-point solve) for the weights w (length n).
  void prepare(const BandedD& D, const double* w) {
    D_ = &D;
    const int n = D.n, m = D.m, kw = D.width, s = kw;
    winv_.resize(n);
    for (int i = 0; i < n; ++i) winv_[i] = T(1) / w[i];
    base_.assign(static_cast<std::size_t>(m) * s, 0.0);
    // M(j+q, j) = sum_l c_{j,l} c_{j+q,l-q} / w_{j+l}  (rows j and j+q overlap in columns j+q .. j+kw-1)
    for (int j = 0; j < m; ++j) {
      const double* cj = &D.c[static_cast<std::size_t>(j) * kw];
      T* Bj = &base_[static_cast<std::size_t>(j) * s];
      for (int q = 0; q < kw && j + q < m; ++q) {
        const double* cq = &D.c[static_cast<std::size_t>(j + q) * kw];
        T acc = 0.0;
        for (int l = q; l < kw; ++l) acc += static_cast<T>(cj[l]) * cq[l - q] * winv_[j + l];
        Bj[q] = acc;
      }
    }
  }
  // Factors Theta + D W^-1 D' for the diagonal theta (length m); prepare() first.
  void factor(const double* theta) {
    dispatch_width(D_->width, [&](auto W) { factor_t<decltype(W)::value>(theta); });
  }
  // The interior point's right-hand sides enter negated, (-r1, -r2), and r1 (length n) is fixed for the
  // solves of one step: set_r1() forms D W^-1 r1 once; solve_neg() then costs one pass and the banded
  // substitutions. r1 must stay alive and unchanged until the last back_substitute().
  void set_r1(const double* r1) {
    r1_ = r1;
    h_.resize(static_cast<std::size_t>(D_->m));
    dispatch_width(D_->width, [&](auto W) { form_h<decltype(W)::value>(); });
  }
  // du for the right-hand side (-r1, -r2), r2 of length m.
  void solve_neg(const double* r2, double* du) {
    const int m = D_->m;
    T* x = du_buffer(du);
    for (int j = 0; j < m; ++j) x[j] = r2[j] - h_[static_cast<std::size_t>(j)];
    dispatch_width(D_->width, [&](auto W) { solve_t<decltype(W)::value>(x); });
    if constexpr (!std::is_same<T, double>::value)
      for (int j = 0; j < m; ++j) du[j] = static_cast<double>(x[j]);
  }
  // db = W^-1 (-r1 - D' du) for a du from solve_neg().
  void back_substitute(const double* du, double* db) const {
    dispatch_width(D_->width, [&](auto W) { solve_db<decltype(W)::value>(du, db); });
  }

 private:
  // where solve_neg() works: in place for double, a buffer otherwise
  T* du_buffer(double* du) {
    if constexpr (std::is_same<T, double>::value) {
      return du;
    } else {
      x_.resize(static_cast<std::size_t>(D_->m));
      return x_.data();
    }
  }
  // KW > 0: compile-time width (unrolled kernels); KW == 0: run-time width. Lower band by columns:
  // L_[j*s + q] = M(j+q, j), q = 0..b (b = kw - 1); after factoring L_[j*s] = 1 / d_j, L_[j*s + q] = L(j+q, j).
  template <int KW>
  void factor_t(const double* theta) {
    const BandedD& D = *D_;
    const int kw = KW > 0 ? KW : D.width, m = D.m, b = kw - 1, s = kw;
    L_.resize(static_cast<std::size_t>(m) * s);
    T* A = L_.data();
    const T* Bs = base_.data();
    const int full = m - b;  // columns with a full band below
    int j0 = 0;
    if (KW > 0 && full > 0) {
      // right-looking LDL' with the active lower triangle in a local window (no memory round trips on the
      // column-to-column dependency chain)
      constexpr int B = (KW > 0 ? KW : 1) - 1;
      T Wn[B + 1][B + 1];
      for (int r = 0; r <= B; ++r) {
        for (int c = 0; c <= r; ++c) Wn[r][c] = Bs[static_cast<std::size_t>(c) * s + (r - c)];
        Wn[r][r] += theta[r];
      }
      for (int j = 0; j < full; ++j) {
        const T inv = 1.0 / Wn[0][0];
        T l[B + 1];
        SB_DN_UNROLL
        for (int q = 1; q <= B; ++q) l[q] = Wn[q][0] * inv;
        SB_DN_UNROLL
        for (int r = 1; r <= B; ++r)
          SB_DN_UNROLL
          for (int q = 1; q <= r; ++q) Wn[r][q] -= l[r] * Wn[q][0];
        T* Aj = A + static_cast<std::size_t>(j) * s;
        Aj[0] = inv;
        SB_DN_UNROLL
        for (int q = 1; q <= B; ++q) Aj[q] = l[q];
        SB_DN_UNROLL
        for (int r = 0; r < B; ++r)
          SB_DN_UNROLL
          for (int c = 0; c <= r; ++c) Wn[r][c] = Wn[r + 1][c + 1];
        if (j + 1 + B < m) {
          SB_DN_UNROLL
          for (int c = 0; c <= B; ++c) Wn[B][c] = Bs[static_cast<std::size_t>(j + 1 + c) * s + (B - c)];
          Wn[B][B] += theta[j + 1 + B];
        }
      }
      for (int r = 0; r <= B && full + r < m; ++r)
        for (int c = 0; c <= r; ++c) A[static_cast<std::size_t>(full + c) * s + (r - c)] = Wn[r][c];
      j0 = full;
    }
    // the window held the whole trailing triangle (rows full .. m-1); without it copy the matrix first
    if (!(KW > 0 && full > 0)) {
      for (int j = 0; j < m; ++j) {
        for (int q = 0; q < s; ++q) A[static_cast<std::size_t>(j) * s + q] = Bs[static_cast<std::size_t>(j) * s + q];
        A[static_cast<std::size_t>(j) * s] += theta[j];
      }
    }
    for (int j = std::max(j0, 0); j < m; ++j) {
      T* Aj = A + static_cast<std::size_t>(j) * s;
      const T inv = 1.0 / Aj[0];
      const int qmax = std::min(b, m - 1 - j);
      for (int q = 1; q <= qmax; ++q) {
        const T f = Aj[q];
        T* Ac = Aj + static_cast<std::size_t>(q) * s;
        for (int r = q; r <= qmax; ++r) Ac[r - q] -= Aj[r] * inv * f;
      }
      for (int q = 1; q <= qmax; ++q) Aj[q] *= inv;
      Aj[0] = inv;
    }
  }

  // h = D W^-1 r1; the fixed-width path keeps the last kw products r1_i / w_i in registers
  template <int KW>
  void form_h() {
    const BandedD& D = *D_;
    const int m = D.m, kw = KW > 0 ? KW : D.width;
    const double* c = D.c.data();
    const T* wi = winv_.data();
    const double* r1 = r1_;
    T* h = h_.data();
    if (KW > 0) {
      T t[KW > 0 ? KW : 1];
      SB_DN_UNROLL
      for (int l = 0; l + 1 < kw; ++l) t[l] = r1[l] * wi[l];
      for (int j = 0; j < m; ++j) {
        t[kw - 1] = r1[j + kw - 1] * wi[j + kw - 1];
        const double* cj = c + static_cast<std::size_t>(j) * kw;
        T acc = 0.0;
        SB_DN_UNROLL
        for (int l = 0; l < kw; ++l) acc += cj[l] * t[l];
        h[j] = acc;
        SB_DN_UNROLL
        for (int l = 0; l + 1 < kw; ++l) t[l] = t[l + 1];
      }
    } else {
      for (int j = 0; j < m; ++j) {
        const double* cj = c + static_cast<std::size_t>(j) * kw;
        T acc = 0.0;
        for (int l = 0; l < kw; ++l) acc += static_cast<T>(cj[l]) * r1[j + l] * wi[j + l];
        h[j] = acc;
      }
    }
  }
  // dbeta = W^-1 (-r1 - D' du), D' du gathered; columns kw-1 .. m-1 meet a full band of rows
  template <int KW>
  void solve_db(const double* du, double* db) const {
    const BandedD& D = *D_;
    const double* r1 = r1_;
    const int n = D.n, m = D.m, kw = KW > 0 ? KW : D.width;
    const double* c = D.c.data();
    const T* wi = winv_.data();
    auto gather = [&](int t) {
      const int lo = std::max(0, t - m + 1), hi = std::min(kw - 1, t);
      T acc = -r1[t];
      for (int l = lo; l <= hi; ++l) acc -= static_cast<T>(c[static_cast<std::size_t>(t - l) * kw + l]) * du[t - l];
      db[t] = acc * wi[t];
    };
    const int t1 = std::min(kw - 1, n);
    for (int t = 0; t < t1; ++t) gather(t);
    for (int t = t1; t < m; ++t) {
      T acc = -r1[t];
      SB_DN_UNROLL
      for (int l = 0; l < kw; ++l) acc -= static_cast<T>(c[static_cast<std::size_t>(t - l) * kw + l]) * du[t - l];
      db[t] = acc * wi[t];
    }
    for (int t = std::max(t1, m); t < n; ++t) gather(t);
  }

  // x = M^-1 x in place; the fixed-width path keeps the pending entries in registers
  template <int KW>
  void solve_t(T* x) const {
    const int kw = KW > 0 ? KW : D_->width, m = D_->m, b = kw - 1, s = kw;
    const T* A = L_.data();
    const int full = m - b;
    int j0 = 0;
    if (KW > 0 && full > 0) {
      constexpr int B = (KW > 0 ? KW : 1) - 1;
      T win[B + 1];  // forward: win[q] = pending y_{j+q}
      SB_DN_UNROLL
      for (int q = 0; q <= B; ++q) win[q] = x[q];
      for (int j = 0; j < full; ++j) {
        const T* Aj = A + static_cast<std::size_t>(j) * s;
        const T xj = win[0];
        x[j] = xj;
        SB_DN_UNROLL
        for (int q = 1; q <= B; ++q) win[q - 1] = win[q] - Aj[q] * xj;
        win[B] = j + 1 + B < m ? x[j + 1 + B] : 0.0;
      }
      for (int q = 0; q <= B && full + q < m; ++q) x[full + q] = win[q];
      j0 = full;
    }
    for (int j = std::max(j0, 0); j < m; ++j) {  // L y = x (the last b rows, or all of them for KW == 0)
      const T* Aj = A + static_cast<std::size_t>(j) * s;
      const T xj = x[j];
      const int qmax = std::min(b, m - 1 - j);
      for (int q = 1; q <= qmax; ++q) x[j + q] -= Aj[q] * xj;
    }
    // D z = y, L' x = z
    const int jb = KW > 0 ? std::max(full, 0) : 0;
    for (int j = m - 1; j >= jb; --j) {
      const T* Aj = A + static_cast<std::size_t>(j) * s;
      const int qmax = std::min(b, m - 1 - j);
      T t = 0.0;
      for (int q = 1; q <= qmax; ++q) t += Aj[q] * x[j + q];
      x[j] = x[j] * Aj[0] - t;
    }
    if (KW > 0 && full > 0) {
      constexpr int B = (KW > 0 ? KW : 1) - 1;
      T win[B + 1];  // backward: win[q] = x_{j+q}
      SB_DN_UNROLL
      for (int q = 1; q <= B; ++q) win[q] = x[full - 1 + q];
      for (int j = full - 1; j >= 0; --j) {
        const T* Aj = A + static_cast<std::size_t>(j) * s;
        T t = x[j] * Aj[0];
        SB_DN_UNROLL
        for (int q = B; q >= 1; --q) t -= Aj[q] * win[q];
        x[j] = t;
        SB_DN_UNROLL
        for (int q = B; q >= 2; --q) win[q] = win[q - 1];
        win[1] = t;
      }
    }
  }

  const BandedD* D_ = nullptr;
  const double* r1_ = nullptr;
  std::vector<T> base_, L_, winv_, h_, x_;
};

using DualNormalBand = DualNormalBandT<double>;

}  // namespace genlasso
}  // namespace scalebayes
