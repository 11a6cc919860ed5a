// scalebayes/cd/glmnet_path.hpp -- glmnet's DEFAULT gaussian lasso path and coef(fit, s = ) as glmnet computes
// them, for reproducing published numbers that came from `glmnet(x, y, weights, penalty.factor,
// intercept = FALSE)` followed by `coef(fit, s = lambda)` (the WBB paper's code, see gibbs/compare.hpp).
//
// The rules emulated (glmnet 4.1):
//   * observation weights normalized to sum 1 (the loss is sum_i w_i (y_i - x_i'b)^2 / (2 sum w));
//   * standardize = TRUE with intercept = FALSE: column j divided by its weighted (population) SD around the
//     weighted mean, but NOT centred; coefficients mapped back;
//   * penalty factors rescaled to sum to the number of columns;
//   * lambda path: lambda_max = max_j |sum_i w_i x_ij y_i / sum w| / pf_j over pf_j > 0 (standardized x),
//     `nlambda` log-spaced values down to lambda_max * ratio, ratio = 0.01 if nobs < nvars else 1e-4;
//   * early stop (only for a computed path, not for user lambdas): from the 5th value on, the path ends at the
//     first value whose explained-deviance fraction R^2 (1 - RSS_w / sum w y^2, intercept-free) gains less
//     than fdev = 1e-5 * R^2 over the previous value, or exceeds devmax = 0.999;
//   * coef(s = ): s is clamped to [min(path), max(path)] and the coefficients interpolated linearly in lambda
//     between the two neighbouring path values (so beyond the end of the path, the last solution).
// Solutions are exact (the package's coordinate-descent solver at ctrl.tol), not glmnet's thresh = 1e-7 ones.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"

namespace scalebayes {
namespace cd {

struct GlmnetPathRule {
  int nlambda = 100;
  double ratio = -1.0;  // lambda.min.ratio; < 0: glmnet's default (0.01 if nobs < nvars else 1e-4)
  double fdev = 1e-5, devmax = 0.999;
  int mnlam = 5;
};

struct GlmnetPath {
  Eigen::VectorXd lambda;  // mean-scale lambdas actually on the path (glmnet's fit$lambda)
  Eigen::MatrixXd beta;    // p x L coefficients on the original scale of x (no intercept)
  bool early_stop = false; // the path ended before nlambda values by the deviance rule
};

// Fit glmnet's path for the gaussian lasso without intercept. w: observation weights (zeros drop rows, as a
// CV fold does); pf: penalty factors (>= 0, not all 0). user_lambda: if non-empty, these (decreasing,
// mean-scale) values instead of the default path, with no early stop. stop_at: if > 0, stop computing once a
// path value <= stop_at is reached (coef(s = stop_at) needs nothing below it; the result is then a prefix).
inline GlmnetPath glmnet_path(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y,
                              Eigen::Ref<const Eigen::VectorXd> w, Eigen::Ref<const Eigen::VectorXd> pf,
                              const Control& ctrl, const GlmnetPathRule& rule = GlmnetPathRule(),
                              const Eigen::VectorXd& user_lambda = Eigen::VectorXd(), double stop_at = -1.0) {
  const Eigen::Index n = x.rows(), p = x.cols();
  if (y.size() != n || w.size() != n || pf.size() != p) throw std::invalid_argument("glmnet_path: sizes differ");
  const double W = w.sum();
  if (!(W > 0)) throw std::invalid_argument("glmnet_path: weights sum to zero");
  const double pfsum = pf.sum();
  if (!(pfsum > 0)) throw std::invalid_argument("glmnet_path: penalty factors are all zero");
  Eigen::Index nobs = 0;
  for (Eigen::Index i = 0; i < n; ++i) nobs += w(i) > 0;
  const Eigen::VectorXd vp = pf * (static_cast<double>(p) / pfsum);
  Eigen::VectorXd xs(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    const double m = w.dot(x.col(j)) / W;
    const double v = w.dot((x.col(j).array() - m).square().matrix()) / W;
    xs(j) = v > 0 ? std::sqrt(v) : 1.0;
  }
  const Eigen::MatrixXd xz = x * xs.cwiseInverse().asDiagonal();
  Control c = ctrl;
  c.intercept = false;
  Eigen::VectorXd lam;
  const bool computed = user_lambda.size() == 0;
  if (computed) {
    const double lmax = lambda_max(xz, y, Family::gaussian, 1.0, w, vp, false) / W;
    const double ratio = rule.ratio > 0 ? rule.ratio : (nobs < p ? 1e-2 : 1e-4);
    lam = lambda_sequence(lmax, rule.nlambda, ratio);
  } else {
    lam = user_lambda;
  }
  const Eigen::Index L = lam.size();
  GlmnetPath out;
  out.beta.resize(p, L);
  ElasticNet solver(xz, y, Family::gaussian, 1.0, c);
  Fit fit;
  const double null_dev = w.dot(y.cwiseAbs2());
  double rsq_prev = 0.0, prev = -1.0;
  const int mnl = std::min(rule.mnlam, static_cast<int>(L));
  Eigen::Index used = 0;
  for (Eigen::Index l = 0; l < L; ++l) {
    const double ls = lam(l) * W;  // the solver's sum scale
    solver.solve(w, vp, ls, fit, prev < 0 ? ls : prev);
    prev = ls;
    out.beta.col(l) = fit.beta.cwiseQuotient(xs);
    used = l + 1;
    if (stop_at > 0 && lam(l) <= stop_at) break;
    if (!computed) continue;  // user lambdas: no early stop
    const double rsq = 1.0 - (w.array() * (y - xz * fit.beta).array().square()).sum() / null_dev;
    if (used >= mnl && (rsq - rsq_prev < rule.fdev * rsq || rsq > rule.devmax)) {
      out.early_stop = used < L;
      break;
    }
    rsq_prev = rsq;
  }
  out.lambda = lam.head(used);
  out.beta.conservativeResize(p, used);
  return out;
}

// coef(fit, s = s) of glmnet (exact = FALSE): clamp s to the path, interpolate linearly in lambda.
inline Eigen::VectorXd glmnet_coef(const GlmnetPath& path, double s) {
  const Eigen::Index L = path.lambda.size();
  if (L == 0) throw std::invalid_argument("glmnet_coef: empty path");
  if (L == 1 || s >= path.lambda(0)) return path.beta.col(0);
  if (s <= path.lambda(L - 1)) return path.beta.col(L - 1);
  Eigen::Index r = 1;
  while (path.lambda(r) > s) ++r;  // lambda(r - 1) > s >= lambda(r)
  const double lo = path.lambda(r), hi = path.lambda(r - 1);
  const double frac = (s - lo) / (hi - lo);
  return frac * path.beta.col(r - 1) + (1.0 - frac) * path.beta.col(r);
}

// cv.glmnet(x, y, intercept = FALSE, nfolds = K)$lambda.min with unit weights and penalty factors: the default
// path on all rows, each fold refitted on the other rows at those lambdas (its own standardization), mean
// squared held-out error over all rows, and the largest lambda attaining the minimum. foldid: 0..K-1 per row.
inline double glmnet_cv_lambda_min(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y,
                                   const Eigen::VectorXi& foldid, const Control& ctrl,
                                   const GlmnetPathRule& rule = GlmnetPathRule()) {
  const Eigen::Index n = x.rows(), p = x.cols();
  const int K = foldid.maxCoeff() + 1;
  const Eigen::VectorXd one = Eigen::VectorXd::Ones(n), pf = Eigen::VectorXd::Ones(p);
  const GlmnetPath full = glmnet_path(x, y, one, pf, ctrl, rule);
  const Eigen::Index L = full.lambda.size();
  Eigen::VectorXd cvm = Eigen::VectorXd::Zero(L);
  for (int k = 0; k < K; ++k) {
    Eigen::VectorXd wk = one;
    for (Eigen::Index i = 0; i < n; ++i)
      if (foldid(i) == k) wk(i) = 0.0;
    const GlmnetPath fp = glmnet_path(x, y, wk, pf, ctrl, rule, full.lambda);
    for (Eigen::Index i = 0; i < n; ++i) {
      if (foldid(i) != k) continue;
      for (Eigen::Index l = 0; l < L; ++l) {
        const double e = y(i) - x.row(i).dot(fp.beta.col(l));
        cvm(l) += e * e;
      }
    }
  }
  const double best = cvm.minCoeff();
  for (Eigen::Index l = 0; l < L; ++l)
    if (cvm(l) <= best) return full.lambda(l);  // decreasing path: the first is the largest
  return full.lambda(L - 1);
}

}  // namespace cd
}  // namespace scalebayes
