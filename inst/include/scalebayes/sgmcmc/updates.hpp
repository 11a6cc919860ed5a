// scalebayes/sgmcmc/updates.hpp -- the SG-MCMC update rules of Deng, Zhang, Liang & Lin (2019), written once.
//
// A model (the Eigen GLM of glm.hpp, the LibTorch network of nn/sgmcmc.hpp) owns a list of parameter groups and
// fills each group's `grad` with the gradient of its minibatch log-likelihood scaled by N/n; the chain driver
// (chain.hpp) then calls, per iteration,
//   add_prior_grad(group, sigma)     SSGL prior (sparse groups) or N(0, prior_var) (non-sparse groups)
//   sgld_step / sghmc_step           eq. (2) / eq. (3) in the Saatci & Wilson (SGD-with-momentum) form
//   sa_update(groups, sigma, ...)    stochastic approximation of rho, kappa, delta, sigma (eqs. 12-15)
//   prune(group, s)                  magnitude pruning to sparse rate s (Algorithm 1), regrowth allowed
// All of them are templates over the storage policy `Ops` (storage.hpp).
#pragma once
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scalebayes/sgmcmc/storage.hpp"

namespace scalebayes {
namespace sgmcmc {

// One parameter group ("layer" l of the paper). Sparse groups carry the SSGL latent variables.
// `value` is updated in place only (it may alias a network's parameter tensor, see storage.hpp).
template <class Ops>
struct Group {
  using Array = typename Ops::Array;
  using Scalar = typename Ops::Scalar;
  Array value, grad, momentum;
  bool sparse = true;
  // Magnitude pruning applies to this group: -1 (default) = as `sparse`; 0 / 1 set it apart from the prior (a
  // network pruned without the SSGL prior, as the PDE study of Wang, Deng & Lin 2021 does).
  signed char prunable = -1;
  bool can_prune() const { return prunable < 0 ? sparse : prunable > 0; }
  Array rho, kappa0, kappa1;  // E[gamma_j], E[1/(v0 (1-gamma_j))], E[1/(v1 gamma_j)]  (sparse groups)
  Scalar delta{};             // prior inclusion probability of this group (sparse groups)
  double prior_var = 1.0;     // sigma_0^2 of the Gaussian prior (non-sparse groups)
};

// A vector over all groups of a model (one Array per group, the groups' order): what a quasi-Newton memory
// stores (s = theta_{k+1} - theta_k, y = grad_{k+1} - grad_k span every parameter). Scalars stay where the
// data live (Ops::Scalar), so products of such vectors need no host read on a device.
template <class Ops>
struct GroupVector {
  using Array = typename Ops::Array;
  using Scalar = typename Ops::Scalar;
  std::vector<Array> parts;

  // Copies (not aliases) of the groups' values or gradients.
  static GroupVector values(const std::vector<Group<Ops>>& groups) {
    GroupVector v;
    v.parts.resize(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(v.parts[g], groups[g].value);
    return v;
  }
  static GroupVector grads(const std::vector<Group<Ops>>& groups) {
    GroupVector v;
    v.parts.resize(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(v.parts[g], groups[g].grad);
    return v;
  }
  static GroupVector zeros_like(const GroupVector& o) {
    GroupVector v;
    for (const auto& p : o.parts) v.parts.push_back(Ops::zeros_like(p));
    return v;
  }
  std::size_t size() const { return parts.size(); }
  // sum over groups of Ops::dot
  Scalar dot(const GroupVector& o) const {
    if (parts.size() != o.parts.size() || parts.empty()) throw std::invalid_argument("GroupVector: sizes differ");
    Scalar s = Ops::dot(parts[0], o.parts[0]);
    for (std::size_t g = 1; g < parts.size(); ++g) s = s + Ops::dot(parts[g], o.parts[g]);
    return s;
  }
  // this += alpha x
  void axpy(const Scalar& alpha, const GroupVector& x) {
    if (parts.size() != x.parts.size()) throw std::invalid_argument("GroupVector: sizes differ");
    for (std::size_t g = 0; g < parts.size(); ++g) Ops::axpy(alpha, x.parts[g], parts[g]);
  }
  void scale(const Scalar& alpha) {
    for (auto& p : parts) p *= alpha;
  }
  // c in every entry, shaped like o
  static GroupVector constant_like(const GroupVector& o, double c) {
    GroupVector v;
    for (const auto& p : o.parts) v.parts.push_back(Ops::zeros_like(p) + c);
    return v;
  }
  // this += alpha (a * b), elementwise
  void add_product(const Scalar& alpha, const GroupVector& a, const GroupVector& b) {
    if (parts.size() != a.parts.size() || parts.size() != b.parts.size())
      throw std::invalid_argument("GroupVector: sizes differ");
    for (std::size_t g = 0; g < parts.size(); ++g) parts[g] += alpha * (a.parts[g] * b.parts[g]);
  }
  // this *= a, elementwise
  void multiply(const GroupVector& a) {
    if (parts.size() != a.parts.size()) throw std::invalid_argument("GroupVector: sizes differ");
    for (std::size_t g = 0; g < parts.size(); ++g) parts[g] *= a.parts[g];
  }
  // elementwise square roots
  static GroupVector sqrt(const GroupVector& o) {
    GroupVector v;
    for (const auto& p : o.parts) v.parts.push_back(p.sqrt());
    return v;
  }
  // a - b
  static GroupVector difference(const GroupVector& a, const GroupVector& b) {
    GroupVector v;
    for (std::size_t g = 0; g < a.parts.size(); ++g) v.parts.push_back(a.parts[g] - b.parts[g]);
    return v;
  }
};

// Hyperparameters of the SSGL hierarchy: beta_j ~ (1 - gamma_j) Laplace(0, sigma v0) + gamma_j N(0, sigma^2 v1),
// gamma_j ~ Bern(delta), delta ~ Beta(a, b), sigma^2 ~ IG(nu/2, nu lambda/2).
// kappa0_start, kappa1_start: starting values of kappa (NaN: the values implied by the starting rho). With frozen
// latent variables (plain SGLD) they are the prior: Laplace(0, sigma / kappa0) x N(0, sigma^2 / kappa1).
struct SSGLHyper {
  double v0 = 0.1, v1 = 10.0, a = 1.0, b = 1.0, nu = 1.0, lambda = 1.0;
  double kappa0_start = std::numeric_limits<double>::quiet_NaN();
  double kappa1_start = std::numeric_limits<double>::quiet_NaN();
  void validate() const {
    if (!(v0 > 0.0) || !(v1 > 0.0) || !(a > 0.0) || !(b > 0.0) || !(nu > 0.0) || !(lambda > 0.0))
      throw std::invalid_argument("SSGL hyperparameters v0, v1, a, b, nu, lambda must all be > 0");
    if (!(std::isnan(kappa0_start) || (kappa0_start >= 0.0 && std::isfinite(kappa0_start))) ||
        !(std::isnan(kappa1_start) || (kappa1_start >= 0.0 && std::isfinite(kappa1_start))))
      throw std::invalid_argument("starting kappa0, kappa1 must be finite and >= 0 (or NaN: implied by rho)");
  }
};

// Set the latent variables of a sparse group: rho = rho0, delta = delta0 and kappa0 = (1-rho)/v0,
// kappa1 = rho/v1 (the values implied by rho), unless h.kappa0_start / h.kappa1_start give them.
template <class Ops>
void init_latents(Group<Ops>& g, double rho0, const typename Ops::Scalar& delta0, const SSGLHyper& h) {
  g.rho = Ops::zeros_like(g.value) + rho0;
  if (std::isnan(h.kappa0_start)) g.kappa0 = (1.0 - g.rho) / h.v0;
  else g.kappa0 = Ops::zeros_like(g.value) + h.kappa0_start;
  if (std::isnan(h.kappa1_start)) g.kappa1 = g.rho / h.v1;
  else g.kappa1 = Ops::zeros_like(g.value) + h.kappa1_start;
  g.delta = delta0;
}

// grad += gradient of the log prior (the terms of Q1 in eq. (10) that involve beta).
template <class Ops>
void add_prior_grad(Group<Ops>& g, const typename Ops::Scalar& sigma) {
  if (g.sparse) {
    Ops::ssgl_prior_grad(g.grad, g.value, g.kappa0, g.kappa1, sigma);
  } else {
    g.grad -= g.value / g.prior_var;
  }
}

// SGLD, eq. (2): beta <- beta + eps * grad + N(0, 2 eps / tau).
template <class Ops>
void sgld_step(Group<Ops>& g, double eps, double tau, typename Ops::Rng& rng) {
  g.value += eps * g.grad;
  Ops::add_gaussian(g.value, std::sqrt(2.0 * eps / tau), rng);
}

// SGHMC, eq. (3), discretized as in Chen et al. (2014, sec. 3.3) / Saatci & Wilson (2017):
//   v <- (1 - alpha) v + eta * grad + N(0, 2 (alpha - beta_hat) eta / tau),   beta <- beta + v,
// with learning rate eta, friction (momentum decay) alpha and gradient-noise estimate beta_hat < alpha.
template <class Ops>
void sghmc_step(Group<Ops>& g, double eta, double friction, double noise_est, double tau, typename Ops::Rng& rng) {
  g.momentum = (1.0 - friction) * g.momentum + eta * g.grad;
  Ops::add_gaussian(g.momentum, std::sqrt(2.0 * (friction - noise_est) * eta / tau), rng);
  g.value += g.momentum;
}

// Positive root of A s^2 - B s - C = 0 (eq. 14); A > 0, B >= 0, C >= 0.
template <class Ops>
typename Ops::Scalar sigma_root(double A, const typename Ops::Scalar& B, const typename Ops::Scalar& C) {
  return (B + Ops::sqrt(B * B + 4.0 * A * C)) / (2.0 * A);
}

// Extra information sa_update needs from the likelihood.
template <class Ops>
struct SAInput {
  bool regression = true;  // Gaussian likelihood with variance sigma^2 (else the likelihood has no sigma)
  double n_total = 0.0;    // N
  typename Ops::Scalar resid_ss{};  // I = (N/n) sum_{i in batch} (y_i - psi(x_i; beta))^2 (regression only)
};

// One SA step for the latent variables with step omega (omega = 1: the EM arm):
//   rho    <- (1-w) rho    + w rho~,   rho~ = P(gamma = 1 | beta, sigma, delta)           (12)
//   kappa0 <- (1-w) kappa0 + w (1 - rho)/v0,  kappa1 <- (1-w) kappa1 + w rho/v1              (13)
//   sigma  <- (1-w) sigma  + w sigma~, sigma~ the positive root of the quadratic             (14)
//   delta  <- (1-w) delta  + w (sum rho + a - 1) / (a + b + p - 2)                           (15)
// evaluated in the order of Algorithm 1, each with the most recent values. Eq. (14) as printed has
// R_a = N + p + nu; maximizing Q1 of eq. (10) gives R_a = N + p + nu + 2 (as in EMVS), used here; C_a = p + nu + 2;
// J = sum kappa1 beta^2 (a squared norm; the printed footnote omits the square).
// If update_sigma is false sigma is left alone (fixed sigma).
// Numbers stay Ops::Scalar (on the device of a network) throughout.
template <class Ops>
void sa_update(std::vector<Group<Ops>>& groups, typename Ops::Scalar& sigma, double omega, const SSGLHyper& h,
               const SAInput<Ops>& in, bool update_sigma = true) {
  using Scalar = typename Ops::Scalar;
  const double w = omega, w1 = 1.0 - omega;
  double P = 0.0;
  Scalar Rb = Ops::zero_scalar(sigma), J = Ops::zero_scalar(sigma);
  for (auto& g : groups) {
    if (!g.sparse) continue;
    const double pl = static_cast<double>(Ops::size(g.value));
    if (pl == 0) continue;
    g.rho = w1 * g.rho + w * Ops::inclusion_prob(g.value, sigma, g.delta, h.v0, h.v1);
    g.kappa0 = w1 * g.kappa0 + w * ((1.0 - g.rho) / h.v0);
    g.kappa1 = w1 * g.kappa1 + w * (g.rho / h.v1);
    const Scalar dt = (Ops::sum(g.rho) + h.a - 1.0) / (h.a + h.b + pl - 2.0);
    g.delta = w1 * g.delta + w * dt;
    // keep delta strictly inside (0, 1) so the log-odds in (12) stay finite
    g.delta = Ops::clamp(g.delta, 1e-12, 1.0 - 1e-12);
    P += pl;
    Rb = Rb + Ops::abs_sum_weighted(g.kappa0, g.value);
    J = J + Ops::sq_sum_weighted(g.kappa1, g.value);
  }
  if (!update_sigma) return;
  const double A = (in.regression ? in.n_total : 0.0) + P + h.nu + 2.0;
  const Scalar C = (in.regression ? in.resid_ss + J : J) + h.nu * h.lambda;
  const Scalar st = sigma_root<Ops>(A, Rb, C);
  sigma = w1 * sigma + w * st;
}

// Magnitude pruning of a prunable group (by default: a sparse group, Group::can_prune) to sparse rate s: the floor(s p) smallest |beta_j| are set to 0. Pruned
// weights keep receiving gradients and noise and come back if they grow (regrowth).
template <class Ops>
void prune(Group<Ops>& g, double s) {
  if (!g.can_prune() || s <= 0.0) return;
  Ops::prune_smallest(g.value, s);
}

}  // namespace sgmcmc
}  // namespace scalebayes
