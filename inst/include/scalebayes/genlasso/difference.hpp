// scalebayes/genlasso/difference.hpp -- banded difference operators D^{(x,k+1)} for trend filtering on sorted,
// possibly unevenly spaced inputs x, the weighted polynomial projection (null space of D) and exact lambda_max.
//
// Convention (Tibshirani 2014, Wang, Smola & Tibshirani 2014 falling-factorial basis, as in genlasso's
// getDtfPosSparse):   D^{(x,1)} = D^{(1)} (rows -1, +1),
//                     D^{(x,k+1)} = D^{(1)} diag(k / (x_{i+k} - x_i), i = 1..n-k) D^{(x,k)}.
// For x = 1..n this is the integer difference matrix of the WBB paper (binomial coefficients with signs).
// D^{(x,k+1)} has m = n-k-1 rows; row i holds k+2 coefficients at columns i..i+k+1.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace scalebayes {
namespace genlasso {

// Calls f(std::integral_constant<int, W>) with W = width for the widths of trend filtering k = 0..3 (kernels
// then unroll their loops over a compile-time width), W = 0 (run-time width) otherwise.
template <class F>
void dispatch_width(int width, F&& f) {
  switch (width) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    default: f(std::integral_constant<int, 0>{}); break;
  }
}

// A banded matrix with m rows of `width` consecutive nonzeros: row i occupies columns i..i+width-1.
struct BandedD {
  int n = 0;      // columns
  int m = 0;      // rows
  int width = 0;  // k + 2
  std::vector<double> c;  // row-major m x width
  double at(int i, int l) const { return c[static_cast<std::size_t>(i) * width + l]; }

  // out = D v (length m)
  void apply(const double* v, double* out) const {
    dispatch_width(width, [&](auto W) { apply_w<decltype(W)::value>(v, out); });
  }
  // out = D' u (length n), gathered row by row of D' (no zero fill, no scatter)
  void apply_t(const double* u, double* out) const {
    dispatch_width(width, [&](auto W) { apply_t_w<decltype(W)::value>(u, out); });
  }

 private:
  // W > 0: compile-time width (the inner loops unroll); W == 0: run-time width
  template <int W>
  void apply_w(const double* v, double* out) const {
    const int w = W > 0 ? W : width;
    for (int i = 0; i < m; ++i) {
      const double* ci = &c[static_cast<std::size_t>(i) * w];
      double s = 0.0;
      for (int l = 0; l < w; ++l) s += ci[l] * v[i + l];
      out[i] = s;
    }
  }
  template <int W>
  void apply_t_w(const double* u, double* out) const {
    const int w = W > 0 ? W : width;
    for (int t = 0; t < n; ++t) {
      // (D'u)_t = sum over rows i = t-l (0 <= i < m, 0 <= l < w) of c(i, l) u_i
      const int lo = std::max(0, t - m + 1), hi = std::min(w - 1, t);
      double s = 0.0;
      if (lo == 0 && hi == w - 1) {
        for (int l = 0; l < w; ++l) s += c[static_cast<std::size_t>(t - l) * w + l] * u[t - l];
      } else {
        for (int l = lo; l <= hi; ++l) s += c[static_cast<std::size_t>(t - l) * w + l] * u[t - l];
      }
      out[t] = s;
    }
  }
};

// Checks that x is finite and strictly increasing, and that 0 <= k <= n-2.
inline void check_tf_inputs(const Eigen::Ref<const Eigen::VectorXd>& x, int k) {
  const int n = static_cast<int>(x.size());
  if (k < 0) throw std::invalid_argument("trend filtering order k must be >= 0");
  if (n < k + 2) throw std::invalid_argument("trend filtering needs n >= k + 2 points");
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) throw std::invalid_argument("x must be finite");
  for (int i = 1; i < n; ++i)
    if (!(x[i] > x[i - 1])) throw std::invalid_argument("x must be strictly increasing (sorted, no ties)");
}

// Builds D^{(x,k+1)} by the recursion above.
inline BandedD make_difference(const Eigen::Ref<const Eigen::VectorXd>& x, int k) {
  check_tf_inputs(x, k);
  const int n = static_cast<int>(x.size());
  BandedD D;
  D.n = n;
  D.m = n - 1;
  D.width = 2;
  D.c.assign(static_cast<std::size_t>(D.m) * 2, 0.0);
  for (int i = 0; i < D.m; ++i) {
    D.c[2 * i] = -1.0;
    D.c[2 * i + 1] = 1.0;
  }
  for (int kk = 1; kk <= k; ++kk) {
    // old: n-kk rows, width kk+1; new: n-kk-1 rows, width kk+2
    const int mo = D.m, wo = D.width;
    const int mn = mo - 1, wn = wo + 1;
    std::vector<double> cn(static_cast<std::size_t>(mn) * wn, 0.0);
    for (int i = 0; i < mn; ++i) {
      const double si = kk / (x[i + kk] - x[i]);
      const double si1 = kk / (x[i + 1 + kk] - x[i + 1]);
      for (int l = 0; l < wn; ++l) {
        double v = 0.0;
        if (l >= 1) v += si1 * D.c[static_cast<std::size_t>(i + 1) * wo + (l - 1)];
        if (l < wo) v -= si * D.c[static_cast<std::size_t>(i) * wo + l];
        cn[static_cast<std::size_t>(i) * wn + l] = v;
      }
    }
    D.c.swap(cn);
    D.m = mn;
    D.width = wn;
  }
  return D;
}

// Weighted least-squares projection of y onto polynomials of degree k in x (the null space of D^{(x,k+1)}),
// with weights w. Uses centred and scaled x and a Householder QR for stability.
inline Eigen::VectorXd poly_projection(const Eigen::Ref<const Eigen::VectorXd>& y,
                                       const Eigen::Ref<const Eigen::VectorXd>& x,
                                       const Eigen::Ref<const Eigen::VectorXd>& w, int k) {
  const int n = static_cast<int>(y.size());
  const double lo = x.minCoeff(), hi = x.maxCoeff();
  const double mid = 0.5 * (lo + hi), half = std::max(0.5 * (hi - lo), std::numeric_limits<double>::min());
  Eigen::MatrixXd B(n, k + 1);
  for (int i = 0; i < n; ++i) {
    const double t = (x[i] - mid) / half;
    // Legendre-like stability is not needed for k <= ~10; plain powers of t in [-1, 1].
    double v = 1.0;
    for (int j = 0; j <= k; ++j) {
      B(i, j) = v;
      v *= t;
    }
  }
  Eigen::VectorXd sw = w.array().sqrt();
  Eigen::MatrixXd Bw = sw.asDiagonal() * B;
  Eigen::VectorXd yw = sw.cwiseProduct(y);
  Eigen::VectorXd coef = Bw.colPivHouseholderQr().solve(yw);
  return B * coef;
}

// Solves D' u = r for u when r lies in the range of D' (exactly: r = W (y - P y) for the weighted polynomial
// projection P), by forward substitution on the first m rows of D' (D' is lower-trapezoidal with diagonal
// entries D(i,i) != 0).
inline Eigen::VectorXd solve_dt(const BandedD& D, const Eigen::Ref<const Eigen::VectorXd>& r) {
  Eigen::VectorXd u(D.m);
  const int p = D.width - 1;
  for (int l = 0; l < D.m; ++l) {
    double s = r[l];
    for (int i = std::max(0, l - p); i < l; ++i) s -= D.at(i, l - i) * u[i];
    u[l] = s / D.at(l, 0);
  }
  return u;
}

// The dual solution of the unpenalized problem (lambda >= lambda_max): u0 with D' u0 = W (y - P_W y).
// lambda_max = max_j |u0_j| / w0_j (w0 of length 1 = common, or m = separate).
inline Eigen::VectorXd unconstrained_dual(const BandedD& D, const Eigen::Ref<const Eigen::VectorXd>& y,
                                          const Eigen::Ref<const Eigen::VectorXd>& x,
                                          const Eigen::Ref<const Eigen::VectorXd>& w, int k) {
  Eigen::VectorXd fit = poly_projection(y, x, w, k);
  Eigen::VectorXd r = w.cwiseProduct(y - fit);
  return solve_dt(D, r);
}

inline double lambda_max_from_dual(const Eigen::Ref<const Eigen::VectorXd>& u0,
                                   const Eigen::Ref<const Eigen::VectorXd>& w0) {
  double lm = 0.0;
  for (int j = 0; j < u0.size(); ++j) {
    const double wj = w0.size() == 1 ? w0[0] : w0[j];
    lm = std::max(lm, std::abs(u0[j]) / wj);
  }
  return lm;
}

// Euclidean norms of the rows of D (O(n k); the difference-based noise estimate of sure_trend_filter()).
inline Eigen::VectorXd row_norms(const BandedD& D) {
  Eigen::VectorXd out(D.m);
  for (int i = 0; i < D.m; ++i) {
    double s = 0.0;
    for (int l = 0; l < D.width; ++l) s += D.at(i, l) * D.at(i, l);
    out[i] = std::sqrt(s);
  }
  return out;
}

}  // namespace genlasso
}  // namespace scalebayes
