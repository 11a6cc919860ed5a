// scalebayes/sgmcmc/steps.hpp -- the SG-MCMC step as a policy over the whole group list.
//
// The chain driver (chain.hpp) computes, per iteration, the posterior gradient of every group at the current
// latent variables (`posterior_gradient`: the minibatch log-likelihood gradient scaled by 1/sigma^2 or the fixed
// likelihood precision, plus the prior gradient) and then hands the whole group list to ONE step policy, chosen
// once per run. A step policy is a class with
//
//   static constexpr bool needs_regradient;     // true: step() may call regrad() (a second gradient on the same
//                                               // minibatch; the model then keeps what it needs to replay it)
//   template <class Ops> void start(std::vector<Group<Ops>>&);                 // once, before iteration 1
//   template <class Ops, class Regrad>
//   void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad& regrad);
//
// `step` moves every group's value (and whatever state the policy keeps: SGHMC's momentum lives in the groups,
// a quasi-Newton memory would live in the policy object, which is built per chain). `regrad()` recomputes
// every group's `grad` as the posterior gradient at the CURRENT values, on the same minibatch, at the same
// latent variables: it neither records anything in the model's trace nor draws new dropout masks, and it leaves
// the model's random state as it found it, so a policy that calls it changes no other random number of the
// chain. The policy's noise comes from `rng` (the model's noise source) only.
//
// SgldStep and SghmcStep are the two policies of Deng et al. (2019), SgnhtStep the thermostat of Ding et al. (2014),
// PsgldStep the RMSprop-preconditioned SGLD of Li et al. (2016); SghmcBaoabStep SGHMC by the BAOAB splitting;
// HamcmcSaStep and HamcmcStep (lbfgs.hpp) the quasi-Newton ones of Wang, Deng & Lin (2021);
// `with_step_policy(StepControl, f)` builds the policy a control names and calls f(policy) (a switch once per run,
// not once per group and iteration). A new sampler is a new policy class plus its enum value, its row of
// sampler_table() and one case here; the glue and R read the table by name (design-sgmcmc.md shows one).
// Header-only, std, no R.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "scalebayes/sgmcmc/lbfgs.hpp"
#include "scalebayes/sgmcmc/schedules.hpp"
#include "scalebayes/sgmcmc/updates.hpp"

namespace scalebayes {
namespace sgmcmc {

enum class Sampler { sgld, sghmc, sgnht, hamcmc_sa, hamcmc, psgld, sghmc_baoab };

// The samplers, defined once. Names, labels and checks here; the R side reads the whole table
// (cpp_sgmcmc_samplers(): the `sampler =` choices, the default network steps, the warm-up grid), so a new
// sampler is a row here, its policy class and its case in with_step_policy, nothing in R.
//   per_example    the step is per example (the drift is the summed minibatch gradient with no preconditioner:
//                  the warm-up's grid and print() divide it by N);
//   momentum       it carries a momentum (SGHMC, SGNHT: about 1 / friction times further per step than SGLD);
//   preconditioned it keeps an L-BFGS preconditioner (hamcmc_sa(): its choices, its settings' checks; the noise
//                  has the preconditioner's covariance, so the warm-up's excess variance is relative);
//   metric         it reads StepControl::metric (a fixed preconditioner from the regression / density warm-up:
//                  SGLD, SGHMC, SGNHT, BAOAB, and pSGLD, whose RMSprop diagonal then adapts in the metric's
//                  whitened coordinates; HAMCMC's L-BFGS preconditioner is its own);
//   rmsprop        it adapts the RMSprop diagonal preconditioner of pSGLD (reads StepControl::rmsprop);
//   batched        it has a batched form (nn/batched_sgmcmc.hpp; every sampler now: an L-BFGS memory is kept
//                  per member by the batched storage's per-member Scalars);
//   noise_estimate it reads StepControl::noise_estimate (SGHMC's beta-hat; R warns when the setting is given to a
//                  sampler that does not: SGNHT's thermostat absorbs the minibatch noise instead);
//   net_lr         the measured per-example network rate: a network's default step is net_lr / N;
//   net_lr_summed  for a sampler whose preconditioner divides by the summed curvature from iteration 1
//                  (HAMCMC-SA with precond_init = "curvature"): the rate on the summed scale, N-free (NaN: none).
// The rates, measured (bench/RESULTS.md, "Network defaults"): on Boston (x standardized, nn_mlp(50), 200 epochs
// of 50) SGHMC 0.01 / 0.03 give test RMSE 3.4 / 3.6 and 0.003 gives 8.8; SGLD 0.03 / 0.1 / 0.3 give 7.3 / 3.4 /
// 3.2. On 8,000 MNIST digits (nn_mlp(c(128, 64)), 5 epochs) SGHMC 0.01 / 0.03 / 0.1 reach 0.63 / 0.87 / 0.91
// and SGLD 0.01 / 0.1 / 0.3 reach 0.13 / 0.68 / 0.88. SGNHT takes SGHMC's (the same momentum form; its
// thermostat starts at the friction). HAMCMC starts from an empty memory (I / gamma_min: its first steps are
// SGLD's) and takes SGLD's rate. HAMCMC-SA starts from G_1 = I / gamma_1 (lbfgs.hpp), so its step is on the
// summed scale: 0.1 (grid 0.9 ... 0.011). Measured (2026-11-28, one chain of 10,000 constant steps on 2,000
// MNIST digits, nn_mlp(), held-out accuracy on 1,000): steps 0.003 / 0.01 / 0.03 / 0.1 / 0.3 / 1 reach 0.52 /
// 0.74 / 0.87 / 0.89 / 0.90 / 0.90, 3 and 10 diverge. With precond_init = "identity" (G_1 = I) its grid stays
// per example at net_lr: on Boston 0.1 / 0.3 give RMSE 3.6 / 3.6; on 5,000 Fashion-MNIST images
// (nn_mlp(100), 10 epochs of 100) 0.3 / 1 / 3 / 10 reach 0.60 / 0.65 / 0.62 / 0.28 (SGLD at 0.3: 0.75).
// pSGLD's step is RMSprop's learning rate, N-free (net_lr_summed; no per-example rate): measured (2026-12-03,
// one chain, the given step's polynomial decay) on Boston as above 0.001 / 0.003 / 0.01 / 0.03 / 0.1 / 0.3 give
// RMSE 4.2 / 3.4 / 3.0 / 3.0 / 2.7 / diverged (SGLD at 0.3 / N: 2.8); on 4,000 MNIST digits (nn_mlp(c(128, 64)),
// 5 epochs of 50, held-out 1,000) 0.001 / 0.003 / 0.01 / 0.03 / 0.1 / 0.3 reach 0.85 / 0.87 / 0.89 / 0.90 /
// 0.85 / diverged (SGLD at 0.3 / N: 0.89). 0.03: the warm-up's grid 0.27 ... 0.0033 holds both optima.
struct SamplerInfo {
  Sampler id;
  const char* name;
  const char* label;
  bool per_example, momentum, preconditioned, metric, rmsprop, batched, noise_estimate;
  double net_lr, net_lr_summed;
};
inline const std::vector<SamplerInfo>& sampler_table() {
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  static const std::vector<SamplerInfo> t{
      // id, name, label, per_example, momentum, preconditioned, metric, rmsprop, batched, noise_estimate, net_lr,
      // net_lr_summed
      {Sampler::sgld, "sgld", "SGLD", true, false, false, true, false, true, false, 0.3, none},
      {Sampler::sghmc, "sghmc", "SGHMC", true, true, false, true, false, true, true, 0.03, none},
      {Sampler::sgnht, "sgnht", "SGNHT", true, true, false, true, false, true, false, 0.03, none},
      {Sampler::hamcmc_sa, "hamcmc_sa", "HAMCMC-SA", false, false, true, false, false, true, false, 0.3, 0.1},
      {Sampler::hamcmc, "hamcmc", "HAMCMC", false, false, true, false, false, true, false, 0.3, none},
      {Sampler::psgld, "psgld", "pSGLD", false, false, false, true, true, true, false, none, 0.03},
      {Sampler::sghmc_baoab, "sghmc_baoab", "SGHMC (BAOAB)", true, true, false, true, false, true, false, 0.03, none}};
  return t;
}
inline const SamplerInfo& sampler_info(Sampler s) {
  for (const SamplerInfo& i : sampler_table())
    if (i.id == s) return i;
  throw std::invalid_argument("sampler missing from sampler_table()");
}
inline const char* sampler_name(Sampler s) { return sampler_info(s).name; }
// The names of the samplers that satisfy pred, as "\"a\", \"b\"" for messages.
template <class Pred>
std::string sampler_names(Pred pred) {
  std::string r;
  for (const SamplerInfo& i : sampler_table())
    if (pred(i)) r += std::string(r.empty() ? "" : ", ") + "\"" + i.name + "\"";
  return r;
}
inline Sampler sampler_from_name(const std::string& s) {
  for (const SamplerInfo& i : sampler_table())
    if (s == i.name) return i.id;
  throw std::invalid_argument("unknown sampler '" + s + "' (known: " +
                              sampler_names([](const SamplerInfo&) { return true; }) + ")");
}

// A fixed preconditioner ("metric", Stan's inverse mass matrix) M = L L' of SGLD, SGHMC, SGNHT (and pSGLD), on the
// parameters flattened in group order: `factor` a d x d matrix L (any square factor, not necessarily
// triangular: a caller that permutes the parameters permutes its rows), or `diag` the d entries of a diagonal L
// (the square roots of M's diagonal); both empty: none, and the steps are the paper's, bit for bit. With a
// metric the policies run in the whitened coordinates phi = L^{-1} theta, where the target's gradient is L' g:
//   SGLD   theta <- theta + L (eps L' g + N(0, 2 eps / tau I)),      i.e. eps M g + N(0, 2 eps M / tau)
//   SGHMC  v <- (1 - alpha) v + eps L' g + N(0, 2 (alpha - beta_hat) eps / tau I),   theta <- theta + L v
//   SGNHT  the same with the thermostat xi on v'v / d
// (v, the whitened momentum, lives in the groups' momentum). A constant M leaves each sampler's stationary
// distribution the target's (the Langevin diffusion d theta = M grad log p dt + sqrt(2 M) dW has stationary p
// for any fixed positive definite M): it changes the speed, not the target. Eigen storage only (the GLM and
// the density models); a network's policies refuse a metric.
struct Metric {
  Eigen::MatrixXd factor;
  Eigen::VectorXd diag;
  bool empty() const { return factor.size() == 0 && diag.size() == 0; }
  long dim() const { return factor.size() ? static_cast<long>(factor.rows()) : static_cast<long>(diag.size()); }
  void validate() const {
    if (factor.size() && diag.size()) throw std::invalid_argument("metric: give a factor or a diagonal, not both");
    if (factor.size() && factor.rows() != factor.cols()) throw std::invalid_argument("metric factor must be square");
    if (factor.size() && !factor.allFinite()) throw std::invalid_argument("metric factor must be finite");
    if (diag.size() && !(diag.allFinite() && (diag.array() > 0.0).all()))
      throw std::invalid_argument("metric diagonal must be finite and > 0");
  }
  // u = L' g
  Eigen::VectorXd whiten_grad(const Eigen::VectorXd& g) const {
    return factor.size() ? Eigen::VectorXd(factor.transpose() * g) : Eigen::VectorXd(diag.cwiseProduct(g));
  }
  // L w
  Eigen::VectorXd apply(const Eigen::VectorXd& w) const {
    return factor.size() ? Eigen::VectorXd(factor * w) : Eigen::VectorXd(diag.cwiseProduct(w));
  }
};

// The groups' arrays flattened in group order, and back (Eigen storage).
template <class Ops, class Get>
Eigen::VectorXd flatten_groups(const std::vector<Group<Ops>>& groups, long d, Get get) {
  Eigen::VectorXd v(d);
  long o = 0;
  for (const auto& g : groups) {
    const auto& a = get(g);
    v.segment(o, a.size()) = a.matrix();
    o += a.size();
  }
  return v;
}
template <class Ops>
long group_dim(const std::vector<Group<Ops>>& groups) {
  long d = 0;
  for (const auto& g : groups) d += static_cast<long>(Ops::size(g.value));
  return d;
}
template <class Ops>
void check_metric(const Metric& m, const std::vector<Group<Ops>>& groups) {
  if (m.empty()) return;
  if constexpr (!std::is_same<Ops, EigenOps>::value) {
    throw std::invalid_argument("a metric (fixed preconditioner) is implemented for regression and density targets only");
  } else {
    if (m.dim() != group_dim<Ops>(groups))
      throw std::invalid_argument("metric has dimension " + std::to_string(m.dim()) + " but the model has " +
                                  std::to_string(group_dim<Ops>(groups)) + " parameters");
  }
}
// theta += L w, group by group (Eigen storage).
template <class Ops>
void add_metric_move(std::vector<Group<Ops>>& groups, const Metric& m, const Eigen::VectorXd& w) {
  const Eigen::VectorXd delta = m.apply(w);
  long o = 0;
  for (auto& g : groups) {
    const long s = static_cast<long>(g.value.size());
    g.value += delta.segment(o, s).array();
    o += s;
  }
}

// pSGLD's RMSprop preconditioner (Li, Chen, Carlson & Carin 2016): V <- alpha V + (1 - alpha) gbar^2 on the
// mean gradient gbar = grad / N, G = 1 / (lambda + sqrt(V)); `adapt`: V adapts during the burn-in only
// (burnin, the default: the kept draws are SGLD with a fixed diagonal preconditioner, whose correction term
// Gamma is exactly 0) or on every iteration (always: Li et al.'s approximation Gamma ~ 0, not exact).
struct RmspropControl {
  enum class Adapt { burnin, always };
  double alpha = 0.99, lambda = 1e-5;
  Adapt adapt = Adapt::burnin;
  void validate() const {
    if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("rmsprop alpha must lie in (0, 1)");
    if (!(lambda > 0.0) || !std::isfinite(lambda)) throw std::invalid_argument("rmsprop lambda must be > 0 and finite");
  }
};
inline constexpr EnumTable<RmspropControl::Adapt, 2> rmsprop_adapt_names{
    "rmsprop_adapt", {{{"burnin", RmspropControl::Adapt::burnin}, {"always", RmspropControl::Adapt::always}}}};
constexpr const auto& enum_table(RmspropControl::Adapt) { return rmsprop_adapt_names; }

// The step part of a chain's settings: which policy, its learning-rate schedule and temperature, and the
// policies' own knobs.
struct StepControl {
  Sampler sampler = Sampler::sgld;
  StepSchedule step;        // eps_k (SGLD step size; SGHMC learning rate eta)
  Annealing temperature;    // inverse temperature tau_k
  double friction = 0.1, noise_estimate = 0.0;  // SGHMC; SGNHT: friction is the diffusion a (and xi_0)
  LbfgsControl lbfgs;       // HAMCMC-SA, HAMCMC (lbfgs.hpp)
  Metric metric;            // SGLD, SGHMC, SGNHT: a fixed preconditioner (empty: none)
  RmspropControl rmsprop;   // pSGLD
  void validate() const {
    lbfgs.validate();
    metric.validate();
    rmsprop.validate();
    if (!metric.empty() && !sampler_info(sampler).metric)
      throw std::invalid_argument("a metric is for " + sampler_names([](const SamplerInfo& i) { return i.metric; }) +
                                  "; " + sampler_name(sampler) + " keeps its own preconditioner");
    if (sampler == Sampler::hamcmc && lbfgs.memory < 2) throw std::invalid_argument("HAMCMC needs memory >= 2");
    if (!(friction > 0.0 && friction <= 1.0)) throw std::invalid_argument("friction must lie in (0, 1]");
    if (!(noise_estimate >= 0.0 && noise_estimate < friction))
      throw std::invalid_argument("noise_estimate must lie in [0, friction)");
    step.validate();
    temperature.validate();
  }
};

// What a preconditioned step reports of itself at a traced iteration (NaN: not reported, e.g. SGLD / SGHMC):
// the length of the drift actually taken relative to the posterior gradient's, ||xi|| / ||g|| (1 for SGLD),
// the same for the injected noise, ||eta|| / ||z|| (z the standard normal vector; 1 for SGLD), and the scale
// gamma of the L-BFGS memory's initial Hessian B0 = gamma I. A batched group of chains (nn/batched_sgmcmc.hpp)
// reports one value per member in the vectors (the scalars then hold member 0's); one chain leaves them empty.
struct StepStats {
  double drift_ratio = std::numeric_limits<double>::quiet_NaN();
  double noise_ratio = std::numeric_limits<double>::quiet_NaN();
  double gamma = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> member_drift, member_noise, member_gamma;
};

// What a step needs of the iteration: its number, step size and inverse temperature; `stats`, when not null,
// asks the step to report itself there (traced iterations only: it costs a few inner products).
struct StepContext {
  long k = 1;
  double eps = 0.0;
  double tau = 1.0;
  StepStats* stats = nullptr;
  // A batched group of chains (nn/batched_sgmcmc.hpp): which members still run (the others' state is never read
  // again: a stopped member or a placeholder). Null for one chain.
  const std::vector<char>* active = nullptr;
  // The chain's burn-in (iterations before the first kept draw) and N (model.n_obs()): what a policy that adapts
  // during the burn-in only (pSGLD) and one on the mean gradient's scale need.
  long burnin = 0;
  double n_obs = 1.0;
};

// grad <- grad * (likelihood precision) + gradient of the log prior, for every group. `lik_scale` is 1/sigma^2 for
// a regression whose likelihood variance is sigma^2, the fixed precision 1/lik_var when that variance is fixed,
// and not applied (`scale_lik` false) for a likelihood without sigma (classification).
template <class Ops>
void posterior_gradient(std::vector<Group<Ops>>& groups, const typename Ops::Scalar& sigma, bool scale_lik,
                        const typename Ops::Scalar& lik_scale) {
  if (scale_lik)
    for (auto& g : groups) g.grad *= lik_scale;
  for (auto& g : groups)
    if (Ops::size(g.value) > 0) add_prior_grad<Ops>(g, sigma);
}

// The groups' momenta <- v (flattened in group order; Eigen storage).
template <class Ops>
void store_momentum(std::vector<Group<Ops>>& groups, const Eigen::ArrayXd& v) {
  long o = 0;
  for (auto& g : groups) {
    const long s = static_cast<long>(g.momentum.size());
    g.momentum = v.segment(o, s);
    o += s;
  }
}

// SGLD, eq. (2), group by group: beta <- beta + eps grad + N(0, 2 eps / tau).
// With a metric (StepControl::metric): theta <- theta + L (eps L' g + N(0, 2 eps / tau I)).
struct SgldStep {
  static constexpr bool needs_regradient = false;
  explicit SgldStep(const StepControl& sc) : metric(sc.metric) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>& groups) {
    check_metric<Ops>(metric, groups);
  }
  template <class Ops, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad&) {
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      if (!metric.empty()) {
        const long d = metric.dim();
        Eigen::ArrayXd w = (c.eps * metric.whiten_grad(flatten_groups<Ops>(groups, d, [](const Group<Ops>& g) -> const
                                                                              typename Ops::Array& { return g.grad; })))
                               .array();
        Ops::add_gaussian(w, std::sqrt(2.0 * c.eps / c.tau), rng);
        add_metric_move<Ops>(groups, metric, w.matrix());
        return;
      }
    }
    for (auto& g : groups) sgld_step<Ops>(g, c.eps, c.tau, rng);
  }
  Metric metric;
};

// SGHMC, eq. (3) in the SGD-with-momentum form, group by group (the momentum lives in the groups).
struct SghmcStep {
  static constexpr bool needs_regradient = false;
  explicit SghmcStep(const StepControl& sc)
      : friction(sc.friction), noise_estimate(sc.noise_estimate), metric(sc.metric) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>& groups) {
    check_metric<Ops>(metric, groups);
  }
  template <class Ops, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad&) {
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      if (!metric.empty()) {
        // the whitened momentum v lives in the groups' momentum (flattened in group order)
        const long d = metric.dim();
        auto grad = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.grad; };
        auto mom = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.momentum; };
        Eigen::ArrayXd v = ((1.0 - friction) * flatten_groups<Ops>(groups, d, mom) +
                            c.eps * metric.whiten_grad(flatten_groups<Ops>(groups, d, grad)))
                               .array();
        Ops::add_gaussian(v, std::sqrt(2.0 * (friction - noise_estimate) * c.eps / c.tau), rng);
        store_momentum<Ops>(groups, v);
        add_metric_move<Ops>(groups, metric, v.matrix());
        return;
      }
    }
    for (auto& g : groups) sghmc_step<Ops>(g, c.eps, friction, noise_estimate, c.tau, rng);
  }
  double friction, noise_estimate;
  Metric metric;
};

// SGHMC by the BAOAB splitting of underdamped Langevin dynamics (Leimkuhler & Matthews 2013), in SGHMC's
// SGD-with-momentum units (v = p h, eta = h^2, friction alpha = gamma h), the two half kicks of successive
// iterations merged into one kick at the current point (one gradient per iteration, as SGHMC):
//   v <- v + eta grad,  theta <- theta + v / 2,  v <- e^-alpha v + N(0, eta (1 - e^-2 alpha) / tau),
//   theta <- theta + v / 2
// (B A O A; the O step is the exact Ornstein-Uhlenbeck flow, so no noise estimate is subtracted). With exact
// gradients its stationary variance has no O(eta) excess in the friction (SGHMC's (1 - alpha) v form has one:
// 1.116 against 0.9985 of the target's at h eta = 0.4, measured in bench/sgmcmc_baoab.cpp); with minibatch
// noise the noise's excess dominates both. With a metric it runs in the whitened coordinates, as SGHMC:
// theta <- theta + L v / 2. At tau = infinity (a cyclical schedule's exploration) it is SGD with momentum.
struct SghmcBaoabStep {
  static constexpr bool needs_regradient = false;
  explicit SghmcBaoabStep(const StepControl& sc) : friction(sc.friction), metric(sc.metric) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>& groups) {
    check_metric<Ops>(metric, groups);
  }
  template <class Ops, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad&) {
    const double decay = std::exp(-friction);
    const double sd = std::sqrt(c.eps * (1.0 - decay * decay) / c.tau);
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      if (!metric.empty()) {
        const long d = metric.dim();
        auto grad = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.grad; };
        auto mom = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.momentum; };
        Eigen::ArrayXd v = (flatten_groups<Ops>(groups, d, mom) +
                            c.eps * metric.whiten_grad(flatten_groups<Ops>(groups, d, grad))).array();
        add_metric_move<Ops>(groups, metric, (0.5 * v).matrix());
        v *= decay;
        Ops::add_gaussian(v, sd, rng);
        add_metric_move<Ops>(groups, metric, (0.5 * v).matrix());
        store_momentum<Ops>(groups, v);
        return;
      }
    }
    for (auto& g : groups) {
      g.momentum = g.momentum + c.eps * g.grad;
      g.value += 0.5 * g.momentum;
      g.momentum = decay * g.momentum;
      Ops::add_gaussian(g.momentum, sd, rng);
      g.value += 0.5 * g.momentum;
    }
  }
  double friction;
  Metric metric;
};

// SGNHT, the stochastic-gradient Nose-Hoover thermostat (Ding, Fang, Babbush, Chen, Skeel & Neven 2014,
// Algorithm 2), in the SGD-with-momentum form of SGHMC above (v = p h, eta = h^2, xi and a times h):
//   v <- (1 - xi) v + eta g + N(0, 2 a eta / tau),   theta <- theta + v,   xi <- xi + v'v / d - eta / tau,
// with ONE thermostat xi for the whole parameter vector (d parameters), xi_0 = a (`friction`). The thermostat
// raises the friction until the kinetic energy per parameter is that of the target at temperature 1/tau
// (E v_j^2 = eta / tau), which absorbs the unknown variance of the minibatch gradient that SGHMC must be told
// (`noise_estimate`). The momentum lives in the groups (as SGHMC's); xi lives where the data live (a 0-dim
// tensor on a device), so a step reads nothing back.
struct SgnhtStep {
  static constexpr bool needs_regradient = false;
  explicit SgnhtStep(const StepControl& sc) : a(sc.friction), metric(sc.metric) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>& groups) {
    check_metric<Ops>(metric, groups);
  }
  template <class Ops, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad&) {
    using Scalar = typename Ops::Scalar;
    if (!state_) {
      auto st = std::make_shared<State<Ops>>();
      const Group<Ops>* like = nullptr;
      for (const auto& g : groups) {
        st->d += static_cast<double>(Ops::size(g.value));
        if (!like && Ops::size(g.value) > 0) like = &g;
      }
      if (!like) throw std::invalid_argument("SGNHT needs at least one parameter");
      st->xi = Ops::zero_scalar(Ops::dot(like->value, like->value)) + a;
      state_ = st;
    }
    State<Ops>& st = *static_cast<State<Ops>*>(state_.get());
    const double noise_sd = std::sqrt(2.0 * a * c.eps / c.tau);
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      if (!metric.empty()) {  // the thermostat on the whitened momentum (group order)
        const long d = metric.dim();
        auto grad = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.grad; };
        auto mom = [](const Group<Ops>& g) -> const typename Ops::Array& { return g.momentum; };
        Eigen::ArrayXd v = ((1.0 - st.xi) * flatten_groups<Ops>(groups, d, mom) +
                            c.eps * metric.whiten_grad(flatten_groups<Ops>(groups, d, grad)))
                               .array();
        Ops::add_gaussian(v, noise_sd, rng);
        store_momentum<Ops>(groups, v);
        add_metric_move<Ops>(groups, metric, v.matrix());
        st.xi = st.xi + (v * v).sum() * (1.0 / st.d) - c.eps / c.tau;
        return;
      }
    }
    Scalar kinetic = Ops::zero_scalar(st.xi);
    for (auto& g : groups) {
      if (Ops::size(g.value) == 0) continue;
      g.momentum = (1.0 - st.xi) * g.momentum + c.eps * g.grad;
      Ops::add_gaussian(g.momentum, noise_sd, rng);
      g.value += g.momentum;
      kinetic = kinetic + Ops::dot(g.momentum, g.momentum);
    }
    st.xi = st.xi + kinetic * (1.0 / st.d) - c.eps / c.tau;
  }
  double a;
  Metric metric;

 private:
  template <class Ops>
  struct State {
    typename Ops::Scalar xi{};
    double d = 0.0;
  };
  std::shared_ptr<void> state_;
};

// pSGLD, preconditioned SGLD (Li, Chen, Carlson & Carin 2016, Algorithm 1) with the RMSprop diagonal
// preconditioner, in this file's SGLD form (eps g + N(0, 2 eps / tau), Li et al.'s eps / 2 and eps):
//   V <- alpha V + (1 - alpha) gbar^2,  gbar = grad / N (the mean posterior gradient per example),
//   G = 1 / (lambda + sqrt(V / (1 - alpha^m)))      (m the number of updates of V: Adam's bias correction, so the
//                                                     first steps are not 1 / sqrt(1 - alpha) = 10 times too long)
//   theta <- theta + eps G gbar + N(0, 2 eps G / (N tau)),
// i.e. SGLD with the summed-scale preconditioner P = G / N: eps is RMSprop's learning rate (a step moves each
// coordinate by about eps early on, whatever its gradient's scale). The correction term Gamma_i =
// sum_j dP_ij / dtheta_j is 0 for a P that does not depend on theta; an adapting V depends on the path, and its
// Gamma is not computable from one gradient. So V adapts for k <= max(1, burnin) only (RmspropControl::adapt =
// burnin, the default) and P is then fixed: the kept draws are SGLD with a constant diagonal metric, whose
// stationary distribution is the target for any P. adapt = always keeps adapting (Li et al.'s Gamma ~ 0: an
// approximation; design-sgmcmc.md has its measured bias). V lives in the policy, per group (per chain); the
// arithmetic is Ops' (Eigen, torch, batched members alike). With a metric (StepControl::metric, from the
// regression / density warm-up: Eigen storage) the recursion runs on the whitened gradient L' g and the move is
// L w, so the kept draws are SGLD with the constant metric L P L' (whitened_step() below).
struct PsgldStep {
  static constexpr bool needs_regradient = false;
  explicit PsgldStep(const StepControl& sc) : r(sc.rmsprop), metric(sc.metric) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>& groups) {
    check_metric<Ops>(metric, groups);
  }
  template <class Ops, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng, Regrad&) {
    using Array = typename Ops::Array;
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      if (!metric.empty()) {
        whitened_step<Ops>(groups, c, rng);
        return;
      }
    }
    if (!state_) {
      auto st = std::make_shared<State<Ops>>();
      for (const auto& g : groups) {
        st->v.push_back(Ops::zeros_like(g.value));
        st->p.push_back(Ops::zeros_like(g.value));
      }
      state_ = st;
    }
    State<Ops>& st = *static_cast<State<Ops>*>(state_.get());
    const bool adapt = r.adapt == RmspropControl::Adapt::always || c.k <= std::max(1L, c.burnin);
    if (adapt) {
      ++st.m;
      st.decay *= r.alpha;
    }
    const double N = c.n_obs, bias = 1.0 / (1.0 - st.decay);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      auto& g = groups[i];
      if (Ops::size(g.value) == 0) continue;
      if (adapt) {
        // V on the mean gradient's scale; P = G / N on the summed one
        st.v[i] = r.alpha * st.v[i] + ((1.0 - r.alpha) / (N * N)) * (g.grad * g.grad);
        st.p[i] = (1.0 / N) / ((st.v[i] * bias).sqrt() + r.lambda);
      }
      const Array& P = st.p[i];
      Array z = Ops::zeros_like(g.value);
      Ops::add_gaussian(z, 1.0, rng);
      g.value += c.eps * (P * g.grad) + (P * (2.0 * c.eps / c.tau)).sqrt() * z;
    }
  }
  RmspropControl r;
  Metric metric;

 private:
  template <class Ops>
  struct State {
    std::vector<typename Ops::Array> v, p;  // V (mean-gradient scale) and P = G / N, per group
    long m = 0;
    double decay = 1.0;                      // alpha^m
  };
  std::shared_ptr<void> state_;
  // With a metric M = L L': the same recursion on the whitened gradient u = L' g (V, P over the d whitened
  // coordinates), and the move L w, w = eps P u + N(0, 2 eps P / tau): SGLD with the preconditioner L P L'.
  // RMSprop then adapts what the metric left (the whitened posterior's scales, about 1 for a good metric). V
  // starts at that expectation, E (L' g)^2 = 1 per whitened coordinate of an exact metric (1 / N^2 on the mean
  // gradient's scale), not at 0 with Adam's bias correction: from a start near the mode (the warm-up's draws)
  // the first whitened gradients are near 0, and 1 / sqrt(V) from them made the first steps tens of sds long
  // (measured on posteriordb's nes2000-nes: sd ratios 1.5-4.1 and R-hat 1.54 at the default run length).
  Eigen::ArrayXd wv_, wp_;
  template <class Ops>
  void whitened_step(std::vector<Group<Ops>>& groups, const StepContext& c, typename Ops::Rng& rng) {
    const long d = metric.dim();
    const Eigen::ArrayXd u =
        metric.whiten_grad(flatten_groups<Ops>(groups, d, [](const Group<Ops>& g) -> const typename Ops::Array& {
          return g.grad;
        })).array();
    const double N = c.n_obs;
    if (wv_.size() != d) {
      wv_ = Eigen::ArrayXd::Constant(d, 1.0 / (N * N));
      wp_ = Eigen::ArrayXd::Zero(d);
    }
    if (r.adapt == RmspropControl::Adapt::always || c.k <= std::max(1L, c.burnin)) {
      wv_ = r.alpha * wv_ + ((1.0 - r.alpha) / (N * N)) * (u * u);
      wp_ = (1.0 / N) / (wv_.sqrt() + r.lambda);
    }
    Eigen::ArrayXd z = Eigen::ArrayXd::Zero(d);
    Ops::add_gaussian(z, 1.0, rng);
    const Eigen::ArrayXd w = c.eps * (wp_ * u) + (wp_ * (2.0 * c.eps / c.tau)).sqrt() * z;
    add_metric_move<Ops>(groups, metric, w.matrix());
  }
};

// Builds the policy `sc` names and returns f(policy).
template <class F>
decltype(auto) with_step_policy(const StepControl& sc, F&& f) {
  switch (sc.sampler) {
    case Sampler::sgld: {
      SgldStep s(sc);
      return f(s);
    }
    case Sampler::sghmc: {
      SghmcStep s(sc);
      return f(s);
    }
    case Sampler::sgnht: {
      SgnhtStep s(sc);
      return f(s);
    }
    case Sampler::hamcmc_sa: {
      HamcmcSaStep s(sc.lbfgs);
      return f(s);
    }
    case Sampler::hamcmc: {
      HamcmcStep s(sc.lbfgs);
      return f(s);
    }
    case Sampler::psgld: {
      PsgldStep s(sc);
      return f(s);
    }
    case Sampler::sghmc_baoab: {
      SghmcBaoabStep s(sc);
      return f(s);
    }
  }
  throw std::invalid_argument("unknown sampler");
}

}  // namespace sgmcmc
}  // namespace scalebayes
