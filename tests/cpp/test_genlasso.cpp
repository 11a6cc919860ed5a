// Engine unit tests for genlasso/: difference operators, the banded kernels (Givens least squares,
// dual normal equations) against dense Eigen solves, the exact fused-lasso DP against a brute-force reference,
// and the solvers' certificates and stop callbacks.
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cmath>
#include <random>
#include <vector>

#include "check.hpp"
#include "scalebayes/genlasso/banded_ls.hpp"
#include "scalebayes/genlasso/difference.hpp"
#include "scalebayes/genlasso/dual_path.hpp"
#include "scalebayes/genlasso/dual_normal_band.hpp"
#include "scalebayes/genlasso/fused_dp.hpp"
#include "scalebayes/genlasso/generalized_lasso.hpp"
#include "scalebayes/genlasso/trend_filter.hpp"

namespace gl = scalebayes::genlasso;
using Eigen::MatrixXd;
using Eigen::VectorXd;

static VectorXd uneven_x(int n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.2, 1.8);
  VectorXd x(n);
  double t = 0;
  for (int i = 0; i < n; ++i) x[i] = (t += u(g));
  return x;
}
static VectorXd randn(int n, unsigned seed, double sd = 1.0) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> z(0.0, sd);
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = z(g);
  return v;
}
static VectorXd rexp(int n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::exponential_distribution<double> e(1.0);
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = e(g);
  return v;
}
static MatrixXd dense(const gl::BandedD& D) {
  MatrixXd M = MatrixXd::Zero(D.m, D.n);
  for (int i = 0; i < D.m; ++i)
    for (int l = 0; l < D.width; ++l) M(i, i + l) = D.at(i, l);
  return M;
}
// D^(x,k+1) by its definition: D^(x,1) = first differences, D^(x,k+1) = D^(1) diag(k / (x_{i+k} - x_i)) D^(x,k)
static MatrixXd dense_definition(const VectorXd& x, int k) {
  const int n = static_cast<int>(x.size());
  auto first = [](int rows) {
    MatrixXd D1 = MatrixXd::Zero(rows, rows + 1);
    for (int i = 0; i < rows; ++i) {
      D1(i, i) = -1;
      D1(i, i + 1) = 1;
    }
    return D1;
  };
  MatrixXd D = first(n - 1);
  for (int q = 1; q <= k; ++q) {
    VectorXd s(n - q);
    for (int i = 0; i < n - q; ++i) s[i] = q / (x[i + q] - x[i]);
    D = first(n - q - 1) * s.asDiagonal() * D;
  }
  return D;
}
static double rel_err(const MatrixXd& a, const MatrixXd& b) { return (a - b).norm() / std::max(b.norm(), 1e-300); }

TEST(difference_integer_x_is_binomial) {
  for (int k = 0; k <= 3; ++k) {
    VectorXd x(12);
    for (int i = 0; i < 12; ++i) x[i] = i + 1;
    const gl::BandedD D = gl::make_difference(x, k);
    CHECK(D.m == 12 - k - 1 && D.width == k + 2);
    for (int l = 0; l <= k + 1; ++l) {
      double binom = 1;
      for (int q = 0; q < l; ++q) binom = binom * (k + 1 - q) / (q + 1);
      const double want = ((k + 1 - l) % 2 ? -1.0 : 1.0) * binom;
      CHECK_NEAR(D.at(3, l), want, 1e-12);
    }
  }
}

TEST(difference_matches_definition_and_products) {
  for (int k = 0; k <= 3; ++k) {
    const VectorXd x = uneven_x(40, 10 + k);
    const gl::BandedD D = gl::make_difference(x, k);
    const MatrixXd M = dense(D), R = dense_definition(x, k);
    CHECK(rel_err(M, R) < 1e-12);
    const VectorXd v = randn(40, 3), u = randn(D.m, 4);
    VectorXd dv(D.m), dtu(40);
    D.apply(v.data(), dv.data());
    D.apply_t(u.data(), dtu.data());
    CHECK(rel_err(dv, M * v) < 1e-13);
    CHECK(rel_err(dtu, M.transpose() * u) < 1e-13);
    // the polynomials of degree k are its null space
    VectorXd p(40), dp(D.m);
    for (int i = 0; i < 40; ++i) p[i] = std::pow((x[i] - x[0]) / (x[39] - x[0]), k) - 0.5;
    D.apply(p.data(), dp.data());
    CHECK(dp.cwiseAbs().maxCoeff() < 1e-9 * M.cwiseAbs().maxCoeff());
    // D'u = v solved by forward substitution recovers u; row norms
    const VectorXd u2 = gl::solve_dt(D, M.transpose() * u);
    CHECK(rel_err(u2, u) < 1e-8);
    CHECK(rel_err(gl::row_norms(D), M.rowwise().norm()) < 1e-14);
  }
  CHECK_THROWS(gl::make_difference(VectorXd::LinSpaced(3, 0, 1), 3), std::invalid_argument);
}

// BandedLS: min ||diag(sw) x - c1||^2 + ||diag(sd) D x - c2||^2 with stiff row weights (sd over 8 decades)
template <class T>
static void check_banded_ls(int k, double tol) {
  const int n = 60;
  const VectorXd x = uneven_x(n, 20 + k);
  const gl::BandedD D = gl::make_difference(x, k);
  const VectorXd sw = rexp(n, 1).array() + 0.1;
  VectorXd sd(D.m);
  for (int j = 0; j < D.m; ++j) sd[j] = std::pow(10.0, -4.0 + 8.0 * j / (D.m - 1));
  const VectorXd c1 = randn(n, 5), c2 = randn(D.m, 6), c1b = randn(n, 7), c2b = randn(D.m, 8);
  MatrixXd A(n + D.m, n);
  A << MatrixXd(sw.asDiagonal()), sd.asDiagonal() * dense(D);
  auto ref = [&](const VectorXd& a, const VectorXd& b) {
    VectorXd rhs(n + D.m);
    rhs << a, b;
    return VectorXd(A.colPivHouseholderQr().solve(rhs));
  };
  using VT = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  const VT swt = sw.cast<T>(), sdt = sd.cast<T>(), c1t = c1.cast<T>(), c2t = c2.cast<T>();
  VT out(n);
  gl::BandedLS<T> ls;
  ls.solve(D, swt.data(), sdt.data(), c1t.data(), c2t.data(), out.data());
  CHECK(rel_err(out.template cast<double>(), ref(c1, c2)) < tol);
  const VT c1bt = c1b.cast<T>(), c2bt = c2b.cast<T>();
  ls.resolve(D.m, c1bt.data(), c2bt.data(), out.data());  // replays the recorded rotations
  CHECK(rel_err(out.template cast<double>(), ref(c1b, c2b)) < tol);
}

TEST(givens_banded_least_squares_vs_dense) {
  for (int k = 0; k <= 3; ++k) {
    check_banded_ls<double>(k, 1e-9);
    check_banded_ls<long double>(k, 1e-9);
  }
}

// DualNormalBand: W db + D' du = -r1, D db - Theta du = -r2 (the primal interior point's Newton system)
template <class T>
static void check_dual_normal(int k) {
  const int n = 50;
  const VectorXd x = uneven_x(n, 30 + k);
  const gl::BandedD D = gl::make_difference(x, k);
  const VectorXd w = rexp(n, 2).array() + 0.05;
  VectorXd th(D.m);
  for (int j = 0; j < D.m; ++j) th[j] = std::pow(10.0, -3.0 + 6.0 * ((j * 7) % D.m) / D.m);
  const VectorXd r1 = randn(n, 9), r2 = randn(D.m, 10);
  const MatrixXd M = dense(D);
  MatrixXd K = MatrixXd::Zero(n + D.m, n + D.m);
  K.topLeftCorner(n, n) = w.asDiagonal();
  K.topRightCorner(n, D.m) = M.transpose();
  K.bottomLeftCorner(D.m, n) = M;
  K.bottomRightCorner(D.m, D.m) = -MatrixXd(th.asDiagonal());
  VectorXd rhs(n + D.m);
  rhs << -r1, -r2;
  const VectorXd sol = K.fullPivLu().solve(rhs);
  gl::DualNormalBandT<T> q;
  q.prepare(D, w.data());
  q.factor(th.data());
  q.set_r1(r1.data());
  VectorXd du(D.m), db(n);
  q.solve_neg(r2.data(), du.data());
  q.back_substitute(du.data(), db.data());
  CHECK(rel_err(du, sol.tail(D.m)) < 1e-8);
  CHECK(rel_err(db, sol.head(n)) < 1e-8);
}

TEST(dual_normal_band_vs_dense_kkt) {
  for (int k = 0; k <= 1; ++k) {
    check_dual_normal<double>(k);
    check_dual_normal<long double>(k);
  }
}

// Brute force for the weighted fused lasso: for every pattern of jumps s_j in {-1, 0, +1} the objective
// restricted to it is a quadratic minimized in closed form (segment means shifted by the penalty's gradient);
// the optimum is the best of these candidates (it is the candidate of its own pattern).
static double fused_objective(const VectorXd& y, const VectorXd& w, const VectorXd& lam, const VectorXd& b) {
  double f = 0;
  for (int i = 0; i < y.size(); ++i) f += 0.5 * w[i] * (y[i] - b[i]) * (y[i] - b[i]);
  for (int j = 0; j < lam.size(); ++j) f += lam[j] * std::abs(b[j + 1] - b[j]);
  return f;
}
static VectorXd fused_brute(const VectorXd& y, const VectorXd& w, const VectorXd& lam) {
  const int n = static_cast<int>(y.size()), m = n - 1;
  int patterns = 1;
  for (int j = 0; j < m; ++j) patterns *= 3;
  VectorXd best(n), b(n);
  double fbest = INFINITY;
  std::vector<int> s(m);
  for (int p = 0; p < patterns; ++p) {
    for (int j = 0, q = p; j < m; ++j, q /= 3) s[j] = q % 3 - 1;
    for (int i0 = 0; i0 < n;) {
      int i1 = i0;
      while (i1 < m && s[i1] == 0) ++i1;  // segment i0..i1
      double sw = 0, swy = 0;
      for (int i = i0; i <= i1; ++i) {
        sw += w[i];
        swy += w[i] * y[i];
      }
      if (i0 > 0) swy -= lam[i0 - 1] * s[i0 - 1];  // jump into the segment: + lam s (b_i0 - b_{i0-1})
      if (i1 < m) swy += lam[i1] * s[i1];          // jump out of it
      for (int i = i0; i <= i1; ++i) b[i] = swy / sw;
      i0 = i1 + 1;
    }
    const double f = fused_objective(y, w, lam, b);
    if (f < fbest) {
      fbest = f;
      best = b;
    }
  }
  return best;
}

TEST(fused_dp_vs_brute_force) {
  for (int rep = 0; rep < 20; ++rep) {
    const int n = 3 + rep % 6;  // 3..8
    const VectorXd y = randn(n, 100 + rep, 2.0), w = rexp(n, 200 + rep).array() + 0.05;
    const VectorXd lam = rexp(n - 1, 300 + rep) * (rep % 3 == 0 ? 0.1 : 1.0);
    VectorXd b(n);
    gl::fused_lasso_dp(n, y.data(), w.data(), lam.data(), b.data());
    const VectorXd ref = fused_brute(y, w, lam);
    CHECK((b - ref).cwiseAbs().maxCoeff() < 1e-10 * (1 + y.cwiseAbs().maxCoeff()));
    CHECK(fused_objective(y, w, lam, b) <= fused_objective(y, w, lam, ref) + 1e-12);
  }
}

TEST(trend_filter_solvers_certify_and_agree) {
  // k = 1..3 on uneven x with Exp(1) weights: the solver choice (primal, escalated primal, dual fallback) certifies
  // the target, and the dual interior point alone reaches the same beta within the certified gaps
  for (int k = 1; k <= 3; ++k) {
    const int n = 120;
    const VectorXd x = uneven_x(n, 40 + k);
    VectorXd y = randn(n, 50 + k, 0.3);
    for (int i = 0; i < n; ++i) y[i] += std::sin(x[i] / 10);
    const VectorXd w = rexp(n, 60 + k).array() + 0.05;
    const gl::BandedD D = gl::make_difference(x, k);
    const VectorXd u0 = gl::unconstrained_dual(D, y, x, w, k);
    const VectorXd lam = VectorXd::Constant(D.m, 1e-2 * gl::lambda_max_from_dual(u0, VectorXd::Ones(1)));
    gl::IPControl ctl;
    const gl::IPResult r = gl::solve_trend_filter(D, k, y, w, lam, gl::TFMethod::Auto, ctl);
    CHECK(r.converged && r.rel_gap <= 1e-8 && r.rel_gap >= 0);
    // the reported certificate is that of the returned pair
    gl::LD pr = 0, gp = 0;
    gl::certify_pair_ld(D, y, w, lam, r.beta, r.u, pr, gp);
    CHECK_NEAR(static_cast<double>(pr), r.primal, 1e-9 * r.primal);  // (r is certified on the row-scaled D)
    gl::IPControl dual = ctl;
    dual.primal_first = false;
    const gl::IPResult d = gl::solve_trend_filter(D, k, y, w, lam, gl::TFMethod::Auto, dual);
    CHECK(d.rel_gap <= 1e-6);
    // strong convexity in beta: 1/2 ||beta1 - beta2||_W^2 <= gap1 + gap2
    const double dist2 = 0.5 * (w.array() * (r.beta - d.beta).array().square()).sum();
    CHECK(dist2 <= 1.01 * (r.gap + d.gap) + 1e-14);
  }
}

TEST(trend_filter_k0_dp_equals_interior_point) {
  const int n = 80;
  const VectorXd x = uneven_x(n, 70), y = randn(n, 71), w = rexp(n, 72).array() + 0.1;
  const gl::BandedD D = gl::make_difference(x, 0);
  const VectorXd lam = rexp(D.m, 73) * 0.5;
  const gl::IPResult a = gl::solve_trend_filter(D, 0, y, w, lam, gl::TFMethod::DP, gl::IPControl());
  const gl::IPResult b = gl::solve_trend_filter(D, 0, y, w, lam, gl::TFMethod::IP, gl::IPControl());
  CHECK(a.rel_gap < 1e-12);
  CHECK(b.converged);
  const double dist2 = 0.5 * (w.array() * (a.beta - b.beta).array().square()).sum();
  CHECK(dist2 <= 1.01 * (a.gap + b.gap) + 1e-14);
}

static Eigen::SparseMatrix<double> chain_D(int n) {
  std::vector<Eigen::Triplet<double>> t;
  for (int j = 0; j < n - 1; ++j) {
    t.emplace_back(j, j, -1.0);
    t.emplace_back(j, j + 1, 1.0);
  }
  Eigen::SparseMatrix<double> D(n - 1, n);
  D.setFromTriplets(t.begin(), t.end());
  return D;
}

TEST(generalized_lasso_path_and_stop) {
  // a chain D is the fused lasso: the sparse path equals the exact DP at every lambda
  const int n = 60;
  const VectorXd y = randn(n, 80), w = rexp(n, 81).array() + 0.1;
  const Eigen::SparseMatrix<double> D = chain_D(n);
  const gl::GenLassoLambdaMax lm = gl::generalized_lasso_lambda_max(D, y, w, VectorXd::Ones(1));
  CHECK(!lm.interrupted && lm.rel_gap < 1e-6 && lm.residual < 1e-8);
  VectorXd x(n);
  for (int i = 0; i < n; ++i) x[i] = i;
  const gl::BandedD B = gl::make_difference(x, 0);
  CHECK_NEAR(lm.lambda_max, gl::lambda_max_from_dual(gl::unconstrained_dual(B, y, x, w, 0), VectorXd::Ones(1)),
             1e-8 * lm.lambda_max);
  const VectorXd lambdas = lm.lambda_max * VectorXd::LinSpaced(4, 0.5, 0.01);
  const gl::PathResult p = gl::generalized_lasso_path(D, y, w, VectorXd::Ones(1), lambdas, gl::IPControl(), true);
  CHECK(p.completed == 4 && !p.interrupted);
  for (int l = 0; l < 4; ++l) {
    VectorXd b(n), lam = VectorXd::Constant(n - 1, lambdas[l]);
    gl::fused_lasso_dp(n, y.data(), w.data(), lam.data(), b.data());
    CHECK(p.rel_gap[l] <= 1e-8);
    CHECK(0.5 * (w.array() * (p.beta.col(l) - b).array().square()).sum() <= 1.01 * p.gap[l] + 1e-14);
  }
  // the stop callback: asked before the first lambda, nothing is solved
  int polls = 0;
  const gl::PathResult s = gl::generalized_lasso_path(D, y, w, VectorXd::Ones(1), lambdas, gl::IPControl(), true,
                                                        [&] { return ++polls >= 3; });
  CHECK(s.interrupted && s.completed == 2 && polls == 3);
  const gl::GenLassoLambdaMax ls = gl::generalized_lasso_lambda_max(D, y, w, VectorXd::Ones(1), [] { return true; });
  CHECK(ls.interrupted);
  // the trend-filter path stops the same way
  const gl::TFFit f = gl::trend_filter_fit(x, y, w, 1, VectorXd::Ones(1), lambdas, gl::TFMethod::Auto, gl::IPControl(),
                                           true, [] { return true; });
  CHECK(f.path.interrupted && f.path.completed == 0);
}

TEST(dual_path_banded_equals_dense_and_is_optimal_at_every_knot) {
  // trend filtering k = 0..2 on uneven x: the banded Givens back end and the dense complete orthogonal
  // decomposition give the same knots; every knot satisfies the optimality conditions D'u = y - beta,
  // |u_j| <= lambda, u_j = +-lambda on the boundary set; the fused DP agrees at every knot (k = 0)
  const int n = 40;
  VectorXd x(n);
  for (int i = 0; i < n; ++i) x[i] = i + 0.3 * std::sin(1.7 * i);
  const VectorXd y = randn(n, 90);
  for (int k = 0; k <= 2; ++k) {
    const gl::BandedD B = gl::make_difference(x, k);
    std::vector<Eigen::Triplet<double>> tr;
    for (int i = 0; i < B.m; ++i)
      for (int l = 0; l < B.width; ++l) tr.emplace_back(i, i + l, B.at(i, l));
    Eigen::SparseMatrix<double> D(B.m, n);
    D.setFromTriplets(tr.begin(), tr.end());
    gl::DualPathControl cb, cd;
    cd.backend = 2;
    int calls = 0;
    const gl::DualPathResult pb = gl::dual_path(D, y, cb, gl::StopFn(), [&](int, double) { ++calls; });
    const gl::DualPathResult pd = gl::dual_path(D, y, cd);
    CHECK(pb.complete && !pb.dense_used && pd.dense_used);
    CHECK(pb.lambda.size() == pd.lambda.size() && calls == static_cast<int>(pb.lambda.size()));
    for (size_t q = 0; q < pb.lambda.size() && q < pd.lambda.size(); ++q) {
      const double lam = pb.lambda[q];
      CHECK_NEAR(lam, pd.lambda[q], 1e-9 * pb.lambda[0]);
      CHECK(pb.df[q] == pd.df[q]);
      CHECK((D.transpose() * pb.u[q] - (y - pb.beta[q])).cwiseAbs().maxCoeff() < 1e-10);
      CHECK(pb.u[q].cwiseAbs().maxCoeff() <= lam * (1 + 1e-9));
      for (size_t t = 0; t < pb.boundary[q].size(); ++t)
        CHECK_NEAR(pb.u[q][pb.boundary[q][t]], pb.sign[q][t] * lam, 1e-9 * lam);
      if (k == 0) {
        VectorXd b(n), w = VectorXd::Ones(n), lv = VectorXd::Constant(n - 1, lam);
        gl::fused_lasso_dp(n, y.data(), w.data(), lv.data(), b.data());
        CHECK((b - pb.beta[q]).cwiseAbs().maxCoeff() < 1e-9);
      }
    }
  }
  // maxsteps, the stop callback and bad input
  const Eigen::SparseMatrix<double> D = chain_D(n);
  gl::DualPathControl c3;
  c3.maxsteps = 3;
  const gl::DualPathResult p3 = gl::dual_path(D, y, c3);
  CHECK(p3.lambda.size() == 3 && !p3.complete);
  // keep_beta = false: the same knots and duals, no primal stored (the R glue computes beta = y - D'u itself)
  gl::DualPathControl cu;
  cu.keep_beta = false;
  const gl::DualPathResult pf = gl::dual_path(D, y, gl::DualPathControl()), pu = gl::dual_path(D, y, cu);
  CHECK(pu.beta.empty() && pu.lambda == pf.lambda && pu.u.size() == pf.u.size());
  for (size_t k = 0; k < pu.u.size(); ++k) {
    CHECK((pu.u[k] - pf.u[k]).cwiseAbs().maxCoeff() == 0.0);
    CHECK((y - D.transpose() * pu.u[k] - pf.beta[k]).cwiseAbs().maxCoeff() <= 1e-12 * (1.0 + y.cwiseAbs().maxCoeff()));
  }
  int polls = 0;
  const gl::DualPathResult ps = gl::dual_path(D, y, gl::DualPathControl(), [&] { return ++polls >= 2; });
  CHECK(ps.interrupted && ps.lambda.size() == 2);
  c3.maxsteps = 0;
  CHECK_THROWS(gl::dual_path(D, y, c3), std::invalid_argument);
  CHECK_THROWS(gl::dual_path(D, randn(n - 1, 1), gl::DualPathControl()), std::invalid_argument);
}

TEST(dual_path_dense_qr_updates_equal_the_decomposition_from_scratch) {
  // dense back end: the QR of D_I' kept by Givens up/downdates across knots gives the same knots, df and duals
  // as a complete orthogonal decomposition at every knot: (a) a dense m < n D (the D V S^-1 of a design matrix),
  // (b) the chain D with a dense copy of a random invertible map (hits and leaves), (c) m > n (|I| > n at the
  // top of the path: the decomposition there, updates below), (d) a 2-D grid D forced dense (rank-deficient D_I
  // once cycles of edges enter: the decomposition for those knots)
  auto check_same = [](const Eigen::SparseMatrix<double>& D, const VectorXd& y, int maxsteps) {
    gl::DualPathControl cu, cc;
    cu.backend = cc.backend = 2;
    cu.maxsteps = cc.maxsteps = maxsteps;
    cc.dense_update = false;
    const gl::DualPathResult pu = gl::dual_path(D, y, cu), pc = gl::dual_path(D, y, cc);
    CHECK(pu.lambda.size() == pc.lambda.size());
    double worst = 0.0;
    for (size_t q = 0; q < pu.lambda.size() && q < pc.lambda.size(); ++q) {
      CHECK(pu.df[q] == pc.df[q] && pu.hit[q] == pc.hit[q] && pu.boundary[q] == pc.boundary[q]);
      worst = std::max(worst, std::fabs(pu.lambda[q] - pc.lambda[q]) / pc.lambda[q]);
      CHECK((pu.u[q] - pc.u[q]).cwiseAbs().maxCoeff() <= 1e-9 * pc.lambda[0]);
    }
    CHECK(worst < 1e-10);
    int leaves = 0;
    for (char h : pu.hit) leaves += h ? 0 : 1;
    return leaves;
  };
  const int n = 30;
  Eigen::MatrixXd M(n, n);
  for (int j = 0; j < n; ++j) M.col(j) = randn(n, 200 + j);
  M += 6.0 * Eigen::MatrixXd::Identity(n, n);
  const Eigen::MatrixXd Dm = Eigen::MatrixXd(chain_D(n)) * M.inverse();  // (a), (b)
  const int la = check_same(Dm.sparseView(), randn(n, 301), 2000);
  CHECK(la > 0);
  Eigen::MatrixXd Dt(2 * n, n);  // (c): 2n rows
  Dt.topRows(n - 1) = Dm;
  for (int j = 0; j < n + 1; ++j) Dt.row(n - 1 + j) = randn(n, 400 + j).transpose();
  check_same(Dt.sparseView(), randn(n, 302), 2000);
  std::vector<Eigen::Triplet<double>> tr;  // (d): 5 x 6 grid
  int e = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j) {
      const int v = i * 6 + j;
      if (j + 1 < 6) { tr.emplace_back(e, v, -1.0); tr.emplace_back(e, v + 1, 1.0); ++e; }
      if (i + 1 < 5) { tr.emplace_back(e, v, -1.0); tr.emplace_back(e, v + 6, 1.0); ++e; }
    }
  Eigen::SparseMatrix<double> G(e, 30);
  G.setFromTriplets(tr.begin(), tr.end());
  check_same(G, randn(30, 303), 60);
}

int main() { return sbtest::run_all(); }
