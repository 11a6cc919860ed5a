// scalebayes/cd/multinomial.hpp -- the weighted multinomial (softmax) lasso / elastic net by proximal Newton and
// block coordinate descent, ungrouped (per-class lasso) or grouped (group lasso across classes per feature), as
// glmnet's family = "multinomial" with type.multinomial = "ungrouped" / "grouped".
//
// Solves, for data weights w (n), penalty weights pf (p), lambda >= 0 (SUM scale, as solver.hpp) and classes
// y_i in 0..K-1, in glmnet's symmetric parametrisation (one intercept and one coefficient vector per class):
//
//   minimise_{a0 (K), B (p x K)}  sum_i w_i [ log sum_k exp(eta_ik) - eta_{i y_i} ] + lambda sum_j pf_j P(B_j.)
//   eta_ik = a0_k + x_i' B_.k
//   ungrouped: P(b) = sum_k [alpha |b_k| + (1 - alpha) b_k^2 / 2]
//   grouped:   P(b) = alpha ||b||_2 + (1 - alpha) ||b||_2^2 / 2
//
// The loss is invariant to adding one constant to every class (a0 + c, B_j. + c_j): the intercepts are returned
// centred (sum_k a0_k = 0, glmnet's convention); the penalty picks the coefficients' shift (grouped: the
// solution is centred, sum_k B_jk = 0; ungrouped lasso: any shift between the medians is optimal, and glmnet and
// this solver may pick different ones with the same objective).
//
// Algorithm: proximal Newton with step halving on the true objective. Each outer iteration forms the exact
// quadratic model of the loss at the current point (per observation the K x K Hessian w_i (diag p_i - p_i p_i')),
// and minimises model + penalty by block coordinate descent over features: per feature j the K x K block
// H_j = sum_i w_i x_ij^2 (diag p_i - p_i p_i') (cached per outer iteration) gives either K exact scalar updates
// (ungrouped: soft-thresholding, the block's gradient updated through H_j) or one exact group update (grouped:
// the K-dimensional prox of the group norm under the metric H_j + l2 I, by an eigen-decomposition and a
// safeguarded root search for the multiplier); the intercepts are one unpenalized block (a pseudo-inverse on the
// centred subspace). The model's gradient is kept through the n x K product R = w_i H_i delta eta_i (O(nK) per
// block update; no Gram matrix). Active-set cycling: sweeps over the non-zero features until they settle, then
// a full sweep, until a full sweep moves nothing. Every solve reports its largest KKT violation relative to
// lambda. Offsets and box limits are not supported (the R front ends refuse them). Header-only, Eigen + std.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/parallel/driver.hpp"

namespace scalebayes {
namespace cd {

struct MultinomialFit {
  Eigen::VectorXd a0;    // K intercepts (centred); empty = cold start
  Eigen::MatrixXd beta;  // p x K
  int iterations = 0;    // coordinate sweeps used
  int outer = 0;         // proximal-Newton iterations used
  bool converged = false;
  double kkt = 0.0;      // max KKT violation / max(lambda, 1e-300)
};

class Multinomial {
 public:
  using MatRef = Eigen::Ref<const Eigen::MatrixXd>;
  using VecRef = Eigen::Ref<const Eigen::VectorXd>;

  // y: class indices 0..K-1 stored as doubles (the glue passes R's numeric vector).
  Multinomial(MatRef x, VecRef y, int K, bool grouped, double alpha, const Control& ctrl = Control())
      : x_(x), K_(K), grouped_(grouped), alpha_(alpha), ctrl_(ctrl), n_(x.rows()), p_(x.cols()) {
    if (y.size() != n_) throw std::invalid_argument("y must have one value per row of x");
    if (K < 2) throw std::invalid_argument("a multinomial response needs at least 2 classes");
    if (!(alpha >= 0.0 && alpha <= 1.0)) throw std::invalid_argument("alpha must lie in [0, 1]");
    if (ctrl.offset.size() > 0) throw std::invalid_argument("the multinomial family takes no offset");
    if (ctrl.lower.size() > 0 || ctrl.upper.size() > 0)
      throw std::invalid_argument("the multinomial family takes no box limits");
    cls_.resize(n_);
    for (Eigen::Index i = 0; i < n_; ++i) {
      const double v = y(i);
      if (!(v >= 0 && v < K && v == std::floor(v))) throw std::invalid_argument("multinomial y must be a class 0..K-1");
      cls_[i] = static_cast<int>(v);
    }
    E_.resize(K_, n_);
    P_.resize(K_, n_);
    R_.resize(K_, n_);
    G_.resize(K_, p_);
    Hq_.resize(p_);
    Hd_.resize(p_);
    hfresh_.assign(p_, 0);
  }

  Eigen::Index n() const { return n_; }
  Eigen::Index p() const { return p_; }
  int classes() const { return K_; }
  bool grouped() const { return grouped_; }
  void set_stop(const parallel::StopToken& stop) { stop_ = stop; }

  double penalty(const VecRef& pf, double lambda, const Eigen::MatrixXd& B) const {
    double pen = 0.0;
    for (Eigen::Index j = 0; j < p_; ++j) {
      if (pf(j) == 0.0) continue;
      if (grouped_) {
        const double s2 = B.row(j).squaredNorm();
        if (s2 > 0) pen += pf(j) * (alpha_ * std::sqrt(s2) + 0.5 * (1.0 - alpha_) * s2);
      } else {
        for (int k = 0; k < K_; ++k) {
          const double b = B(j, k);
          if (b != 0.0) pen += pf(j) * (alpha_ * std::abs(b) + 0.5 * (1.0 - alpha_) * b * b);
        }
      }
    }
    return lambda * pen;
  }

  // Objective at (a0, B); leaves eta in E_ and the probabilities in P_.
  double objective(const VecRef& w, const VecRef& pf, double lambda, const Eigen::VectorXd& a0,
                   const Eigen::MatrixXd& B) {
    return loss(w, a0, B) + penalty(pf, lambda, B);
  }

  void solve(const VecRef& w, const VecRef& pf, double lambda, MultinomialFit& fit, double lambda_prev = -1.0) {
    (void)lambda_prev;  // no screening rule: full sweeps are O(npK), as cheap as one gradient
    if (w.size() != n_) throw std::invalid_argument("weights must have length n");
    if (pf.size() != p_) throw std::invalid_argument("penalty weights must have length p");
    if (!(lambda >= 0.0) || !std::isfinite(lambda)) throw std::invalid_argument("lambda must be finite and >= 0");
    const double W = w.sum();
    if (!(W > 0)) throw std::invalid_argument("weights sum to zero");
    if (fit.beta.rows() != p_ || fit.beta.cols() != K_ || fit.a0.size() != K_) {
      fit.beta.setZero(p_, K_);
      fit.a0 = null_intercepts(w);
    }
    fit.iterations = 0;
    fit.outer = 0;
    sweeps_ = 0;
    fit.converged = newton(w, pf, lambda, fit);
    fit.iterations = sweeps_;
    if (ctrl_.intercept) fit.a0.array() -= fit.a0.mean();
    fit.kkt = kkt_violation(w, pf, lambda, fit.a0, fit.beta);
  }

  // The intercept-only optimum (centred log class shares; no intercept: 0). A class of zero weight gets
  // log(1e-300) relative to the others (its optimum is minus infinity).
  Eigen::VectorXd null_intercepts(const VecRef& w) const {
    Eigen::VectorXd a0 = Eigen::VectorXd::Zero(K_);
    if (!ctrl_.intercept) return a0;
    Eigen::VectorXd share = Eigen::VectorXd::Zero(K_);
    for (Eigen::Index i = 0; i < n_; ++i) share(cls_[i]) += w(i);
    for (int k = 0; k < K_; ++k) a0(k) = std::log(std::max(share(k), 1e-300 * w.sum()));
    a0.array() -= a0.mean();
    return a0;
  }

  // Largest KKT violation at (a0, B) relative to lambda; leaves the loss gradient (K x p, minus the derivative)
  // in gradient().
  double kkt_violation(const VecRef& w, const VecRef& pf, double lambda, const Eigen::VectorXd& a0,
                       const Eigen::MatrixXd& B) {
    loss(w, a0, B);
    residual_gradient(w);
    double viol = 0.0, scale = 0.0;
    if (ctrl_.intercept) viol = ga_.cwiseAbs().maxCoeff();
    for (Eigen::Index j = 0; j < p_; ++j) {
      const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
      scale = std::max(scale, G_.col(j).cwiseAbs().maxCoeff());
      if (grouped_) {
        const double nb = B.row(j).norm();
        if (nb == 0.0) {
          viol = std::max(viol, std::max(0.0, G_.col(j).norm() - l1));
        } else {
          viol = std::max(viol, (G_.col(j) - l2 * B.row(j).transpose() - (l1 / nb) * B.row(j).transpose()).norm());
        }
      } else {
        for (int k = 0; k < K_; ++k) {
          const double b = B(j, k), g = G_(k, j) - l2 * b;
          viol = std::max(viol, b == 0.0 ? std::max(0.0, std::abs(g) - l1) : std::abs(g - (b > 0 ? l1 : -l1)));
        }
      }
    }
    const double denom = lambda > 0 ? lambda : std::max(scale, 1.0);
    return viol / denom;
  }

  const Eigen::MatrixXd& gradient() const { return G_; }

  // lambda_max: the smallest lambda at which B = 0 is optimal (the intercept-only fit), alpha floored at 1e-3.
  double lambda_max(const VecRef& w, const VecRef& pf) {
    const Eigen::VectorXd a0 = null_intercepts(w);
    const Eigen::MatrixXd B = Eigen::MatrixXd::Zero(p_, K_);
    loss(w, a0, B);
    residual_gradient(w);
    const double a = std::max(alpha_, 1e-3);
    double lm = 0.0;
    for (Eigen::Index j = 0; j < p_; ++j) {
      if (!(pf(j) > 0)) continue;
      const double g = grouped_ ? G_.col(j).norm() : G_.col(j).cwiseAbs().maxCoeff();
      lm = std::max(lm, g / (a * pf(j)));
    }
    return lm;
  }

 private:
  // Loss at (a0, B): E_ = eta (K x n), P_ = softmax.
  double loss(const VecRef& w, const Eigen::VectorXd& a0, const Eigen::MatrixXd& B) {
    E_.noalias() = B.transpose() * x_.transpose();
    E_.colwise() += a0;
    double f = 0.0;
    for (Eigen::Index i = 0; i < n_; ++i) {
      const double m = E_.col(i).maxCoeff();
      double s = 0.0;
      for (int k = 0; k < K_; ++k) {
        const double e = std::exp(E_(k, i) - m);
        P_(k, i) = e;
        s += e;
      }
      P_.col(i) /= s;
      if (w(i) != 0.0) f += w(i) * (m + std::log(s) - E_(cls_[i], i));
    }
    return f;
  }

  // With P_ current: R_ = w (Y - P) (K x n), the loss gradient G_ = R_ X (K x p) and the intercepts' ga_ (K).
  void residual_gradient(const VecRef& w) {
    for (Eigen::Index i = 0; i < n_; ++i) {
      for (int k = 0; k < K_; ++k) R_(k, i) = -w(i) * P_(k, i);
      R_(cls_[i], i) += w(i);
    }
    G_.noalias() = R_ * x_;
    ga_ = R_.rowwise().sum();
  }

  // The K x K block of the Hessian of feature j (j < 0: the intercepts, a column of ones):
  // sum_i c_i (diag p_i - p_i p_i') with c_i = w_i x_ij^2, as diag(P c) - (P diag(c)) P'.
  void block_hessian(const VecRef& w, Eigen::Index j, Eigen::MatrixXd& H) {
    if (j < 0) cw_ = w;
    else cw_ = w.cwiseProduct(x_.col(j).cwiseAbs2());
    T_.noalias() = P_ * cw_.asDiagonal();
    H.noalias() = -T_ * P_.transpose();
    H.diagonal() += T_.rowwise().sum();
  }

  // R_ += the model's change of w_i H_i (eta_new - eta) when feature j (j < 0: the intercepts) moves by d:
  // for every observation c_i (p_i o d - p_i (p_i' d)), c_i = w_i x_ij.
  void push(const VecRef& w, Eigen::Index j, const Eigen::VectorXd& d) {
    const double* pp = P_.data();
    double* rp = R_.data();
    const double* dd = d.data();
    for (Eigen::Index i = 0; i < n_; ++i, pp += K_, rp += K_) {
      const double c = j < 0 ? w(i) : w(i) * x_(i, j);
      if (c == 0.0) continue;
      double s = 0.0;
      for (int k = 0; k < K_; ++k) s += pp[k] * dd[k];
      for (int k = 0; k < K_; ++k) rp[k] += c * pp[k] * (dd[k] - s);
    }
  }

  // Exact group update of a K-vector: argmin_u 1/2 u'(H + l2 I)u - c'u + l1 ||u||, with H = Q diag(D) Q'.
  void group_prox(const Eigen::MatrixXd& Q, const Eigen::VectorXd& D, const Eigen::VectorXd& c, double l1,
                  double l2, Eigen::VectorXd& u) const {
    const double cn = c.norm();
    if (cn <= l1) {
      u.setZero(K_);
      return;
    }
    const Eigen::VectorXd ct = Q.transpose() * c;
    Eigen::VectorXd Dl = (D.array().max(0.0) + l2).matrix();
    if (l1 <= 0.0) {  // unpenalized in the l1 part: a (pseudo-)inverse on the centred subspace
      const double dmax = std::max(Dl.maxCoeff(), 1e-300);
      Eigen::VectorXd v(K_);
      for (int k = 0; k < K_; ++k) v(k) = Dl(k) > 1e-12 * dmax ? ct(k) / Dl(k) : 0.0;
      u = Q * v;
      return;
    }
    // find mu > 0 with mu ||(Dl + mu)^-1 ct|| = l1 (increasing in mu, from 0 to ||c||)
    auto phi = [&](double mu) {
      double s = 0.0;
      for (int k = 0; k < K_; ++k) {
        const double q = ct(k) / (Dl(k) + mu);
        s += q * q;
      }
      return mu * std::sqrt(s) - l1;
    };
    const double r = l1 / cn;
    double lo = 0.0, hi = std::max(Dl.maxCoeff(), 1e-300) * r / (1.0 - r) * (1.0 + 1e-12) + 1e-300;
    while (phi(hi) < 0) hi *= 2.0;
    double mu = 0.5 * (lo + hi);
    for (int it = 0; it < 200; ++it) {
      // Newton step on phi (convex-ish in practice), safeguarded by the bracket
      double s = 0.0, ds = 0.0;
      for (int k = 0; k < K_; ++k) {
        const double den = Dl(k) + mu;
        const double q2 = ct(k) * ct(k) / (den * den);
        s += q2;
        ds += q2 * Dl(k) / den;  // d/dmu [mu sqrt(s)] = (sum q2 Dl / den) / sqrt(s)
      }
      const double sq = std::sqrt(s);
      const double f = mu * sq - l1;
      if (f > 0) hi = mu;
      else lo = mu;
      if (std::abs(f) <= 1e-15 * l1 || hi - lo <= 1e-16 * hi) break;
      const double df = sq > 0 ? ds / sq : 0.0;
      double nm = df > 0 ? mu - f / df : 0.5 * (lo + hi);
      if (!(nm > lo && nm < hi)) nm = 0.5 * (lo + hi);
      mu = nm;
    }
    Eigen::VectorXd v(K_);
    for (int k = 0; k < K_; ++k) v(k) = ct(k) / (Dl(k) + mu);
    u = Q * v;
  }

  // Minimise the quadratic model at (a0, B) (P_, G_, ga_ current) plus the penalty over (a0n, Bn) by block CD.
  // Returns false when sweeps ran out.
  bool inner(const VecRef& w, const VecRef& pf, double lambda, Eigen::VectorXd& a0n, Eigen::MatrixXd& Bn) {
    const double thr = ctrl_.tol * std::max(w.sum(), std::numeric_limits<double>::min());
    // and every block's step, measured as the model's KKT violation it removes ((H + l2) d), must be below
    // kkt_tol * lambda, but never below what rounding allows (the gradient sums terms of size w_i |x_ij|)
    const double kkt_thr = std::max(ctrl_.kkt_tol * lambda, 1e-13 * xw_scale(w)) + std::numeric_limits<double>::min();
    R_.setZero();  // the model's R = w_i H_i (eta_new - eta) starts at zero (a0n = a0, Bn = B)
    std::fill(hfresh_.begin(), hfresh_.end(), 0);
    Eigen::VectorXd gj(K_), dj(K_), u(K_), c(K_);
    Eigen::MatrixXd H;
    // intercepts: one block with the pseudo-inverse of its Hessian
    if (ctrl_.intercept) {
      block_hessian(w, -1, H);
      eig_.compute(H);
      Qa_ = eig_.eigenvectors();
      Da_ = eig_.eigenvalues();
    }
    bool full = true;
    for (;;) {
      if (sweeps_ >= ctrl_.max_iter || stop_.stop_requested()) return false;
      ++sweeps_;
      double maxdiff = 0.0, maxviol = 0.0;
      bool entered = false;
      if (ctrl_.intercept) {
        gj = ga_ - R_.rowwise().sum();
        group_prox(Qa_, Da_, gj, 0.0, 0.0, dj);
        if (dj.squaredNorm() > 0) {
          push(w, -1, dj);
          a0n += dj;
          const Eigen::VectorXd hd = Qa_ * (Da_.cwiseMax(0.0).asDiagonal() * (Qa_.transpose() * dj));
          maxdiff = std::max(maxdiff, dj.dot(hd));
          maxviol = std::max(maxviol, hd.cwiseAbs().maxCoeff());
        }
      }
      for (Eigen::Index j = 0; j < p_; ++j) {
        const bool nz = Bn.row(j).squaredNorm() > 0;
        if (!full && !nz) continue;
        if (!hfresh_[j]) {
          block_hessian(w, j, H);
          if (grouped_) {
            eig_.compute(H);
            Hq_[j] = eig_.eigenvectors();
            Hd_[j] = eig_.eigenvalues();
          } else {
            Hq_[j] = H;
          }
          hfresh_[j] = 1;
        }
        gj = G_.col(j) - R_ * x_.col(j);  // the model's gradient for feature j (minus its derivative)
        const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
        dj.setZero();
        if (grouped_) {
          const Eigen::VectorXd bj = Bn.row(j).transpose();
          c = gj + Hq_[j] * (Hd_[j].cwiseMax(0.0).asDiagonal() * (Hq_[j].transpose() * bj));
          group_prox(Hq_[j], Hd_[j], c, l1, l2, u);
          dj = u - bj;
        } else {
          const Eigen::MatrixXd& Hj = Hq_[j];
          for (int k = 0; k < K_; ++k) {
            const double h = Hj(k, k), old = Bn(j, k) + dj(k);
            const double den = h + l2;
            const double b = den > 0 ? soft_threshold(gj(k) + h * old, l1) / den : 0.0;
            const double d = b - old;
            if (d != 0.0) {
              gj.noalias() -= d * Hj.col(k);
              dj(k) += d;
            }
          }
        }
        if (!grouped_ && pf(j) > 0 && dj.squaredNorm() > 0) {
          // the loss is flat along b_j + c 1: move to the shift that minimizes the penalty (glmnet's centring;
          // without it CD crawls along that direction when pf_j is small and stalls short of the optimum)
          u = Bn.row(j).transpose() + dj;
          dj.array() += optimal_shift(u);
        }
        if (dj.squaredNorm() > 0) {
          push(w, j, dj);
          const Eigen::VectorXd bnew = Bn.row(j).transpose() + dj;
          Bn.row(j) = bnew.transpose();
          if (!nz) entered = true;
          const Eigen::VectorXd hd =
              (grouped_ ? Eigen::VectorXd(Hq_[j] * (Hd_[j].cwiseMax(0.0).asDiagonal() * (Hq_[j].transpose() * dj)))
                        : Eigen::VectorXd(Hq_[j] * dj)) + l2 * dj;
          maxdiff = std::max(maxdiff, dj.dot(hd));
          maxviol = std::max(maxviol, hd.cwiseAbs().maxCoeff());
        }
      }
      if (maxdiff < thr && maxviol <= kkt_thr) {
        if (full && !entered) return true;
        full = true;
      } else {
        full = false;
      }
    }
  }

  // argmin_c sum_k [alpha |b_k + c| + (1 - alpha) (b_k + c)^2 / 2] (ungrouped penalty of one feature; the loss
  // does not change with c). Lasso: minus a median, the point of the optimal interval nearest 0 for even K.
  double optimal_shift(const Eigen::VectorXd& b) {
    srt_.assign(b.data(), b.data() + K_);
    std::sort(srt_.begin(), srt_.end());
    if (alpha_ >= 1.0) {
      if (K_ % 2 == 1) return -srt_[K_ / 2];
      const double lo = -srt_[K_ / 2], hi = -srt_[K_ / 2 - 1];
      return std::min(std::max(0.0, lo), hi);
    }
    // the right derivative of the convex piecewise quadratic, increasing in c; bisection for its sign change
    auto dright = [&](double c) {
      double d = 0.0;
      for (int k = 0; k < K_; ++k) {
        const double v = b(k) + c;
        d += alpha_ * (v >= 0 ? 1.0 : -1.0) + (1.0 - alpha_) * v;
      }
      return d;
    };
    double lo = -srt_.back() - 1.0, hi = -srt_.front() + 1.0;
    for (int it = 0; it < 200 && hi - lo > 1e-16 * (1.0 + std::abs(lo) + std::abs(hi)); ++it) {
      const double mid = 0.5 * (lo + hi);
      if (dright(mid) >= 0) hi = mid;
      else lo = mid;
    }
    // snap to a breakpoint when the minimum sits on one (a coefficient exactly 0)
    for (int k = 0; k < K_; ++k)
      if (std::abs(hi + b(k)) <= 1e-15 * (1.0 + std::abs(b(k)))) return -b(k);
    return hi;
  }

  // max_j sum_i w_i |x_ij| (and sum_i w_i for the intercepts): the size of the terms of a gradient
  double xw_scale(const VecRef& w) const {
    double s = w.sum();
    for (Eigen::Index j = 0; j < p_; ++j) s = std::max(s, w.dot(x_.col(j).cwiseAbs()));
    return s;
  }

  bool newton(const VecRef& w, const VecRef& pf, double lambda, MultinomialFit& fit) {
    double f_old = objective(w, pf, lambda, fit.a0, fit.beta);
    Eigen::VectorXd a0n;
    Eigen::MatrixXd Bn;
    for (int it = 0; it < ctrl_.max_outer; ++it) {
      fit.outer = it + 1;
      loss(w, fit.a0, fit.beta);  // P_ at the current point
      residual_gradient(w);
      a0n = fit.a0;
      Bn = fit.beta;
      if (!inner(w, pf, lambda, a0n, Bn)) return false;
      // step halving on the true objective
      double t = 1.0, f_new = objective(w, pf, lambda, a0n, Bn);
      const Eigen::VectorXd da = a0n - fit.a0;
      const Eigen::MatrixXd dB = Bn - fit.beta;
      while (!(f_new <= f_old + 1e-12 * std::abs(f_old)) && t > 1e-8) {
        t *= 0.5;
        a0n = fit.a0 + t * da;
        Bn = fit.beta + t * dB;
        f_new = objective(w, pf, lambda, a0n, Bn);
      }
      // largest change of the linear predictor (with the class shift removed) over observations with weight
      Eigen::MatrixXd dE = (t * dB).transpose() * x_.transpose();
      dE.colwise() += t * da;
      double change = 0.0;
      for (Eigen::Index i = 0; i < n_; ++i) {
        if (!(w(i) > 0)) continue;
        const double m = dE.col(i).mean();
        change = std::max(change, (dE.col(i).array() - m).abs().maxCoeff());
      }
      fit.a0 = a0n;
      fit.beta = Bn;
      const bool small_f = std::abs(f_old - f_new) <= 1e-13 * (std::abs(f_new) + 1e-300);
      f_old = f_new;
      // converged only after a FULL Newton step: a step cut short by the line search (near-separable classes,
      // where the Hessian at saturated probabilities underestimates the curvature along the step) moves little
      // without being near the optimum
      if (t == 1.0 && (change <= 1e-10 || (small_f && change <= 1e-7))) return true;
      if (!std::isfinite(f_new)) throw std::runtime_error("multinomial fit diverged (non-finite objective)");
    }
    return false;
  }

  MatRef x_;
  int K_;
  bool grouped_;
  double alpha_;
  Control ctrl_;
  Eigen::Index n_, p_;
  int sweeps_ = 0;
  parallel::StopToken stop_;
  std::vector<int> cls_;
  Eigen::MatrixXd E_, P_, R_, G_;
  Eigen::VectorXd ga_, cw_;
  Eigen::MatrixXd T_;
  std::vector<Eigen::MatrixXd> Hq_;  // per feature: the Hessian block (ungrouped) or its eigenvectors (grouped)
  std::vector<Eigen::VectorXd> Hd_;  // grouped: the eigenvalues
  std::vector<char> hfresh_;
  std::vector<double> srt_;
  Eigen::MatrixXd Qa_;
  Eigen::VectorXd Da_;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig_;
};

struct MultinomialPath {
  Eigen::VectorXd lambda, kkt;
  Eigen::MatrixXd a0;    // K x L
  Eigen::MatrixXd beta;  // (p K) x L: column l is B (p x K) stacked column-major
  Eigen::VectorXi iterations;
  bool converged = true;
  bool stopped = false;
};

inline MultinomialPath fit_path(Multinomial& solver, Eigen::Ref<const Eigen::VectorXd> w,
                                Eigen::Ref<const Eigen::VectorXd> pf, const Eigen::VectorXd& lambda,
                                const parallel::StopToken& stop = parallel::StopToken()) {
  const Eigen::Index L = lambda.size(), p = solver.p();
  const int K = solver.classes();
  MultinomialPath out;
  out.lambda = lambda;
  out.a0.resize(K, L);
  out.kkt.resize(L);
  out.beta.resize(p * K, L);
  out.iterations.resize(L);
  MultinomialFit fit;
  for (Eigen::Index l = 0; l < L; ++l) {
    if (stop.stop_requested()) {
      out.stopped = true;
      return out;
    }
    if (l > 0 && lambda(l) > lambda(l - 1)) throw std::invalid_argument("lambda must be decreasing along a path");
    solver.solve(w, pf, lambda(l), fit);
    out.a0.col(l) = fit.a0;
    out.beta.col(l) = Eigen::Map<const Eigen::VectorXd>(fit.beta.data(), p * K);
    out.kkt(l) = fit.kkt;
    out.iterations(l) = fit.iterations;
    out.converged = out.converged && fit.converged;
  }
  return out;
}

// Per-observation CV loss of the class probabilities pr (K) for class y, as glmnet's cv.multnet: 0 deviance
// (-2 log p_y, p clipped to [1e-5, 1 - 1e-5]), 1 squared error sum_k (y_k - p_k)^2, 2 absolute error
// sum_k |y_k - p_k|, 3 misclassification (the most probable class, the first of ties).
inline double multinomial_cv_loss(const Eigen::VectorXd& pr, int y, int measure) {
  const int K = static_cast<int>(pr.size());
  if (measure == 1 || measure == 2) {
    double s = 0.0;
    for (int k = 0; k < K; ++k) {
      const double e = (k == y ? 1.0 : 0.0) - pr(k);
      s += measure == 1 ? e * e : std::abs(e);
    }
    return s;
  }
  if (measure == 3) {
    Eigen::Index best = 0;
    pr.maxCoeff(&best);
    return static_cast<int>(best) == y ? 0.0 : 1.0;
  }
  const double q = std::min(std::max(pr(y), 1e-5), 1.0 - 1e-5);
  return -2.0 * std::log(q);
}

// K-fold CV of the multinomial path, as cross_validate() of path.hpp (folds held out by zero weights, lambda
// scaled by the training share of the weights, folds in parallel). ctrl.cv_measure: 0..3 (no auc).
inline CvResult cross_validate_multinomial(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y,
                                           int K, bool grouped, double alpha, Eigen::Ref<const Eigen::VectorXd> w,
                                           Eigen::Ref<const Eigen::VectorXd> pf, const Eigen::VectorXi& foldid,
                                           const Eigen::VectorXd& lambda, const Control& ctrl,
                                           const parallel::RunSettings& run,
                                           const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index n = x.rows(), p = x.cols(), L = lambda.size();
  if (foldid.size() != n) throw std::invalid_argument("foldid must have length n");
  if (ctrl.cv_measure > 3) throw std::invalid_argument("the multinomial CV measures are deviance, mse, mae, class");
  const int F = foldid.maxCoeff() + 1;
  if (F < 2 || foldid.minCoeff() < 0) throw std::invalid_argument("need at least 2 folds numbered from 0");
  const double W = w.sum();
  Eigen::MatrixXd err = Eigen::MatrixXd::Zero(n, L);
  std::vector<double> wfold(F, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) wfold[foldid(i)] += w(i);
  auto body = [&](std::size_t f, int, const parallel::StopToken& stop) {
    Eigen::VectorXd wk = w;
    for (Eigen::Index i = 0; i < n; ++i)
      if (foldid(i) == static_cast<int>(f)) wk(i) = 0.0;
    const double scale = wk.sum() / W;
    if (!(scale > 0)) throw std::invalid_argument("a cross-validation fold leaves no training data");
    Multinomial solver(x, y, K, grouped, alpha, ctrl);
    solver.set_stop(stop);
    const MultinomialPath path = fit_path(solver, wk, pf, lambda * scale, stop);
    if (path.stopped) return;
    Eigen::VectorXd eta(K), pr(K);
    for (Eigen::Index i = 0; i < n; ++i) {
      if (foldid(i) != static_cast<int>(f)) continue;
      for (Eigen::Index l = 0; l < L; ++l) {
        const Eigen::Map<const Eigen::MatrixXd> B(path.beta.col(l).data(), p, K);
        eta = path.a0.col(l) + B.transpose() * x.row(i).transpose();
        pr = (eta.array() - eta.maxCoeff()).exp().matrix();
        pr /= pr.sum();
        err(i, l) = multinomial_cv_loss(pr, static_cast<int>(y(i)), ctrl.cv_measure);
      }
    }
  };
  CvResult out;
  out.status = parallel::run_parallel(static_cast<std::size_t>(F), run.threads, body, monitor);
  if (out.status.interrupted) return out;
  out.lambda = lambda;
  summarize_cv(err, w, foldid, wfold, lambda, out);
  return out;
}

}  // namespace cd
}  // namespace scalebayes
