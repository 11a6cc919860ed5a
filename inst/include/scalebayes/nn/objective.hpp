// scalebayes/nn/objective.hpp -- weighted losses and penalties of a network.
//
// The objective of one weighted fit, on the SUM scale of the WBB paper:
//     F(theta) = sum_i w_i l_i(theta) + lambda * sum_g w0_g ||W_g||^2
// over the penalized weight tensors W_g (biases and batch-norm parameters are never penalized), with
//   gaussian     l_i = (y_i - f_i)^2 / 2
//   binomial     l_i = log(1 + exp(f_i)) - y_i f_i            (f the logit)
// (with q outputs and y an [n, q] matrix: summed over the q outputs of example i),
//   multinomial  l_i = -log softmax(f_i)[y_i]                 (cross-entropy)
// A minibatch B estimates F / n without bias by  (1/|B|) sum_{i in B} w_i l_i + (lambda / n) sum_g w0_g ||W_g||^2:
// the same argmin as F, with the learning rate on the familiar mean-loss scale.
#pragma once
#include <torch/torch.h>

#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"

namespace scalebayes {
namespace nn {

// Per-example losses [n]: out [n, q], y [n] (q = 1; the operations of one output, unchanged) or [n, q].
inline torch::Tensor example_losses(Family f, const torch::Tensor& out, const torch::Tensor& y) {
  namespace F = torch::nn::functional;
  if (y.dim() == 2 && f != Family::multinomial) {  // q outputs: one loss per output, summed per example
    if (f == Family::gaussian) return (0.5 * (out - y).pow(2)).sum(1);
    return F::binary_cross_entropy_with_logits(out, y, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone))
        .sum(1);
  }
  switch (f) {
    case Family::gaussian: return 0.5 * (out.select(1, 0) - y).pow(2);
    case Family::binomial:
      return F::binary_cross_entropy_with_logits(out.select(1, 0), y,
                                                 F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
    case Family::multinomial:
      return F::cross_entropy(out, y, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  }
  throw std::invalid_argument("unknown family");
}

// Outputs on the response scale: gaussian mean, binomial P(y = 1), multinomial class probabilities.
inline torch::Tensor response(Family f, const torch::Tensor& out) {
  switch (f) {
    case Family::gaussian: return out;
    case Family::binomial: return torch::sigmoid(out);
    case Family::multinomial: return torch::softmax(out, 1);
  }
  return out;
}

// lambda * sum_g w0_g ||W_g||^2 over the penalized groups; w0 has one entry per penalized group, or one
// entry shared by all, or is empty (all 1).
struct Penalty {
  double lambda = 0.0;
  std::vector<double> w0;
  double weight(std::size_t g) const { return w0.empty() ? 1.0 : (w0.size() == 1 ? w0[0] : w0[g]); }
};

inline torch::Tensor penalty_term(Net& net, const Penalty& pen) {
  torch::Tensor s;
  std::size_t g = 0;
  for (const auto& grp : net->groups()) {
    if (!grp.penalized) continue;
    torch::Tensor t = grp.tensor.pow(2).sum() * pen.weight(g++);
    s = s.defined() ? s + t : t;
  }
  if (!s.defined()) return torch::zeros({}, net->groups().front().tensor.options());
  return s * pen.lambda;
}

// Full-data objective F (sum scale), evaluated in chunks in eval mode (batch-norm layers use their running
// statistics). With with_grad, also the Euclidean norm of the gradient of F / n (a stationarity certificate).
inline double full_objective(Net& net, const Dataset& d, const torch::Tensor& w, const Penalty& pen,
                             bool with_grad, double* grad_norm, std::int64_t chunk = 256) {
  const bool was_training = net->is_training();
  net->eval();
  const std::int64_t n = d.n();
  double total = 0.0;
  if (with_grad) net->zero_grad();
  for (std::int64_t a = 0; a < n; a += chunk) {
    const std::int64_t b = std::min(n, a + chunk);
    torch::Tensor xb = d.x.slice(0, a, b), yb = d.y.slice(0, a, b), wb = w.slice(0, a, b);
    if (with_grad) {
      torch::Tensor l = (wb * example_losses(d.family, net->forward(xb), yb)).sum();
      (l / static_cast<double>(n)).backward();
      total += l.item<double>();
    } else {
      torch::NoGradGuard ng;
      total += (wb * example_losses(d.family, net->forward(xb), yb)).sum().item<double>();
    }
  }
  torch::Tensor p = penalty_term(net, pen);
  if (with_grad) {
    (p / static_cast<double>(n)).backward();
    double g2 = 0.0;
    for (const auto& grp : net->groups())
      if (grp.tensor.grad().defined()) g2 += grp.tensor.grad().pow(2).sum().item<double>();
    if (grad_norm) *grad_norm = std::sqrt(g2);
    net->zero_grad();
  }
  total += p.item<double>();
  if (was_training) net->train();
  return total;
}

// Response-scale predictions for x (rows = examples) in eval mode: a [n, out] tensor on x's device.
inline torch::Tensor predict(Net& net, Family f, const torch::Tensor& x, std::int64_t chunk = 2000) {
  torch::NoGradGuard ng;
  const bool was_training = net->is_training();
  net->eval();
  std::vector<torch::Tensor> parts;
  for (std::int64_t a = 0; a < x.size(0); a += chunk)
    parts.push_back(response(f, net->forward(x.slice(0, a, std::min(x.size(0), a + chunk)))));
  if (was_training) net->train();
  return torch::cat(parts, 0);
}

}  // namespace nn
}  // namespace scalebayes

namespace scalebayes {
namespace nn {

// F and its full gradient (sum scale) at the network's current parameters, the gradient flattened in
// Net::copy_to order into grad (n_parameters values). Used to check the weighted loss against finite
// differences.
inline double objective_and_gradient(Net& net, const Dataset& d, const torch::Tensor& w, const Penalty& pen,
                                     double* grad) {
  const bool was_training = net->is_training();
  net->eval();
  net->zero_grad();
  torch::Tensor f = (w * example_losses(d.family, net->forward(d.x), d.y)).sum() + penalty_term(net, pen);
  f.backward();
  for (const auto& g : net->groups()) {
    torch::Tensor c = g.tensor.grad().defined() ? g.tensor.grad().to(torch::kCPU, torch::kDouble).contiguous()
                                                : torch::zeros(g.tensor.sizes(), torch::kDouble);
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), grad);
    grad += c.numel();
  }
  net->zero_grad();
  if (was_training) net->train();
  return f.item<double>();
}

}  // namespace nn
}  // namespace scalebayes
