// scalebayes/genlasso/fused_dp.hpp -- exact O(n) weighted 1-D fused lasso (trend filtering of order k = 0):
//
//   minimize_beta  1/2 sum_i w_i (y_i - beta_i)^2 + sum_{j=1}^{n-1} lam_j |beta_{j+1} - beta_j|,   w_i > 0.
//
// Dynamic programming in the style of Johnson (2013, "A dynamic programming algorithm for the fused lasso
// and L0-segmentation"), extended to weights w_i and per-difference lam_j: the derivative of the
// cost-to-come is piecewise linear and increasing; it is stored as knots (position, change in slope,
// change in intercept) in a double-ended array. Each step clamps it to [-lam_j, lam_j] (popping knots from
// both ends, amortized O(1)) and records the clamping thresholds; a backward pass clamps. Header-only, std only.
#pragma once
#include <cmath>
#include <stdexcept>
#include <vector>

namespace scalebayes {
namespace genlasso {

// y, w of length n; lam of length n-1 (lam_j >= 0); beta (output) of length n.
inline void fused_lasso_dp(int n, const double* y, const double* w, const double* lam, double* beta) {
  if (n <= 0) return;
  if (n == 1) {
    beta[0] = y[0];
    return;
  }
  const int cap = 2 * n + 2;
  std::vector<double> kx(cap), ka(cap), kb(cap);
  std::vector<double> tm(n - 1), tp(n - 1);
  int lo = n + 1, hi = n + 1;  // knots occupy [lo, hi)
  // derivative on the far left: aL*b + bL; on the far right: aR*b + bR
  double aL = w[0], bL = -w[0] * y[0];
  double aR = aL, bR = bL;
  for (int i = 0; i < n - 1; ++i) {
    const double L = lam[i];
    // left scan: first b with h(b) = -L
    double a = aL, b = bL;
    while (lo < hi) {
      const double v = a * kx[lo] + b;
      if (v > -L) break;
      a += ka[lo];
      b += kb[lo];
      ++lo;
    }
    const double tminus = (-L - b) / a;
    const double amid = a, bmid = b;  // the piece that contains tminus
    // right scan: last b with h(b) = L
    a = aR;
    b = bR;
    while (hi > lo) {
      const double v = a * kx[hi - 1] + b;
      if (v < L) break;
      a -= ka[hi - 1];
      b -= kb[hi - 1];
      --hi;
    }
    double tplus;
    if (hi > lo) {
      tplus = (L - b) / a;
    } else {
      tplus = (L - bmid) / amid;
      a = amid;
      b = bmid;
    }
    // new knots: at tminus (from constant -L to the piece (amid, bmid)), at tplus (from (a, b) to constant L)
    --lo;
    kx[lo] = tminus;
    ka[lo] = amid;
    kb[lo] = bmid + L;
    kx[hi] = tplus;
    ka[hi] = -a;
    kb[hi] = L - b;
    ++hi;
    tm[i] = tminus;
    tp[i] = tplus;
    // add the next data term (linear everywhere: only the end pieces change)
    const double wn = w[i + 1], yn = y[i + 1];
    aL = wn;
    bL = -L - wn * yn;
    aR = wn;
    bR = L - wn * yn;
  }
  // root of the final derivative
  double a = aL, b = bL;
  for (int j = lo; j < hi; ++j) {
    const double v = a * kx[j] + b;
    if (v > 0) break;
    a += ka[j];
    b += kb[j];
  }
  double bn = -b / a;
  beta[n - 1] = bn;
  for (int i = n - 2; i >= 0; --i) {
    bn = std::min(std::max(bn, tm[i]), tp[i]);
    beta[i] = bn;
  }
}

}  // namespace genlasso
}  // namespace scalebayes
