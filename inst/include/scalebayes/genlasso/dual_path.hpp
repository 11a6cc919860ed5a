// scalebayes/genlasso/dual_path.hpp -- the exact solution path of the generalized lasso with X = I,
//
//   minimize_beta  1/2 ||y - beta||^2 + lambda ||D beta||_1,
//
// by the dual path algorithm of Tibshirani & Taylor (2011), with the same rules as genlasso's
// dualpathWide / dualpathSvd / dualpathFused (hitting and leaving times, btol, the min-norm least-squares
// dual on the interior set, df = n - rank(D_I) of the segment above each knot).
//
// State between knots: boundary set B with signs s (|u_B| = lambda), interior set I. For lambda in the
// segment below the current knot the interior dual is u_I(lambda) = a - lambda b with
//   a = argmin ||y - D_I' a||,  b = argmin ||D_B' s - D_I' b||     (min-norm solutions),
// and the primal is beta(lambda) = y - D'u(lambda). Both are linear in lambda between knots.
// Next knot = max of the hitting times  a_i / (b_i + sign(a_i))  and the leaving times  c_i / d_i
// (c = s o D_B (y - D_I'a), d = s o D_B (D_B's - D_I'b), only c_i < 0), each capped at the previous knot.
//
// Three least-squares back ends, the first two recomputed at every knot (the graph one is described at GraphLSQ:
// edges c (e_q - e_p) and lasso rows, a grounded sparse Laplacian LDL' per knot, as genlasso's dualpathFused):
//   * banded: when every row of D has a contiguous support whose first and last columns do not decrease
//     with the row index (trend filtering, the 1-D fused lasso), D_I' is banded; a row-sequential Givens QR
//     costs O(n w^2) per knot (w = most rows covering one column, k + 2 for trend filtering of order k).
//     D_I has full row rank there whenever D does; a (numerically) zero pivot switches to the dense back end.
//   * dense: when every knot is dense (D neither banded nor a graph, e.g. D V S^-1 for a design matrix X), a
//     Householder QR of D_I' kept across knots by Givens up/downdates (DenseUpdLSQ), O(n^2 + n |I|) per knot;
//     a knot where that is not the min-norm solution (|I| > n, or D_I numerically rank deficient), and the
//     occasional dense knot of the other two back ends, use Eigen's complete orthogonal decomposition of D_I'
//     (the min-norm solution for any rank, as genlasso's SVD solve), O(n m min(n, m)).
// Header-only, Eigen/std only, no R. Interrupts: stop() is called before every knot; progress(k, lambda)
// after every knot.
#pragma once
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ip_types.hpp"

namespace scalebayes {
namespace genlasso {

struct DualPathControl {
  int maxsteps = 2000;     // knots at most (genlasso's maxsteps)
  double minlam = 0.0;     // stop once a knot falls below this (genlasso's minlam)
  bool approx = false;     // never let coordinates leave the boundary (genlasso's approx)
  double btol = 1e-7;      // hitting / leaving times above the previous knot by less than btol are capped
  double rank_tol = 1e-10; // relative threshold of the dense complete orthogonal decomposition
  int backend = 0;         // 0 auto (banded, else graph, else dense), 1 banded (else dense), 2 dense
  bool dense_update = true; // dense back end on the whole path: keep the QR of D_I' by Givens up/downdates
                            // (false: a complete orthogonal decomposition from scratch at every knot)
  bool keep_beta = true;   // store beta = y - D'u at every knot (false: the caller computes it from u, e.g.
                           // straight into its own output, saving one n x knots copy)
};

using PathProgressFn = std::function<void(int, double)>;

struct DualPathResult {
  std::vector<double> lambda;              // knots, decreasing
  std::vector<int> df;                     // n - rank(D_I) of the segment above each knot (genlasso's df)
  std::vector<char> hit;                   // true: a coordinate joined the boundary at that knot
  std::vector<Eigen::VectorXd> u, beta;    // dual (m) and primal (n) at each knot (beta empty unless keep_beta)
  std::vector<std::vector<int>> boundary;  // boundary set after each knot (0-based rows of D, sorted)
  std::vector<std::vector<int>> sign;      // its signs
  bool complete = false;                   // the path reached lambda = 0 (no maxsteps / minlam stop)
  bool interrupted = false;
  bool dense_used = false;                 // some knot used the dense back end
};

namespace detail {

// Row-wise view of D: contiguous segments (lo_j, values) if banded.
struct RowSegments {
  int m = 0, n = 0, cover = 0;  // cover: most rows covering one column (the QR bandwidth)
  std::vector<int> lo, len;
  std::vector<double> val;      // row j's values at val[off[j] ...]
  std::vector<int> off;
  bool banded = false;
};

inline RowSegments row_segments(const Eigen::SparseMatrix<double>& D) {
  RowSegments s;
  s.m = static_cast<int>(D.rows());
  s.n = static_cast<int>(D.cols());
  std::vector<int> lo(s.m, std::numeric_limits<int>::max()), hi(s.m, -1);
  for (int c = 0; c < D.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(D, c); it; ++it) {
      if (it.value() == 0.0) continue;
      const int j = static_cast<int>(it.row());
      lo[j] = std::min(lo[j], c);
      hi[j] = std::max(hi[j], c);
    }
  s.banded = true;
  for (int j = 0; j < s.m; ++j) {
    if (hi[j] < 0) { s.banded = false; return s; }
    if (j > 0 && (lo[j] < lo[j - 1] || hi[j] < hi[j - 1])) { s.banded = false; return s; }
  }
  s.lo = lo;
  s.len.resize(s.m);
  s.off.resize(s.m + 1);
  s.off[0] = 0;
  long total = 0;
  for (int j = 0; j < s.m; ++j) {
    s.len[j] = hi[j] - lo[j] + 1;
    total += s.len[j];
    if (s.len[j] > 64 || total > 50000000L) { s.banded = false; return s; }
    s.off[j + 1] = s.off[j] + s.len[j];
  }
  s.val.assign(s.off[s.m], 0.0);
  for (int c = 0; c < D.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(D, c); it; ++it) {
      const int j = static_cast<int>(it.row());
      s.val[s.off[j] + (c - lo[j])] += it.value();
    }
  // cover: rows covering each column (difference array)
  std::vector<int> cnt(s.n + 1, 0);
  for (int j = 0; j < s.m; ++j) { cnt[lo[j]] += 1; cnt[hi[j] + 1] -= 1; }
  int run = 0;
  for (int i = 0; i < s.n; ++i) { run += cnt[i]; s.cover = std::max(s.cover, run); }
  if (s.cover > 64) s.banded = false;
  return s;
}

// sqrt(a^2 + b^2) without std::hypot's cost (13 % of a trend-filtering path at n = 2000); falls back to
// hypot only when the squares could overflow or underflow.
inline double givens_norm(double a, double b) {
  const double m = std::max(std::fabs(a), std::fabs(b));
  if (m > 1e150 || m < 1e-150) return std::hypot(a, b);
  return std::sqrt(a * a + b * b);
}

// min-norm least squares of D_I' x = [r1 r2] for the rows I (sorted) of a banded D: Givens QR of the n x p
// banded D_I', row by row. Returns false on a (numerically) zero pivot: the caller uses the dense solve.
class BandedLSQ {
 public:
  explicit BandedLSQ(const RowSegments& s) : s_(s), bw_(std::max(1, s.cover)) {}
  bool solve(const std::vector<int>& I, const Eigen::VectorXd& r1, const Eigen::VectorXd* r2, Eigen::VectorXd& x1,
             Eigen::VectorXd& x2) {
    const int p = static_cast<int>(I.size()), n = s_.n, bw = bw_;
    R_.assign(static_cast<size_t>(p) * bw, 0.0);
    q1_.assign(p, 0.0);
    q2_.assign(p, 0.0);
    filled_.assign(p, 0);
    rowscale_.assign(p, 0.0);
    std::vector<double> v(bw + 1, 0.0);
    int cstart = 0;
    for (int i = 0; i < n; ++i) {
      while (cstart < p && s_.lo[I[cstart]] + s_.len[I[cstart]] - 1 < i) ++cstart;
      int ext = 0;
      for (int c = cstart; c < p && s_.lo[I[c]] <= i; ++c) {
        const int j = I[c];
        v[c - cstart] = s_.val[s_.off[j] + (i - s_.lo[j])];
        ext = c - cstart + 1;
      }
      if (ext == 0) continue;
      double b1 = r1[i], b2 = r2 ? (*r2)[i] : 0.0;
      int c = cstart;
      while (ext > 0 && c < p) {
        if (v[0] == 0.0) {
          for (int t = 0; t + 1 < ext; ++t) v[t] = v[t + 1];
          v[ext - 1] = 0.0;
          --ext;
          ++c;
          continue;
        }
        double* Rc = &R_[static_cast<size_t>(c) * bw];
        if (!filled_[c]) {
          for (int t = 0; t < bw; ++t) Rc[t] = t < ext ? v[t] : 0.0;
          q1_[c] = b1;
          q2_[c] = b2;
          filled_[c] = 1;
          ext = 0;
          break;
        }
        const double a = Rc[0], bb = v[0], h = givens_norm(a, bb), cs = a / h, sn = bb / h;
        const int lim = std::max(ext, bw);
        for (int t = 0; t < lim && t < bw; ++t) {
          const double rt = Rc[t], vt = v[t];
          Rc[t] = cs * rt + sn * vt;
          v[t] = -sn * rt + cs * vt;
        }
        const double t1 = q1_[c], t2 = q2_[c];
        q1_[c] = cs * t1 + sn * b1;
        b1 = -sn * t1 + cs * b1;
        q2_[c] = cs * t2 + sn * b2;
        b2 = -sn * t2 + cs * b2;
        // shift left by one column
        ext = bw;
        for (int t = 0; t + 1 < bw; ++t) v[t] = v[t + 1];
        v[bw - 1] = 0.0;
        while (ext > 0 && v[ext - 1] == 0.0) --ext;
        ++c;
      }
      for (int t = 0; t < bw; ++t) v[t] = 0.0;
    }
    // pivots against the row norms of D
    for (int c = 0; c < p; ++c) {
      const int j = I[c];
      double nr = 0.0;
      for (int t = 0; t < s_.len[j]; ++t) nr += s_.val[s_.off[j] + t] * s_.val[s_.off[j] + t];
      if (!filled_[c] || !(std::fabs(R_[static_cast<size_t>(c) * bw]) > 1e-13 * std::sqrt(nr))) return false;
    }
    x1.resize(p);
    x2.resize(p);
    for (int c = p - 1; c >= 0; --c) {
      const double* Rc = &R_[static_cast<size_t>(c) * bw];
      double s1 = q1_[c], s2 = q2_[c];
      for (int t = 1; t < bw && c + t < p; ++t) {
        s1 -= Rc[t] * x1[c + t];
        s2 -= Rc[t] * x2[c + t];
      }
      x1[c] = s1 / Rc[0];
      x2[c] = s2 / Rc[0];
    }
    return true;
  }

 private:
  const RowSegments& s_;
  int bw_;
  std::vector<double> R_, q1_, q2_, rowscale_;
  std::vector<char> filled_;
};

// Graph back end: every row of D is c (e_q - e_p) (an edge, any weight c) or v e_p (a lasso row, genlasso's
// sparse fused lasso). Then D_I' D_I is a weighted graph Laplacian plus a diagonal, null(D_I) is spanned by the
// indicators of the connected components (of the interior edges) without a lasso row, and the min-norm least
// squares solution is D_I z with (D_I' D_I) z = P y, z grounded (0) at one vertex of each such component
// (genlasso's dualpathFused). One sparse LDL' (Eigen SimplicialLDLT, AMD) per knot.
struct GraphRows {
  bool ok = false;
  std::vector<int> p, q;      // q = -1 for a lasso row
  std::vector<double> c;      // edge: D_jq = c, D_jp = -c; lasso row: D_jp = c
};

inline GraphRows graph_rows(const Eigen::SparseMatrix<double, Eigen::RowMajor>& Dr) {
  GraphRows g;
  const int m = static_cast<int>(Dr.rows());
  g.p.assign(m, -1);
  g.q.assign(m, -1);
  g.c.assign(m, 0.0);
  for (int j = 0; j < m; ++j) {
    int cnt = 0;
    int idx[2] = {-1, -1};
    double v[2] = {0, 0};
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(Dr, j); it; ++it) {
      if (it.value() == 0.0) continue;
      if (cnt == 2) return g;
      idx[cnt] = static_cast<int>(it.col());
      v[cnt] = it.value();
      ++cnt;
    }
    if (cnt == 1) {
      g.p[j] = idx[0];
      g.c[j] = v[0];
    } else if (cnt == 2 && v[0] == -v[1]) {
      g.p[j] = idx[0];
      g.q[j] = idx[1];
      g.c[j] = v[1];
    } else {
      return g;
    }
  }
  g.ok = true;
  return g;
}

class GraphLSQ {
 public:
  GraphLSQ(const GraphRows& g, int n) : g_(g), n_(n) {}
  // returns rank(D_I); false on a failed factorization
  bool solve(const std::vector<int>& I, const Eigen::VectorXd& r1, const Eigen::VectorXd* r2, Eigen::VectorXd& x1,
             Eigen::VectorXd& x2, int& rank) {
    const int n = n_;
    std::vector<int> parent(n);
    for (int i = 0; i < n; ++i) parent[i] = i;
    auto find = [&](int a) {
      while (parent[a] != a) { parent[a] = parent[parent[a]]; a = parent[a]; }
      return a;
    };
    std::vector<char> grounded(n, 0);
    for (int j : I)
      if (g_.q[j] >= 0) {
        const int a = find(g_.p[j]), b = find(g_.q[j]);
        if (a != b) parent[a] = b;
      }
    for (int j : I)
      if (g_.q[j] < 0) grounded[find(g_.p[j])] = 1;
    // component sums for the projection, ground vertex = the root
    std::vector<double> s1(n, 0.0), s2(n, 0.0);
    std::vector<int> cnt(n, 0), root(n);
    for (int i = 0; i < n; ++i) {
      root[i] = find(i);
      s1[root[i]] += r1[i];
      if (r2) s2[root[i]] += (*r2)[i];
      cnt[root[i]] += 1;
    }
    std::vector<int> map(n, -1);
    int nr = 0, free_comp = 0;
    for (int i = 0; i < n; ++i) {
      const bool ground = !grounded[root[i]] && root[i] == i;
      if (ground) ++free_comp;
      else map[i] = nr++;
    }
    rank = n - free_comp;
    Eigen::VectorXd t1(nr), t2(nr);
    for (int i = 0; i < n; ++i) {
      if (map[i] < 0) continue;
      const int rt = root[i];
      const bool proj = !grounded[rt];
      t1[map[i]] = r1[i] - (proj ? s1[rt] / cnt[rt] : 0.0);
      t2[map[i]] = (r2 ? (*r2)[i] : 0.0) - (proj ? s2[rt] / cnt[rt] : 0.0);
    }
    std::vector<Eigen::Triplet<double>> tr;
    tr.reserve(4 * I.size());
    for (int j : I) {
      const double w = g_.c[j] * g_.c[j];
      const int a = map[g_.p[j]];
      if (g_.q[j] < 0) {
        if (a >= 0) tr.emplace_back(a, a, w);
        continue;
      }
      const int b = map[g_.q[j]];
      if (a >= 0) tr.emplace_back(a, a, w);
      if (b >= 0) tr.emplace_back(b, b, w);
      if (a >= 0 && b >= 0) {
        tr.emplace_back(a, b, -w);
        tr.emplace_back(b, a, -w);
      }
    }
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n), z2 = Eigen::VectorXd::Zero(n);
    if (nr > 0) {
      Eigen::SparseMatrix<double> G(nr, nr);
      G.setFromTriplets(tr.begin(), tr.end());
      Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldl(G);
      if (ldl.info() != Eigen::Success) return false;
      const Eigen::VectorXd za = ldl.solve(t1), zb = ldl.solve(t2);
      for (int i = 0; i < n; ++i)
        if (map[i] >= 0) { z[i] = za[map[i]]; z2[i] = zb[map[i]]; }
    }
    const int p = static_cast<int>(I.size());
    x1.resize(p);
    x2.resize(p);
    for (int c = 0; c < p; ++c) {
      const int j = I[c];
      if (g_.q[j] < 0) {
        x1[c] = g_.c[j] * z[g_.p[j]];
        x2[c] = g_.c[j] * z2[g_.p[j]];
      } else {
        x1[c] = g_.c[j] * (z[g_.q[j]] - z[g_.p[j]]);
        x2[c] = g_.c[j] * (z2[g_.q[j]] - z2[g_.p[j]]);
      }
    }
    return true;
  }

 private:
  const GraphRows& g_;
  int n_;
};

// Dense back end with a QR kept across knots: A = D_I' (n x p, the rows I of a dense D as columns, in I's
// order) = Q R, Q explicit (n x n), R upper trapezoidal (n x p). A knot changes I by one row: a hit deletes a
// column (Givens rotations restore the triangle, O((p - c)^2 + n (p - c)) for column c), a leave inserts one
// (w = Q'd, then rotations from the bottom, O(n^2 + (n - c)(p - c))); Golub & Van Loan 6.5 (genlasso's
// dualpathWide does the same with its own QR up/downdates). The solve is then two products with Q and two
// triangular solves, O(n p), instead of a complete orthogonal decomposition, O(n p min(n, p)). solve() returns
// false when the triangular solve does not give the min-norm solution (p > n, or a diagonal of R at or below
// rank_tol times the largest: D_I numerically rank deficient): the caller uses the complete orthogonal
// decomposition for that knot; the QR stays up to date either way. Refactored from scratch when I differs from
// the stored set by more than one row, and every `refresh` updates (rounding in Q grows with the updates).
class DenseUpdLSQ {
 public:
  DenseUpdLSQ(const Eigen::MatrixXd& Dd, double rank_tol, int refresh = 200)
      : Dd_(Dd), n_(static_cast<int>(Dd.cols())), tol_(rank_tol), refresh_(refresh) {}
  bool solve(const std::vector<int>& I, const Eigen::VectorXd& r1, const Eigen::VectorXd* r2, Eigen::VectorXd& x1,
             Eigen::VectorXd& x2) {
    update_to(I);
    const int p = static_cast<int>(I_.size()), n = n_;
    if (p > n || p == 0) return false;
    double dmax = 0.0, dmin = std::numeric_limits<double>::infinity();
    for (int c = 0; c < p; ++c) {
      const double d = std::fabs(R_(c, c));
      dmax = std::max(dmax, d);
      dmin = std::min(dmin, d);
    }
    if (!(dmin > tol_ * dmax)) return false;
    const auto Rt = R_.topLeftCorner(p, p).triangularView<Eigen::Upper>();
    t1_.noalias() = Q_.leftCols(p).transpose() * r1;
    x1 = Rt.solve(t1_);
    if (r2) {
      t2_.noalias() = Q_.leftCols(p).transpose() * (*r2);
      x2 = Rt.solve(t2_);
    } else {
      t2_.setZero(p);
      x2.setZero(p);
    }
    return true;
  }
  // after a successful solve(): the least-squares residuals e1 = r1 - D_I'x1 = r1 - Q_1 Q_1'r1 (and e2), by
  // Q_1 (n p flops) or, when |I| > n / 2, as Q_2 Q_2'r1 (2 n (n - p)), instead of D'x (n m)
  void residuals(const Eigen::VectorXd& r1, const Eigen::VectorXd& r2, Eigen::VectorXd& e1, Eigen::VectorXd& e2) {
    const int p = static_cast<int>(I_.size()), n = n_;
    if (2 * p <= n) {
      e1 = r1;
      e1.noalias() -= Q_.leftCols(p) * t1_;
      e2 = r2;
      e2.noalias() -= Q_.leftCols(p) * t2_;
    } else {
      w_.resize(n - p, 2);
      w_.col(0).noalias() = Q_.rightCols(n - p).transpose() * r1;
      w_.col(1).noalias() = Q_.rightCols(n - p).transpose() * r2;
      e1.noalias() = Q_.rightCols(n - p) * w_.col(0);
      e2.noalias() = Q_.rightCols(n - p) * w_.col(1);
    }
  }

 private:
  void factor(const std::vector<int>& I) {
    const int p = static_cast<int>(I.size()), n = n_;
    R_.setZero(n, Dd_.rows());
    I_ = I;
    updates_ = 0;
    valid_ = true;
    if (p == 0) {
      Q_.setIdentity(n, n);
      return;
    }
    Eigen::MatrixXd A(n, p);
    for (int c = 0; c < p; ++c) A.col(c) = Dd_.row(I[c]).transpose();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(A);
    Q_ = qr.householderQ();
    R_.leftCols(p) = qr.matrixQR().triangularView<Eigen::Upper>();
  }
  static void rot(double a, double b, double& cs, double& sn) {
    const double h = givens_norm(a, b);
    cs = a / h;
    sn = b / h;
  }
  // rows i, i + 1 of R over columns [j0, p) and columns i, i + 1 of Q
  void apply(int i, int j0, int p, double cs, double sn) {
    for (int j = j0; j < p; ++j) {
      const double t1 = R_(i, j), t2 = R_(i + 1, j);
      R_(i, j) = cs * t1 + sn * t2;
      R_(i + 1, j) = -sn * t1 + cs * t2;
    }
    double* q1 = Q_.col(i).data();
    double* q2 = Q_.col(i + 1).data();
    for (int r = 0; r < n_; ++r) {
      const double t1 = q1[r], t2 = q2[r];
      q1[r] = cs * t1 + sn * t2;
      q2[r] = -sn * t1 + cs * t2;
    }
  }
  void remove(int pos) {
    const int p0 = static_cast<int>(I_.size()), n = n_;
    for (int c = pos; c + 1 < p0; ++c) {
      const int top = std::min(c + 2, n);  // column c + 1 has rows 0..c + 1 (at most n)
      R_.col(c).head(top) = R_.col(c + 1).head(top);
    }
    R_.col(p0 - 1).setZero();
    I_.erase(I_.begin() + pos);
    const int p = p0 - 1;
    for (int c = pos; c < p && c + 1 < n; ++c) {
      const double b = R_(c + 1, c);
      if (b == 0.0) continue;
      double cs, sn;
      rot(R_(c, c), b, cs, sn);
      apply(c, c, p, cs, sn);
      R_(c + 1, c) = 0.0;
    }
  }
  void insert(int pos, int row) {
    const int p0 = static_cast<int>(I_.size()), n = n_;
    for (int c = p0; c > pos; --c) R_.col(c).head(std::min(c + 1, n)) = R_.col(c - 1).head(std::min(c + 1, n));
    R_.col(pos).noalias() = Q_.transpose() * Dd_.row(row).transpose();
    I_.insert(I_.begin() + pos, row);
    const int p = p0 + 1;
    for (int i = n - 1; i > pos; --i) {
      const double b = R_(i, pos);
      if (b == 0.0) continue;
      double cs, sn;
      rot(R_(i - 1, pos), b, cs, sn);
      // column pos, and the shifted columns j >= i (columns pos < j < i are zero in rows i - 1, i)
      const double t1 = R_(i - 1, pos);
      R_(i - 1, pos) = cs * t1 + sn * b;
      R_(i, pos) = 0.0;
      apply(i - 1, std::max(i, pos + 1), p, cs, sn);
    }
  }
  // bring the factorization to the rows I (sorted): one deletion or insertion if I differs by one row
  void update_to(const std::vector<int>& I) {
    const int p = static_cast<int>(I.size()), p0 = static_cast<int>(I_.size());
    if (!valid_ || updates_ >= refresh_ || std::abs(p - p0) != 1) {
      if (!(valid_ && I == I_ && updates_ < refresh_)) factor(I);
      return;
    }
    const int lo = std::min(p, p0);
    int pos = 0;
    while (pos < lo && I[pos] == I_[pos]) ++pos;
    // the rest must agree shifted by one
    if (p < p0) {
      for (int c = pos; c < p; ++c)
        if (I[c] != I_[c + 1]) { factor(I); return; }
      remove(pos);
    } else {
      for (int c = pos; c < p0; ++c)
        if (I[c + 1] != I_[c]) { factor(I); return; }
      insert(pos, I[pos]);
    }
    ++updates_;
  }

  const Eigen::MatrixXd& Dd_;
  int n_;
  double tol_;
  int refresh_;
  Eigen::MatrixXd Q_, R_, w_;
  Eigen::VectorXd t1_, t2_;
  std::vector<int> I_;
  int updates_ = 0;
  bool valid_ = false;
};

}  // namespace detail

// The dual path. D: m x n sparse; y: n.
inline DualPathResult dual_path(const Eigen::SparseMatrix<double>& D, const Eigen::VectorXd& y,
                                const DualPathControl& ctl, const StopFn& stop = StopFn(),
                                const PathProgressFn& progress = PathProgressFn()) {
  const int m = static_cast<int>(D.rows()), n = static_cast<int>(D.cols());
  if (y.size() != n) throw std::invalid_argument("dual_path: y must have ncol(D) entries");
  if (m < 1) throw std::invalid_argument("dual_path: D must have at least one row");
  if (ctl.maxsteps < 1) throw std::invalid_argument("dual_path: maxsteps must be at least 1");
  DualPathResult out;
  const Eigen::SparseMatrix<double, Eigen::RowMajor> Dr(D);
  detail::RowSegments seg;
  if (ctl.backend != 2) seg = detail::row_segments(D);
  const bool try_banded = ctl.backend != 2 && seg.banded;
  detail::BandedLSQ bls(seg);
  detail::GraphRows grows;
  if (ctl.backend == 0 && !seg.banded) grows = detail::graph_rows(Dr);
  detail::GraphLSQ gls(grows, n);
  Eigen::MatrixXd Dd;  // dense copy, made on first use
  auto dense = [&]() -> const Eigen::MatrixXd& {
    if (Dd.size() == 0) Dd = Eigen::MatrixXd(D);
    return Dd;
  };
  // min-norm least squares of D_I' [x1 x2] = [r1 r2]; returns rank(D_I)
  // the QR up/downdates when every knot is dense (not for the occasional dense fallback of the others)
  const bool upd = ctl.dense_update && !try_banded && !grows.ok;
  std::unique_ptr<detail::DenseUpdLSQ> uls;
  bool qr_solved = false;  // the last lsq() was the QR's (its residuals are then Q's)
  auto lsq = [&](const std::vector<int>& I, const Eigen::VectorXd& r1, const Eigen::VectorXd* r2, Eigen::VectorXd& x1,
                 Eigen::VectorXd& x2) -> int {
    const int p = static_cast<int>(I.size());
    if (try_banded && bls.solve(I, r1, r2, x1, x2)) return p;
    int grank = 0;
    if (grows.ok && gls.solve(I, r1, r2, x1, x2, grank)) return grank;
    out.dense_used = true;
    const Eigen::MatrixXd& Dm = dense();
    if (upd) {
      if (!uls) uls.reset(new detail::DenseUpdLSQ(Dm, ctl.rank_tol));
      if (uls->solve(I, r1, r2, x1, x2)) {
        qr_solved = true;
        return p;
      }
    }
    qr_solved = false;
    Eigen::MatrixXd A(n, p);
    for (int c = 0; c < p; ++c) A.col(c) = Dm.row(I[c]).transpose();
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
    cod.setThreshold(ctl.rank_tol);
    cod.compute(A);
    Eigen::MatrixXd rhs(n, 2);
    rhs.col(0) = r1;
    if (r2) rhs.col(1) = *r2; else rhs.col(1).setZero();
    const Eigen::MatrixXd X = cod.solve(rhs);
    x1 = X.col(0);
    x2 = X.col(1);
    return static_cast<int>(cod.rank());
  };
  auto sgn = [](double v) { return v >= 0 ? 1 : -1; };  // genlasso's Sign()

  std::vector<double> row_l1(m, 0.0);
  for (int j = 0; j < m; ++j)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(Dr, j); it; ++it) row_l1[j] += std::fabs(it.value());
  std::vector<char> inB(m, 0);
  std::vector<int> sB(m, 0);  // sign of a boundary row
  auto record = [&](double lam, int df, bool h, const Eigen::VectorXd& u) {
    out.lambda.push_back(lam);
    out.df.push_back(df);
    out.hit.push_back(h ? 1 : 0);
    out.u.push_back(u);
    if (ctl.keep_beta) out.beta.push_back(y - Dr.transpose() * u);
    std::vector<int> b, s;
    for (int j = 0; j < m; ++j)
      if (inB[j]) { b.push_back(j); s.push_back(sB[j]); }
    out.boundary.push_back(std::move(b));
    out.sign.push_back(std::move(s));
    if (progress) progress(static_cast<int>(out.lambda.size()), lam);
  };

  // first knot: the dual of the null-space fit
  std::vector<int> I(m);
  for (int j = 0; j < m; ++j) I[j] = j;
  Eigen::VectorXd a, b;
  int rank = lsq(I, y, nullptr, a, b);
  {
    int ih = 0;
    for (int j = 1; j < m; ++j)
      if (std::fabs(a[j]) > std::fabs(a[ih])) ih = j;
    inB[ih] = 1;
    sB[ih] = sgn(a[ih]);
    record(std::fabs(a[ih]), n - rank, true, a);
  }
  Eigen::VectorXd Ds(n), sv(m), full_a(m), full_b(m), ra(n), rb(n), u(m);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> DdR;  // rows of a dense D
  if (upd) DdR = dense();
  int r = 1;
  bool broke = false;
  while (static_cast<int>(out.lambda.size()) < ctl.maxsteps && out.lambda.back() >= ctl.minlam) {
    if (stop && stop()) {
      out.interrupted = true;
      break;
    }
    const double lprev = out.lambda.back();
    I.clear();
    for (int j = 0; j < m; ++j)
      if (!inB[j]) I.push_back(j);
    sv.setZero();
    for (int j = 0; j < m; ++j)
      if (inB[j]) sv[j] = sB[j];
    if (upd) {  // D_B' s over the boundary rows
      Ds.setZero();
      for (int j = 0; j < m; ++j)
        if (inB[j]) Ds.noalias() += sB[j] * DdR.row(j).transpose();
    } else {
      Ds = Dr.transpose() * sv;
    }
    double hit = 0.0, leave = 0.0;
    int ihit = -1, ileave = -1, shit = 1;
    const int p = static_cast<int>(I.size());
    if (p == 0) {
      rank = 0;
      a.resize(0);
      b.resize(0);
    } else {
      rank = lsq(I, y, &Ds, a, b);
      hit = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < p; ++c) {  // which.max of the capped hitting times: the first maximum
        const int sa = sgn(a[c]);
        double h = a[c] / (b[c] + sa);
        if (!(h <= lprev + ctl.btol)) h = 0.0;  // also drops NaN
        else if (h > lprev) h = lprev;
        if (h > hit) { hit = h; ihit = c; shit = sa; }
      }
    }
    if (r > 0 && !ctl.approx) {
      // residuals y - D_I'a, Ds - D_I'b (work vectors reused across knots)
      full_a.setZero();
      full_b.setZero();
      for (int c = 0; c < p; ++c) { full_a[I[c]] = a[c]; full_b[I[c]] = b[c]; }
      ra = y;
      rb = Ds;
      if (upd && qr_solved && p > 0) {
        uls->residuals(y, Ds, ra, rb);
      } else if (upd) {  // a dense D: dense products (the sparse ones over every entry cost 3x more)
        ra.noalias() -= Dd.transpose() * full_a;
        rb.noalias() -= Dd.transpose() * full_b;
      } else {
        ra.noalias() -= Dr.transpose() * full_a;
        rb.noalias() -= Dr.transpose() * full_b;
      }
      // c_j is exactly 0 when row j lies in the row space of D_I (a boundary edge closing a cycle of
      // interior edges): rounding noise there must not count as a leaving time (genlasso's fused path
      // computes it exactly as 0); c_j = s_j D_j P y with P the projection on null(D_I), so
      // |c_j| <= 1e-11 ||D_j||_1 ||y||_inf is taken as 0 (a scale with lambda in it missed true leaves at k = 2).
      const double yscale = y.cwiseAbs().maxCoeff();
      bool first = true;
      for (int j = 0; j < m; ++j) {
        if (!inB[j]) continue;
        double cj = 0.0, dj = 0.0;  // D_j ra, D_j rb: boundary rows only
        if (upd) {
          cj = DdR.row(j).dot(ra);
          dj = DdR.row(j).dot(rb);
        } else {
          for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(Dr, j); it; ++it) {
            cj += it.value() * ra[it.col()];
            dj += it.value() * rb[it.col()];
          }
        }
        const double c = sB[j] * cj, d = sB[j] * dj;
        double l = c / d;
        if (c >= -1e-11 * row_l1[j] * yscale) l = 0.0;
        if (!(l <= lprev + ctl.btol)) l = 0.0;
        else if (l > lprev) l = lprev;
        if (first || l > leave) { leave = l; ileave = j; first = false; }  // first maximum
      }
    }
    if (hit <= 0 && leave <= 0) {
      broke = true;
      break;
    }
    u.setZero();
    const double lam = hit > leave ? hit : leave;
    for (int j = 0; j < m; ++j)
      if (inB[j]) u[j] = lam * sB[j];
    for (int c = 0; c < p; ++c) u[I[c]] = a[c] - lam * b[c];
    const int df = n - rank;
    if (hit > leave) {
      inB[I[ihit]] = 1;
      sB[I[ihit]] = shit;
      ++r;
      record(hit, df, true, u);
    } else {
      inB[ileave] = 0;
      sB[ileave] = 0;
      --r;
      record(leave, df, false, u);
    }
  }
  // genlasso's completepath: neither maxsteps nor minlam stopped the path
  out.complete = !out.interrupted && static_cast<int>(out.lambda.size()) < ctl.maxsteps &&
                 out.lambda.back() >= ctl.minlam;
  (void)broke;
  return out;
}

}  // namespace genlasso
}  // namespace scalebayes
