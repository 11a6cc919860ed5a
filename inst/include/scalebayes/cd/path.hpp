// scalebayes/cd/path.hpp -- lambda_max, regularization paths and K-fold cross-validation for ElasticNet.
//
// lambda is on the SUM scale of solver.hpp. Cross-validation holds out a fold by giving its rows weight zero
// (no copy of the data) and solves the training problem at lambda * W_train / W, so that the penalty per unit
// of data weight is the same in every fold and in the full fit (glmnet's convention in mean scale).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scalebayes/cd/solver.hpp"
#include "scalebayes/parallel/driver.hpp"

namespace scalebayes {
namespace cd {

// The fitted means of the intercept-only model (beta = 0; no intercept: eta = offset), with the offset of ctrl.
inline Eigen::VectorXd null_mean(Eigen::Ref<const Eigen::VectorXd> y, Family family, Eigen::Ref<const Eigen::VectorXd> w,
                                 const Control& ctrl) {
  const Eigen::Index n = y.size();
  const double W = w.sum();
  if (!(W > 0)) throw std::invalid_argument("weights sum to zero");
  const bool off = ctrl.offset.size() > 0;
  if (off && ctrl.offset.size() != n) throw std::invalid_argument("offset must have length n");
  Eigen::VectorXd mu(n);
  if (!off) {  // closed forms (unchanged from the offset-free engine)
    double mu0 = 0.0;
    if (ctrl.intercept) mu0 = w.dot(y) / W;
    else if (family == Family::binomial) mu0 = 0.5;
    else if (family == Family::poisson) mu0 = 1.0;
    mu.setConstant(mu0);
    return mu;
  }
  const Eigen::VectorXd& o = ctrl.offset;
  if (family == Family::gaussian) {
    const double m = ctrl.intercept ? w.dot(y - o) / W : 0.0;
    mu = o.array() + m;
  } else if (family == Family::poisson) {
    double c = 1.0;
    if (ctrl.intercept) {
      const double den = w.dot(o.array().exp().matrix());
      c = w.dot(y) / den;
    }
    mu = o.array().exp() * c;
  } else {
    double a0 = 0.0;
    if (ctrl.intercept) {  // solve sum_i w_i (y_i - expit(o_i + a0)) = 0 by safeguarded Newton
      const double yb = std::min(std::max(w.dot(y) / W, 1e-10), 1.0 - 1e-10);
      a0 = std::log(yb / (1.0 - yb));
      for (int it = 0; it < 200; ++it) {
        double f = 0.0, d = 0.0;
        for (Eigen::Index i = 0; i < n; ++i) {
          const double p = expit(o(i) + a0);
          f += w(i) * (y(i) - p);
          d += w(i) * p * (1.0 - p);
        }
        if (!(d > 0)) break;
        const double step = std::min(std::max(f / d, -5.0), 5.0);
        a0 += step;
        if (std::abs(step) < 1e-13 * (1.0 + std::abs(a0))) break;
      }
    }
    for (Eigen::Index i = 0; i < n; ++i) mu(i) = expit(o(i) + a0);
  }
  return mu;
}

// Smallest lambda at which beta = 0 solves the problem (intercept-only fit), with the offset and box limits of
// ctrl (a variable with lower = upper = 0 never enters; a one-sided box counts only the gradient into it). For
// alpha < 1e-3 the value for alpha = 1e-3 is returned, as glmnet does, since a pure ridge never zeroes
// coefficients.
// On any design of cd/design.hpp (the dense overload below keeps the old signature).
template <class Design>
inline double lambda_max_design(const Design& x, Eigen::Ref<const Eigen::VectorXd> y, Family family, double alpha,
                                Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                                const Control& ctrl) {
  const Eigen::VectorXd mu = null_mean(y, family, w, ctrl);
  Eigen::VectorXd r = w.cwiseProduct((y.array() - mu.array()).matrix());
  Eigen::VectorXd g;
  x.gradient(r, g);
  const double a = std::max(alpha, 1e-3);
  const bool box = ctrl.lower.size() == g.size() && ctrl.upper.size() == g.size();
  double lm = 0.0;
  for (Eigen::Index j = 0; j < g.size(); ++j) {
    if (!(pf(j) > 0)) continue;
    double gj = std::abs(g(j));
    if (box) {
      gj = 0.0;
      if (ctrl.upper(j) > 0) gj = std::max(gj, g(j));
      if (ctrl.lower(j) < 0) gj = std::max(gj, -g(j));
    }
    lm = std::max(lm, gj / (a * pf(j)));
  }
  return lm;
}

inline double lambda_max(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, Family family,
                         double alpha, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                         const Control& ctrl) {
  return lambda_max_design(DenseDesign(x), y, family, alpha, w, pf, ctrl);
}

inline double lambda_max(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, Family family,
                         double alpha, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                         bool intercept = true) {
  Control c;
  c.intercept = intercept;
  return lambda_max(x, y, family, alpha, w, pf, c);
}

// Log-spaced sequence from lmax down to lmax * ratio.
inline Eigen::VectorXd lambda_sequence(double lmax, int nlambda, double ratio) {
  if (nlambda < 1) throw std::invalid_argument("nlambda must be >= 1");
  Eigen::VectorXd lam(nlambda);
  if (nlambda == 1 || !(lmax > 0)) {
    lam.setConstant(lmax);
    return lam;
  }
  const double step = std::log(ratio) / (nlambda - 1);
  for (int l = 0; l < nlambda; ++l) lam(l) = lmax * std::exp(step * l);
  return lam;
}

struct PathResult {
  Eigen::VectorXd lambda, a0, kkt;
  Eigen::MatrixXd beta;  // p x L
  Eigen::VectorXi iterations;
  bool converged = true;
  bool stopped = false;  // the stop token ended the path early (later columns are unset)
};

// Solve along a decreasing lambda sequence with warm starts and the sequential strong rule. A stop request
// (Ctrl-C through the driver) is honoured between lambda values.
template <class Design>
inline PathResult fit_path(BasicElasticNet<Design>& solver, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                           const Eigen::VectorXd& lambda, const parallel::StopToken& stop = parallel::StopToken()) {
  const Eigen::Index L = lambda.size(), p = solver.p();
  PathResult out;
  out.lambda = lambda;
  out.a0.resize(L);
  out.kkt.resize(L);
  out.beta.resize(p, L);
  out.iterations.resize(L);
  Fit fit;
  double prev = -1.0;
  for (Eigen::Index l = 0; l < L; ++l) {
    if (stop.stop_requested()) {
      out.stopped = true;
      return out;
    }
    if (l > 0 && lambda(l) > lambda(l - 1)) throw std::invalid_argument("lambda must be decreasing along a path");
    solver.solve(w, pf, lambda(l), fit, prev < 0 ? lambda(l) : prev);
    out.a0(l) = fit.a0;
    out.beta.col(l) = fit.beta;
    out.kkt(l) = fit.kkt;
    out.iterations(l) = fit.iterations;
    out.converged = out.converged && fit.converged;
    prev = lambda(l);
  }
  return out;
}

struct CvResult {
  Eigen::VectorXd lambda, cvm, cvsd;
  Eigen::MatrixXd predmat;  // ctrl.cv_measure == 4 (auc): the held-out linear predictors (n x L) instead of cvm
  double lambda_min = 0, lambda_1se = 0;
  int index_min = 0, index_1se = 0;
  parallel::RunStatus status;  // folds finished; interrupted = the monitor asked to stop (then nothing else is set)
};

// Per-observation loss used for CV, as glmnet's cv.glmnet(type.measure = ): measure 0 deviance (gaussian:
// squared error; binomial: deviance with probabilities clipped to [1e-5, 1 - 1e-5]; poisson: 2 [y log(y / mu) -
// (y - mu)]), 1 squared error, 2 absolute error (binomial: glmnet's two-column forms, 2 (y - p)^2 and 2 |y - p|),
// 3 misclassification (binomial: p > 0.5 predicts 1).
inline double cv_loss(Family family, double y, double eta, int measure = 0) {
  if (family == Family::gaussian) return measure == 2 ? std::abs(y - eta) : (y - eta) * (y - eta);
  if (family == Family::poisson) {
    const double mu = std::exp(eta);
    if (measure == 1) return (y - mu) * (y - mu);
    if (measure == 2) return std::abs(y - mu);
    const double devy = y > 0 ? y * std::log(y) - y : 0.0;
    return 2.0 * (devy - (y * eta - mu));
  }
  double mu = expit(eta);
  if (measure == 1) return 2.0 * (y - mu) * (y - mu);
  if (measure == 2) return 2.0 * std::abs(y - mu);
  if (measure == 3) return y == 1.0 ? (mu <= 0.5 ? 1.0 : 0.0) : (mu > 0.5 ? 1.0 : 0.0);
  mu = std::min(std::max(mu, 1e-5), 1.0 - 1e-5);
  return -2.0 * (y * std::log(mu) + (1.0 - y) * std::log(1.0 - mu));
}

// The CV curve from the per-observation held-out losses err (n x L; weights w, folds foldid with fold weights
// wfold): glmnet's cvm (weighted mean) and cvsd (weighted sd of the fold means / sqrt(K - 1)), the indices of the
// minimum and of the largest lambda within one sd of it (1se rule). Shared by cross_validate() and
// cross_validate_multinomial() (multinomial.hpp).
inline void summarize_cv(const Eigen::MatrixXd& err, Eigen::Ref<const Eigen::VectorXd> w, const Eigen::VectorXi& foldid,
                         const std::vector<double>& wfold, const Eigen::VectorXd& lambda, CvResult& out) {
  const Eigen::Index n = err.rows(), L = err.cols();
  const int K = static_cast<int>(wfold.size());
  const double W = w.sum();
  out.cvm.resize(L);
  out.cvsd.resize(L);
  for (Eigen::Index l = 0; l < L; ++l) {
    std::vector<double> fm(K, 0.0);
    double tot = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      fm[foldid(i)] += w(i) * err(i, l);
      tot += w(i) * err(i, l);
    }
    const double cvm = tot / W;
    double ss = 0.0;
    for (int k = 0; k < K; ++k) {
      if (wfold[k] <= 0) continue;
      const double m = fm[k] / wfold[k];
      ss += wfold[k] * (m - cvm) * (m - cvm);
    }
    out.cvm(l) = cvm;
    out.cvsd(l) = std::sqrt(ss / W / (K - 1));
  }
  Eigen::Index imin = 0;
  out.cvm.minCoeff(&imin);
  const double bound = out.cvm(imin) + out.cvsd(imin);
  Eigen::Index i1 = imin;
  for (Eigen::Index l = 0; l <= imin; ++l)
    if (out.cvm(l) <= bound) {
      i1 = l;
      break;
    }
  out.index_min = static_cast<int>(imin);
  out.index_1se = static_cast<int>(i1);
  out.lambda_min = lambda(imin);
  out.lambda_1se = lambda(i1);
}

// K-fold CV over the path lambda (decreasing). foldid holds 0..K-1 per row. Folds run in parallel on run.threads
// threads (no randomness: run.seed is not used); monitor(folds_done) may stop the run (status.interrupted).
// The held-out linear predictors a0 + x_i' beta of fold k's rows into eta (dense: row products of those rows
// only; sparse: all rows by column updates, O(nnz of the support + n)).
inline void fold_eta(const DenseDesign& x, const Eigen::VectorXi& foldid, int k, double a0, const Eigen::VectorXd& beta,
                     Eigen::VectorXd& eta) {
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    if (foldid(i) == k) eta(i) = a0 + x.row_dot(i, beta);
}
inline void fold_eta(const SparseDesign& x, const Eigen::VectorXi&, int, double a0, const Eigen::VectorXd& beta,
                     Eigen::VectorXd& eta) {
  eta.setConstant(a0);
  double shift = 0.0;
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    if (beta(j) != 0.0) x.axpy(beta(j), j, eta, shift);
  x.finish(eta, shift);
}

template <class Design>
inline CvResult cross_validate_design(const Design& x, Eigen::Ref<const Eigen::VectorXd> y, Family family, double alpha,
                                      Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                                      const Eigen::VectorXi& foldid, const Eigen::VectorXd& lambda, const Control& ctrl,
                                      const parallel::RunSettings& run,
                                      const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index n = x.rows(), L = lambda.size();
  if (foldid.size() != n) throw std::invalid_argument("foldid must have length n");
  const int K = foldid.maxCoeff() + 1;
  if (K < 2 || foldid.minCoeff() < 0) throw std::invalid_argument("need at least 2 folds numbered from 0");
  const double W = w.sum();
  const bool auc = ctrl.cv_measure == 4;
  Eigen::MatrixXd err(n, L);  // per-observation held-out loss (auc: held-out linear predictor)
  err.setZero();
  std::vector<double> wfold(K, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) wfold[foldid(i)] += w(i);

  auto body = [&](std::size_t k, int, const parallel::StopToken& stop) {
    Eigen::VectorXd wk = w;
    for (Eigen::Index i = 0; i < n; ++i)
      if (foldid(i) == static_cast<int>(k)) wk(i) = 0.0;
    const double scale = wk.sum() / W;
    if (!(scale > 0)) throw std::invalid_argument("a cross-validation fold leaves no training data");
    BasicElasticNet<Design> solver(x, y, family, alpha, ctrl);
    solver.set_stop(stop);
    const PathResult path = fit_path(solver, wk, pf, lambda * scale, stop);
    if (path.stopped) return;
    Eigen::VectorXd etak(n), bl(path.beta.rows());
    for (Eigen::Index l = 0; l < L; ++l) {
      bl = path.beta.col(l);
      fold_eta(x, foldid, static_cast<int>(k), path.a0(l), bl, etak);
      for (Eigen::Index i = 0; i < n; ++i) {
        if (foldid(i) != static_cast<int>(k)) continue;
        const double oi = ctrl.offset.size() == n ? ctrl.offset(i) : 0.0;
        err(i, l) = auc ? oi + etak(i) : cv_loss(family, y(i), oi + etak(i), ctrl.cv_measure);
      }
    }
  };
  CvResult out;
  out.status = parallel::run_parallel(static_cast<std::size_t>(K), run.threads, body, monitor);
  if (out.status.interrupted) return out;
  out.lambda = lambda;
  if (auc) {  // the caller computes the per-fold AUC from the held-out linear predictors
    out.predmat.swap(err);
    return out;
  }
  summarize_cv(err, w, foldid, wfold, lambda, out);
  return out;
}

inline CvResult cross_validate(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, Family family,
                               double alpha, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                               const Eigen::VectorXi& foldid, const Eigen::VectorXd& lambda, const Control& ctrl,
                               const parallel::RunSettings& run, const parallel::Monitor& monitor = parallel::Monitor()) {
  return cross_validate_design(DenseDesign(x), y, family, alpha, w, pf, foldid, lambda, ctrl, run, monitor);
}

}  // namespace cd
}  // namespace scalebayes
