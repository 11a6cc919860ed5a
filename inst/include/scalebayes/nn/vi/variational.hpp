// scalebayes/nn/vi/variational.hpp -- a mean-field variational family over a network's parameters.
//
// Variational is the q of every variational method (sparse_vi, bbb): for every parameter tensor of a layer
// whose kind is `variational` (LayerProps: linear and convolution layers; its "variational groups"), q is Gaussian per weight, theta ~ N(mu, sigma^2) with
// sigma = softplus(rho), times an inclusion gamma ~ Bernoulli(phi), phi = logistic(logit), for the
// spike-and-slab family (Bai, Song & Cheng 2020). mu IS the network's own parameter tensor: the posterior mean
// of q is a network of the ordinary kind, so storing, predicting and exporting need nothing new. Batch-norm
// scales and shifts are point estimates (not variational). A mask per group (1 by default) removes pruned
// weights from q altogether (mean, variance and KL).
//
// The forward pass goes through Net::forward(x, hook): the hook computes every variational layer (its kind's
// functional form, torch_kinds::apply_weights) from q by one of three estimators of the expected log-likelihood gradient:
//   local       the pre-activations are sampled: mean x mu' + mu_b, variance x^2 sigma^2' + sigma_b^2, one
//               noise value per example and unit (Kingma, Salimans & Welling 2015). Exact for linear layers
//               with Gaussian q; for convolutions only each pre-activation's marginal is right (neighbouring
//               outputs share weights, so their noise is correlated under q but independent here).
//   weights     one draw of every weight per forward pass (per minibatch: Blundell et al. 2015's estimator).
//               The only estimator for spike-and-slab q, whose pre-activations are not Gaussian.
//   per_example an independent draw of the weights for every example (linear layers only; Table 1 of the
//               tutorial: the variance of the estimators).
// The spike-and-slab inclusion is sampled by the hard Gumbel-softmax with the straight-through gradient:
// forward gamma = 1{logit + L > 0} with L standard logistic noise, which is exactly Bernoulli(phi) for any
// temperature; backward the gradient of the relaxed sigmoid((logit + L) / tau).
//
// KL(q || p) per weight, summed over the variational groups (pruned weights excluded):
//   gaussian      prior N(0, s0^2): log(s0 / sigma) + (sigma^2 + mu^2) / (2 s0^2) - 1/2
//   spike_slab    prior lambda N(0, s0^2) + (1 - lambda) delta_0, q as above:
//                 phi log(phi / lambda) + (1 - phi) log((1 - phi) / (1 - lambda)) + phi [gaussian KL]
//                 (log lambda is held in double: the Figure 1 grid reaches log lambda = -460)
//   scale_mixture prior pi N(0, s1^2) + (1 - pi) N(0, s2^2) (Blundell et al.): no closed form; a Monte-Carlo
//                 estimate log q(w) - log p(w) at an independent draw w of q (unbiased)
//   log_uniform   the improper log-uniform prior of sparse variational dropout (Molchanov, Ashukha & Vetrov
//                 2017) with alpha = sigma^2 / mu^2: KL ~ -(k1 sigmoid(k2 + k3 log alpha) - log1p(1/alpha) / 2
//                 - k1), k = (0.63576, 1.87320, 1.48695); alpha_max caps alpha (1: Kingma et al. 2015's
//                 variational dropout, whose alpha <= 1).
// All noise comes from the object's own generator on the network's device, seeded from the fit's stream.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/net.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace nn {
namespace vi {

enum class Estimator { local = 0, weights = 1, per_example = 2 };
enum class Prior { gaussian = 0, scale_mixture = 1, log_uniform = 2, spike_slab = 3 };
inline constexpr EnumTable<Estimator, 3> estimator_names{
    "estimator", {{{"local", Estimator::local}, {"weights", Estimator::weights},
                     {"per_example", Estimator::per_example}}}};
constexpr const auto& enum_table(Estimator) { return estimator_names; }
inline constexpr EnumTable<Prior, 4> prior_names{
    "prior", {{{"gaussian", Prior::gaussian}, {"scale_mixture", Prior::scale_mixture},
                 {"log_uniform", Prior::log_uniform}, {"spike_slab", Prior::spike_slab}}}};
constexpr const auto& enum_table(Prior) { return prior_names; }

inline double softplus(double r) { return r > 30 ? r : std::log1p(std::exp(r)); }
inline double inv_softplus(double s) { return s > 30 ? s : std::log(std::expm1(s)); }

struct Settings {
  Prior prior = Prior::gaussian;
  Estimator estimator = Estimator::local;
  int samples = 1;           // K Monte-Carlo forward passes per minibatch
  double tau = 0.5;          // Gumbel-softmax temperature (spike_slab)
  double prior_sd = 1.0;     // gaussian prior sd; the slab sd sigma0 of spike_slab
  double mix_pi = 0.5, mix_sd1 = 1.0, mix_sd2 = 0.0024787521766663585;  // scale_mixture (s2 = exp(-6))
  double alpha_max = std::numeric_limits<double>::infinity();           // log_uniform
  double log_lambda = 0.0;   // spike_slab: log prior inclusion probability (0: lambda = 1, phi fixed at 1)
  bool bias_spike = true;    // spike_slab also on biases (else their prior is the slab alone)
  double init_sigma = 0.0024756851377303085;  // softplus(-6)
  double init_phi = 0.99;
  double init_mu = 0.0;      // > 0: mu ~ U(-init_mu, init_mu) for every variational tensor; 0: the network's init
  double noise_sd = 1.0;     // gaussian family: > 0 fixed; 0 learned (a point estimate, log scale)
  double kl_weight = 1.0;    // multiplies the KL (1: the ELBO)
  double kl_warmup = 0.0;    // epochs of KL warm-up: epoch e (1-based) weights the KL by min(1, e / kl_warmup)
};

// One variational group: a weight or bias tensor of a variational layer. rho, logit and mask are views
// of the flat tensors the optimizer sees (below): writing into them (under NoGradGuard) writes q.
struct VarGroup {
  std::size_t g = 0;       // the network's parameter group
  torch::Tensor rho;       // sigma = softplus(rho)
  torch::Tensor logit;     // phi = logistic(logit); undefined: phi = 1
  torch::Tensor mask;      // 1 kept, 0 pruned (no gradient)
  bool weight = true;      // a weight tensor (false: a bias)
  double kept = 0;         // entries of mask that are 1 (set by init_from and prune)
  std::int64_t off = 0;    // offset in the flat layout (groups with a logit first, then the others)
  std::int64_t numel = 0;
};

// Storage and computation are flat: rho, the inclusion logits and the masks of all groups are each ONE tensor
// (the groups with a logit first, in group order, then the groups without one), and a training step computes
// sigma, the weight draw, the Gumbel inclusion and the KL once over the flat vector, splitting it into the
// layers' shapes by views. The network is tiny next to the number of tensor operations per step on the
// problems these methods are run on (Bai et al.'s Figure 1: 1,527 weights in 8 tensors), so the operation
// count is the cost: one operation per quantity instead of one per quantity and tensor, forward and backward,
// and two optimizer tensors instead of sixteen. The flat mean mu is a concatenation of the network's own
// parameter tensors (which stay the network's: mu IS the network).
class Variational {
 public:
  Variational(Net& net, const Settings& st) : net_(net), st_(st) {
    const auto& groups = net->groups();
    const auto opt = groups.front().tensor.options();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!layer_props(net->layer_spec(net->group_layer(g)).kind).variational) continue;
      VarGroup v;
      v.g = g;
      v.weight = groups[g].tensor.dim() > 1;
      v.numel = groups[g].tensor.numel();
      layer_active_.resize(net->n_layers(), false);
      layer_active_[net->group_layer(g)] = true;
      vg_.push_back(v);
    }
    if (vg_.empty()) throw std::invalid_argument("the network has no layer with weights to put q on");
    if (st.prior == Prior::spike_slab && st.estimator == Estimator::local)
      throw std::invalid_argument("the local estimator needs Gaussian pre-activations: spike-and-slab q takes \"weights\"");
    if (st.estimator == Estimator::per_example)
      for (const VarGroup& v : vg_)
        if (net->layer_spec(net->group_layer(v.g)).kind != LayerKind::linear)
          throw std::invalid_argument("the per-example estimator is for linear layers only");
    // the flat layout: groups with an inclusion logit first
    auto has_logit = [&](const VarGroup& v) {
      return st.prior == Prior::spike_slab && st.log_lambda < 0 && (v.weight || st.bias_spike);
    };
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < vg_.size(); ++i)
        if (has_logit(vg_[i]) == (pass == 0)) {
          vg_[i].off = total_;
          total_ += vg_[i].numel;
          if (pass == 0) n_logit_ = total_;
          order_.push_back(i);
        }
    rho_ = torch::zeros({total_}, opt).requires_grad_(true);
    mask_ = torch::ones({total_}, opt);
    if (n_logit_ > 0) logit_ = torch::zeros({n_logit_}, opt).requires_grad_(true);
    const torch::Tensor rho_d = rho_.detach();
    const torch::Tensor logit_d = n_logit_ > 0 ? logit_.detach() : torch::Tensor();
    for (VarGroup& v : vg_) {
      const auto sz = groups[v.g].tensor.sizes();
      v.rho = rho_d.narrow(0, v.off, v.numel).view(sz);
      v.mask = mask_.narrow(0, v.off, v.numel).view(sz);
      if (v.off < n_logit_) v.logit = logit_d.narrow(0, v.off, v.numel).view(sz);
    }
    split_sizes_.clear();
    for (std::size_t i : order_) split_sizes_.push_back(vg_[i].numel);
    if (st.noise_sd <= 0) log_noise_ = torch::zeros({}, opt).requires_grad_(true);
    // the scalar constants of the spike-and-slab KL, in double
    log1m_lambda_ = std::log1p(-std::exp(st.log_lambda));
    gen_ = noise_generator(opt.device());
    gen_.set_current_seed(0);
  }

  // Initialize q (after Net::init_from drew mu from the same stream): mu ~ U(-init_mu, init_mu) when init_mu > 0
  // (drawn from the stream, group by group, row-major), rho and logit constants; then seed the noise generator.
  void init_from(rng::Stream& s) {
    torch::NoGradGuard ng;
    if (st_.init_mu > 0) {
      std::vector<double> buf;
      for (const VarGroup& v : vg_) {
        torch::Tensor t = net_->groups()[v.g].tensor;
        buf.resize(static_cast<std::size_t>(t.numel()));
        for (auto& b : buf) b = (2.0 * s.uniform() - 1.0) * st_.init_mu;
        t.copy_(torch::from_blob(buf.data(), t.sizes(), torch::kDouble));
      }
    }
    rho_.fill_(inv_softplus(st_.init_sigma));
    if (logit_.defined()) logit_.fill_(std::log(st_.init_phi) - std::log1p(-st_.init_phi));
    mask_.fill_(1.0);
    for (VarGroup& v : vg_) v.kept = static_cast<double>(v.numel);
    pruned_ = false;
    if (log_noise_.defined()) log_noise_.fill_(0.0);
    gen_.set_current_seed(s.next());
  }

  const Settings& settings() const { return st_; }
  std::vector<VarGroup>& groups() { return vg_; }
  bool layer_active(std::size_t layer) const { return layer < layer_active_.size() && layer_active_[layer]; }
  at::Generator& generator() { return gen_; }

  // What the optimizer updates besides the network's own parameters (mu and batch norm): flat rho, flat logits.
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> p{rho_};
    if (logit_.defined()) p.push_back(logit_);
    if (log_noise_.defined()) p.push_back(log_noise_);
    return p;
  }
  // The gradient of a group's rho after a backward pass (undefined before the first one).
  torch::Tensor rho_grad(const VarGroup& v) const {
    const torch::Tensor& gr = rho_.grad();
    return gr.defined() ? gr.narrow(0, v.off, v.numel).view(v.rho.sizes()) : torch::Tensor();
  }
  void zero_rho_grad() {
    if (rho_.grad().defined()) rho_.mutable_grad().zero_();
  }

  torch::Tensor mu(const VarGroup& v) const { return net_->groups()[v.g].tensor; }
  // Within a training step (begin_step() .. end_step()) the flat mu and sigma are computed once and shared by
  // the forward passes and the KL; outside a step every call computes them afresh.
  void begin_step() {
    step_ = Step();
    caching_ = true;
  }
  void end_step() {
    caching_ = false;
    step_ = Step();
    draw_.clear();
  }
  // The flat mean (the network's tensors concatenated in the flat layout), with its graph.
  torch::Tensor mu_flat() {
    if (caching_ && step_.mu.defined()) return step_.mu;
    std::vector<torch::Tensor> parts;
    parts.reserve(order_.size());
    for (std::size_t i : order_) parts.push_back(mu(vg_[i]).reshape({-1}));
    torch::Tensor m = torch::cat(parts);
    if (caching_) step_.mu = m;
    return m;
  }
  torch::Tensor sigma_flat() {
    if (caching_ && step_.sigma.defined()) return step_.sigma;
    torch::Tensor s = torch::nn::functional::softplus(rho_);
    if (st_.prior == Prior::log_uniform && std::isfinite(st_.alpha_max))  // sigma^2 <= alpha_max mu^2
      s = torch::minimum(s, std::sqrt(st_.alpha_max) * mu_flat().abs());
    if (caching_) step_.sigma = s;
    return s;
  }
  // A group's sigma with its graph: a view of the flat sigma (computed once per training step). sigma_of(v)
  // computes it from the group's own values without a graph (pruning, draws, summaries).
  torch::Tensor sigma(const VarGroup& v) {
    if (!caching_) return split_layout(sigma_flat())[index_of(v)];
    if (step_.sigma_parts.empty()) step_.sigma_parts = split_layout(sigma_flat());
    return step_.sigma_parts[index_of(v)];
  }
  torch::Tensor sigma_of(const VarGroup& v) const {
    torch::Tensor s = torch::nn::functional::softplus(v.rho);
    if (st_.prior == Prior::log_uniform && std::isfinite(st_.alpha_max))
      s = torch::minimum(s, std::sqrt(st_.alpha_max) * mu(v).abs());
    return s;
  }
  torch::Tensor phi(const VarGroup& v) const {
    return v.logit.defined() ? torch::sigmoid(v.logit) : torch::ones_like(v.rho);
  }
  // log alpha = log sigma^2 - log mu^2 (log_uniform), clamped to [-20, 20] as a KL argument
  torch::Tensor log_alpha(const VarGroup& v) const { return log_alpha_of(mu(v), sigma_of(v)); }
  static torch::Tensor log_alpha_of(const torch::Tensor& m, const torch::Tensor& s) {
    return (2.0 * torch::log(s) - torch::log(m.square() + 1e-16)).clamp(-20.0, 20.0);
  }

  // The noise sd of a gaussian likelihood: fixed, or exp(log_noise) (a 0-dim tensor with a graph).
  bool noise_learned() const { return log_noise_.defined(); }
  torch::Tensor log_noise() const { return log_noise_; }

  // Standard normal noise of a shape, from the generator.
  torch::Tensor randn(at::IntArrayRef shape, const torch::TensorOptions& o) { return noise_normal(gen_, shape, o); }

  // t times the group's mask, or t itself while nothing is pruned (no multiplication by ones).
  torch::Tensor masked(const VarGroup& v, const torch::Tensor& t) const { return pruned_ ? t * v.mask : t; }
  torch::Tensor masked_flat(const torch::Tensor& t) const { return pruned_ ? t * mask_ : t; }

  // A new reparameterized draw of every group (one per forward pass of the "weights" estimator): the flat
  // mu + sigma eps (eps: one normal vector over the flat layout), times the hard straight-through inclusion on
  // the groups that have one, masked; sample(v) then returns group v's view of it.
  // With stacked(K) set, K draws at once: the flat [K, total] (row k the k-th pass's draw), and sample(v) is
  // group v's [K, shape...].
  void new_draw() {
    const torch::Tensor m = mu_flat();
    const std::int64_t K = stack_;
    torch::Tensor w = m + sigma_flat() * randn(lead(K, total_), m.options());  // [total] or [K, total]
    if (n_logit_ > 0) {
      const torch::Tensor g = gamma_flat(K);
      w = n_logit_ == total_ ? w * g : torch::cat({w.narrow(-1, 0, n_logit_) * g, w.narrow(-1, n_logit_, total_ - n_logit_)}, -1);
    }
    draw_ = split_layout(masked_flat(w), K);
  }
  torch::Tensor sample(const VarGroup& v) {
    if (draw_.empty()) new_draw();
    return draw_[index_of(v)];
  }
  // The "weights" estimator's K passes as one (SampleHook: each linear layer a batched product over the K draws,
  // the rows of pass k the k-th block of the stacked minibatch); 0: one pass, one draw.
  void set_stacked(std::int64_t K) {
    stack_ = K;
    draw_.clear();
  }
  std::int64_t stacked() const { return stack_; }
  // Hard Gumbel-softmax inclusion of every logit (flat) with the straight-through gradient of the relaxed one:
  // forward 1{logit + L > 0}, L standard logistic noise (so exactly Bernoulli(phi)); backward the gradient of
  // sigmoid((logit + L) / tau).
  // K > 0: K independent inclusions, [K, n_logit].
  torch::Tensor gamma_flat(std::int64_t K = 0) {
    torch::Tensor L;
    {
      torch::NoGradGuard ng;
      const torch::Tensor u = noise_uniform(gen_, lead(K, n_logit_), 1e-7, 1.0 - 1e-7, logit_.options());
      L = torch::log(u) - torch::log1p(-u);
    }
    const torch::Tensor z = logit_ + L;
    const torch::Tensor soft = torch::sigmoid(z * (1.0 / st_.tau));
    torch::Tensor hard;
    {
      torch::NoGradGuard ng;
      hard = (z > 0).to(soft.dtype()) - soft;
    }
    return soft + hard;
  }
  std::int64_t n_logit() const { return n_logit_; }

  // KL(q || p), summed over every variational weight (a 0-dim tensor with a graph), computed over the flat
  // layout: [0, n_logit) spike-and-slab, the rest by the prior's Gaussian-type KL.
  torch::Tensor kl() {
    const torch::Tensor m = mu_flat(), s = sigma_flat();
    switch (st_.prior) {
      case Prior::gaussian: return gauss_kl_sum(m, s, mask_, kept_in(0, total_), st_.prior_sd);
      case Prior::spike_slab: {
        torch::Tensor total;
        if (n_logit_ > 0) {
          namespace F = torch::nn::functional;
          const torch::Tensor ms = m.narrow(0, 0, n_logit_), ss = s.narrow(0, 0, n_logit_);
          const torch::Tensor g = gauss_kl(ms, ss, st_.prior_sd);
          const torch::Tensor p = torch::sigmoid(logit_);
          const torch::Tensor bern = p * (F::logsigmoid(logit_) - st_.log_lambda) +
                                     (1.0 - p) * (F::logsigmoid(-logit_) - log1m_lambda_);
          torch::Tensor k = bern + p * g;
          if (pruned_) k = k * mask_.narrow(0, 0, n_logit_);
          total = k.sum();
        }
        if (n_logit_ < total_) {
          const std::int64_t r = total_ - n_logit_;
          torch::Tensor k = gauss_kl_sum(m.narrow(0, n_logit_, r), s.narrow(0, n_logit_, r),
                                         mask_.narrow(0, n_logit_, r), kept_in(n_logit_, total_), st_.prior_sd);
          total = total.defined() ? total + k : k;
        }
        return total;
      }
      case Prior::log_uniform: {
        const double k1 = 0.63576, k2 = 1.87320, k3 = 1.48695;
        const torch::Tensor la = log_alpha_of(m, s);
        const torch::Tensor neg = k1 * torch::sigmoid(k2 + k3 * la) - 0.5 * torch::log1p(torch::exp(-la)) - k1;
        return masked_flat(-neg).sum();
      }
      case Prior::scale_mixture: {
        const torch::Tensor eps = randn({total_}, m.options());
        const torch::Tensor w = m + s * eps;
        const double c = 0.5 * std::log(2.0 * M_PI);
        const torch::Tensor logq = -torch::log(s) - c - 0.5 * eps.square();
        const torch::Tensor l1 = std::log(st_.mix_pi) - std::log(st_.mix_sd1) - c - 0.5 * (w / st_.mix_sd1).square();
        const torch::Tensor l2 = std::log1p(-st_.mix_pi) - std::log(st_.mix_sd2) - c - 0.5 * (w / st_.mix_sd2).square();
        return masked_flat(logq - torch::logaddexp(l1, l2)).sum();
      }
    }
    throw std::invalid_argument("unknown prior");
  }
  static torch::Tensor gauss_kl(const torch::Tensor& m, const torch::Tensor& s, double s0) {
    return std::log(s0) - torch::log(s) + (s.square() + m.square()) / (2.0 * s0 * s0) - 0.5;
  }
  // The same summed: the constant log(s0) - 1/2 once per kept weight, not per element.
  torch::Tensor gauss_kl_sum(const torch::Tensor& m, const torch::Tensor& s, const torch::Tensor& mask, double kept,
                             double s0) const {
    torch::Tensor k = (s.square() + m.square()) * (0.5 / (s0 * s0)) - torch::log(s);
    if (pruned_) k = k * mask;
    return k.sum() + kept * (std::log(s0) - 0.5);
  }

  // Weights kept by q: spike_slab, phi > 0.5; log_uniform, log alpha < 3 (Molchanov et al.'s rule); else the
  // mask. As (kept, total) over the weight tensors (biases excluded).
  std::pair<double, double> kept() {
    torch::NoGradGuard ng;
    double kept = 0, total = 0;
    for (VarGroup& v : vg_) {
      if (!v.weight) continue;
      torch::Tensor k = v.mask;
      if (v.logit.defined()) k = k * (v.logit > 0).to(k.dtype());
      else if (st_.prior == Prior::log_uniform) k = k * (log_alpha(v) < 3.0).to(k.dtype());
      kept += k.sum().item<double>();
      total += static_cast<double>(k.numel());
    }
    return {kept, total};
  }

  // The mean of q, E theta = phi mu (masked), written into the network's parameters; restore() puts mu back.
  // sample_into_net() writes a draw of q instead. Both keep mu to restore.
  void mean_into_net() {
    torch::NoGradGuard ng;
    save();
    for (VarGroup& v : vg_) mu(v).mul_(phi(v) * v.mask);
  }
  void sample_into_net() {
    torch::NoGradGuard ng;
    save();
    for (VarGroup& v : vg_) {
      torch::Tensor m = mu(v);
      torch::Tensor w = m + sigma_of(v) * randn(m.sizes(), m.options());
      if (v.logit.defined()) w = w * noise_bernoulli(gen_, torch::sigmoid(v.logit));
      m.copy_(w * v.mask);
    }
  }
  void restore() {
    torch::NoGradGuard ng;
    for (std::size_t i = 0; i < vg_.size(); ++i) mu(vg_[i]).copy_(saved_[i]);
  }

  // Prune: weights (not biases) whose |mu| / sigma is below `threshold` (gaussian-type q), or whose log alpha is
  // above it (log_uniform), or (spike_slab) whose phi <= 0.5, leave q: their mask becomes 0. Returns the weights
  // kept.
  double prune(double threshold) {
    torch::NoGradGuard ng;
    double kept = 0;
    for (VarGroup& v : vg_) {
      if (!v.weight) continue;
      torch::Tensor keep;
      if (st_.prior == Prior::log_uniform) keep = log_alpha(v) < threshold;
      else if (v.logit.defined()) keep = v.logit > 0;
      else keep = (mu(v).abs() / sigma_of(v)) >= threshold;
      v.mask.mul_(keep.to(v.mask.dtype()));
      mu(v).mul_(v.mask);
      pruned_ = true;
      v.kept = v.mask.sum().item<double>();
      kept += v.kept;
    }
    return kept;
  }

  // Called by the layer hook at the start of every forward pass: the next sample() calls draw afresh.
  void begin_forward() { draw_.clear(); }

 private:
  struct Step {
    torch::Tensor mu, sigma;
    std::vector<torch::Tensor> sigma_parts;
  };
  // A flat tensor split into the groups' shapes, indexed like vg_ (views: the graph keeps one split node).
  // K > 0: flat is [K, total] and each part [K, shape...].
  std::vector<torch::Tensor> split_layout(const torch::Tensor& flat, std::int64_t K = 0) const {
    std::vector<torch::Tensor> parts = flat.split_with_sizes(split_sizes_, -1);
    std::vector<torch::Tensor> out(vg_.size());
    for (std::size_t j = 0; j < order_.size(); ++j) {
      const std::size_t i = order_[j];
      const auto shape = net_->groups()[vg_[i].g].tensor.sizes();
      std::vector<std::int64_t> sz = K > 0 ? std::vector<std::int64_t>{K} : std::vector<std::int64_t>{};
      sz.insert(sz.end(), shape.begin(), shape.end());
      out[i] = parts[j].view(sz);
    }
    return out;
  }
  // The shape {n}, or {K, n} with K > 0 leading draws.
  static std::vector<std::int64_t> lead(std::int64_t K, std::int64_t n) {
    return K > 0 ? std::vector<std::int64_t>{K, n} : std::vector<std::int64_t>{n};
  }
  std::size_t index_of(const VarGroup& v) const { return static_cast<std::size_t>(&v - vg_.data()); }
  double kept_in(std::int64_t a, std::int64_t b) const {
    double k = 0;
    for (const VarGroup& v : vg_)
      if (v.off >= a && v.off < b) k += v.kept;
    return k;
  }
  void save() {
    saved_.resize(vg_.size());
    for (std::size_t i = 0; i < vg_.size(); ++i) saved_[i] = mu(vg_[i]).detach().clone();
  }
  Net& net_;
  Settings st_;
  std::vector<VarGroup> vg_;
  std::vector<std::size_t> order_;         // vg_ indices in the flat layout's order
  std::vector<std::int64_t> split_sizes_;  // their sizes, in that order
  std::int64_t total_ = 0, n_logit_ = 0;
  torch::Tensor rho_, logit_, mask_;       // flat (rho_, logit_: the optimizer's leaves)
  std::vector<bool> layer_active_;
  torch::Tensor log_noise_;
  double log1m_lambda_ = -std::numeric_limits<double>::infinity();
  at::Generator gen_;
  std::vector<torch::Tensor> saved_;
  Step step_;                              // the flat mu and sigma within a training step
  std::vector<torch::Tensor> draw_;        // the current forward pass's draw, per group
  std::int64_t stack_ = 0;                 // set_stacked(): K draws per forward pass
  bool caching_ = false;
  bool pruned_ = false;  // some mask entry is 0 (prune() was called)
};

// The layer hook of one stochastic forward pass: every variational layer from q by the settings' estimator.
class SampleHook : public LayerHook {
 public:
  explicit SampleHook(Variational& v, Net& net) : v_(v), net_(net) {
    const auto& gs = v.groups();
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const std::size_t layer = net->group_layer(gs[i].g);
      if (layer >= by_layer_.size()) by_layer_.resize(layer + 1, {-1, -1});
      (gs[i].weight ? by_layer_[layer].first : by_layer_[layer].second) = static_cast<int>(i);
      first_layer_ = std::min(first_layer_, layer);
    }
  }
  bool active(std::size_t layer) const override { return v_.layer_active(layer); }
  torch::Tensor forward(std::size_t layer, const LayerSpec& L, const torch::Tensor& x) override {
    VarGroup& w = v_.groups()[static_cast<std::size_t>(by_layer_[layer].first)];
    VarGroup* b = by_layer_[layer].second >= 0 ? &v_.groups()[static_cast<std::size_t>(by_layer_[layer].second)] : nullptr;
    auto apply = [&](const torch::Tensor& in, const torch::Tensor& W, const torch::Tensor& B) {
      return torch_kinds::apply_weights(L, in, W, B);
    };
    switch (v_.settings().estimator) {
      case Estimator::weights: {
        if (layer == first_layer_) v_.begin_forward();  // one draw of every weight per forward pass
        const std::int64_t K = v_.stacked();
        if (K == 0) return apply(x, v_.sample(w), b ? v_.sample(*b) : torch::Tensor());
        // K passes stacked (linear layers only, ViObjective::stacks_samples()): rows of pass k are the k-th
        // block of x; out_k = x_k W_k' + b_k
        const torch::Tensor W = v_.sample(w);  // [K, out, in]
        const torch::Tensor xk = x.reshape({K, -1, x.size(-1)});
        const torch::Tensor o = b ? torch::baddbmm(v_.sample(*b).unsqueeze(1), xk, W.transpose(1, 2))
                                  : torch::bmm(xk, W.transpose(1, 2));
        std::vector<std::int64_t> sz = x.sizes().vec();
        sz.back() = W.size(1);
        return o.reshape(sz);
      }
      case Estimator::local: {
        const torch::Tensor mw = v_.masked(w, v_.mu(w)), sw = v_.masked(w, v_.sigma(w));
        torch::Tensor mb, sb;
        if (b) {
          mb = v_.masked(*b, v_.mu(*b));
          sb = v_.masked(*b, v_.sigma(*b));
        }
        const torch::Tensor mean = apply(x, mw, mb);
        const torch::Tensor var = apply(x.square(), sw.square(), b ? sb.square() : torch::Tensor());
        // with a bias the variance is at least sigma_b^2 > 0; without one it can be 0 (sqrt's gradient is not)
        const torch::Tensor sd = b ? var.sqrt() : var.clamp_min(1e-16).sqrt();
        return mean + sd * v_.randn(mean.sizes(), mean.options());
      }
      case Estimator::per_example: {  // linear only (checked): W_i = mu + sigma eps_i for every example i
        const std::int64_t n = x.size(0);
        const torch::Tensor mw = v_.masked(w, v_.mu(w)), sw = v_.masked(w, v_.sigma(w));
        const torch::Tensor W = mw.unsqueeze(0) + sw.unsqueeze(0) * v_.randn({n, mw.size(0), mw.size(1)}, mw.options());
        torch::Tensor out = torch::bmm(W, x.unsqueeze(2)).squeeze(2);
        if (b) {
          const torch::Tensor mb = v_.masked(*b, v_.mu(*b)), sb = v_.masked(*b, v_.sigma(*b));
          out = out + mb.unsqueeze(0) + sb.unsqueeze(0) * v_.randn({n, mb.size(0)}, mb.options());
        }
        return out;
      }
    }
    throw std::invalid_argument("unknown estimator");
  }

 private:
  Variational& v_;
  Net& net_;
  std::vector<std::pair<int, int>> by_layer_;
  std::size_t first_layer_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace vi
}  // namespace nn
}  // namespace scalebayes
