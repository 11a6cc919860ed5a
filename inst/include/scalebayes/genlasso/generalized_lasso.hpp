// scalebayes/genlasso/generalized_lasso.hpp -- the weighted generalized lasso with a user's sparse D: a
// warm-started lambda path (dual interior point on SparseOp) and lambda_max (ridge solve of the dual normal
// equations with iterative refinement, then the exact linear program of lambda_max_lp.hpp).
//
//   minimize_beta  1/2 sum_i w_i (y_i - beta_i)^2 + lambda sum_j w0_j |(D beta)_j|
//
// Interrupts enter as a callback: stop() is called between lambda values (path) and once per Newton step
// (lambda_max's linear program); returning true ends the run, which then reports interrupted = true.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "dual_ip.hpp"
#include "ip_types.hpp"
#include "lambda_max_lp.hpp"
#include "operators.hpp"

namespace scalebayes {
namespace genlasso {

// Solutions along the lambda sequence, each solve warm-started (when warm) from the previous dual solution
// scaled by the ratio of the lambdas. w: observation weights (> 0); w0: penalty weights (length 1 or m).
inline PathResult generalized_lasso_path(const Eigen::SparseMatrix<double>& D, const Eigen::VectorXd& y,
                                           const Eigen::VectorXd& w, const Eigen::VectorXd& w0,
                                           const Eigen::VectorXd& lambdas, const IPControl& ctl, bool warm,
                                           const StopFn& stop = StopFn()) {
  const int m = static_cast<int>(D.rows()), n = static_cast<int>(D.cols());
  if (y.size() != n || w.size() != n) throw std::invalid_argument("y and weights must have ncol(D) entries");
  if (w0.size() != 1 && w0.size() != m) throw std::invalid_argument("penalty weights must have length 1 or nrow(D)");
  SparseOp op(D);
  const Eigen::VectorXd winv = w.cwiseInverse();
  op.set_weights(winv.data());
  const int L = static_cast<int>(lambdas.size());
  PathResult out(n, m, L);
  Eigen::VectorXd lam(m), uprev;
  for (int l = 0; l < L; ++l) {
    if (stop && stop()) {
      out.interrupted = true;
      break;
    }
    for (int j = 0; j < m; ++j) lam[j] = lambdas[l] * (w0.size() == 1 ? w0[0] : w0[j]);
    Eigen::VectorXd ws;
    const Eigen::VectorXd* start = nullptr;
    if (warm && l > 0) {
      ws = uprev * (lambdas[l - 1] > 0 ? lambdas[l] / lambdas[l - 1] : 0.0);
      start = &ws;
    }
    IPResult r = dual_ip(op, y, w, lam, ctl, start, true);
    out.store(l, r);
    uprev = r.u;
  }
  return out;
}

struct GenLassoLambdaMax {
  double lambda_max = 0;   // exact (the linear program's certified upper bound)
  double lower = 0;        // the linear program's lower bound
  double rel_gap = 0;      // (lambda_max - lower) / lambda_max
  double ridge_bound = 0;  // max_j |u_j| / w0_j of the ridge dual (exact when D has full row rank)
  double residual = 0;     // relative residual of the dual normal equations (large: D W^-1 D' too ill-conditioned)
  Eigen::VectorXd u;       // the dual attaining lambda_max
  bool interrupted = false;
};

// lambda_max of the generalized lasso: a feasible dual from D W^{-1} D' u = D y (a tiny ridge makes it unique
// when D has more rows than rank), then the exact value min ||u / w0||_inf over D'u = D'u0 (lambda_max_lp.hpp).
inline GenLassoLambdaMax generalized_lasso_lambda_max(const Eigen::SparseMatrix<double>& D, const Eigen::VectorXd& y,
                                                      const Eigen::VectorXd& w, const Eigen::VectorXd& w0,
                                                      const StopFn& stop = StopFn()) {
  const int m = static_cast<int>(D.rows());
  const Eigen::VectorXd winv = w.cwiseInverse();
  const Eigen::SparseMatrix<double> G0 = D * winv.asDiagonal() * D.transpose();
  double dmax = 0.0;
  for (int j = 0; j < m; ++j) dmax = std::max(dmax, G0.coeff(j, j));
  Eigen::SparseMatrix<double> I(m, m);
  I.setIdentity();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(G0 + (1e-10 * std::max(dmax, 1e-300)) * I);
  if (ldlt.info() != Eigen::Success) throw std::runtime_error("factorization of D W^-1 D' failed");
  const Eigen::VectorXd Dy = D * y;
  Eigen::VectorXd u = ldlt.solve(Dy);
  // iterative refinement against the unridged G0: the ridge alone biases u by about 1e-10 cond(G) (measured
  // 0.2% in lambda_max for second differences at n = 200)
  double rprev = std::numeric_limits<double>::infinity();
  for (int it = 0; it < 100; ++it) {
    const Eigen::VectorXd r = Dy - G0 * u;
    const double rn = r.cwiseAbs().maxCoeff();
    if (!(rn < 0.5 * rprev)) break;
    rprev = rn;
    u += ldlt.solve(r);
  }
  GenLassoLambdaMax out;
  // relative residual of the normal equations: large when D W^-1 D' is too ill-conditioned for double
  // precision (e.g. 4th differences as a generic matrix at n = 200, condition ~ n^8)
  out.residual = (Dy - G0 * u).cwiseAbs().maxCoeff() / std::max(Dy.cwiseAbs().maxCoeff(), 1e-300);
  // the ridge solution is one feasible dual: exact when D has full row rank, an upper bound otherwise; the
  // linear program gives the exact value in both cases
  out.ridge_bound = lambda_max_from_dual(u, w0);
  LambdaMaxLP lp = lambda_max_lp(D, u, w0, 1e-12, 200, stop);
  out.lambda_max = lp.lambda_max;
  out.lower = lp.lower;
  out.rel_gap = lp.rel_gap;
  out.u = lp.u;
  out.interrupted = lp.interrupted;
  return out;
}

}  // namespace genlasso
}  // namespace scalebayes
