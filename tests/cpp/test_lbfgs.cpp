// tests/cpp/test_lbfgs.cpp -- the damped L-BFGS memory and the HAMCMC-SA / HAMCMC step policies
// (sgmcmc/lbfgs.hpp) against independent dense computations: the explicit damped BFGS recursion for the inverse
// Hessian, the direct BFGS update of the Hessian, the square-root factor, Powell's damping bound, and the chain
// recursions of Algorithm 2 / HAMCMC written with dense matrices through the real run_chain.
#include <Eigen/Dense>
#include <atomic>
#include <vector>

#include "check.hpp"
#include "scalebayes/sgmcmc/glm.hpp"
#include "scalebayes/sgmcmc/lbfgs.hpp"

namespace sg = scalebayes::sgmcmc;
using O = sg::EigenOps;
using GV = sg::GroupVector<O>;
using scalebayes::rng::Stream;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

GV split(const VectorXd& v, long first) {  // two groups: v[0..first), v[first..)
  GV g;
  g.parts.push_back(v.head(first).array());
  g.parts.push_back(v.tail(v.size() - first).array());
  return g;
}
VectorXd join(const GV& g) { return sg::lbfgs_detail::flat(g); }

// The dense reference of Algorithm 1 with Powell damping as Lemma 1's proof uses it.
struct DenseMem {
  MatrixXd H, S, B;  // G~, its factor, the Hessian approximation
  std::vector<VectorXd> ybar;
  double gamma = 1;
};
DenseMem dense_memory(const std::vector<VectorXd>& s, const std::vector<VectorXd>& y, double r, double gmin, long d) {
  DenseMem m;
  if (s.empty()) {
    m.gamma = gmin;
  } else {
    const double sy = s.back().dot(y.back()), yy = y.back().squaredNorm();
    const double ss = s.back().squaredNorm();
    m.gamma = sy > 0 ? std::max(yy / sy, gmin) : ss > 0 ? std::max(std::sqrt(yy / ss), gmin) : gmin;
  }
  const double g = m.gamma;
  m.H = MatrixXd::Identity(d, d) / g;
  m.S = MatrixXd::Identity(d, d) / std::sqrt(g);
  m.B = MatrixXd::Identity(d, d) * g;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const VectorXd& si = s[i];
    const double sB0s = g * si.squaredNorm(), sy = si.dot(y[i]);
    double th = sy < r * sB0s ? (1 - r) * sB0s / (sB0s - sy) : 1.0;
    // the upper side: the largest theta <= th with ybar'ybar <= (gamma / r) s'ybar, by bisection (the excess
    // is a convex quadratic in theta, negative at 0)
    auto excess = [&](double t) {
      const VectorXd yb = t * y[i] + (1 - t) * g * si;
      return yb.squaredNorm() - g / r * si.dot(yb);
    };
    if (excess(th) > 0) {
      double lo = 0, hi = th;
      for (int it = 0; it < 200; ++it) (excess(0.5 * (lo + hi)) > 0 ? hi : lo) = 0.5 * (lo + hi);
      th = lo;
    }
    const VectorXd yb = th * y[i] + (1 - th) * g * si;
    m.ybar.push_back(yb);
    const double rho = 1.0 / si.dot(yb);
    const MatrixXd V = MatrixXd::Identity(d, d) - rho * si * yb.transpose();
    const VectorXd Bs = m.B * si;
    const double sBs = si.dot(Bs);
    const VectorXd q = std::sqrt(si.dot(yb) / sBs) * Bs + yb;
    m.S = (MatrixXd::Identity(d, d) - rho * si * q.transpose()) * m.S;
    m.H = V * m.H * V.transpose() + rho * si * si.transpose();
    m.B = m.B + yb * yb.transpose() * rho - Bs * Bs.transpose() / sBs;
  }
  return m;
}

struct Pairs {
  std::vector<VectorXd> s, y;
};
Pairs random_pairs(long d, int n, std::uint64_t seed) {
  Stream rs(seed, 0);
  MatrixXd A(d, d);
  for (long i = 0; i < d; ++i)
    for (long j = 0; j < d; ++j) A(i, j) = rs.normal();
  const MatrixXd Hs = A * A.transpose() / d + 0.5 * MatrixXd::Identity(d, d);
  Pairs p;
  for (int k = 0; k < n; ++k) {
    VectorXd s(d), e(d);
    for (long i = 0; i < d; ++i) s[i] = rs.normal(), e[i] = rs.normal();
    VectorXd y = Hs * s + (k % 2 ? 3.0 : 0.1) * e;  // noisy: every other pair violates s'y >= r s'B0 s
    if (k == 1) y = -y;                               // certainly s'y < 0
    p.s.push_back(s);
    p.y.push_back(y);
  }
  return p;
}

}  // namespace

TEST(two_loop_equals_explicit_damped_bfgs_inverse) {
  const long d = 7;
  for (int M : {1, 2, 3, 5}) {
    const Pairs pr = random_pairs(d, 6, 11 + M);
    sg::DampedLbfgs<O> mem(M, 0.2, 0.5);
    for (std::size_t k = 0; k < pr.s.size(); ++k) mem.push(split(pr.s[k], 3), split(pr.y[k], 3));
    mem.prepare(0.0);
    CHECK(mem.size() == std::min(M, 6));
    std::vector<VectorXd> s(pr.s.end() - mem.size(), pr.s.end()), y(pr.y.end() - mem.size(), pr.y.end());
    const DenseMem ref = dense_memory(s, y, 0.2, 0.5, d);
    CHECK_NEAR(mem.gamma(), ref.gamma, 1e-12 * ref.gamma);
    // G~ v through the two-loop recursion = the explicit recursion (6); and G~ = B^{-1} of recursion (5)
    MatrixXd Gt(d, d), St(d, d);
    for (long j = 0; j < d; ++j) {
      const VectorXd e = VectorXd::Unit(d, j);
      Gt.col(j) = join(mem.apply_G(split(e, 3)));
      St.col(j) = join(mem.apply_S(split(e, 3)));
    }
    CHECK((Gt - ref.H).norm() < 1e-10 * ref.H.norm());
    CHECK((Gt - ref.B.inverse()).norm() < 1e-8 * ref.H.norm());
    // S~ S~' = G~, and S~ is the product of line 15
    CHECK((St * St.transpose() - Gt).norm() < 1e-10 * Gt.norm());
    CHECK((St - ref.S).norm() < 1e-10 * ref.S.norm());
    // positive definite (Lemma 1)
    Eigen::SelfAdjointEigenSolver<MatrixXd> es(0.5 * (Gt + Gt.transpose()));
    CHECK(es.eigenvalues().minCoeff() > 0);
    // Powell's bound s'ybar >= r s'B0 s, with equality for the damped pairs
    for (int i = 0; i < mem.size(); ++i) {
      const double sB0s = mem.gamma() * mem.ss(i);
      CHECK(mem.sybar(i) >= 0.2 * sB0s * (1 - 1e-12));
      // and the upper side: ybar'ybar <= (gamma / r) s'ybar
      CHECK(join(mem.ybar(i)).squaredNorm() <= mem.gamma() / 0.2 * mem.sybar(i) * (1 + 1e-10));
      CHECK_NEAR(mem.sybar(i), join(mem.s(i)).dot(join(mem.ybar(i))), 1e-10 * std::abs(mem.sybar(i)));
      CHECK((join(mem.ybar(i)) - ref.ybar[static_cast<std::size_t>(i)]).norm() < 1e-12 * ref.ybar[i].norm());
    }
  }
}

TEST(upper_damping_bounds_the_inverse_hessian) {
  // A pair whose y is long and nearly orthogonal to s passes Powell's test (s'y >= r s'B0 s) but, undamped on
  // the upper side, gives G~ an eigenvalue ~ K / (r gamma) with K = y'y / (s'y gamma). With both sides the
  // pair's curvatures lie in [r gamma, gamma / r] and, for one pair, G~ <= (1 + r) / (r^2 gamma).
  const long d = 5;
  const double r = 0.2;
  VectorXd s = VectorXd::Zero(d), y = VectorXd::Zero(d);
  s[0] = 1;
  y[0] = 1;      // s'y = 1
  y[1] = 300;    // y'y / s'y = 90001
  sg::DampedLbfgs<O> newest(1, r, 1.0);
  newest.push(split(s, 2), split(y, 2));
  newest.prepare(0.0);
  // gamma from this pair is y'y / s'y: the pair is then within [r gamma, gamma / r] and needs no damping;
  // against a B0 of a smaller gamma (an older pair, a newer gamma) it does
  CHECK_NEAR(newest.gamma(), 90001.0, 1e-6);
  sg::DampedLbfgs<O> mem(2, r, 1.0);
  mem.push(split(s, 2), split(y, 2));
  VectorXd s2 = VectorXd::Unit(d, 3), y2 = 10.0 * VectorXd::Unit(d, 3);  // newest pair: gamma = 10
  mem.push(split(s2, 2), split(y2, 2));
  mem.prepare(0.0);
  CHECK_NEAR(mem.gamma(), 10.0, 1e-12);
  const VectorXd yb = join(mem.ybar(0));
  CHECK(yb.squaredNorm() <= 10.0 / r * mem.sybar(0) * (1 + 1e-10));
  CHECK(mem.sybar(0) >= r * 10.0 * mem.ss(0) * (1 - 1e-12));
  MatrixXd Gt(d, d);
  for (long j = 0; j < d; ++j) Gt.col(j) = join(mem.apply_G(split(VectorXd::Unit(d, j), 2)));
  Eigen::SelfAdjointEigenSolver<MatrixXd> es(0.5 * (Gt + Gt.transpose()));
  // the second pair is exact at gamma (no change of G~ beyond its own direction); the first one bounded
  CHECK(es.eigenvalues().maxCoeff() <= (1 + r) / (r * r * 10.0) * (1 + 1e-10));
  CHECK(es.eigenvalues().minCoeff() > 0);
  // Powell's damping alone (the reference without the upper side) gives a far longer G~ along the pair
  const double sB0s = 10.0, sy = 1.0;  // s's = 1
  const double th = sy < r * sB0s ? (1 - r) * sB0s / (sB0s - sy) : 1.0;
  const VectorXd yp = th * y + (1 - th) * 10.0 * s;
  const double rho = 1.0 / s.dot(yp);
  const MatrixXd V = MatrixXd::Identity(d, d) - rho * s * yp.transpose();
  const MatrixXd Hp = V * (MatrixXd::Identity(d, d) / 10.0) * V.transpose() + rho * s * s.transpose();
  Eigen::SelfAdjointEigenSolver<MatrixXd> ep(Hp);
  CHECK(ep.eigenvalues().maxCoeff() > 100 * (1 + r) / (r * r * 10.0));
}

TEST(damping_engages_only_below_the_curvature_bound) {
  const long d = 4;
  VectorXd s = VectorXd::LinSpaced(d, 1, 2), y = 3.0 * s;  // s'y = 3 s's: gamma = 3, no damping
  sg::DampedLbfgs<O> mem(2, 0.2, 1.0);
  mem.push(split(s, 2), split(y, 2));
  mem.prepare(0.0);
  CHECK_NEAR(mem.gamma(), 3.0, 1e-12);
  CHECK((join(mem.ybar(0)) - y).norm() < 1e-12);
  // a second pair with negative curvature: damped to s'ybar = r gamma s's, gamma from this newest pair =
  // max(||y|| / ||s||, gamma_min) = max(0.5, 1) = gamma_min
  VectorXd s2 = VectorXd::Ones(d), y2 = -0.5 * s2;
  mem.push(split(s2, 2), split(y2, 2));
  mem.prepare(0.0);
  CHECK_NEAR(mem.gamma(), 1.0, 1e-15);
  CHECK_NEAR(mem.sybar(1), 0.2 * 1.0 * s2.squaredNorm(), 1e-12);
  // the first pair is re-damped against the new B0 = I: s'y = 3 s's >= 0.2 s's, undamped
  CHECK((join(mem.ybar(0)) - y).norm() < 1e-12);
}

TEST(empty_memory_and_zero_steps) {
  const long d = 5;
  sg::DampedLbfgs<O> mem(3, 0.2, 4.0);
  mem.prepare(0.0);
  const VectorXd v = VectorXd::LinSpaced(d, -1, 1);
  CHECK((join(mem.apply_G(split(v, 2))) - v / 4.0).norm() < 1e-15);
  CHECK((join(mem.apply_S(split(v, 2))) - v / 2.0).norm() < 1e-15);
  // a zero step contributes nothing (no NaN)
  const Pairs pr = random_pairs(d, 1, 5);
  mem.push(split(pr.s[0], 2), split(pr.y[0], 2));
  mem.prepare(0.0);
  const VectorXd a = join(mem.apply_G(split(v, 2))), b = join(mem.apply_S(split(v, 2)));
  mem.push(split(VectorXd::Zero(d), 2), split(VectorXd::Zero(d), 2));
  mem.prepare(0.0);  // gamma from the zero pair: gamma_min
  const DenseMem ref = dense_memory({pr.s[0]}, {pr.y[0]}, 0.2, 4.0, d);
  const VectorXd a2 = join(mem.apply_G(split(v, 2)));
  CHECK(a2.allFinite());
  CHECK(join(mem.apply_S(split(v, 2))).allFinite());
  // with gamma = gamma_min the non-zero pair alone acts
  DenseMem ref2 = ref;
  {
    const double g = 4.0;
    const VectorXd& s = pr.s[0];
    const double sB0s = g * s.squaredNorm(), sy = s.dot(pr.y[0]);
    const double th = sy < 0.2 * sB0s ? 0.8 * sB0s / (sB0s - sy) : 1.0;
    const VectorXd yb = th * pr.y[0] + (1 - th) * g * s;
    const double rho = 1 / s.dot(yb);
    const MatrixXd V = MatrixXd::Identity(d, d) - rho * s * yb.transpose();
    ref2.H = V * (MatrixXd::Identity(d, d) / g) * V.transpose() + rho * s * s.transpose();
  }
  CHECK((a2 - ref2.H * v).norm() < 1e-12 * a2.norm());
  (void)a;
  (void)b;
}

namespace {

struct Problem {
  MatrixXd x;
  VectorXd y;
  sg::GlmData d;
  sg::Control ctl;
};
// Full batch (no minibatch draws: the chain's stream gives only the noise), frozen latents: a fixed target.
Problem make_problem(long N, long p) {
  Problem pb;
  Stream s(7, 0);
  pb.x.resize(N, p);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < p; ++j) pb.x(i, j) = s.normal() + (j ? 0.8 * pb.x(i, j - 1) : 0.0);
  pb.y.resize(N);
  for (long i = 0; i < N; ++i) pb.y[i] = 1.5 * pb.x(i, 0) - pb.x(i, 1) + 0.3 * s.normal();
  std::vector<int> sparse(p, 1);
  pb.d = sg::make_data(pb.x, pb.y, sparse, false, MatrixXd(0, p), sg::Family::gaussian);
  pb.ctl.method = sg::Method::none;
  pb.ctl.iterations = 30;
  pb.ctl.batch_size = N;
  pb.ctl.step.type = sg::StepSchedule::Type::constant;
  pb.ctl.step.eps0 = 1e-3;
  pb.ctl.sigma_init = 1.3;
  for (long j = 0; j < p; ++j) pb.ctl.keep.push_back(j);
  return pb;
}
// log-posterior gradient (no intercept, every coefficient sparse, rho = 0.5)
VectorXd grad(const Problem& pb, const VectorXd& b) {
  const double s = pb.ctl.sigma_init, k0 = 0.5 / pb.ctl.hyper.v0, k1 = 0.5 / pb.ctl.hyper.v1;
  const VectorXd r = pb.y - pb.x * b;
  VectorXd g = pb.x.transpose() * r / (s * s);
  for (long j = 0; j < b.size(); ++j) g[j] += -k0 * ((b[j] > 0) - (b[j] < 0)) / s - k1 * b[j] / (s * s);
  return g;
}
sg::ChainResult run(const Problem& pb, const VectorXd& init) {
  Stream rs(3, 0);
  sg::GlmModel model(pb.d, pb.ctl, init, rs);
  sg::GlmRecorder rec(pb.d, pb.ctl);
  std::atomic<long> progress{0};
  sg::run_chain(model, rec, pb.ctl, rs, progress);
  return rec.res;
}
VectorXd normals(Stream& rs, long d) {
  VectorXd z(d);
  for (long j = 0; j < d; ++j) z[j] = sg::Ziggurat::normal(rs);
  return z;
}

// A curvature pair without the coordinates whose sign changed between its two points a and b (every coefficient
// of make_problem() is sparse: the SSGL spike's gradient jumps there; lbfgs.hpp, drop_sign_changes()).
void push_pair(std::vector<VectorXd>& S, std::vector<VectorXd>& Y, const VectorXd& a, const VectorXd& b, VectorXd y) {
  VectorXd s = b - a;
  for (long j = 0; j < s.size(); ++j) {
    if (!(a[j] * b[j] > 0)) s[j] = y[j] = 0;
  }
  S.push_back(s);
  Y.push_back(y);
}

}  // namespace

TEST(hamcmc_sa_through_run_chain_equals_dense_algorithm_2) {
  const long p = 5;
  for (int form = 0; form < 3; ++form) {  // diagonal / same batch, diagonal / consecutive, matrix / same batch
    Problem pb = make_problem(40, p);
    pb.ctl.sampler = sg::Sampler::hamcmc_sa;
    auto& lc = pb.ctl.lbfgs;
    lc.memory = 2;
    lc.curvature = form == 1 ? sg::Curvature::consecutive : sg::Curvature::same_batch;
    lc.sa_form = form == 2 ? sg::SaForm::matrix : sg::SaForm::diagonal;
    lc.normalize = form == 1;
    lc.init_curvature = false;  // G_1 = I as Algorithm 2 prints it (the probe start: its own test below)
    const VectorXd init = VectorXd::LinSpaced(p, -0.5, 0.5);
    const sg::ChainResult res = run(pb, init);
    CHECK(res.iterations_done == pb.ctl.iterations);
    // dense reference
    Stream rs(3, 0);
    VectorXd b = init, gp, u, v, bp;
    MatrixXd G = MatrixXd::Identity(p, p);
    VectorXd D = VectorXd::Ones(p);  // diagonal form: diag(G_k), G_0 = I
    std::vector<VectorXd> S, Y;
    const double eps = pb.ctl.step.eps0, sd = std::sqrt(2 * eps);
    for (long k = 1; k <= pb.ctl.iterations; ++k) {
      const VectorXd g = grad(pb, b);
      if (form == 1 && k > 1) push_pair(S, Y, bp, b, -(g - gp));
      if (form == 1) bp = b;
      while (static_cast<int>(S.size()) > lc.memory) S.erase(S.begin()), Y.erase(Y.begin());
      const DenseMem m = dense_memory(S, Y, lc.damping_r, lc.gamma_min, p);
      const VectorXd z = normals(rs, p);
      const double w = std::min(1.0, 2.0 * std::pow(k + 50.0, -0.75));
      if (form == 2) {
        G = (1 - w) * G + w * m.H;
        u = G * g;
        v = Eigen::LLT<MatrixXd>(G).matrixL() * z;
      } else {  // the exact diagonal of the SA average
        D = (1 - w) * D + w * m.H.diagonal();
        u = D.cwiseProduct(g);
        v = D.cwiseSqrt().cwiseProduct(z);
      }
      VectorXd xi = u, eta = v;
      if (lc.normalize) xi /= xi.norm(), eta /= eta.norm();
      const VectorXd bn = b + eps * xi + sd * eta;
      if (form != 1) push_pair(S, Y, b, bn, -(grad(pb, bn) - g));
      gp = g;
      b = bn;
    }
    for (long j = 0; j < p; ++j) CHECK_NEAR(res.beta[j], b[j], 1e-9 * (1 + std::abs(b[j])));
    // the preconditioner really acts: the chain differs from SGLD's on the same noise
    Problem pg = pb;
    pg.ctl.sampler = sg::Sampler::sgld;
    const sg::ChainResult r2 = run(pg, init);
    CHECK(std::abs(r2.beta[0] - res.beta[0]) > 1e-6);
  }
}

// The lowrank form: G_k = diag(D_k) + sum over the K newest memories of w_j G~_j (older ones and G_0 = I by their
// exact diagonal), noise sqrt(D_k) z_0 + sum_j sqrt(w_j) S~_j z_j with K + 1 normal vectors drawn in that order.
TEST(hamcmc_sa_lowrank_through_run_chain_equals_dense_reference) {
  const long p = 5;
  for (int K : {1, 3, 100}) {
    Problem pb = make_problem(40, p);
    pb.ctl.sampler = sg::Sampler::hamcmc_sa;
    auto& lc = pb.ctl.lbfgs;
    lc.memory = 2;
    lc.sa_form = sg::SaForm::lowrank;
    lc.sa_memories = K;
    lc.init_curvature = false;  // G_1 = I as Algorithm 2 prints it
    const VectorXd init = VectorXd::LinSpaced(p, -0.5, 0.5);
    const sg::ChainResult res = run(pb, init);
    CHECK(res.iterations_done == pb.ctl.iterations);
    Stream rs(3, 0);
    VectorXd b = init, D = VectorXd::Ones(p);
    std::vector<DenseMem> mems;
    std::vector<double> wts;
    std::vector<VectorXd> S, Y;
    MatrixXd Gfull = MatrixXd::Identity(p, p);  // the matrix form's G_k, to compare with K >= k
    const double eps = pb.ctl.step.eps0, sd = std::sqrt(2 * eps);
    double max_gap = 0;
    for (long k = 1; k <= pb.ctl.iterations; ++k) {
      const VectorXd g = grad(pb, b);
      while (static_cast<int>(S.size()) > lc.memory) S.erase(S.begin()), Y.erase(Y.begin());
      const DenseMem m = dense_memory(S, Y, lc.damping_r, lc.gamma_min, p);
      const VectorXd z0 = normals(rs, p);
      const double w = std::min(1.0, 2.0 * std::pow(k + 50.0, -0.75));
      D *= (1 - w);
      for (double& x : wts) x *= (1 - w);
      mems.push_back(m);
      wts.push_back(w);
      if (static_cast<int>(mems.size()) > K) {
        D += wts.front() * mems.front().H.diagonal();
        mems.erase(mems.begin());
        wts.erase(wts.begin());
      }
      MatrixXd G = D.asDiagonal();
      VectorXd v = D.cwiseSqrt().cwiseProduct(z0);
      for (std::size_t j = 0; j < mems.size(); ++j) {
        G += wts[j] * mems[j].H;
        v += std::sqrt(wts[j]) * mems[j].S * normals(rs, p);
      }
      Gfull = (1 - w) * Gfull + w * m.H;
      if (K >= k) max_gap = std::max(max_gap, (G - Gfull).norm() / Gfull.norm());
      const VectorXd bn = b + eps * (G * g) + sd * v;
      push_pair(S, Y, b, bn, -(grad(pb, bn) - g));
      b = bn;
    }
    for (long j = 0; j < p; ++j) CHECK_NEAR(res.beta[j], b[j], 1e-9 * (1 + std::abs(b[j])));
    CHECK(max_gap < 1e-12);  // while no memory has been folded into the diagonal, G_k is the matrix form's
  }
}

TEST(hamcmc_through_run_chain_equals_dense_reference) {
  const long p = 4;
  Problem pb = make_problem(40, p);
  pb.ctl.sampler = sg::Sampler::hamcmc;
  pb.ctl.lbfgs.memory = 3;
  const int M = 3;
  const VectorXd init = VectorXd::LinSpaced(p, -0.5, 0.5);
  const sg::ChainResult res = run(pb, init);
  Stream rs(3, 0);
  std::vector<VectorXd> th = {init};  // th[j] = theta_j, j = 0 .. t-1
  const double eps = pb.ctl.step.eps0, sd = std::sqrt(2 * eps);
  for (long t = 1; t <= pb.ctl.iterations; ++t) {
    const VectorXd z = normals(rs, p);
    const long last = t - 1;  // index of theta_{t-1}
    VectorXd bn;
    if (last + 1 < 2 * M - 1) {
      // the first steps: one probe pair along the gradient, a 0.1 % perturbation
      const VectorXd g0 = grad(pb, th[last]);
      const double rms = std::max(th[last].norm() / std::sqrt(double(p)), 1e-3);
      const VectorXd s = g0 / g0.norm() * (1e-3 * std::sqrt(double(p)) * rms);
      const VectorXd y = -(grad(pb, th[last] + s) - g0);
      const DenseMem m = dense_memory({s}, {y}, 0.2, 1.0, p);
      bn = th[last] + eps * m.H * g0 + sd * m.S * z;
    } else {
      std::vector<long> seq;
      for (long j = last - (2 * M - 2); j <= last; ++j)
        if (j != last - (M - 1)) seq.push_back(j);
      std::vector<VectorXd> S, Y;
      for (std::size_t i = 1; i < seq.size(); ++i) {
        S.push_back(th[seq[i]] - th[seq[i - 1]]);
        Y.push_back(-(grad(pb, th[seq[i]]) - grad(pb, th[seq[i - 1]])));
      }
      const DenseMem m = dense_memory(S, Y, 0.2, 1.0, p);
      const VectorXd& base = th[last - (M - 1)];
      bn = base + eps * m.H * grad(pb, base) + sd * m.S * z;
    }
    th.push_back(bn);
  }
  for (long j = 0; j < p; ++j) CHECK_NEAR(res.beta[j], th.back()[j], 1e-9 * (1 + std::abs(th.back()[j])));
}

TEST(lbfgs_control_validation) {
  sg::Control ctl;
  ctl.lbfgs.memory = 0;
  CHECK_THROWS(ctl.validate(), std::invalid_argument);
  ctl.lbfgs.memory = 1;
  ctl.sampler = sg::Sampler::hamcmc;
  CHECK_THROWS(ctl.validate(), std::invalid_argument);
  ctl.lbfgs.memory = 2;
  ctl.lbfgs.damping_r = 1.0;
  CHECK_THROWS(ctl.validate(), std::invalid_argument);
  CHECK(sg::sampler_from_name("hamcmc_sa") == sg::Sampler::hamcmc_sa);
  CHECK(sg::sampler_from_name("hamcmc") == sg::Sampler::hamcmc);
  CHECK(sg::sampler_from_name("sgnht") == sg::Sampler::sgnht);
}

TEST(prunable_apart_from_sparse) {
  sg::Group<O> g;
  g.value = Eigen::ArrayXd::LinSpaced(10, -1, 1);
  g.sparse = false;
  sg::prune<O>(g, 0.5);  // default: as sparse -> untouched
  CHECK((g.value == Eigen::ArrayXd::LinSpaced(10, -1, 1)).all());
  g.prunable = 1;
  sg::prune<O>(g, 0.5);
  CHECK((g.value == 0.0).count() == 5);
  sg::Group<O> h;
  h.value = Eigen::ArrayXd::LinSpaced(10, -1, 1);
  h.prunable = 0;  // sparse but not pruned
  sg::prune<O>(h, 0.5);
  CHECK((h.value == 0.0).count() == 0);
}

int main() { return sbtest::run_all(); }
