// scalebayes/cd/solver.hpp -- weighted elastic-net GLM by coordinate descent (gaussian, binomial, poisson).
//
// Solves, for data weights w (n), penalty weights pf (p) and lambda >= 0,
//
//   minimise_{a0, beta}  sum_i w_i l_i(a0, beta) + lambda * sum_j pf_j [ alpha |beta_j| + (1 - alpha) beta_j^2 / 2 ]
//
// gaussian: l_i = (y_i - eta_i)^2 / 2;  binomial: l_i = -[y_i eta_i - log(1 + exp(eta_i))];
// poisson: l_i = exp(eta_i) - y_i eta_i;  eta_i = o_i + a0 + x_i' beta with an optional offset o (Control::offset),
// optionally subject to box constraints lower_j <= beta_j <= upper_j (Control::lower / upper, lower <= 0 <= upper;
// lower = upper = 0 excludes a variable).
// lambda is on the SUM scale: with unit weights it equals n times glmnet's lambda (glmnet divides the loss by
// sum(w) and rescales pf to sum to p; see R/weighted_lasso.R for the exact mapping).
//
// Algorithm (one implementation for both families):
//  * a weighted least-squares core ("covariance updates" over the working set): the weighted, centred Gram
//    matrix of the working set is formed once per core solve (blocked rank-k updates, O(n |A|^2), O(|A|^2 + 256|A|)
//    memory) and coordinate descent then runs on the gradient of the working set in O(|A|) per update, with
//    active-set cycling (sweeps over the non-zero coefficients until they settle, then a sweep over the whole
//    working set); the intercept is profiled out by weighted centring;
//  * screening: the working set starts as the support of the warm start plus the sequential strong set
//    {j : |g_j| >= alpha pf_j (2 lambda - lambda_prev)}; after convergence the full gradient X'(v r) is computed
//    once (O(np)) and every KKT violator joins the working set, until there is none;
//  * binomial / poisson: proximal Newton (IRLS) outer loop around the core with step halving on the true
//    objective, so the iteration converges to the exact optimum (the working-weight floor only changes the
//    step, not the fixed point); poisson's log link can overflow on a long step: the halving rejects any step
//    with a non-finite objective, and a cold start begins at the intercept-only fit (log of the weighted mean
//    rate), not at eta = 0;
//  * box constraints: each coordinate update is clipped to [lower_j, upper_j]; a coefficient at a non-zero bound
//    is held fixed by the Newton step on the support; KKT conditions are the constrained ones (at a bound only
//    the direction into the box must be non-improving).
// Every solve reports the largest KKT violation relative to lambda, so callers can certify optima.
// Header-only, Eigen + std only.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "scalebayes/cd/design.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/math/family.hpp"
#include "scalebayes/math/logistic.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace cd {

using scalebayes::Family;  // math/family.hpp

// The family R names (weighted_lasso(family = ), wbb(), cv_weighted_lasso()): one of Family's three, fitted by
// ElasticNet, or multinomial, fitted by Multinomial (cd/multinomial.hpp).
enum class EnetFamily { gaussian, binomial, poisson, multinomial };
inline constexpr EnumTable<EnetFamily, 4> enet_family_names{
    "family", {{{"gaussian", EnetFamily::gaussian}, {"binomial", EnetFamily::binomial},
                {"poisson", EnetFamily::poisson}, {"multinomial", EnetFamily::multinomial}}}};
constexpr const auto& enum_table(EnetFamily) { return enet_family_names; }
// The single-response Family of f; std::invalid_argument for multinomial (not a Family).
inline Family single_family(EnetFamily f) {
  switch (f) {
    case EnetFamily::gaussian: return Family::gaussian;
    case EnetFamily::binomial: return Family::binomial;
    case EnetFamily::poisson: return Family::poisson;
    case EnetFamily::multinomial: break;
  }
  throw std::invalid_argument("the multinomial family has no single-response solver");
}

// Control::cv_measure by name (R: cv.scalebayes(type.measure = )); the int values are cv_measure's codes.
enum class CvMeasure { deviance = 0, mse = 1, mae = 2, class_error = 3, auc = 4 };
inline constexpr EnumTable<CvMeasure, 5> cv_measure_names{
    "type.measure", {{{"deviance", CvMeasure::deviance}, {"mse", CvMeasure::mse}, {"mae", CvMeasure::mae},
                      {"class", CvMeasure::class_error}, {"auc", CvMeasure::auc}}}};
constexpr const auto& enum_table(CvMeasure) { return cv_measure_names; }

struct Control {
  double tol = 1e-14;     // inner convergence: max_j G_jj dbeta_j^2 < tol * weighted null deviance
  int max_iter = 100000;  // coordinate sweeps allowed per solve (all inner loops together)
  int max_outer = 100;    // proximal-Newton iterations (binomial)
  bool intercept = true;  // fit an unpenalized intercept
  double kkt_tol = 1e-10; // and inner sweeps continue until the working set's KKT violation <= kkt_tol * lambda
  Eigen::VectorXd offset;        // n values added to every linear predictor (empty = none)
  Eigen::VectorXd lower, upper;  // p box constraints on the coefficients (both empty = none), lower <= 0 <= upper
  int cv_measure = 0;            // cross_validate(): 0 deviance, 1 mse, 2 mae, 3 class, 4 auc (returns predmat)
  int naive_from = -1;           // working-set size from which naive (residual) updates replace the Gram matrix;
                                 // -1 = automatic (BasicElasticNet::prefer_naive()); tests force either side
};

struct Fit {
  double a0 = 0.0;
  Eigen::VectorXd beta;  // empty = cold start
  int iterations = 0;    // coordinate sweeps used
  int outer = 0;         // proximal-Newton iterations used (binomial)
  bool converged = false;
  double kkt = 0.0;      // max KKT violation / max(lambda, 1e-300) (0 when lambda = 0 and gradient is 0)
};

inline double soft_threshold(double z, double g) { return z > g ? z - g : (z < -g ? z + g : 0.0); }

using math::expit;
using math::log1pexp;

// The solver, on the column storage `Design` (cd/design.hpp): DenseDesign (ElasticNet, below) or SparseDesign
// (compressed columns, centring and scaling implicit). One algorithm; the design only supplies the column
// products (X'v, y += a x_j, weighted moments, Gram entries).
template <class Design>
class BasicElasticNet {
 public:
  using MatRef = Eigen::Ref<const Eigen::MatrixXd>;
  using VecRef = Eigen::Ref<const Eigen::VectorXd>;

  BasicElasticNet(const Design& x, VecRef y, Family family, double alpha, const Control& ctrl = Control())
      : x_(x), y_(y), family_(family), alpha_(alpha), ctrl_(ctrl), n_(x.rows()), p_(x.cols()) {
    if (y.size() != n_) throw std::invalid_argument("y must have one value per row of x");
    if (!(alpha >= 0.0 && alpha <= 1.0)) throw std::invalid_argument("alpha must lie in [0, 1]");
    if (family == Family::binomial) {
      for (Eigen::Index i = 0; i < n_; ++i)
        if (y(i) != 0.0 && y(i) != 1.0) throw std::invalid_argument("binomial y must be 0 or 1");
    }
    if (family == Family::poisson) {
      for (Eigen::Index i = 0; i < n_; ++i)
        if (!(y(i) >= 0.0) || !std::isfinite(y(i))) throw std::invalid_argument("poisson y must be finite and >= 0");
    }
    has_offset_ = ctrl_.offset.size() > 0;
    if (has_offset_ && ctrl_.offset.size() != n_) throw std::invalid_argument("offset must have length n");
    if (has_offset_ && !ctrl_.offset.allFinite()) throw std::invalid_argument("offset must be finite");
    has_bounds_ = ctrl_.lower.size() > 0 || ctrl_.upper.size() > 0;
    if (has_bounds_) {
      if (ctrl_.lower.size() != p_ || ctrl_.upper.size() != p_)
        throw std::invalid_argument("lower and upper limits must both have length p");
      for (Eigen::Index j = 0; j < p_; ++j)
        if (!(ctrl_.lower(j) <= 0.0) || !(ctrl_.upper(j) >= 0.0))
          throw std::invalid_argument("limits must satisfy lower <= 0 <= upper");
    }
    pos_.assign(p_, -1);
    xm_.setZero(p_);
    xv_.setZero(p_);
    g_.setZero(p_);
    r_.setZero(n_);
    vr_.setZero(n_);
    v_.setZero(n_);
    z_.setZero(n_);
    eta_.setZero(n_);
    tmp_.setZero(n_);
    sv_.setZero(n_);
  }

  Eigen::Index n() const { return n_; }
  Eigen::Index p() const { return p_; }
  Family family() const { return family_; }
  double alpha() const { return alpha_; }

  // Objective value at (a0, beta).
  double objective(const VecRef& w, const VecRef& pf, double lambda, double a0, const Eigen::VectorXd& beta) {
    init_eta(a0);
    add_xbeta(beta, eta_);
    double loss = 0.0;
    if (family_ == Family::gaussian) {
      for (Eigen::Index i = 0; i < n_; ++i) {
        const double e = y_(i) - eta_(i);
        loss += 0.5 * w(i) * e * e;
      }
    } else if (family_ == Family::poisson) {
      for (Eigen::Index i = 0; i < n_; ++i)
        if (w(i) != 0.0) loss += w(i) * (std::exp(eta_(i)) - y_(i) * eta_(i));
    } else {
      for (Eigen::Index i = 0; i < n_; ++i)
        if (w(i) != 0.0) loss += w(i) * (log1pexp(eta_(i)) - y_(i) * eta_(i));
    }
    return loss + penalty(pf, lambda, beta);
  }

  double penalty(const VecRef& pf, double lambda, const Eigen::VectorXd& beta) const {
    double pen = 0.0;
    for (Eigen::Index j = 0; j < p_; ++j)
      if (beta(j) != 0.0) pen += pf(j) * (alpha_ * std::abs(beta(j)) + 0.5 * (1.0 - alpha_) * beta(j) * beta(j));
    return lambda * pen;
  }

  // Solve at lambda, warm-starting from fit (beta empty = zero). lambda_prev (>= lambda) sets the sequential
  // strong rule; pass lambda_prev = lambda for an isolated solve near a known solution.
  // Lets a stop request (Ctrl-C through the parallel driver) end solves early; they then report not converged.
  void set_stop(const parallel::StopToken& stop) { stop_ = stop; }

  void solve(const VecRef& w, const VecRef& pf, double lambda, Fit& fit, double lambda_prev = -1.0) {
    check_args(w, pf, lambda);
    if (fit.beta.size() != p_) {
      fit.beta.setZero(p_);
      fit.a0 = 0.0;
      if (family_ == Family::poisson && ctrl_.intercept) {
        // cold start at the intercept-only fit: exp(eta) = the weighted mean rate (never eta = 0 far from it)
        double num = 0.0, den = 0.0;
        for (Eigen::Index i = 0; i < n_; ++i) {
          num += w(i) * y_(i);
          den += w(i) * std::exp(off(i));
        }
        if (num > 0 && den > 0) fit.a0 = std::log(num / den);
      }
    } else if (has_bounds_) {
      for (Eigen::Index j = 0; j < p_; ++j) fit.beta(j) = std::min(std::max(fit.beta(j), lo(j)), hi(j));
    }
    if (lambda_prev < lambda) lambda_prev = lambda;
    fit.iterations = 0;
    fit.outer = 0;
    sweeps_ = 0;
    if (family_ == Family::gaussian) {
      v_ = w;
      z_ = y_;
      if (has_offset_) z_ -= ctrl_.offset;
      fit.converged = wls(pf, lambda, lambda_prev, fit.a0, fit.beta);
    } else {
      fit.converged = irls(w, pf, lambda, lambda_prev, fit);
    }
    fit.iterations = sweeps_;
    if (family_ == Family::gaussian && grad_fresh_)
      fit.kkt = violation_from_gradient(pf, lambda, fit.beta, 0.0);  // v = w: g_ is the true gradient
    else
      fit.kkt = kkt_violation(w, pf, lambda, fit.a0, fit.beta);
  }

  // Largest violation of the KKT conditions at (a0, beta), divided by max(lambda, tiny); also leaves the
  // loss gradient -sum_i w_i dl_i/deta_i x_ij in gradient().
  double kkt_violation(const VecRef& w, const VecRef& pf, double lambda, double a0, const Eigen::VectorXd& beta) {
    init_eta(a0);
    add_xbeta(beta, eta_);
    for (Eigen::Index i = 0; i < n_; ++i) vr_(i) = w(i) == 0.0 ? 0.0 : w(i) * (y_(i) - mean_of(eta_(i)));
    x_.gradient(vr_, g_);
    return violation_from_gradient(pf, lambda, beta, ctrl_.intercept ? std::abs(vr_.sum()) : 0.0);
  }

  // KKT violation from the loss gradient in g_ (and the intercept's gradient), relative to lambda.
  double violation_from_gradient(const VecRef& pf, double lambda, const Eigen::VectorXd& beta, double viol0) const {
    double viol = viol0;
    double scale = 0.0;  // size of the gradient terms, for a relative measure when lambda = 0
    for (Eigen::Index j = 0; j < p_; ++j) {
      const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
      const double e = coef_violation(j, beta(j), g_(j) - l2 * beta(j), l1);
      viol = std::max(viol, e);
      scale = std::max(scale, std::abs(g_(j)));
    }
    const double denom = lambda > 0 ? lambda : std::max(scale, 1.0);
    return viol / denom;
  }

  const Eigen::VectorXd& gradient() const { return g_; }

  // The inverse link.
  double mean_of(double eta) const {
    return family_ == Family::gaussian ? eta : family_ == Family::binomial ? expit(eta) : std::exp(eta);
  }

  // KKT violation of coefficient j at value b, from gj = (loss gradient) - l2 b and the lasso weight l1: the
  // constrained conditions when j has box limits (at a bound only the direction into the box counts).
  double coef_violation(Eigen::Index j, double b, double gj, double l1) const {
    if (b == 0.0) return zero_excess(j, gj, l1);
    const double e = gj - (b > 0 ? l1 : -l1);
    if (has_bounds_) {
      if (b >= hi(j)) return std::max(0.0, -e);
      if (b <= lo(j)) return std::max(0.0, e);
    }
    return std::abs(e);
  }
  // How far beta_j = 0 violates its KKT condition (g: loss gradient): moves only into the box count.
  double zero_excess(Eigen::Index j, double g, double l1) const {
    if (!has_bounds_) return std::max(0.0, std::abs(g) - l1);
    double e = 0.0;
    if (hi(j) > 0) e = std::max(e, g - l1);
    if (lo(j) < 0) e = std::max(e, -g - l1);
    return e;
  }
  double lo(Eigen::Index j) const { return has_bounds_ ? ctrl_.lower(j) : -std::numeric_limits<double>::infinity(); }
  double hi(Eigen::Index j) const { return has_bounds_ ? ctrl_.upper(j) : std::numeric_limits<double>::infinity(); }
  double off(Eigen::Index i) const { return has_offset_ ? ctrl_.offset(i) : 0.0; }

 private:
  // ---------------------------------------------------------------------------------------------------------
  // Weighted least squares core: minimise 1/2 sum v_i (z_i - a0 - x_i'beta)^2 + penalty, warm start (a0, beta).
  bool wls(const VecRef& pf, double lambda, double lambda_prev, double& a0, Eigen::VectorXd& beta) {
    const double W = v_.sum();
    if (!(W > 0)) throw std::invalid_argument("weights sum to zero");
    double zbar = ctrl_.intercept ? v_.dot(z_) / W : 0.0;
    double dev0 = 0.0;
    for (Eigen::Index i = 0; i < n_; ++i) dev0 += v_(i) * (z_(i) - zbar) * (z_(i) - zbar);
    const double thr = ctrl_.tol * std::max(dev0, std::numeric_limits<double>::min());

    // working set: support of the warm start and unpenalized variables
    clear_active();
    for (Eigen::Index j = 0; j < p_; ++j)
      if (beta(j) != 0.0 || pf(j) == 0.0) add_active(j);
    residual(beta);  // r_ = z - X beta - a0 (weighted-centred), vr_ = v r, a0 implied
    x_.gradient(vr_, g_);
    const double strong = 2.0 * lambda - lambda_prev;
    cand_.clear();
    for (Eigen::Index j = 0; j < p_; ++j)
      if (pos_[j] < 0 && movable(j) && screen_g(j) >= alpha_ * pf(j) * strong) cand_.emplace_back(-ratio(j, pf, strong), j);
    add_best_candidates();
    naive_ = prefer_naive();
    if (naive_) {
      for (auto j : active_) column_moments(j);
    } else {
      build_gram();
    }
    bool converged = false;
    for (;;) {
      if (naive_) {
        if (!cd_loop_naive(pf, lambda, beta, thr)) break;
      } else {
        load_gradient();
        if (!cd_loop(pf, lambda, beta, thr)) break;
      }
      // KKT check over all variables with a fresh residual
      residual(beta);
      x_.gradient(vr_, g_);
      cand_.clear();
      for (Eigen::Index j = 0; j < p_; ++j) {
        if (pos_[j] >= 0) continue;
        if (movable(j) && screen_g(j) > alpha_ * pf(j) * lambda * (1.0 + 1e-12) + 1e-300)
          cand_.emplace_back(-ratio(j, pf, lambda), j);
      }
      if (cand_.empty()) {
        converged = true;
        break;
      }
      const Eigen::Index old = static_cast<Eigen::Index>(active_.size());
      add_best_candidates();
      if (!naive_ && prefer_naive()) naive_ = true;  // the working set outgrew the Gram matrix: residual updates
      if (naive_) {  // (the moments of the earlier members are those of this v_, from the Gram or naive set-up)
        for (Eigen::Index a = old; a < static_cast<Eigen::Index>(active_.size()); ++a) column_moments(active_[a]);
      } else if (static_cast<Eigen::Index>(active_.size()) - old > kSmallGram) {
        build_gram();
      } else {
        extend_gram(old);
      }
    }
    // intercept = weighted mean of z - X beta = zbar - sum_j xm_j beta_j (xm_ is known for the working set)
    a0 = 0.0;
    if (ctrl_.intercept) {
      a0 = zbar;
      for (auto j : active_)
        if (beta(j) != 0.0) a0 -= xm_(j) * beta(j);
    }
    // g_ now holds the exact gradient X'(v r) at the solution (fresh residual of the last KKT pass)
    grad_fresh_ = converged;
    return converged;
  }

  // Coordinate descent on the working set with covariance updates. Returns false if sweeps ran out.
  // Once a sweep leaves the signed support unchanged, an exact Newton step on that support is tried (solve
  // the stationarity equations of the support with a Cholesky factorization); it is kept if no sign flips,
  // which makes the solution exact to rounding in one step instead of many slow CD sweeps on correlated
  // columns. Zeros of the working set are then certified by the working-set KKT check.
  bool cd_loop(const VecRef& pf, double lambda, Eigen::VectorXd& beta, double thr) {
    const int m = static_cast<int>(active_.size());
    // KKT target: kkt_tol * lambda, but never below what rounding allows: the gradient is the difference of
    // terms of size |g_j| + G_jj |beta_j|, known to about 1e-13 of that size.
    double uscale = 0.0;
    for (int a = 0; a < m; ++a) uscale = std::max(uscale, std::abs(ga_(a)) + G_(a, a) * std::abs(beta(active_[a])));
    const double kkt_thr = std::max(ctrl_.kkt_tol * lambda, 1e-13 * uscale) + std::numeric_limits<double>::min();
    bool full = true;
    bool newton_tried = false;
    for (;;) {
      if (sweeps_ >= ctrl_.max_iter || stop_.stop_requested()) return false;
      ++sweeps_;
      double maxdiff = 0.0;
      bool support_changed = false;
      for (int a = 0; a < m; ++a) {
        const Eigen::Index j = active_[a];
        if (!full && beta(j) == 0.0) continue;
        const double gjj = G_(a, a);
        const double old = beta(j);
        const double b = coordinate_min(j, ga_(a) + gjj * old, gjj, pf, lambda);
        if (b != old) {
          const double d = b - old;
          beta(j) = b;
          ga_.head(m).noalias() -= d * G_.col(a).head(m);
          maxdiff = std::max(maxdiff, gjj * d * d);
          if (coef_state(j, b) != coef_state(j, old)) support_changed = true;
        }
      }
      if (support_changed) newton_tried = false;
      if (!support_changed && !newton_tried) {
        newton_tried = true;
        int nt = newton_step(pf, lambda, beta);
        // active-set iterations: after a partial step re-solve on the reduced support right away
        for (int rep = 0; nt == 0 && rep < 64; ++rep) nt = newton_step(pf, lambda, beta);
        if (nt > 0) {
          if (working_set_kkt(pf, lambda, beta) <= kkt_thr) return true;
        } else if (nt == 0) {
          // a partial step zeroed one variable: sweep everything next and try Newton again
          newton_tried = false;
          full = true;
          continue;
        }
      }
      if (maxdiff < thr) {
        if (full && working_set_kkt(pf, lambda, beta) <= kkt_thr) return true;
        full = true;  // non-zero set settled (or KKT not yet tight): verify with a full sweep
      } else {
        full = false;
      }
    }
  }

  // Coordinate descent on the working set with naive (residual) updates, as glmnet's type.gaussian = "naive":
  // no Gram matrix; the residual r = r_ + rho (a vector plus a scalar shift, so that a sparse column's implicit
  // centring costs O(1)) and S = sum_i v_i r_i are kept up to date, and each coordinate costs O(nnz(X_j)):
  //   g_j = (sum_i v_i X_ij r_i - mu_j S) / s_j,   mu_j = c_j + s_j m_j  (the weighted mean of the stored X_j),
  //   beta_j += d:  r_ -= (d / s_j) X_j on its entries,  rho += d mu_j / s_j,  S -= d (sum_i v_i X_ij - mu_j W) / s_j.
  // Expects r_ fresh (residual(beta)). Same stopping rule as cd_loop() (coordinate change below thr, then the
  // working set's KKT violation below kkt_tol * lambda on a full sweep), but without cd_loop()'s exact Newton
  // finish on the support, so the KKT target is 100 times tighter here: the two modes then agree far below the
  // certificate (dense and sparse draws agree to 1e-10). A failed KKT check refreshes the residual exactly, so
  // rounding in the running updates cannot accumulate.
  bool cd_loop_naive(const VecRef& pf, double lambda, Eigen::VectorXd& beta, double thr) {
    const int m = static_cast<int>(active_.size());
    const double W = v_.sum();
    if (nvs_.size() < m) nvs_.resize(std::max<Eigen::Index>(m, 2 * nvs_.size()));
    if (nmu_.size() < m) nmu_.resize(std::max<Eigen::Index>(m, 2 * nmu_.size()));
    for (int a = 0; a < m; ++a) {
      const Eigen::Index j = active_[a];
      nvs_(a) = x_.raw_vsum(j, v_);
      nmu_(a) = x_.col_center(j) + x_.col_scale(j) * xm_(j);
    }
    double rho = 0.0, S = v_.dot(r_);
    auto grad = [&](int a) {
      const Eigen::Index j = active_[a];
      return (x_.raw_wdot(j, v_, r_) + rho * nvs_(a) - nmu_(a) * S) / x_.col_scale(j);
    };
    // rounding floor of the gradient (as cd_loop): terms of size |g_j| + G_jj |beta_j|, and the residual's size
    double uscale = 0.0, xvmax = 0.0;
    for (int a = 0; a < m; ++a) {
      const Eigen::Index j = active_[a];
      uscale = std::max(uscale, std::abs(grad(a)) + xv_(j) * std::abs(beta(j)));
      xvmax = std::max(xvmax, xv_(j));
    }
    const double rss = (v_.array() * r_.array().square()).sum();
    const double floor = 1e-13 * std::max(uscale, std::sqrt(xvmax * rss));
    const double kkt_thr = std::max(1e-2 * ctrl_.kkt_tol * lambda, floor) + std::numeric_limits<double>::min();
    bool full = true;
    for (;;) {
      if (sweeps_ >= ctrl_.max_iter || stop_.stop_requested()) return false;
      ++sweeps_;
      double maxdiff = 0.0;
      for (int a = 0; a < m; ++a) {
        const Eigen::Index j = active_[a];
        if (!full && beta(j) == 0.0) continue;
        const double gjj = xv_(j);
        const double old = beta(j);
        const double b = coordinate_min(j, grad(a) + gjj * old, gjj, pf, lambda);
        if (b != old) {
          const double d = b - old, sj = x_.col_scale(j);
          beta(j) = b;
          x_.raw_axpy(-d / sj, j, r_);
          rho += d * nmu_(a) / sj;
          S -= d * (nvs_(a) - nmu_(a) * W) / sj;
          maxdiff = std::max(maxdiff, gjj * d * d);
        }
      }
      if (maxdiff < thr) {
        if (full) {
          double viol = 0.0;
          for (int a = 0; a < m; ++a) {
            const Eigen::Index j = active_[a];
            const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
            viol = std::max(viol, coef_violation(j, beta(j), grad(a) - l2 * beta(j), l1));
          }
          if (viol <= kkt_thr) return true;
          residual(beta);  // exact residual again (rounding of the running updates cannot pile up)
          rho = 0.0;
          S = v_.dot(r_);
        }
        full = true;
      } else {
        full = false;
      }
    }
  }

  // The update mode of the working set: naive (residual) updates when they cost less than covariance updates.
  // Sparse x: adding a column to the Gram matrix costs O(n + nnz(A)) (the centred column is dense) and each
  // update O(|A|); a naive update costs O(nnz(X_j)). Measured (bench/RESULTS.md, 2026-12-03): naive wins once the
  // working set passes about kNaiveSparse columns of sparse columns (mean nnz below n / 16); below that the
  // Gram path with its exact Newton finish stays (small problems keep the draws they had). Dense x: covariance
  // updates (BLAS Gram build, O(|A|) updates) up to |A| = kNaiveDense, naive beyond (the Gram matrix would pass
  // 32 MB and its build O(n |A|^2)). Control::naive_from >= 0 overrides the rule (|A| >= naive_from: naive).
  static constexpr Eigen::Index kNaiveDense = 2048;
  static constexpr Eigen::Index kNaiveSparse = 64;
  bool prefer_naive() const {
    const Eigen::Index m = static_cast<Eigen::Index>(active_.size());
    if (ctrl_.naive_from >= 0) return m >= ctrl_.naive_from;
    if (!Design::kSparse) return m > kNaiveDense;
    if (m < kNaiveSparse) return false;
    double nnz = 0.0;
    for (auto j : active_) nnz += static_cast<double>(x_.col_nnz(j));
    const double mean_nnz = nnz / static_cast<double>(m);
    return 16.0 * mean_nnz < static_cast<double>(n_) || mean_nnz < static_cast<double>(m);
  }

  // The minimizer of coordinate j's penalized quadratic, u = gradient + G_jj beta_j (clipped to its box).
  double coordinate_min(Eigen::Index j, double u, double gjj, const VecRef& pf, double lambda) const {
    const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
    const double den = gjj + l2;
    double b = den > 0 ? soft_threshold(u, l1) / den : 0.0;
    if (has_bounds_) b = std::min(std::max(b, lo(j)), hi(j));
    return b;
  }

  // Exact solve on the current signed support S: (G_SS + diag(l2)) delta = g_S - l2 beta_S - l1 sign(beta_S).
  // Returns 1 if the full step was taken, 0 if a partial step stopped at a sign change (zeroing one
  // variable), -1 if the system could not be solved (nothing changed).
  int newton_step(const VecRef& pf, double lambda, Eigen::VectorXd& beta) {
    const int m = static_cast<int>(active_.size());
    sidx_.clear();
    for (int a = 0; a < m; ++a)
      if (std::abs(coef_state(active_[a], beta(active_[a]))) == 1) sidx_.push_back(a);  // free non-zeros
    const int k = static_cast<int>(sidx_.size());
    if (k == 0) return 1;
    H_.resize(k, k);
    rhs_.resize(k);
    for (int u = 0; u < k; ++u) {
      const int a = sidx_[u];
      const Eigen::Index j = active_[a];
      const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
      for (int t = 0; t <= u; ++t) H_(u, t) = G_(a, sidx_[t]);
      H_(u, u) += l2;
      rhs_(u) = ga_(a) - l2 * beta(j) - (beta(j) > 0 ? l1 : -l1);
    }
    llt_.compute(H_);  // reads the lower triangle
    if (llt_.info() != Eigen::Success) return -1;
    delta_ = llt_.solve(rhs_);
    if (!delta_.allFinite()) return -1;
    // Step length: the full step, or (if a sign would flip) the step to the first zero crossing, which still
    // decreases the objective (a convex quadratic on the signed orthant) and removes that variable.
    // With box limits a bound crossed first stops the step there in the same way (the variable is then fixed).
    double t = 1.0;
    int hit = -1;
    double hit_to = 0.0;  // where the stopping variable lands: 0 or its bound
    for (int u = 0; u < k; ++u) {
      const Eigen::Index j = active_[sidx_[u]];
      const double b = beta(j);
      const double nb = b + delta_(u);
      if (nb == 0.0 || (nb > 0) != (b > 0)) {
        const double tu = -b / delta_(u);
        if (tu < t) {
          t = tu;
          hit = u;
          hit_to = 0.0;
        }
      } else if (has_bounds_ && (nb > hi(j) || nb < lo(j))) {
        const double bd = nb > hi(j) ? hi(j) : lo(j);
        const double tu = (bd - b) / delta_(u);
        if (tu < t) {
          t = tu;
          hit = u;
          hit_to = bd;
        }
      }
    }
    for (int u = 0; u < k; ++u) {
      const int a = sidx_[u];
      const Eigen::Index j = active_[a];
      const double d = (u == hit) ? hit_to - beta(j) : t * delta_(u);
      beta(j) += d;
      if (u == hit) beta(j) = hit_to;
      else if (has_bounds_) beta(j) = std::min(std::max(beta(j), lo(j)), hi(j));
      ga_.head(m).noalias() -= d * G_.col(a).head(m);
    }
    return hit >= 0 ? 0 : 1;
  }

  // Largest KKT violation over the working set, from the maintained gradient (O(|A|)).
  double working_set_kkt(const VecRef& pf, double lambda, const Eigen::VectorXd& beta) const {
    double viol = 0.0;
    for (std::size_t a = 0; a < active_.size(); ++a) {
      const Eigen::Index j = active_[a];
      const double l1 = lambda * pf(j) * alpha_, l2 = lambda * pf(j) * (1.0 - alpha_);
      viol = std::max(viol, coef_violation(j, beta(j), ga_(a) - l2 * beta(j), l1));
    }
    return viol;
  }

  // r_ = z - X beta, centred with weights v (absorbing the intercept); vr_ = v .* r_
  void residual(const Eigen::VectorXd& beta) {
    r_ = z_;
    double shift = 0.0;
    for (auto j : active_)
      if (beta(j) != 0.0) x_.axpy(-beta(j), j, r_, shift);
    x_.finish(r_, shift);
    if (ctrl_.intercept) r_.array() -= v_.dot(r_) / v_.sum();
    vr_.array() = v_.array() * r_.array();
  }

  // |g_j| / (alpha pf_j lambda): how strongly variable j violates its KKT condition (inf if unpenalized)
  double ratio(Eigen::Index j, const VecRef& pf, double lam) const {
    const double t = alpha_ * pf(j) * lam;
    return t > 0 ? screen_g(j) / t : std::numeric_limits<double>::infinity();
  }
  // |g_j| for screening, only in the directions the box allows
  double screen_g(Eigen::Index j) const { return has_bounds_ ? zero_excess(j, g_(j), 0.0) : std::abs(g_(j)); }
  // a variable that can leave zero (not excluded by lower = upper = 0)
  bool movable(Eigen::Index j) const { return !has_bounds_ || lo(j) < 0 || hi(j) > 0; }
  // 0 at zero, +-1 free, +-2 at a non-zero bound
  int coef_state(Eigen::Index j, double b) const {
    if (b == 0.0) return 0;
    const int s = b > 0 ? 1 : -1;
    if (has_bounds_ && (b >= hi(j) || b <= lo(j))) return 2 * s;
    return s;
  }
  void init_eta(double a0) {
    if (has_offset_) eta_.array() = ctrl_.offset.array() + a0;
    else eta_.setConstant(a0);
  }

  // Add candidates to the working set, the strongest violators first, at most max(16, |working set|) per
  // round (working-set doubling): in p >> n problems adding every violator at once can put thousands of
  // variables into the Gram matrix; growing geometrically keeps it near the size of the support.
  void add_best_candidates() {
    const std::size_t cap = std::max<std::size_t>(16, active_.size());
    if (cand_.size() > cap) {
      std::nth_element(cand_.begin(), cand_.begin() + cap, cand_.end());
      cand_.resize(cap);
    }
    std::sort(cand_.begin(), cand_.end());
    for (const auto& c : cand_) add_active(c.second);
  }

  void clear_active() {
    for (auto j : active_) pos_[j] = -1;
    active_.clear();
  }
  void add_active(Eigen::Index j) {
    pos_[j] = static_cast<int>(active_.size());
    active_.push_back(j);
  }
  void load_gradient() {
    const int m = static_cast<int>(active_.size());
    if (ga_.size() < m) ga_.resize(std::max<Eigen::Index>(m, 2 * ga_.size()));
    for (int a = 0; a < m; ++a) ga_(a) = g_(active_[a]);
  }

  // Weighted means / variances of working-set columns, and their weighted centred Gram matrix.
  void column_moments(Eigen::Index j) {
    x_.moments(j, v_, v_.sum(), ctrl_.intercept, xm_(j), xv_(j));
  }

  void ensure_gram_capacity(Eigen::Index m) {
    if (G_.rows() < m) {
      Eigen::Index cap = std::max<Eigen::Index>(m, 2 * G_.rows());
      Eigen::MatrixXd g2(cap, cap);
      const Eigen::Index old = G_.rows();
      if (old > 0) g2.topLeftCorner(old, old) = G_;
      G_.swap(g2);
    }
  }

  static constexpr Eigen::Index kSmallGram = 24;

  void build_gram() {
    const Eigen::Index m = static_cast<Eigen::Index>(active_.size());
    ensure_gram_capacity(std::max<Eigen::Index>(m, 8));
    if (m == 0) return;
    if (m <= kSmallGram || Design::kSparse) {  // dot products beat packing a GEMM for a few columns (sparse: always)
      extend_gram(0);
      return;
    }
    for (auto j : active_) column_moments(j);
    sv_ = v_.cwiseSqrt();
    // blocked G = S'S with S = sqrt(v) (X_A - 1 xm_A'), in row blocks of kBlock
    constexpr Eigen::Index kBlock = 256;
    Eigen::MatrixXd acc = Eigen::MatrixXd::Zero(m, m);
    blk_.resize(std::min<Eigen::Index>(kBlock, n_), m);
    for (Eigen::Index i0 = 0; i0 < n_; i0 += kBlock) {
      const Eigen::Index nb = std::min<Eigen::Index>(kBlock, n_ - i0);
      for (Eigen::Index a = 0; a < m; ++a) {
        const Eigen::Index j = active_[a];
        const double mj = xm_(j);
        for (Eigen::Index i = 0; i < nb; ++i) blk_(i, a) = sv_(i0 + i) * (x_.at(i0 + i, j) - mj);
      }
      acc.selfadjointView<Eigen::Lower>().rankUpdate(blk_.topRows(nb).transpose());
    }
    acc.triangularView<Eigen::StrictlyUpper>() = acc.transpose();
    G_.topLeftCorner(m, m) = acc;
    for (Eigen::Index a = 0; a < m; ++a) G_(a, a) = xv_(active_[a]);
  }

  // Add Gram rows/columns for working-set members from index `old` on.
  void extend_gram(Eigen::Index old) {
    const Eigen::Index m = static_cast<Eigen::Index>(active_.size());
    ensure_gram_capacity(m);
    for (Eigen::Index a = old; a < m; ++a) {
      const Eigen::Index j = active_[a];
      column_moments(j);
      const double tsum = x_.centered(j, v_, xm_(j), tmp_);  // tmp = v (x_j - m_j); sum(tmp) = 0 when centring
      for (Eigen::Index b = 0; b < a; ++b) {
        const double gab = x_.gram_dot(tmp_, tsum, active_[b]);
        G_(a, b) = gab;
        G_(b, a) = gab;
      }
      G_(a, a) = xv_(j);
    }
  }

  void add_xbeta(const Eigen::VectorXd& beta, Eigen::VectorXd& eta) const {
    double shift = 0.0;
    for (Eigen::Index j = 0; j < p_; ++j)
      if (beta(j) != 0.0) x_.axpy(beta(j), j, eta, shift);
    x_.finish(eta, shift);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Binomial / poisson: proximal Newton with step halving.
  bool irls(const VecRef& w, const VecRef& pf, double lambda, double lambda_prev, Fit& fit) {
    double f_old = objective(w, pf, lambda, fit.a0, fit.beta);
    Eigen::VectorXd beta_new;
    for (int it = 0; it < ctrl_.max_outer; ++it) {
      fit.outer = it + 1;
      init_eta(fit.a0);
      add_xbeta(fit.beta, eta_);
      if (family_ == Family::binomial) {
        for (Eigen::Index i = 0; i < n_; ++i) {
          const double mu = expit(eta_(i));
          const double h = std::max(mu * (1.0 - mu), 1e-10);
          v_(i) = w(i) * h;
          z_(i) = eta_(i) - off(i) + (y_(i) - mu) / h;
        }
      } else {  // poisson: working weight mu (floored), rows of weight 0 left out (their mu may overflow)
        for (Eigen::Index i = 0; i < n_; ++i) {
          if (w(i) == 0.0) {
            v_(i) = 0.0;
            z_(i) = eta_(i) - off(i);
            continue;
          }
          const double mu = std::exp(eta_(i));
          const double h = std::max(mu, 1e-10);
          v_(i) = w(i) * h;
          z_(i) = eta_(i) - off(i) + (y_(i) - mu) / h;
        }
      }
      if (!(v_.sum() > 0)) throw std::invalid_argument("weights sum to zero");
      double a0_new = fit.a0;
      beta_new = fit.beta;
      wls(pf, lambda, it == 0 ? lambda_prev : lambda, a0_new, beta_new);
      if (sweeps_ >= ctrl_.max_iter) return false;
      // step halving on the true objective
      double t = 1.0, f_new = objective(w, pf, lambda, a0_new, beta_new);
      const double a0_old = fit.a0;
      while (!(f_new <= f_old + 1e-12 * std::abs(f_old)) && t > 1e-8) {
        t *= 0.5;
        a0_new = a0_old + t * (a0_new - a0_old);
        beta_new = fit.beta + t * (beta_new - fit.beta);
        f_new = objective(w, pf, lambda, a0_new, beta_new);
      }
      double change = 0.0;  // largest change of the linear predictor over observations with weight
      {
        tmp_.setConstant(a0_new - fit.a0);
        double shift = 0.0;
        for (Eigen::Index j = 0; j < p_; ++j) {
          const double d = beta_new(j) - fit.beta(j);
          if (d != 0.0) x_.axpy(d, j, tmp_, shift);
        }
        x_.finish(tmp_, shift);
        for (Eigen::Index i = 0; i < n_; ++i)
          if (w(i) > 0) change = std::max(change, std::abs(tmp_(i)));
      }
      fit.a0 = a0_new;
      fit.beta.swap(beta_new);
      const bool small_f = std::abs(f_old - f_new) <= 1e-13 * (std::abs(f_new) + 1e-300);
      f_old = f_new;
      // Newton converges quadratically: a step below 1e-10 in every linear predictor leaves an error far below it
      if (change <= 1e-10 || (small_f && change <= 1e-7)) return true;
      if (!std::isfinite(f_new)) throw std::runtime_error("GLM fit diverged (non-finite objective)");
    }
    return false;
  }

  void check_args(const VecRef& w, const VecRef& pf, double lambda) const {
    if (w.size() != n_) throw std::invalid_argument("weights must have length n");
    if (pf.size() != p_) throw std::invalid_argument("penalty weights must have length p");
    if (!(lambda >= 0.0) || !std::isfinite(lambda)) throw std::invalid_argument("lambda must be finite and >= 0");
  }

  Design x_;
  VecRef y_;
  Family family_;
  double alpha_;
  Control ctrl_;
  Eigen::Index n_, p_;
  int sweeps_ = 0;
  parallel::StopToken stop_;  // a stop request (Ctrl-C) ends the solve after the current sweep, unconverged
  bool grad_fresh_ = false;
  bool naive_ = false;  // this solve's working set uses naive (residual) updates, not the Gram matrix
  bool has_offset_ = false, has_bounds_ = false;
  std::vector<Eigen::Index> active_;
  std::vector<int> pos_;
  Eigen::VectorXd xm_, xv_, g_, ga_, r_, vr_, v_, z_, eta_, tmp_, sv_, nvs_, nmu_;
  Eigen::MatrixXd G_, blk_, H_;
  Eigen::VectorXd rhs_, delta_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  std::vector<int> sidx_;
  std::vector<std::pair<double, Eigen::Index>> cand_;
};

using ElasticNet = BasicElasticNet<DenseDesign>;              // dense columns (standardized by the caller)
using SparseElasticNet = BasicElasticNet<SparseDesign>;       // compressed columns, standardization implicit

}  // namespace cd
}  // namespace scalebayes
