// scalebayes/nn/vi/variational.hpp -- a mean-field variational family over a network's parameters.
//
// Variational is the q of every variational method (sparse_vi, bbb): for every parameter tensor of a linear or
// convolution layer (its "variational groups"), q is Gaussian per weight, theta ~ N(mu, sigma^2) with
// sigma = softplus(rho), times an inclusion gamma ~ Bernoulli(phi), phi = logistic(logit), for the
// spike-and-slab family (Bai, Song & Cheng 2020). mu IS the network's own parameter tensor: the posterior mean
// of q is a network of the ordinary kind, so storing, predicting and exporting need nothing new. Batch-norm
// scales and shifts are point estimates (not variational). A mask per group (1 by default) removes pruned
// weights from q altogether (mean, variance and KL).
//
// The forward pass goes through Net::forward(x, hook): the hook computes every linear / convolution layer
// from q by one of three estimators of the expected log-likelihood gradient:
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

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/net.hpp"
#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace nn {
namespace vi {

enum class Estimator { local = 0, weights = 1, per_example = 2 };
enum class Prior { gaussian = 0, scale_mixture = 1, log_uniform = 2, spike_slab = 3 };

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

struct VarGroup {
  std::size_t g = 0;       // the network's parameter group
  torch::Tensor rho;       // sigma = softplus(rho)
  torch::Tensor logit;     // phi = logistic(logit); undefined: phi = 1
  torch::Tensor mask;      // 1 kept, 0 pruned (no gradient)
  bool weight = true;      // a weight tensor (false: a bias)
  double kept = 0;         // entries of mask that are 1 (set by init_from and prune)
};

class Variational {
 public:
  Variational(Net& net, const Settings& st) : net_(net), st_(st) {
    const auto& groups = net->groups();
    const auto opt = groups.front().tensor.options();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const LayerKind k = net->layer_spec(net->group_layer(g)).kind;
      if (k != LayerKind::linear && k != LayerKind::conv2d) continue;
      VarGroup v;
      v.g = g;
      v.weight = groups[g].tensor.dim() > 1;
      v.rho = torch::zeros(groups[g].tensor.sizes(), opt).requires_grad_(true);
      if (st.prior == Prior::spike_slab && st.log_lambda < 0 && (v.weight || st.bias_spike))
        v.logit = torch::zeros(groups[g].tensor.sizes(), opt).requires_grad_(true);
      v.mask = torch::ones(groups[g].tensor.sizes(), opt);
      layer_active_.resize(net->n_layers(), false);
      layer_active_[net->group_layer(g)] = true;
      vg_.push_back(v);
    }
    if (vg_.empty()) throw std::invalid_argument("the network has no linear or convolution layer to put q on");
    if (st.noise_sd <= 0) log_noise_ = torch::zeros({}, opt).requires_grad_(true);
    if (st.prior == Prior::spike_slab && st.estimator == Estimator::local)
      throw std::invalid_argument("the local estimator needs Gaussian pre-activations: spike-and-slab q takes \"weights\"");
    if (st.estimator == Estimator::per_example)
      for (const VarGroup& v : vg_)
        if (net->layer_spec(net->group_layer(v.g)).kind != LayerKind::linear)
          throw std::invalid_argument("the per-example estimator is for linear layers only");
    // the scalar constants of the spike-and-slab KL, in double
    log1m_lambda_ = std::log1p(-std::exp(st.log_lambda));
    gen_ = at::globalContext().defaultGenerator(opt.device()).clone();
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
    const double rho0 = inv_softplus(st_.init_sigma);
    const double lg0 = std::log(st_.init_phi) - std::log1p(-st_.init_phi);
    for (VarGroup& v : vg_) {
      v.rho.fill_(rho0);
      if (v.logit.defined()) v.logit.fill_(lg0);
      v.mask.fill_(1.0);
      v.kept = static_cast<double>(v.mask.numel());
    }
    pruned_ = false;
    if (log_noise_.defined()) log_noise_.fill_(0.0);
    gen_.set_current_seed(s.next());
  }

  const Settings& settings() const { return st_; }
  std::vector<VarGroup>& groups() { return vg_; }
  bool layer_active(std::size_t layer) const { return layer < layer_active_.size() && layer_active_[layer]; }
  at::Generator& generator() { return gen_; }

  // What the optimizer updates besides the network's own parameters (mu and batch norm).
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> p;
    for (const VarGroup& v : vg_) {
      p.push_back(v.rho);
      if (v.logit.defined()) p.push_back(v.logit);
    }
    if (log_noise_.defined()) p.push_back(log_noise_);
    return p;
  }

  torch::Tensor mu(const VarGroup& v) const { return net_->groups()[v.g].tensor; }
  // Within a training step (begin_step() .. end_step()) sigma is computed once per group and shared by the
  // forward passes and the KL (one softplus and its backward per step, not one per use).
  void begin_step() {
    cache_.assign(vg_.size(), torch::Tensor());
    caching_ = true;
  }
  void end_step() {
    caching_ = false;
    cache_.clear();
  }
  torch::Tensor sigma(const VarGroup& v) {
    if (!caching_) return sigma_of(v);
    torch::Tensor& c = cache_[static_cast<std::size_t>(&v - vg_.data())];
    if (!c.defined()) c = sigma_of(v);
    return c;
  }
  torch::Tensor sigma_of(const VarGroup& v) const {
    torch::Tensor s = torch::nn::functional::softplus(v.rho);
    if (st_.prior == Prior::log_uniform && std::isfinite(st_.alpha_max))  // sigma^2 <= alpha_max mu^2
      s = torch::minimum(s, std::sqrt(st_.alpha_max) * mu(v).abs());
    return s;
  }
  torch::Tensor phi(const VarGroup& v) const {
    return v.logit.defined() ? torch::sigmoid(v.logit) : torch::ones_like(v.rho);
  }
  // log alpha = log sigma^2 - log mu^2 (log_uniform), clamped to [-20, 20] as a KL argument
  torch::Tensor log_alpha(const VarGroup& v) {
    return (2.0 * torch::log(sigma(v)) - torch::log(mu(v).square() + 1e-16)).clamp(-20.0, 20.0);
  }

  // The noise sd of a gaussian likelihood: fixed, or exp(log_noise) (a 0-dim tensor with a graph).
  bool noise_learned() const { return log_noise_.defined(); }
  torch::Tensor log_noise() const { return log_noise_; }

  // Standard normal noise of a shape, from the generator.
  torch::Tensor randn(at::IntArrayRef shape, const torch::TensorOptions& o) { return torch::randn(shape, gen_, o); }

  // t times the group's mask, or t itself while nothing is pruned (no multiplication by ones).
  torch::Tensor masked(const VarGroup& v, const torch::Tensor& t) const { return pruned_ ? t * v.mask : t; }

  // A reparameterized draw of one group (mask applied): mu + sigma eps, times the hard straight-through gamma.
  torch::Tensor sample(const VarGroup& v) {
    torch::Tensor m = mu(v);
    torch::Tensor w = m + sigma(v) * randn(m.sizes(), m.options());
    if (v.logit.defined()) w = w * gamma(v);
    return masked(v, w);
  }
  // Hard Gumbel-softmax inclusion with the straight-through gradient of the relaxed one.
  torch::Tensor gamma(const VarGroup& v) {
    torch::Tensor u = torch::empty_like(v.logit).uniform_(1e-7, 1.0 - 1e-7, gen_);
    torch::Tensor z = v.logit + (torch::log(u) - torch::log1p(-u));
    torch::Tensor soft = torch::sigmoid(z / st_.tau);
    torch::Tensor hard = (z > 0).to(soft.dtype());
    return hard - soft.detach() + soft;
  }

  // KL(q || p), summed over every variational weight (a 0-dim tensor with a graph).
  torch::Tensor kl() {
    torch::Tensor total;
    for (const VarGroup& v : vg_) {
      torch::Tensor k = kl_group(v);
      total = total.defined() ? total + k : k;
    }
    return total;
  }
  torch::Tensor kl_group(const VarGroup& v) {
    const torch::Tensor m = mu(v), s = sigma(v);
    switch (st_.prior) {
      case Prior::gaussian: return gauss_kl_sum(v, m, s, st_.prior_sd);
      case Prior::spike_slab: {
        if (!v.logit.defined()) return gauss_kl_sum(v, m, s, st_.prior_sd);
        torch::Tensor g = gauss_kl(m, s, st_.prior_sd);
        const torch::Tensor p = torch::sigmoid(v.logit);
        namespace F = torch::nn::functional;
        const torch::Tensor bern = p * (F::logsigmoid(v.logit) - st_.log_lambda) +
                                   (1.0 - p) * (F::logsigmoid(-v.logit) - log1m_lambda_);
        return masked(v, bern + p * g).sum();
      }
      case Prior::log_uniform: {
        const double k1 = 0.63576, k2 = 1.87320, k3 = 1.48695;
        const torch::Tensor la = log_alpha(v);
        const torch::Tensor neg = k1 * torch::sigmoid(k2 + k3 * la) - 0.5 * torch::log1p(torch::exp(-la)) - k1;
        return masked(v, -neg).sum();
      }
      case Prior::scale_mixture: {
        const torch::Tensor eps = randn(m.sizes(), m.options());
        const torch::Tensor w = m + s * eps;
        const double c = 0.5 * std::log(2.0 * M_PI);
        const torch::Tensor logq = -torch::log(s) - c - 0.5 * eps.square();
        const torch::Tensor l1 = std::log(st_.mix_pi) - std::log(st_.mix_sd1) - c - 0.5 * (w / st_.mix_sd1).square();
        const torch::Tensor l2 = std::log1p(-st_.mix_pi) - std::log(st_.mix_sd2) - c - 0.5 * (w / st_.mix_sd2).square();
        return masked(v, logq - torch::logaddexp(l1, l2)).sum();
      }
    }
    throw std::invalid_argument("unknown prior");
  }
  static torch::Tensor gauss_kl(const torch::Tensor& m, const torch::Tensor& s, double s0) {
    return std::log(s0) - torch::log(s) + (s.square() + m.square()) / (2.0 * s0 * s0) - 0.5;
  }
  // The same summed over a group: the constant log(s0) - 1/2 once per kept weight, not per element.
  torch::Tensor gauss_kl_sum(const VarGroup& v, const torch::Tensor& m, const torch::Tensor& s, double s0) {
    return masked(v, (s.square() + m.square()) * (0.5 / (s0 * s0)) - torch::log(s)).sum() +
           v.kept * (std::log(s0) - 0.5);
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
      torch::Tensor w = m + sigma(v) * randn(m.sizes(), m.options());
      if (v.logit.defined()) w = w * torch::bernoulli(torch::sigmoid(v.logit), gen_);
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
      else keep = (mu(v).abs() / sigma(v)) >= threshold;
      v.mask.mul_(keep.to(v.mask.dtype()));
      mu(v).mul_(v.mask);
      pruned_ = true;
      v.kept = v.mask.sum().item<double>();
      kept += v.kept;
    }
    return kept;
  }

 private:
  void save() {
    saved_.resize(vg_.size());
    for (std::size_t i = 0; i < vg_.size(); ++i) saved_[i] = mu(vg_[i]).detach().clone();
  }
  Net& net_;
  Settings st_;
  std::vector<VarGroup> vg_;
  std::vector<bool> layer_active_;
  torch::Tensor log_noise_;
  double log1m_lambda_ = -std::numeric_limits<double>::infinity();
  at::Generator gen_;
  std::vector<torch::Tensor> saved_;
  std::vector<torch::Tensor> cache_;  // sigma per group within a training step
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
    }
  }
  bool active(std::size_t layer) const override { return v_.layer_active(layer); }
  torch::Tensor forward(std::size_t layer, const LayerSpec& L, const torch::Tensor& x) override {
    namespace F = torch::nn::functional;
    VarGroup& w = v_.groups()[static_cast<std::size_t>(by_layer_[layer].first)];
    VarGroup* b = by_layer_[layer].second >= 0 ? &v_.groups()[static_cast<std::size_t>(by_layer_[layer].second)] : nullptr;
    const bool conv = L.kind == LayerKind::conv2d;
    auto apply = [&](const torch::Tensor& in, const torch::Tensor& W, const torch::Tensor& B) {
      if (conv) return F::conv2d(in, W, F::Conv2dFuncOptions().bias(B).stride(L.stride).padding(L.padding));
      return F::linear(in, W, B);
    };
    switch (v_.settings().estimator) {
      case Estimator::weights:
        return apply(x, v_.sample(w), b ? v_.sample(*b) : torch::Tensor());
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
};

}  // namespace vi
}  // namespace nn
}  // namespace scalebayes
