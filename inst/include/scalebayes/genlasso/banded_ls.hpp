// scalebayes/genlasso/banded_ls.hpp -- the stiff banded least-squares solve of the primal interior point's
// Newton system (primal_ip.hpp, Givens path), in double or long double.
// Header-only, Eigen/std only, no R.
#pragma once
#include <algorithm>
#include <vector>

#include "difference.hpp"
#include "givens_band.hpp"

namespace scalebayes {
namespace genlasso {

// Banded least squares  min_x ||diag(sw) x - c1||^2 + ||diag(sd) D x - c2||^2  by Givens QR, rows taken in
// column order (D-row i, then unit row i). Used instead of a Cholesky of the normal equations
// W + D' S^2 D: the weights sd^2 = 1/theta reach 1e16 and more on rows off the knots (stiff least squares),
// where the normal equations lose the W part (the polynomial null space of D) entirely.
// T: double, or long double once the double factorization no longer resolves the system (primal_ip).
template <class T>
class BandedLS {
 public:
  // Factors A = [diag(sd) D; diag(sw)] (rows interleaved) and solves for (c1, c2); the rotations are
  // recorded so that resolve() can solve for another right-hand side with the same matrix (the corrector).
  void solve(const BandedD& D, const T* sw, const T* sd, const T* c1, const T* c2, T* x) {
    const int n = D.n, m = D.m, w = D.width;
    g_.reset(n, w);
    seg_end_.assign(2 * static_cast<std::size_t>(n), 0);
    std::vector<T>& a = g_.a;
    for (int i = 0; i < n; ++i) {
      if (i < m) {
        const double* ci = &D.c[static_cast<std::size_t>(i) * w];
        for (int q = 0; q < w; ++q) a[q] = sd[i] * static_cast<T>(ci[q]);
        g_.rotate_in(i, c2[i]);
      }
      seg_end_[2 * static_cast<std::size_t>(i)] = static_cast<int>(g_.n_records());
      std::fill(a.begin(), a.end(), T(0));
      a[0] = sw[i];
      g_.rotate_in(i, c1[i]);
      seg_end_[2 * static_cast<std::size_t>(i) + 1] = static_cast<int>(g_.n_records());
    }
    g_.solve_r(g_.qc.data(), x);
  }
  // Same matrix, new right-hand side: replays the recorded rotations.
  void resolve(int m, const T* c1, const T* c2, T* x) {
    qf_.resize(g_.ncol);
    g_.replay(seg_end_, [&](std::size_t k) {
      const std::size_t i = k / 2;
      return k % 2 == 0 ? (static_cast<int>(i) < m ? c2[i] : T(0)) : c1[i];
    }, qf_.data());
    g_.solve_r(qf_.data(), x);
  }

 private:
  GivensBandT<T> g_;
  std::vector<int> seg_end_;
  std::vector<T> qf_;
};

}  // namespace genlasso
}  // namespace scalebayes
