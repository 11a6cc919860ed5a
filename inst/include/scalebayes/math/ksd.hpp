// scalebayes/math/ksd.hpp -- the kernel Stein discrepancy (KSD) of a sample against a target known through its
// score, with the inverse multiquadric (IMQ) kernel of Gorham & Mackey (2017), "Measuring sample quality with
// kernels" (ICML).
//
// For draws x_1..x_m in R^d with weights w_i (summing to 1) and scores s_i = grad log p(x_i), the squared KSD is
// the V-statistic
//   KSD^2 = sum_{i,j} w_i w_j k0(x_i, x_j),
//   k0(x, y) = s(x)'s(y) k(x, y) + s(x)' grad_y k + s(y)' grad_x k + trace(grad_x grad_y k),
// with k(x, y) = (c^2 + ||x - y||^2)^beta, beta in (-1, 0). Writing r = x - y and u = c^2 + ||r||^2:
//   grad_x k = 2 beta u^(beta-1) r = -grad_y k,
//   trace(grad_x grad_y k) = -2 beta d u^(beta-1) - 4 beta (beta - 1) u^(beta-2) ||r||^2,
// so k0 = u^beta s(x)'s(y) + 2 beta u^(beta-1) (s(y) - s(x))'r - 2 beta d u^(beta-1)
//         - 4 beta (beta - 1) u^(beta-2) ||r||^2.
// KSD = 0 exactly when the (weighted) sample is the target; with beta in (-1, 0) it detects non-convergence
// (Gorham & Mackey, Theorem 8) and it penalizes both the bias of a too-long step and the poor coverage of a
// too-short one, which is why it scores step sizes (Coullon, South & Nemeth 2021). It is invariant to nothing
// but translations: a user compares the KSD of two samples of the same target on the same coordinates.
// Cost O(m^2 d); the diagonal and the symmetric pairs are computed once. `stop()` is polled every few rows.
// Header-only, std, no R.
#pragma once
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

namespace scalebayes {
namespace math {

struct KsdResult {
  double ksd = 0.0;        // sqrt(KSD^2) (0 when rounding makes KSD^2 slightly negative)
  double ksd2 = 0.0;       // the V-statistic itself
  bool interrupted = false;
};

// x, s: m x d, column-major (element (i, j) at [i + j m]); w: m weights or empty (1/m each).
inline KsdResult ksd_imq(const double* x, const double* s, long m, long d, const std::vector<double>& w,
                         double c = 1.0, double beta = -0.5, const std::function<bool()>& stop = {}) {
  if (m < 1 || d < 1) throw std::invalid_argument("ksd: need at least one draw of at least one coordinate");
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("ksd: c must be positive and finite");
  if (!(beta > -1.0 && beta < 0.0)) throw std::invalid_argument("ksd: beta must lie in (-1, 0)");
  if (!w.empty() && static_cast<long>(w.size()) != m) throw std::invalid_argument("ksd: one weight per draw");
  // row-major copies: the inner loops read one draw's coordinates contiguously
  std::vector<double> X(static_cast<std::size_t>(m * d)), S(static_cast<std::size_t>(m * d));
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < d; ++j) {
      X[i * d + j] = x[i + j * m];
      S[i * d + j] = s[i + j * m];
    }
  std::vector<double> wt(static_cast<std::size_t>(m), 1.0 / static_cast<double>(m));
  if (!w.empty()) {
    double tot = 0.0;
    for (double v : w) {
      if (!(v >= 0.0) || !std::isfinite(v)) throw std::invalid_argument("ksd: weights must be finite and >= 0");
      tot += v;
    }
    if (!(tot > 0.0)) throw std::invalid_argument("ksd: the weights sum to zero");
    for (long i = 0; i < m; ++i) wt[i] = w[i] / tot;
  }
  const double c2 = c * c, dd = static_cast<double>(d);
  KsdResult out;
  double total = 0.0;
  for (long i = 0; i < m; ++i) {
    if (stop && (i & 31) == 0 && stop()) {
      out.interrupted = true;
      return out;
    }
    const double* xi = &X[i * d];
    const double* si = &S[i * d];
    // the diagonal: r = 0, u = c^2
    double ss = 0.0;
    for (long k = 0; k < d; ++k) ss += si[k] * si[k];
    double row = 0.5 * wt[i] * (std::pow(c2, beta) * ss - 2.0 * beta * dd * std::pow(c2, beta - 1.0));
    for (long j = i + 1; j < m; ++j) {
      const double* xj = &X[j * d];
      const double* sj = &S[j * d];
      double r2 = 0.0, sxy = 0.0, sr = 0.0;
      for (long k = 0; k < d; ++k) {
        const double r = xi[k] - xj[k];
        r2 += r * r;
        sxy += si[k] * sj[k];
        sr += (sj[k] - si[k]) * r;
      }
      const double u = c2 + r2;
      const double ub = std::pow(u, beta);
      const double ub1 = ub / u, ub2 = ub1 / u;
      const double k0 = ub * sxy + 2.0 * beta * ub1 * sr - 2.0 * beta * dd * ub1 - 4.0 * beta * (beta - 1.0) * ub2 * r2;
      row += wt[j] * k0;
    }
    total += 2.0 * wt[i] * row;  // the pairs (i, j) and (j, i), and the diagonal once (the 0.5 above)
  }
  out.ksd2 = total;
  out.ksd = total > 0.0 ? std::sqrt(total) : 0.0;
  return out;
}

}  // namespace math
}  // namespace scalebayes
