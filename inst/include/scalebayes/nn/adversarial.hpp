// scalebayes/nn/adversarial.hpp -- the fast gradient sign method (FGSM, Goodfellow, Shlens & Szegedy 2015)
// against the Bayesian model average of stored network draws (Deng, Zhang, Liang & Lin 2019, section 5.3).
//
// For T stored draws theta_1..theta_T the model average is pbar(x) = (1/T) sum_t p(x; theta_t) (softmax class
// probabilities; binomial: P(y = 1) = sigmoid). The attack perturbs every input along the sign of the gradient
// of the model average's cross-entropy at the clean input:
//     x_adv(zeta) = clip(x + zeta * sign(grad_x L(x)),  lo, hi),   L(x) = -log pbar(x)[y]
// (binomial: -y log pbar - (1 - y) log(1 - pbar)); the gradient flows through every draw. By the chain rule
// grad_x L = sum_t (dL/dpbar) . (1/T) dp_t/dx, so it is computed draw by draw: a first pass (no autograd)
// accumulates pbar on a chunk of examples, dL/dpbar is taken at it, and a second pass backpropagates
// <dL/dpbar / T, p_t(x)> through each draw in turn into the input's gradient. Memory is one draw's graph on
// one chunk, whatever T. The networks run in eval mode (no dropout, batch-norm running statistics). Then, for
// every zeta, the accuracy of pbar on x_adv and the mean over draws of each draw's own accuracy.
//
// Two options give the authors' variant (their tools/attacker.py): the attack may be built from a subset of
// the draws (`source`, e.g. one sampled network) while every draw is evaluated, a transfer attack on the
// average; and the label in L may be the source average's predicted class (the paper's max_y log P(y | x))
// instead of the true one. Defaults: all draws, true labels (the white-box attack on the model average).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/objective.hpp"
#include "scalebayes/nn/predict.hpp"

namespace scalebayes {
namespace nn {

struct AdversarialConfig {
  std::vector<double> zeta;  // perturbation sizes (>= 0)
  double lo = 0.0, hi = 1.0;  // clipping range of the inputs (-inf / inf: none)
  std::int64_t batch = 1000;  // examples per chunk
  std::vector<std::size_t> source;  // draws (0-based) whose average the gradient is taken of; empty: all
  bool predicted_label = false;     // L uses the source average's predicted class, not the true label
};

struct AdversarialOutput {
  double* accuracy = nullptr;       // per zeta: accuracy of the model average on x_adv
  double* draw_accuracy = nullptr;  // per zeta: mean over draws of the draw's accuracy on x_adv
  double* x_adv = nullptr;          // optional: per zeta, the adversarial inputs (n x example, row-major)
};

// The predicted class of response-scale outputs (multinomial: the first most probable class; binomial:
// P(y = 1) > 0.5), as a long tensor [n].
inline torch::Tensor predicted_class(Family f, const torch::Tensor& prob) {
  if (f == Family::binomial) return (prob.select(1, 0) > 0.5).to(torch::kLong);
  return prob.argmax(1);
}

// params: T blocks of P values (Net::copy_to order); d: the examples and their labels (nn::make_dataset:
// multinomial labels 0..K-1, binomial 0/1). Throws for a gaussian family or a parameter count that does not
// match the network.
inline void fgsm_model_average(const ModelSpec& spec, const DeviceChoice& dev, const double* params, std::size_t P,
                               std::size_t T, const Dataset& d, const AdversarialConfig& cfg,
                               const AdversarialOutput& out, const double* buffers = nullptr) {
  if (spec.family == Family::gaussian) throw std::invalid_argument("adversarial accuracy needs a classification network");
  if (T < 1) throw std::invalid_argument("no stored draws");
  Net net(spec, dev.device, dev.dtype);
  if (P != static_cast<std::size_t>(net->n_parameters()))
    throw std::invalid_argument("stored draws have " + std::to_string(P) + " parameters, the network " +
                                std::to_string(net->n_parameters()));
  net->eval();
  const std::size_t NB = static_cast<std::size_t>(net->n_buffer_values());  // batch-norm running statistics
  for (auto& p : net->parameters()) p.set_requires_grad(false);  // gradients w.r.t. the input only
  const std::int64_t n = d.n(), B = std::max<std::int64_t>(1, cfg.batch);
  const std::size_t Z = cfg.zeta.size();
  const double invT = 1.0 / static_cast<double>(T);
  std::vector<std::size_t> src = cfg.source;
  if (src.empty())
    for (std::size_t t = 0; t < T; ++t) src.push_back(t);
  for (std::size_t t : src)
    if (t >= T) throw std::invalid_argument("attack draw " + std::to_string(t + 1) + " is not among the draws");
  const double invS = 1.0 / static_cast<double>(src.size());
  std::vector<double> correct(Z, 0.0), draw_correct(Z, 0.0);
  const std::int64_t per_example = n > 0 ? d.x.numel() / n : 0;

  for (std::int64_t a = 0; a < n; a += B) {
    const std::int64_t b = std::min(n, a + B);
    const torch::Tensor xb = d.x.slice(0, a, b), yb = d.y.slice(0, a, b);
    // Pass 1: the (source draws') model average at the clean inputs.
    torch::Tensor pbar;
    {
      torch::NoGradGuard ng;
      for (std::size_t t : src) {
        net->copy_from(params + t * P);
        if (buffers && NB > 0) net->copy_buffers_from(buffers + t * NB);
        const torch::Tensor p = response(spec.family, net->forward(xb));
        pbar = pbar.defined() ? pbar + p : p;
      }
      pbar = pbar * invS;
    }
    const torch::Tensor target = cfg.predicted_label ? predicted_class(spec.family, pbar).to(yb.dtype()) : yb;
    // dL/dpbar (sum of the chunk's losses), by autograd on a leaf; pbar is kept away from 0 and 1.
    torch::Tensor coef;
    {
      torch::AutoGradMode on(true);
      const double tiny = 1e-30;
      torch::Tensor leaf = pbar.detach().clone().requires_grad_(true);
      torch::Tensor loss;
      if (spec.family == Family::multinomial) {
        loss = -leaf.gather(1, target.to(torch::kLong).unsqueeze(1)).clamp_min(tiny).log().sum();
      } else {
        const torch::Tensor q = leaf.select(1, 0);
        loss = -(target * q.clamp_min(tiny).log() + (1.0 - target) * (1.0 - q).clamp_min(tiny).log()).sum();
      }
      loss.backward();
      coef = leaf.grad().detach() * invS;
    }
    // Pass 2: grad_x L = sum_t <coef, dp_t/dx>, draw by draw.
    torch::Tensor gx = torch::zeros_like(xb);
    {
      torch::AutoGradMode on(true);
      for (std::size_t t : src) {
        net->copy_from(params + t * P);
        if (buffers && NB > 0) net->copy_buffers_from(buffers + t * NB);
        torch::Tensor xin = xb.detach().clone().requires_grad_(true);
        (response(spec.family, net->forward(xin)) * coef).sum().backward();
        gx += xin.grad();
      }
    }
    const torch::Tensor dir = gx.sign();
    // Evaluation of every perturbation size.
    torch::NoGradGuard ng;
    for (std::size_t z = 0; z < Z; ++z) {
      const torch::Tensor xa = (xb + cfg.zeta[z] * dir).clamp(cfg.lo, cfg.hi);
      if (out.x_adv) {
        const torch::Tensor c = xa.to(torch::kCPU, torch::kDouble).contiguous();
        std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(),
                  out.x_adv + z * static_cast<std::size_t>(n * per_example) + static_cast<std::size_t>(a * per_example));
      }
      torch::Tensor pa;
      double dc = 0.0;
      for (std::size_t t = 0; t < T; ++t) {
        net->copy_from(params + t * P);
        if (buffers && NB > 0) net->copy_buffers_from(buffers + t * NB);
        const torch::Tensor p = response(spec.family, net->forward(xa));
        dc += predicted_class(spec.family, p).eq(yb.to(torch::kLong)).sum().item<double>();
        pa = pa.defined() ? pa + p : p;
      }
      correct[z] += predicted_class(spec.family, pa * invT).eq(yb.to(torch::kLong)).sum().item<double>();
      draw_correct[z] += dc * invT;
    }
  }
  for (std::size_t z = 0; z < Z; ++z) {
    if (out.accuracy) out.accuracy[z] = n > 0 ? correct[z] / static_cast<double>(n) : 0.0;
    if (out.draw_accuracy) out.draw_accuracy[z] = n > 0 ? draw_correct[z] / static_cast<double>(n) : 0.0;
  }
}

}  // namespace nn
}  // namespace scalebayes
