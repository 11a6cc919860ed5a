// scalebayes/genlasso/certificate.hpp -- duality-gap certificates of a pair (beta, u) for the weighted
// generalized lasso, the denominator floor of the relative gap, and the representability floor of a
// double-precision beta. Every solver's reported gap comes from here.
//
//   P(beta) - g(u) = sum_j (lam_j |z_j| - u_j z_j) + 1/2 sum_i r_i^2 / w_i,  z = D beta, r = W (y - beta) - D'u,
//
// a sum of non-negative terms (no cancellation); the dual residual r enters squared.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "difference.hpp"
#include "ip_types.hpp"

namespace scalebayes {
namespace genlasso {

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

// Certified gap for a primal point beta with dual u: gap = sum_j lam_j |(D beta)_j| - u_j (D beta)_j.
inline void certify(const BandedD& D, const Eigen::VectorXd& y, const Eigen::VectorXd& w, const Eigen::VectorXd& lam,
                    IPResult& r) {
  Eigen::VectorXd z(D.m);
  D.apply(r.beta.data(), z.data());
  double loss = 0.0, pen = 0.0, g = 0.0;
  for (int i = 0; i < D.n; ++i) loss += w[i] * (y[i] - r.beta[i]) * (y[i] - r.beta[i]);
  for (int j = 0; j < D.m; ++j) {
    pen += lam[j] * std::abs(z[j]);
    g += lam[j] * std::abs(z[j]) - r.u[j] * z[j];
  }
  r.primal = 0.5 * loss + pen;
  r.gap = std::max(g, 0.0);
  r.rel_gap = r.gap / std::max(r.primal, static_cast<double>(gap_floor(y, w)));
}

// The representability floor of a certificate: rounding each beta_i to double (relative error <= 2^-53) can
// change the penalty by up to 2^-53 sum_j lam_j sum_l |D_jl| |beta_{j+l}|. For k >= 2 and large n the optimal
// lambda makes this bound exceed 1e-8 P (the (k+1)-th differences of a smooth double-precision curve are
// rounding noise), and no solver that returns doubles can certify a smaller relative gap. Reported with
// every solve so that such a gap is not mistaken for a solver failure.
inline double rounding_floor(const BandedD& D, const Eigen::VectorXd& beta, const Eigen::VectorXd& lam, double primal) {
  double s = 0.0;
  for (int j = 0; j < D.m; ++j) {
    double t = 0.0;
    for (int l = 0; l < D.width; ++l) t += std::abs(D.at(j, l)) * std::abs(beta[j + l]);
    s += lam[j] * t;
  }
  return std::ldexp(s, -53) / std::max(primal, std::numeric_limits<double>::min());
}

}  // namespace genlasso
}  // namespace scalebayes
