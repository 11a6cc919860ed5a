# How accurate are the dual path's knots for trend filtering k = 3 on strongly uneven x? A reference path in
# extended precision (long double, 64-bit mantissa, Eigen's Householder QR of D_I' at every knot, genlasso's
# rules) against scalebayes (banded Givens QR, double), genlasso (double) and the same reference code in double.
# Run: R_LIBS=<lib with scalebayes> Rscript bench/genlasso_path_precision.R   (needs genlasso, Rcpp, RcppEigen)
suppressMessages({library(scalebayes); library(genlasso)})
Rcpp::sourceCpp(code = '
// [[Rcpp::depends(RcppEigen)]]
#include <RcppEigen.h>
template <class T>
Rcpp::List refpath(const Rcpp::NumericMatrix& Dd, const Rcpp::NumericVector& yd, int maxsteps) {
  typedef Eigen::Matrix<T, -1, -1> M; typedef Eigen::Matrix<T, -1, 1> V;
  const int m = Dd.nrow(), n = Dd.ncol();
  M D(m, n); V y(n);
  for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) D(i, j) = Dd(i, j);
  for (int j = 0; j < n; ++j) y[j] = yd[j];
  std::vector<char> inB(m, 0); std::vector<int> sB(m, 0);
  auto lsq = [&](const std::vector<int>& I, const V& r1, const V& r2, V& a, V& b) {
    M A(n, I.size());
    for (size_t c = 0; c < I.size(); ++c) A.col(c) = D.row(I[c]).transpose();
    Eigen::HouseholderQR<M> qr(A);
    a = qr.solve(r1); b = qr.solve(r2);
  };
  std::vector<double> lam; std::vector<int> hit;
  std::vector<int> I(m); for (int j = 0; j < m; ++j) I[j] = j;
  V a, b, zero = V::Zero(n);
  lsq(I, y, zero, a, b);
  int ih = 0; for (int j = 1; j < m; ++j) if (std::abs(a[j]) > std::abs(a[ih])) ih = j;
  inB[ih] = 1; sB[ih] = a[ih] >= 0 ? 1 : -1; lam.push_back((double) std::abs(a[ih])); hit.push_back(ih + 1);
  const T btol = 1e-7, ysc = y.cwiseAbs().maxCoeff();
  while ((int) lam.size() < maxsteps) {
    const T lprev = lam.back();
    I.clear(); for (int j = 0; j < m; ++j) if (!inB[j]) I.push_back(j);
    V Ds = V::Zero(n); for (int j = 0; j < m; ++j) if (inB[j]) Ds += T(sB[j]) * D.row(j).transpose();
    T hmax = 0; int ihit = -1, shit = 1;
    if (!I.empty()) {
      lsq(I, y, Ds, a, b);
      hmax = -1e300;
      for (size_t c = 0; c < I.size(); ++c) {
        const int sa = a[c] >= 0 ? 1 : -1; T h = a[c] / (b[c] + sa);
        if (!(h <= lprev + btol)) h = 0; else if (h > lprev) h = lprev;
        if (h > hmax) { hmax = h; ihit = c; shit = sa; }
      }
    }
    V ra = y, rb = Ds;
    for (size_t c = 0; c < I.size(); ++c) { ra -= a[c] * D.row(I[c]).transpose(); rb -= b[c] * D.row(I[c]).transpose(); }
    T lmax = 0; int il = -1; bool first = true;
    for (int j = 0; j < m; ++j) {
      if (!inB[j]) continue;
      const T c = sB[j] * D.row(j).dot(ra), d = sB[j] * D.row(j).dot(rb);
      T l = c / d; if (c >= -1e-11 * D.row(j).cwiseAbs().sum() * ysc) l = 0;
      if (!(l <= lprev + btol)) l = 0; else if (l > lprev) l = lprev;
      if (first || l > lmax) { lmax = l; il = j; first = false; }
    }
    if (hmax <= 0 && lmax <= 0) break;
    if (hmax > lmax) { inB[I[ihit]] = 1; sB[I[ihit]] = shit; lam.push_back((double) hmax); hit.push_back(I[ihit] + 1); }
    else { inB[il] = 0; sB[il] = 0; lam.push_back((double) lmax); hit.push_back(-(il + 1)); }
  }
  return Rcpp::List::create(Rcpp::Named("lambda") = lam, Rcpp::Named("event") = hit);
}
// [[Rcpp::export]]
Rcpp::List refpath_ld(Rcpp::NumericMatrix D, Rcpp::NumericVector y, int maxsteps) { return refpath<long double>(D, y, maxsteps); }
// [[Rcpp::export]]
Rcpp::List refpath_d(Rcpp::NumericMatrix D, Rcpp::NumericVector y, int maxsteps) { return refpath<double>(D, y, maxsteps); }
')
relerr <- function(a, ref) { K <- min(length(a), length(ref)); max(abs(a[1:K] - ref[1:K]) / ref[1:K]) }
cat(sprintf("%-44s %5s %6s | max rel. knot error vs long double: %9s %9s %9s | kappa(D)\n", "problem", "k", "knots",
            "sb", "genlasso", "ref dbl"))
for (case in c("jittered grid (spacings 0.3-1.7)", "uniform draws", "uniform draws, n = 40")) {
  for (k in 0:3) {
    set.seed(11)
    n <- if (grepl("40", case)) 40 else 60
    x <- if (grepl("jitter", case)) sort(seq_len(n) + runif(n, -0.35, 0.35)) else sort(runif(n, 0, n))
    y <- sin(x / 8) + rnorm(n, sd = 0.3)
    D <- as.matrix(trend_filter_matrix(n, k, x))
    ref <- refpath_ld(D, y, 2000L)
    refd <- refpath_d(D, y, 2000L)
    s <- trend_filter(y, x, k = k, path = TRUE)
    g <- genlasso::trendfilter(y, pos = x, ord = k)
    same <- length(s$lambda) == length(ref$lambda) && length(g$lambda) == length(ref$lambda)
    cat(sprintf("%-44s %5d %6d | %9.1e %9.1e %9.1e%s | %.1e\n", case, k, length(ref$lambda),
                relerr(s$lambda, ref$lambda), relerr(g$lambda, ref$lambda), relerr(refd$lambda, ref$lambda),
                if (same) "" else " (knot counts differ)", kappa(D, exact = TRUE)))
  }
}
