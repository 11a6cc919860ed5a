// Engine unit tests of the SG-MCMC seams (sgmcmc/): the storage concept's dot / axpy / where and the vector over
// all groups (EigenOps; the LibTorch policy is checked against these in float64 from testthat), and the step
// seam: test-only step policies, written here against the public headers, run through the real chain driver
// (run_chain with the Eigen GLM) and are checked against the same algorithm written independently with Eigen.
#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "check.hpp"
#include "scalebayes/sgmcmc/density.hpp"
#include "scalebayes/sgmcmc/glm.hpp"

namespace sg = scalebayes::sgmcmc;
using scalebayes::rng::Stream;
using Ops = sg::EigenOps;

TEST(storage_dot_axpy_where) {
  Eigen::ArrayXd a(4), b(4), c(4);
  a << 1, -2, 3, 0.5;
  b << 2, 1, -1, 4;
  c << 1, -1, 0, 2;
  CHECK_NEAR(Ops::dot(a, b), 1 * 2 - 2 * 1 - 3 + 2, 1e-15);
  CHECK(Ops::dot(Eigen::ArrayXd(), Eigen::ArrayXd()) == 0.0);
  Eigen::ArrayXd y = b;
  Ops::axpy(-0.5, a, y);
  for (int j = 0; j < 4; ++j) CHECK_NEAR(y[j], b[j] - 0.5 * a[j], 1e-15);
  CHECK(Ops::where(1.0, 2.0, 3.0) == 2.0);
  CHECK(Ops::where(0.0, 2.0, 3.0) == 3.0);
  CHECK(Ops::where(-1e-300, 2.0, 3.0) == 3.0);
  const Eigen::ArrayXd w = Ops::where(c, a, b);
  CHECK(w[0] == a[0] && w[1] == b[1] && w[2] == b[2] && w[3] == a[3]);
}

TEST(group_vector_over_all_groups) {
  std::vector<sg::Group<Ops>> groups(3);
  groups[0].value = Eigen::ArrayXd::LinSpaced(5, -1, 1);
  groups[1].value = Eigen::ArrayXd();  // an empty group (a GLM without non-sparse coefficients)
  groups[2].value = Eigen::ArrayXd::Constant(2, 3.0);
  for (auto& g : groups) g.grad = 2.0 * g.value + 1.0;
  auto v = sg::GroupVector<Ops>::values(groups);
  auto d = sg::GroupVector<Ops>::grads(groups);
  // copies, not aliases
  v.parts[0][0] = 99;
  CHECK(groups[0].value[0] == -1.0);
  v = sg::GroupVector<Ops>::values(groups);
  double ref = 0;
  for (auto& g : groups) ref += (g.value * g.grad).sum();
  CHECK_NEAR(v.dot(d), ref, 1e-13);
  auto z = sg::GroupVector<Ops>::zeros_like(v);
  z.axpy(2.0, v);
  z.scale(0.25);
  auto diff = sg::GroupVector<Ops>::difference(d, v);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (Eigen::Index j = 0; j < groups[g].value.size(); ++j) {
      CHECK_NEAR(z.parts[g][j], 0.5 * groups[g].value[j], 1e-15);
      CHECK_NEAR(diff.parts[g][j], groups[g].value[j] + 1.0, 1e-15);
    }
  }
  CHECK_THROWS(v.dot(sg::GroupVector<Ops>()), std::invalid_argument);
}

namespace {

// Test-only policies (not part of the package): plain gradient ascent on the log posterior, and an
// extragradient step that asks the driver for a second gradient on the same minibatch.
struct GradientStep {
  static constexpr bool needs_regradient = false;
  int started = 0;
  template <class O>
  void start(std::vector<sg::Group<O>>&) { ++started; }
  template <class O, class Regrad>
  void step(std::vector<sg::Group<O>>& groups, const sg::StepContext& c, typename O::Rng&, Regrad&) {
    for (auto& g : groups) O::axpy(c.eps, g.grad, g.value);
  }
};

struct ExtragradientStep {
  static constexpr bool needs_regradient = true;
  template <class O>
  void start(std::vector<sg::Group<O>>&) {}
  template <class O, class Regrad>
  void step(std::vector<sg::Group<O>>& groups, const sg::StepContext& c, typename O::Rng&, Regrad& regrad) {
    auto x0 = sg::GroupVector<O>::values(groups);
    for (auto& g : groups) O::axpy(c.eps, g.grad, g.value);  // look-ahead point
    regrad();                                                // posterior gradient there, same minibatch
    for (std::size_t i = 0; i < groups.size(); ++i) {
      O::assign(groups[i].value, x0.parts[i]);
      O::axpy(c.eps, groups[i].grad, groups[i].value);
    }
  }
};

// SGLD that also asks for (and throws away) a second gradient every step: must not change the chain.
struct SgldWithRegrad {
  static constexpr bool needs_regradient = true;
  sg::SgldStep inner{sg::StepControl()};
  template <class O>
  void start(std::vector<sg::Group<O>>&) {}
  template <class O, class Regrad>
  void step(std::vector<sg::Group<O>>& groups, const sg::StepContext& c, typename O::Rng& rng, Regrad& regrad) {
    auto g0 = sg::GroupVector<O>::grads(groups);
    regrad();
    for (std::size_t i = 0; i < groups.size(); ++i) O::assign(groups[i].grad, g0.parts[i]);
    inner.step(groups, c, rng, regrad);
  }
};

struct Problem {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  sg::GlmData d;
  sg::Control ctl;
};

Problem make_problem(long N, long p, long batch) {
  Problem pb;
  Stream s(7, 0);
  pb.x.resize(N, p);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < p; ++j) pb.x(i, j) = s.normal();
  pb.y.resize(N);
  for (long i = 0; i < N; ++i) pb.y[i] = 1.5 * pb.x(i, 0) - pb.x(i, 1) + 0.3 * s.normal();
  std::vector<int> sparse(p, 1);
  sparse[p - 1] = 0;  // one non-sparse coefficient besides the intercept
  pb.d = sg::make_data(pb.x, pb.y, sparse, true, Eigen::MatrixXd(0, p), sg::Family::gaussian);
  pb.ctl.method = sg::Method::none;  // latents frozen at their start: a fixed target
  pb.ctl.iterations = 40;
  pb.ctl.batch_size = batch;
  pb.ctl.step.type = sg::StepSchedule::Type::constant;
  pb.ctl.step.eps0 = 2e-3;
  pb.ctl.sigma_init = 1.3;
  pb.ctl.prior_var = 4.0;
  pb.ctl.keep = {0, 1, 2};
  return pb;
}

// The log-posterior gradient of the frozen-latent target, written directly from the model's definition
// (output order: intercept, x columns): Gaussian likelihood with variance sigma^2; sparse coefficients with the
// SSGL prior at rho = 0.5 (kappa0 = 0.5 / v0, kappa1 = 0.5 / v1); the last column and the intercept N(0, prior_var).
Eigen::VectorXd reference_gradient(const Problem& pb, const Eigen::VectorXd& b) {
  const long N = pb.x.rows(), p = pb.x.cols();
  const double s = pb.ctl.sigma_init, k0 = 0.5 / pb.ctl.hyper.v0, k1 = 0.5 / pb.ctl.hyper.v1;
  Eigen::VectorXd r = pb.y - (b[0] * Eigen::VectorXd::Ones(N) + pb.x * b.tail(p));
  Eigen::VectorXd g(p + 1);
  g[0] = r.sum() / (s * s) - b[0] / pb.ctl.prior_var;
  g.tail(p) = pb.x.transpose() * r / (s * s);
  for (long j = 0; j < p; ++j) {
    const double bj = b[j + 1];
    if (j < p - 1) g[j + 1] += -k0 * ((bj > 0) - (bj < 0)) / s - k1 * bj / (s * s);
    else g[j + 1] += -bj / pb.ctl.prior_var;
  }
  return g;
}

template <class Step>
sg::ChainResult run_with(const Problem& pb, Step& policy, std::uint64_t seed = 3) {
  Stream rs(seed, 0);
  const long P = pb.x.cols() + 1;
  Eigen::VectorXd init = Eigen::VectorXd::LinSpaced(P, -0.5, 0.5);
  sg::GlmModel model(pb.d, pb.ctl, init, rs);
  sg::GlmRecorder rec(pb.d, pb.ctl);
  std::atomic<long> progress{0};
  sg::run_chain(model, rec, pb.ctl, policy, rs, progress);
  return rec.res;
}

}  // namespace

TEST(test_policy_gradient_ascent_through_run_chain) {
  Problem pb = make_problem(60, 5, 60);  // full batch: no minibatch noise
  GradientStep policy;
  const sg::ChainResult res = run_with(pb, policy);
  CHECK(policy.started == 1);
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(6, -0.5, 0.5);
  for (long k = 0; k < pb.ctl.iterations; ++k) b += pb.ctl.step.eps0 * reference_gradient(pb, b);
  CHECK(res.iterations_done == pb.ctl.iterations);
  for (long j = 0; j < 6; ++j) CHECK_NEAR(res.beta[j], b[j], 1e-10);
  // the kept draws are the states after each step: the last row is the final state
  CHECK_NEAR(res.draws(res.draws.rows() - 1, 1), b[1], 1e-10);
}

TEST(test_policy_second_gradient_through_run_chain) {
  Problem pb = make_problem(60, 5, 60);
  ExtragradientStep policy;
  const sg::ChainResult res = run_with(pb, policy);
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(6, -0.5, 0.5);
  const double e = pb.ctl.step.eps0;
  for (long k = 0; k < pb.ctl.iterations; ++k) b += e * reference_gradient(pb, b + e * reference_gradient(pb, b));
  for (long j = 0; j < 6; ++j) CHECK_NEAR(res.beta[j], b[j], 1e-10);
  // and it differs from plain gradient ascent (the second gradient was really used)
  GradientStep plain;
  const sg::ChainResult r2 = run_with(pb, plain);
  CHECK(std::abs(r2.beta[1] - res.beta[1]) > 1e-8);
}

TEST(second_gradient_leaves_the_chain_alone) {
  // minibatches (from the chain's stream) and Langevin noise (the same stream for the GLM): a policy that asks for a
  // second gradient and discards it gives the SGLD chain exactly; so does the dispatch by name.
  Problem pb = make_problem(80, 6, 10);
  pb.ctl.method = sg::Method::sa;
  pb.ctl.iterations = 200;
  pb.ctl.keep = {0, 1, 2, 3, 4, 5, 6};
  sg::SgldStep sgld(pb.ctl);
  SgldWithRegrad wrapped;
  const sg::ChainResult a = run_with(pb, sgld), b = run_with(pb, wrapped);
  CHECK(a.draws.rows() == b.draws.rows());
  CHECK((a.draws.array() == b.draws.array()).all());
  CHECK(a.sigma == b.sigma);
  Stream rs(3, 0);
  sg::GlmModel model(pb.d, pb.ctl, Eigen::VectorXd::LinSpaced(7, -0.5, 0.5), rs);
  sg::GlmRecorder rec(pb.d, pb.ctl);
  std::atomic<long> progress{0};
  sg::run_chain(model, rec, pb.ctl, rs, progress);  // policy from pb.ctl.sampler (sgld)
  CHECK((rec.res.draws.array() == a.draws.array()).all());
}

TEST(sampler_and_method_names) {
  CHECK(sg::sampler_from_name("sgld") == sg::Sampler::sgld);
  CHECK(sg::sampler_from_name("sghmc") == sg::Sampler::sghmc);
  CHECK_THROWS(sg::sampler_from_name("sgdl"), std::invalid_argument);
  CHECK_THROWS(scalebayes::parse_enum<sg::Method>("SA"), std::invalid_argument);
  CHECK(scalebayes::parse_enum<sg::Method>("em") == sg::Method::em);
  sg::Control ctl;
  ctl.friction = 0.0;  // the step part validates its own knobs
  CHECK_THROWS(ctl.validate(), std::invalid_argument);
  const sg::StepControl& part = ctl;
  CHECK_THROWS(part.validate(), std::invalid_argument);
}

// The density model (density.hpp) through run_chains: SGLD on N(mu, S) written independently (one normal per
// parameter from the chain's stream, nothing else drawn), threaded and inline modes identical.
sg::Control density_control(long T) {
  sg::Control ctl;
  ctl.method = sg::Method::none;
  ctl.batch_size = 1;
  ctl.iterations = T;
  ctl.burnin = 0;
  ctl.thin = 1;
  ctl.trace_every = 1;
  ctl.report_every = 8;
  ctl.chains = 3;
  ctl.step.type = sg::StepSchedule::Type::constant;
  ctl.step.eps0 = 0.05;
  return ctl;
}

TEST(density_model_sgld_matches_independent_code) {
  Eigen::VectorXd mu(2);
  mu << 1.0, -1.0;
  Eigen::MatrixXd S(2, 2);
  S << 1.0, 0.5, 0.5, 2.0;
  sg::GaussianTarget tg(mu, S);
  const Eigen::MatrixXd Q = S.inverse();
  sg::Control ctl = density_control(40);
  Eigen::MatrixXd init = Eigen::MatrixXd::Zero(2, 3);
  scalebayes::parallel::RunSettings run;
  run.seed = 17;
  run.threads = 2;
  sg::DensityRunResult r = sg::run_density(tg, ctl, run, init);
  CHECK(!r.interrupted);
  for (int c = 0; c < 3; ++c) {
    Stream rs(17, static_cast<std::uint64_t>(c));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(2);
    double maxdiff = 0.0;
    for (long k = 0; k < 40; ++k) {
      const Eigen::VectorXd g = -(Q * (x - mu));
      x += 0.05 * g;
      for (int j = 0; j < 2; ++j) x[j] += std::sqrt(2.0 * 0.05) * sg::Ziggurat::normal(rs);
      maxdiff = std::max(maxdiff, (r.chains[c].draws.row(k).transpose() - x).cwiseAbs().maxCoeff());
    }
    CHECK(maxdiff < 1e-12);
    CHECK(r.chains[c].iterations_done == 40 && r.chains[c].saved == 40);
  }
  // inline mode: the same draws, on this thread
  sg::DensityRunResult ri = sg::run_density(tg, ctl, run, init, scalebayes::parallel::Monitor(), true);
  for (int c = 0; c < 3; ++c) CHECK((ri.chains[c].draws.array() == r.chains[c].draws.array()).all());
}

// SGNHT (steps.hpp) through the density model, against its recursion written independently: one thermostat
// for all parameters, xi_0 = a, noise sd sqrt(2 a eta / tau), xi += v'v / d - eta / tau after the move.
// A 3-dimensional Gaussian N(mu, S), one correlation and the third variance s22: the target of the policies'
// independent recursions below; Q = S^-1.
struct Gaussian3 {
  Eigen::VectorXd mu;
  Eigen::MatrixXd S, Q;
  explicit Gaussian3(double s22) : mu(3), S(Eigen::MatrixXd::Identity(3, 3)) {
    mu << 1.0, -1.0, 0.5;
    S(0, 1) = S(1, 0) = 0.3;
    S(2, 2) = s22;
    Q = S.inverse();
  }
  // three chains from 0 at inverse temperature tau, on two threads
  sg::DensityRunResult run(sg::Control ctl, std::uint64_t seed, double tau) const {
    sg::GaussianTarget tg(mu, S);
    ctl.temperature = sg::Annealing{};
    ctl.temperature.tau0 = tau;
    scalebayes::parallel::RunSettings rs;
    rs.seed = seed;
    rs.threads = 2;
    return sg::run_density(tg, ctl, rs, Eigen::MatrixXd::Zero(3, 3));
  }
};

TEST(density_model_sgnht_matches_independent_code) {
  const Gaussian3 g3(4.0);
  const Eigen::VectorXd& mu = g3.mu;
  const Eigen::MatrixXd& Q = g3.Q;
  sg::Control ctl = density_control(60);
  ctl.sampler = sg::Sampler::sgnht;
  ctl.friction = 0.2;
  sg::DensityRunResult r = g3.run(ctl, 5, 2.0);
  const double eta = 0.05, a = 0.2, tau = 2.0;
  for (int c = 0; c < 3; ++c) {
    Stream rs(5, static_cast<std::uint64_t>(c));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(3), v = Eigen::VectorXd::Zero(3);
    double xi = a, maxdiff = 0.0;
    for (long k = 0; k < 60; ++k) {
      const Eigen::VectorXd g = -(Q * (x - mu));
      v = (1.0 - xi) * v + eta * g;
      for (int j = 0; j < 3; ++j) v[j] += std::sqrt(2.0 * a * eta / tau) * sg::Ziggurat::normal(rs);
      x += v;
      xi += v.squaredNorm() / 3.0 - eta / tau;
      maxdiff = std::max(maxdiff, (r.chains[c].draws.row(k).transpose() - x).cwiseAbs().maxCoeff());
    }
    CHECK(maxdiff < 1e-12);
  }
}

// SGHMC by BAOAB (steps.hpp) through the density model, against its recursion written independently: a full
// kick, half a move, the exact Ornstein-Uhlenbeck step e^-a v + sqrt(eta (1 - e^-2a) / tau) z, half a move.
TEST(density_model_sghmc_baoab_matches_independent_code) {
  sg::Control ctl = density_control(60);
  ctl.sampler = sg::Sampler::sghmc_baoab;
  ctl.friction = 0.2;
  const Gaussian3 g3(4.0);
  sg::DensityRunResult r = g3.run(ctl, 7, 2.0);
  const double eta = 0.05, a = 0.2, tau = 2.0, c = std::exp(-a);
  for (int ch = 0; ch < 3; ++ch) {
    Stream rs(7, static_cast<std::uint64_t>(ch));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(3), v = Eigen::VectorXd::Zero(3);
    double maxdiff = 0.0;
    for (long k = 0; k < 60; ++k) {
      const Eigen::VectorXd g = -(g3.Q * (x - g3.mu));
      v += eta * g;
      x += 0.5 * v;
      v *= c;
      for (int j = 0; j < 3; ++j) v[j] += std::sqrt(eta * (1.0 - c * c) / tau) * sg::Ziggurat::normal(rs);
      x += 0.5 * v;
      maxdiff = std::max(maxdiff, (r.chains[ch].draws.row(k).transpose() - x).cwiseAbs().maxCoeff());
    }
    CHECK(maxdiff < 1e-12);
  }
}

// pSGLD (steps.hpp) through the density model, against its recursion written independently: V on the mean
// gradient's scale (N = 1 here) with Adam's bias correction, adapted for k <= burnin and then frozen (adapt =
// burnin), or on every iteration (adapt = always); P = 1 / (lambda + sqrt(V / (1 - alpha^m))); x += eps P g +
// sqrt(2 eps P / tau) z, one normal per parameter.
TEST(density_model_psgld_matches_independent_code) {
  const Gaussian3 g3(25.0);
  const Eigen::VectorXd& mu = g3.mu;
  const Eigen::MatrixXd& Q = g3.Q;
  for (int always = 0; always < 2; ++always) {
    sg::Control ctl = density_control(60);
    ctl.burnin = 20;
    ctl.sampler = sg::Sampler::psgld;
    ctl.rmsprop.alpha = 0.9;
    ctl.rmsprop.lambda = 1e-3;
    ctl.rmsprop.adapt = always ? sg::RmspropControl::Adapt::always : sg::RmspropControl::Adapt::burnin;
    sg::DensityRunResult r = g3.run(ctl, 9, 2.0);
    const double eps = 0.05, tau = 2.0, alpha = 0.9, lambda = 1e-3;
    for (int c = 0; c < 3; ++c) {
      Stream rs(9, static_cast<std::uint64_t>(c));
      Eigen::VectorXd x = Eigen::VectorXd::Zero(3), V = Eigen::VectorXd::Zero(3), P(3);
      double decay = 1.0, maxdiff = 0.0;
      for (long k = 1; k <= 60; ++k) {
        const Eigen::VectorXd g = -(Q * (x - mu));
        if (always || k <= 20) {
          decay *= alpha;
          V = alpha * V + (1.0 - alpha) * g.cwiseProduct(g);
          for (int j = 0; j < 3; ++j) P[j] = 1.0 / (std::sqrt(V[j] / (1.0 - decay)) + lambda);
        }
        for (int j = 0; j < 3; ++j) {
          const double z = sg::Ziggurat::normal(rs);
          x[j] += eps * P[j] * g[j] + std::sqrt(2.0 * eps * P[j] / tau) * z;
        }
        if (k > 20) maxdiff = std::max(maxdiff, (r.chains[c].draws.row(k - 21).transpose() - x).cwiseAbs().maxCoeff());
      }
      CHECK(maxdiff < 1e-12);
      CHECK(r.chains[c].saved == 40);
    }
  }
}

// pSGLD with a metric M = L L' (a non-triangular factor L): the recursion on the whitened gradient u = L' g with
// V starting at 1 (no bias correction), and the move x += L (eps P u + sqrt(2 eps P / tau) z), written
// independently.
TEST(density_model_psgld_with_metric_matches_independent_code) {
  const Gaussian3 g3(25.0);
  sg::Control ctl = density_control(60);
  ctl.burnin = 20;
  ctl.sampler = sg::Sampler::psgld;
  ctl.rmsprop.alpha = 0.9;
  ctl.rmsprop.lambda = 1e-3;
  Eigen::MatrixXd L(3, 3);
  L << 1.0, 0.2, 0.0, 0.3, 0.9, 0.1, -0.2, 0.4, 4.5;
  ctl.metric.factor = L;
  sg::DensityRunResult r = g3.run(ctl, 11, 2.0);
  const double eps = 0.05, tau = 2.0, alpha = 0.9, lambda = 1e-3;
  for (int c = 0; c < 3; ++c) {
    Stream rs(11, static_cast<std::uint64_t>(c));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(3), V = Eigen::VectorXd::Ones(3), P(3), w(3);
    double maxdiff = 0.0;
    for (long k = 1; k <= 60; ++k) {
      const Eigen::VectorXd u = L.transpose() * (-(g3.Q * (x - g3.mu)));
      if (k <= 20) {
        V = alpha * V + (1.0 - alpha) * u.cwiseProduct(u);
        for (int j = 0; j < 3; ++j) P[j] = 1.0 / (std::sqrt(V[j]) + lambda);
      }
      for (int j = 0; j < 3; ++j) w[j] = eps * P[j] * u[j] + std::sqrt(2.0 * eps * P[j] / tau) * sg::Ziggurat::normal(rs);
      x += L * w;
      if (k > 20) maxdiff = std::max(maxdiff, (r.chains[c].draws.row(k - 21).transpose() - x).cwiseAbs().maxCoeff());
    }
    CHECK(maxdiff < 1e-12);
  }
}

// An affine reparametrization (density.hpp: Affine, theta = c + L phi): the chain is the sampler on phi with the
// gradient L' g(c + L phi), its start L^-1 (theta0 - c), and the draws and final state are theta; SGLD written
// independently, and a factor that is not invertible is refused.
TEST(density_model_affine_reparametrization_matches_independent_code) {
  const Gaussian3 g3(4.0);
  sg::Control ctl = density_control(50);
  sg::Affine af;
  af.center = Eigen::Vector3d(0.5, -0.2, 0.1);
  af.factor.resize(3, 3);
  af.factor << 1.0, 0.0, 0.0, 0.3, 0.9, 0.0, -0.2, 0.4, 2.0;
  sg::GaussianTarget tg(g3.mu, g3.S);
  scalebayes::parallel::RunSettings rs;
  rs.seed = 13;
  rs.threads = 2;
  Eigen::MatrixXd init(3, 3);
  init << 0.0, 1.0, -1.0, 0.0, 0.5, 2.0, 0.0, -0.5, 1.0;
  sg::DensityRunResult r = sg::run_density(tg, ctl, rs, init, scalebayes::parallel::Monitor(), false, nullptr, &af);
  for (int c = 0; c < 3; ++c) {
    Stream st(13, static_cast<std::uint64_t>(c));
    Eigen::VectorXd phi = af.factor.lu().solve(Eigen::VectorXd(init.col(c)) - af.center);
    double maxdiff = 0.0;
    for (long k = 0; k < 50; ++k) {
      const Eigen::VectorXd theta = af.center + af.factor * phi;
      const Eigen::VectorXd u = af.factor.transpose() * (-(g3.Q * (theta - g3.mu)));
      for (int j = 0; j < 3; ++j) phi[j] += 0.05 * u[j] + std::sqrt(2.0 * 0.05) * sg::Ziggurat::normal(st);
      maxdiff = std::max(maxdiff, (r.chains[c].draws.row(k).transpose() - (af.center + af.factor * phi)).cwiseAbs().maxCoeff());
    }
    CHECK(maxdiff < 1e-12);
    CHECK((r.chains[c].state - (af.center + af.factor * phi)).cwiseAbs().maxCoeff() < 1e-12);
  }
  sg::Affine bad = af;
  bad.factor.col(2) = bad.factor.col(1);
  CHECK_THROWS(sg::run_density(tg, ctl, rs, init, scalebayes::parallel::Monitor(), false, nullptr, &bad),
               std::invalid_argument);
}

// The cyclical schedule (schedules.hpp): eps_k = eps0 / 2 (cos(pi t_k) + 1) over M cycles of ceil(K / M); the
// exploration stage (t_k < beta) keeps no draw (Control::kept, n_saved) and runs without noise: SGLD there is
// gradient ascent, x += eps_k g, written independently; the sampling stage adds sqrt(2 eps_k) z.
TEST(cyclical_schedule_explores_without_noise_and_keeps_the_sampling_stage) {
  const Gaussian3 g3(4.0);
  sg::Control ctl = density_control(50);
  ctl.step.type = sg::StepSchedule::Type::cyclical;
  ctl.step.cycles = 3;
  ctl.step.total = 50;
  ctl.step.explore = 0.3;
  ctl.burnin = 4;
  ctl.thin = 2;
  CHECK(ctl.step.cycle_length() == 17);
  long kept = 0;
  for (long k = 1; k <= 50; ++k) {
    const double t = static_cast<double>((k - 1) % 17) / 17.0;
    CHECK(std::abs(ctl.step.at(k) - 0.05 / 2.0 * (std::cos(3.14159265358979323846 * t) + 1.0)) < 1e-15);
    CHECK(ctl.step.exploring(k) == (t < 0.3));
    kept += (k > 4 && (k - 4) % 2 == 0 && !(t < 0.3)) ? 1 : 0;
  }
  CHECK(ctl.n_saved() == kept);
  sg::DensityRunResult r = g3.run(ctl, 3, 1.0);
  for (int c = 0; c < 3; ++c) {
    CHECK(r.chains[c].saved == kept);
    Stream rs(3, static_cast<std::uint64_t>(c));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(3);
    long row = 0;
    double maxdiff = 0.0;
    for (long k = 1; k <= 50; ++k) {
      const Eigen::VectorXd g = -(g3.Q * (x - g3.mu));
      const double eps = ctl.step.at(k);
      x += eps * g;
      if (!ctl.step.exploring(k))
        for (int j = 0; j < 3; ++j) x[j] += std::sqrt(2.0 * eps) * sg::Ziggurat::normal(rs);
      if (ctl.kept(k)) maxdiff = std::max(maxdiff, (r.chains[c].draws.row(row++).transpose() - x).cwiseAbs().maxCoeff());
    }
    CHECK(row == kept && maxdiff < 1e-12);
  }
}

TEST(inline_mode_calls_the_monitor_at_report_points_and_stops) {
  sg::BananaTarget tg;
  sg::Control ctl = density_control(200);
  ctl.sampler = sg::Sampler::hamcmc_sa;
  ctl.lbfgs.sa_form = sg::SaForm::matrix;
  ctl.lbfgs.gamma_min = 16.0;
  ctl.step.eps0 = 0.02;
  ctl.report_ms = 0.0;  // the fixed report points only (a loaded machine's pause would add a timed one)
  Eigen::MatrixXd init = Eigen::MatrixXd::Zero(2, 3);
  scalebayes::parallel::RunSettings run;
  run.seed = 3;
  run.threads = 1;
  // an uninterrupted inline run: the monitor sees the progress at every report point (200 / 8 per chain) and
  // once at the end, always from this thread
  std::vector<std::size_t> seen;
  const auto me = std::this_thread::get_id();
  bool same_thread = true;
  scalebayes::parallel::Monitor count = [&](std::size_t done) {
    same_thread = same_thread && std::this_thread::get_id() == me;
    seen.push_back(done);
    return true;
  };
  sg::DensityRunResult all = sg::run_density(tg, ctl, run, init, count, true);
  CHECK(same_thread);
  CHECK(!all.interrupted);
  CHECK(seen.size() == 3 * (200 / 8) + 1);
  CHECK(seen.back() == 600);
  // a monitor that asks to stop at its 5th call: chain 0 stops at iteration 40, chains 1 and 2 never start
  int calls = 0;
  scalebayes::parallel::Monitor stop5 = [&](std::size_t) { return ++calls < 5; };
  sg::DensityRunResult part = sg::run_density(tg, ctl, run, init, stop5, true);
  CHECK(part.interrupted);
  CHECK(calls == 5);
  CHECK(part.chains[0].iterations_done == 39 && part.chains[0].saved == 39);
  CHECK((part.chains[0].draws.array() == all.chains[0].draws.topRows(39).array()).all());
  CHECK(part.chains[1].iterations_done == 0 && part.chains[1].draws.rows() == 0 && part.chains[1].draws.cols() == 2);
  CHECK(part.chains[2].state == init.col(2));
  // threaded, any number of threads: the same draws as inline
  run.threads = 2;
  sg::DensityRunResult thr = sg::run_density(tg, ctl, run, init);
  for (int c = 0; c < 3; ++c) CHECK((thr.chains[c].draws.array() == all.chains[c].draws.array()).all());
}

TEST(banana_exact_draws_moments) {
  const Eigen::MatrixXd x = sg::banana_exact(200000, 5);
  const double m2 = std::tgamma(0.75) / std::tgamma(0.25) * std::sqrt(10.0);
  const double e1 = x.col(0).mean(), e2 = x.col(0).array().square().mean();
  const double sd2 = std::sqrt((x.col(0).array().square() - e2).square().mean() / 200000.0);
  CHECK(std::abs(e1) < 4.0 * std::sqrt(m2 / 200000.0));
  CHECK(std::abs(e2 - m2) < 4.0 * sd2);
  const Eigen::ArrayXd r = x.col(1).array() - (x.col(0).array().square() / 4.0 - 1.2);
  CHECK(std::abs(r.mean()) < 4.0 * 0.25 / std::sqrt(200000.0));
}

int main() { return sbtest::run_all(); }
