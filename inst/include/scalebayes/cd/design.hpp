// scalebayes/cd/design.hpp -- column access to the design matrix of the coordinate-descent solver: the storage
// policy of cd::BasicElasticNet (solver.hpp), so that one solver runs on dense and on sparse columns.
//
// The solver works on STANDARDIZED columns x_j. A design type provides every operation the solver needs on them:
//   gradient(v, g)           g = X' v                                    (all columns)
//   axpy(a, j, y, shift)     y += a x_j, where a constant part may be left in `shift` (added by finish(y, shift))
//   moments(j, v, W, c, m, xv)  m = v' x_j / W if c (intercept) else 0, xv = sum_i v_i (x_ij - m)^2
//   centered(j, v, m, t)     t = v .* (x_j - m) (n); returns sum(t) for gram_dot
//   gram_dot(t, tsum, b)     t' x_b
//   cols(), rows()
// and, for the naive (residual-update) mode of the solver, the same products on the STORED column X_j, where the
// standardized column is x_j = (X_j - center(j)) / scale(j) (dense: X_j = x_j, center 0, scale 1):
//   raw_wdot(j, v, r)        sum_i v_i X_ij r_i    over the stored entries   (O(nnz(X_j)) sparse, O(n) dense)
//   raw_vsum(j, v)           sum_i v_i X_ij
//   raw_axpy(a, j, r)        r += a X_j            on the stored entries
//   col_center(j), col_scale(j), col_nnz(j)
//
// DenseDesign: x_j is column j of a dense matrix (already standardized by the caller), exactly the operations
// the solver always did (same order of floating-point operations, so the dense results are unchanged).
//
// SparseDesign: x_j = (X_j - c_j) / s_j with X a compressed-column sparse matrix (Eigen::SparseMatrix layout, as
// R's dgCMatrix: outer / inner int indices, values) and the centring c and scale s applied implicitly, as glmnet
// does for sparse x; the standardized column is never formed. Every product costs O(nnz(X_j)) plus O(n) at most
// once per call (a weighted sum of the vector), so memory is O(nnz + p) for the design and O(n + p) per solver:
//   X' v:         g_j = (X_j' v - c_j sum(v)) / s_j
//   y += a x_j:   y += (a / s_j) X_j on the non-zeros, the constant -a c_j / s_j collected in shift
//   moments:      with mu = c_j + s_j m (the weighted mean of X_j when centring), without cancellation:
//                 xv = [sum_{nz} v_i (X_ij - mu)^2 + mu^2 (W - sum_{nz} v_i)] / s_j^2
//   t' x_b:       (sum_{nz of b} t_i X_ib - c_b sum(t)) / s_b
// Header-only, Eigen + std only.
#pragma once
#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scalebayes {
namespace cd {

class DenseDesign {
 public:
  using MatRef = Eigen::Ref<const Eigen::MatrixXd>;
  static constexpr bool kSparse = false;
  template <class M>
  DenseDesign(const M& x) : x_(x) {}  // NOLINT: implicit, so that every dense caller passes its matrix as before

  Eigen::Index rows() const { return x_.rows(); }
  Eigen::Index cols() const { return x_.cols(); }
  const MatRef& matrix() const { return x_; }

  void gradient(const Eigen::VectorXd& v, Eigen::VectorXd& g) const { g.noalias() = x_.transpose() * v; }
  void axpy(double a, Eigen::Index j, Eigen::VectorXd& y, double&) const { y.noalias() += a * x_.col(j); }
  void finish(Eigen::VectorXd&, double) const {}
  void moments(Eigen::Index j, const Eigen::VectorXd& v, double W, bool center, double& m, double& xv) const {
    m = center ? v.dot(x_.col(j)) / W : 0.0;
    xv = (v.array() * (x_.col(j).array() - m).square()).sum();
  }
  double centered(Eigen::Index j, const Eigen::VectorXd& v, double m, Eigen::VectorXd& t) const {
    t.array() = v.array() * (x_.col(j).array() - m);
    return 0.0;
  }
  double gram_dot(const Eigen::VectorXd& t, double, Eigen::Index b) const { return t.dot(x_.col(b)); }
  double raw_wdot(Eigen::Index j, const Eigen::VectorXd& v, const Eigen::VectorXd& r) const {
    return (x_.col(j).array() * v.array() * r.array()).sum();
  }
  double raw_vsum(Eigen::Index j, const Eigen::VectorXd& v) const { return v.dot(x_.col(j)); }
  void raw_axpy(double a, Eigen::Index j, Eigen::VectorXd& r) const { r.noalias() += a * x_.col(j); }
  double col_center(Eigen::Index) const { return 0.0; }
  double col_scale(Eigen::Index) const { return 1.0; }
  Eigen::Index col_nnz(Eigen::Index) const { return x_.rows(); }
  double at(Eigen::Index i, Eigen::Index j) const { return x_(i, j); }
  double row_dot(Eigen::Index i, const Eigen::VectorXd& beta) const { return x_.row(i).dot(beta); }

 private:
  MatRef x_;
};

class SparseDesign {
 public:
  static constexpr bool kSparse = true;
  // X: n x p compressed columns (outer: p + 1 offsets, inner: row indices, values: nnz); center, scale: p.
  SparseDesign(Eigen::Index n, Eigen::Index p, const int* outer, const int* inner, const double* values,
               const Eigen::VectorXd& center, const Eigen::VectorXd& scale)
      : n_(n), p_(p), outer_(outer), inner_(inner), val_(values), c_(center), s_(scale) {
    if (c_.size() != p || s_.size() != p) throw std::invalid_argument("sparse design: center and scale need length p");
    if (outer_[0] != 0) throw std::invalid_argument("sparse design: column offsets must start at 0");
    for (Eigen::Index j = 0; j < p; ++j) {
      if (outer_[j + 1] < outer_[j]) throw std::invalid_argument("sparse design: column offsets must not decrease");
      if (!(s_(j) > 0) || !std::isfinite(c_(j))) throw std::invalid_argument("sparse design: scale must be > 0");
    }
    for (int k = 0; k < outer_[p]; ++k)
      if (inner_[k] < 0 || inner_[k] >= n) throw std::invalid_argument("sparse design: row index out of range");
  }

  Eigen::Index rows() const { return n_; }
  Eigen::Index cols() const { return p_; }
  Eigen::Index nonzeros() const { return outer_[p_]; }
  const Eigen::VectorXd& center() const { return c_; }
  const Eigen::VectorXd& scale() const { return s_; }

  // X_j' v over the non-zeros of column j
  double raw_dot(Eigen::Index j, const Eigen::VectorXd& v) const {
    double s = 0.0;
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) s += val_[k] * v(inner_[k]);
    return s;
  }
  void gradient(const Eigen::VectorXd& v, Eigen::VectorXd& g) const {
    const double sv = v.sum();
    g.resize(p_);
    for (Eigen::Index j = 0; j < p_; ++j) g(j) = (raw_dot(j, v) - c_(j) * sv) / s_(j);
  }
  void axpy(double a, Eigen::Index j, Eigen::VectorXd& y, double& shift) const {
    const double as = a / s_(j);
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) y(inner_[k]) += as * val_[k];
    shift -= as * c_(j);
  }
  void finish(Eigen::VectorXd& y, double shift) const {
    if (shift != 0.0) y.array() += shift;
  }
  void moments(Eigen::Index j, const Eigen::VectorXd& v, double W, bool center, double& m, double& xv) const {
    double vx = 0.0, vnz = 0.0;
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) {
      const double vi = v(inner_[k]);
      vx += vi * val_[k];
      vnz += vi;
    }
    const double mu = center ? vx / W : c_(j);  // the raw value that the centred standardized column subtracts
    m = center ? (mu - c_(j)) / s_(j) : 0.0;
    double ss = 0.0;
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) {
      const double e = val_[k] - mu;
      ss += v(inner_[k]) * e * e;
    }
    ss += mu * mu * (W - vnz);
    xv = ss / (s_(j) * s_(j));
  }
  double centered(Eigen::Index j, const Eigen::VectorXd& v, double m, Eigen::VectorXd& t) const {
    const double mu = c_(j) + s_(j) * m, inv = 1.0 / s_(j);
    t = v * (-mu * inv);
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) t(inner_[k]) += v(inner_[k]) * val_[k] * inv;
    return t.sum();
  }
  double gram_dot(const Eigen::VectorXd& t, double tsum, Eigen::Index b) const {
    return (raw_dot(b, t) - c_(b) * tsum) / s_(b);
  }
  double raw_wdot(Eigen::Index j, const Eigen::VectorXd& v, const Eigen::VectorXd& r) const {
    double s = 0.0;
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) {
      const int i = inner_[k];
      s += val_[k] * v(i) * r(i);
    }
    return s;
  }
  double raw_vsum(Eigen::Index j, const Eigen::VectorXd& v) const { return raw_dot(j, v); }
  void raw_axpy(double a, Eigen::Index j, Eigen::VectorXd& r) const {
    for (int k = outer_[j]; k < outer_[j + 1]; ++k) r(inner_[k]) += a * val_[k];
  }
  double col_center(Eigen::Index j) const { return c_(j); }
  double col_scale(Eigen::Index j) const { return s_(j); }
  Eigen::Index col_nnz(Eigen::Index j) const { return outer_[j + 1] - outer_[j]; }
  // entry (i, j) of the standardized column (binary search in column j; for occasional reads only)
  double at(Eigen::Index i, Eigen::Index j) const {
    const int* lo = inner_ + outer_[j];
    const int* hi = inner_ + outer_[j + 1];
    const int* it = std::lower_bound(lo, hi, static_cast<int>(i));
    const double xij = (it != hi && *it == i) ? val_[it - inner_] : 0.0;
    return (xij - c_(j)) / s_(j);
  }

 private:
  Eigen::Index n_, p_;
  const int* outer_;
  const int* inner_;
  const double* val_;
  Eigen::VectorXd c_, s_;
};

}  // namespace cd
}  // namespace scalebayes
