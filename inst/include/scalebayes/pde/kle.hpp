// scalebayes/pde/kle.hpp -- Karhunen-Loeve expansion of a separable Gaussian random field on [0,1]^2.
//
// Covariance C(x, x') = variance * exp(-(x1 - x1')^2 / l1^2 - (x2 - x2')^2 / l2^2) (the kernel of Wang, Deng &
// Lin 2021, section 5.3.2, whose "sigma" multiplies the exponential: it is the variance). The kernel is a
// product of two 1-D kernels k_l(s, t) = exp(-(s - t)^2 / l^2) on [0, 1], so its eigenpairs are products of
// 1-D eigenpairs: lambda = variance * lambda1_a * lambda2_b, Phi(x) = phi1_a(x1) phi2_b(x2). The 1-D eigenpairs
// have no closed form on a bounded interval; they are computed by the Nystrom method (midpoint rule with m
// nodes, weights 1/m): the symmetric matrix W^1/2 K W^1/2 is diagonalized, phi at the nodes is v / sqrt(w)
// (so that sum_j w phi(t_j)^2 = 1), and phi anywhere else is the Nystrom interpolant
// phi(s) = (1 / lambda) sum_j w k(s, t_j) phi(t_j). The midpoint rule converges at rate m^-2 for this smooth
// kernel; the leading eigenvalues are accurate to ~1e-10 at m = 500 (tests/testthat/test-pde.R).
// Header-only, Eigen, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace scalebayes {
namespace pde {

// Eigenpairs of k_l(s, t) = exp(-(s - t)^2 / l^2) on [0, 1], largest first.
struct Kle1d {
  double length = 1.0;
  Eigen::VectorXd nodes;    // m midpoint nodes
  Eigen::VectorXd values;   // all m eigenvalues, decreasing
  Eigen::MatrixXd vectors;  // m x m: phi_k at the nodes (column k), normalized sum_j w phi^2 = 1

  Kle1d(double l, int m) : length(l) {
    if (!(l > 0.0) || !std::isfinite(l)) throw std::invalid_argument("correlation length must be positive and finite");
    if (m < 2) throw std::invalid_argument("the Nystrom grid needs at least 2 nodes");
    nodes.resize(m);
    for (int j = 0; j < m; ++j) nodes[j] = (j + 0.5) / m;
    const double w = 1.0 / m;
    Eigen::MatrixXd K(m, m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) K(i, j) = w * kernel(nodes[i], nodes[j]);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(K);
    if (es.info() != Eigen::Success) throw std::runtime_error("Nystrom eigen-decomposition failed");
    values = es.eigenvalues().reverse();
    vectors = es.eigenvectors().rowwise().reverse() / std::sqrt(w);
    // fix the sign: the first non-negligible node value positive (deterministic across platforms)
    for (int k = 0; k < m; ++k) {
      int j = 0;
      while (j < m - 1 && std::abs(vectors(j, k)) < 1e-8) ++j;
      if (vectors(j, k) < 0) vectors.col(k) *= -1.0;
    }
  }
  double kernel(double s, double t) const {
    const double d = (s - t) / length;
    return std::exp(-d * d);
  }
  // phi_k at points s (Nystrom interpolation).
  Eigen::VectorXd eval(int k, const Eigen::VectorXd& s) const {
    const int m = static_cast<int>(nodes.size());
    const double w = 1.0 / m;
    Eigen::VectorXd out(s.size());
    for (Eigen::Index i = 0; i < s.size(); ++i) {
      double acc = 0.0;
      for (int j = 0; j < m; ++j) acc += kernel(s[i], nodes[j]) * vectors(j, k);
      out[i] = w * acc / values[k];
    }
    return out;
  }
};

// The leading `terms` eigenpairs of the 2-D separable kernel evaluated at the centres of an nx x ny grid of
// cells on [0,1]^2 (cell (i, j) has centre ((i + 1/2)/nx, (j + 1/2)/ny); cells in the order i + nx j, x fastest).
struct Kle2d {
  Eigen::VectorXd values;  // terms eigenvalues (variance included), decreasing
  std::vector<int> index1, index2;  // 1-D indices (0-based) of each term
  Eigen::MatrixXd basis;   // (nx ny) x terms: Phi_k at the cell centres
  Eigen::VectorXd values1, values2;  // leading 1-D eigenvalues (unit variance), for checks

  Kle2d(int nx, int ny, double l1, double l2, double variance, int terms, int m) {
    if (nx < 1 || ny < 1) throw std::invalid_argument("grid must have at least one cell each way");
    if (terms < 1) throw std::invalid_argument("terms must be at least 1");
    if (!(variance > 0.0) || !std::isfinite(variance)) throw std::invalid_argument("variance must be positive");
    if (terms > m) throw std::invalid_argument("terms must not exceed the Nystrom grid size");
    Kle1d e1(l1, m), e2(l2, m);
    const int K = std::min(terms, m);  // a term's 1-D indices are < terms
    struct Cand { double v; int a, b; };
    std::vector<Cand> c;
    c.reserve(static_cast<std::size_t>(K) * K);
    for (int a = 0; a < K; ++a)
      for (int b = 0; b < K; ++b) c.push_back({variance * e1.values[a] * e2.values[b], a, b});
    std::stable_sort(c.begin(), c.end(), [](const Cand& x, const Cand& y) { return x.v > y.v; });
    values.resize(terms);
    index1.resize(terms);
    index2.resize(terms);
    for (int k = 0; k < terms; ++k) {
      values[k] = c[k].v;
      index1[k] = c[k].a;
      index2[k] = c[k].b;
    }
    values1 = e1.values.head(K);
    values2 = e2.values.head(K);
    Eigen::VectorXd cx(nx), cy(ny);
    for (int i = 0; i < nx; ++i) cx[i] = (i + 0.5) / nx;
    for (int j = 0; j < ny; ++j) cy[j] = (j + 0.5) / ny;
    std::vector<Eigen::VectorXd> f1(K), f2(K);
    std::vector<bool> have1(K, false), have2(K, false);
    basis.resize(static_cast<Eigen::Index>(nx) * ny, terms);
    for (int k = 0; k < terms; ++k) {
      const int a = index1[k], b = index2[k];
      if (!have1[a]) { f1[a] = e1.eval(a, cx); have1[a] = true; }
      if (!have2[b]) { f2[b] = e2.eval(b, cy); have2[b] = true; }
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) basis(i + static_cast<Eigen::Index>(nx) * j, k) = f1[a][i] * f2[b][j];
    }
  }

  // The field sum_k coef_k sqrt(lambda_k) Phi_k at the cell centres.
  Eigen::VectorXd field(const Eigen::VectorXd& coef) const {
    return basis * (coef.array() * values.array().sqrt()).matrix();
  }
};

}  // namespace pde
}  // namespace scalebayes
