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

// Smallest lambda at which beta = 0 solves the problem (intercept-only fit). For alpha < 1e-3 the value for
// alpha = 1e-3 is returned, as glmnet does, since a pure ridge never zeroes coefficients.
inline double lambda_max(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, Family family,
                         double alpha, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                         bool intercept = true) {
  const double W = w.sum();
  if (!(W > 0)) throw std::invalid_argument("weights sum to zero");
  double mu0 = 0.0;
  if (intercept) mu0 = w.dot(y) / W;
  else if (family == Family::binomial) mu0 = 0.5;
  Eigen::VectorXd r = w.cwiseProduct((y.array() - mu0).matrix());
  Eigen::VectorXd g = x.transpose() * r;
  const double a = std::max(alpha, 1e-3);
  double lm = 0.0;
  for (Eigen::Index j = 0; j < g.size(); ++j)
    if (pf(j) > 0) lm = std::max(lm, std::abs(g(j)) / (a * pf(j)));
  return lm;
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
inline PathResult fit_path(ElasticNet& solver, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
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
  double lambda_min = 0, lambda_1se = 0;
  int index_min = 0, index_1se = 0;
  parallel::RunStatus status;  // folds finished; interrupted = the monitor asked to stop (then nothing else is set)
};

// Per-observation loss used for CV: squared error (gaussian) or binomial deviance (probabilities clipped to
// [1e-5, 1 - 1e-5] as glmnet does).
inline double cv_loss(Family family, double y, double eta) {
  if (family == Family::gaussian) return (y - eta) * (y - eta);
  double mu = expit(eta);
  mu = std::min(std::max(mu, 1e-5), 1.0 - 1e-5);
  return -2.0 * (y * std::log(mu) + (1.0 - y) * std::log(1.0 - mu));
}

// K-fold CV over the path lambda (decreasing). foldid holds 0..K-1 per row. Folds run in parallel on run.threads
// threads (no randomness: run.seed is not used); monitor(folds_done) may stop the run (status.interrupted).
inline CvResult cross_validate(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, Family family,
                               double alpha, Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                               const Eigen::VectorXi& foldid, const Eigen::VectorXd& lambda, const Control& ctrl,
                               const parallel::RunSettings& run, const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index n = x.rows(), L = lambda.size();
  if (foldid.size() != n) throw std::invalid_argument("foldid must have length n");
  const int K = foldid.maxCoeff() + 1;
  if (K < 2 || foldid.minCoeff() < 0) throw std::invalid_argument("need at least 2 folds numbered from 0");
  const double W = w.sum();
  Eigen::MatrixXd err(n, L);  // per-observation held-out loss
  err.setZero();
  std::vector<double> wfold(K, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) wfold[foldid(i)] += w(i);

  auto body = [&](std::size_t k, int, const parallel::StopToken& stop) {
    Eigen::VectorXd wk = w;
    for (Eigen::Index i = 0; i < n; ++i)
      if (foldid(i) == static_cast<int>(k)) wk(i) = 0.0;
    const double scale = wk.sum() / W;
    if (!(scale > 0)) throw std::invalid_argument("a cross-validation fold leaves no training data");
    ElasticNet solver(x, y, family, alpha, ctrl);
    solver.set_stop(stop);
    const PathResult path = fit_path(solver, wk, pf, lambda * scale, stop);
    if (path.stopped) return;
    for (Eigen::Index i = 0; i < n; ++i) {
      if (foldid(i) != static_cast<int>(k)) continue;
      for (Eigen::Index l = 0; l < L; ++l) {
        const double eta = path.a0(l) + x.row(i).dot(path.beta.col(l));
        err(i, l) = cv_loss(family, y(i), eta);
      }
    }
  };
  CvResult out;
  out.status = parallel::run_parallel(static_cast<std::size_t>(K), run.threads, body, monitor);
  if (out.status.interrupted) return out;
  out.lambda = lambda;
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
  return out;
}

}  // namespace cd
}  // namespace scalebayes
