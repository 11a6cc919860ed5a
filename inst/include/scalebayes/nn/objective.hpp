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
//
// This header also states the interface between an objective and the training loop (nn/train.hpp):
// StepInfo, MinibatchLoss, Certificate, and WbbObjective, the WBB objective above as the loop's first
// Objective (the concept is documented in nn/train.hpp).
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

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

// ---- The objective interface of the training loop (nn/train.hpp) --------------------------------------------

// Where the loop is: the minibatch holds positions [begin, end) of this epoch's permutation.
struct StepInfo {
  std::int64_t step = 0, epoch = 0, batch = 0;  // 0-based: optimizer step, epoch, minibatch within the epoch
  std::int64_t begin = 0, end = 0;
  bool read = true;  // the loop reads this step's loss (history, or the epoch's divergence test)
};

// One minibatch's loss (a 0-dim tensor with a graph to the objective's parameters; the loop calls backward())
// and, for classification, the number of correctly classified examples of the minibatch (a 0-dim tensor on
// the device, no graph; undefined when the objective has no accuracy). Nothing here is read on the host.
struct MinibatchLoss {
  torch::Tensor loss;
  torch::Tensor correct;
};

// One epoch of the history: the mean of its minibatch losses (the objective's minibatch scale) and the
// fraction of its minibatch examples classified correctly in training mode (NaN without an accuracy); and the
// held-out loss and accuracy after the epoch (validation; NaN without held-out examples).
struct EpochRecord {
  double loss = NAN, accuracy = NAN;
  double val_loss = NAN, val_accuracy = NAN;
};

// The end-of-fit check: the objective on its own stated scale and the Euclidean norm of the gradient of
// (objective / n) over the parameters the optimizer updates (a stationarity certificate; NaN if not computed).
struct Certificate {
  double objective = NAN;
  double grad_norm = NAN;
};

// Correct classifications of a minibatch from the raw outputs (no graph): multinomial, the most probable class
// (ties: the first); binomial, logit > 0 (P(y = 1) > 0.5); binomial with q outputs (y [n, q]): the correct
// outputs / q, so that the count divided by the examples is the accuracy over examples and outputs. Undefined
// for gaussian. One network: out [n, q], y [n] or [n, q] -> a 0-dim count. per_member (batched networks,
// nn/batched.hpp): out [G, n, q], y [G, n] or [G, n, q] -> each member's count, [G] double. The one accuracy
// rule of every training loop.
inline torch::Tensor correct_count(Family f, const torch::Tensor& out, const torch::Tensor& y, bool per_member = false) {
  torch::NoGradGuard ng;
  torch::Tensor hit;
  const bool q_outputs = f == Family::binomial && y.dim() == out.dim();  // y [.., q]
  switch (f) {
    case Family::gaussian: return torch::Tensor();
    case Family::binomial: hit = (q_outputs ? out.detach() : out.detach().select(-1, 0)).gt(0).eq(y.gt(0.5)); break;
    case Family::multinomial: hit = out.detach().argmax(-1).eq(y); break;
  }
  if (!per_member) {
    if (q_outputs) return hit.sum().to(torch::kDouble) / static_cast<double>(y.size(-1));
    return hit.sum();
  }
  torch::Tensor c = hit.reshape({hit.size(0), -1}).sum(1).to(torch::kDouble);
  return q_outputs ? c / static_cast<double>(y.size(-1)) : c;
}

// The mean (unweighted) example loss and the accuracy (correct / examples; NaN for gaussian) of the network on
// held-out examples, in eval mode (batch norm: running statistics; no dropout), without a graph, in chunks.
// The validation metric of nn_control(validation = ): the training loss's l_i on the held-out rows.
inline std::pair<double, double> heldout_loss(Net& net, const Dataset& v, std::int64_t chunk = 1024) {
  torch::NoGradGuard ng;
  const bool was_training = net->is_training();
  net->eval();
  const std::int64_t n = v.n();
  torch::Tensor loss = torch::zeros({}, v.x.options().dtype(torch::kDouble));
  torch::Tensor correct = torch::zeros({}, v.x.options().dtype(torch::kDouble));
  bool has_correct = false;
  for (std::int64_t a = 0; a < n; a += chunk) {
    const std::int64_t b = std::min(n, a + chunk);
    const torch::Tensor out = net->forward(v.x.slice(0, a, b));
    const torch::Tensor yb = v.y.slice(0, a, b);
    loss.add_(example_losses(v.family, out, yb).sum().to(torch::kDouble));
    const torch::Tensor cc = correct_count(v.family, out, yb);
    if (cc.defined()) {
      correct.add_(cc.to(torch::kDouble));
      has_correct = true;
    }
  }
  if (was_training) net->train();
  const torch::Tensor h = torch::stack({loss, correct}).to(torch::kCPU);  // one host read
  const double nn = static_cast<double>(std::max<std::int64_t>(1, n));
  return {h.data_ptr<double>()[0] / nn, has_correct ? h.data_ptr<double>()[1] / nn : NAN};
}

// A uniformly random permutation of 0..n-1 (Fisher-Yates from the top, one uniform per position): the
// training loop's minibatch order, and the detached weight modes' weight order.
inline void permutation(rng::Stream& s, std::vector<std::int64_t>& perm) {
  const std::int64_t n = static_cast<std::int64_t>(perm.size());
  for (std::int64_t i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::int64_t j = static_cast<std::int64_t>(s.uniform() * static_cast<double>(i + 1));
    if (j > i) j = i;
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
}

// How the data weights enter a minibatch. example: w_i multiplies l_i (the method). The other two reproduce
// the WBB authors' MNIST script, not the method: shuffled weights each example by the weight of an
// independent random position; batch_mean multiplies the batch's mean loss by the mean weight of an
// independent random batch (TensorFlow broadcast loss[B] * W[B, 1] to B x B before reduce_mean).
enum class WeightMode { example = 0, shuffled = 1, batch_mean = 2 };
inline constexpr EnumTable<WeightMode, 3> weight_mode_names{
    "weight_mode", {{{"example", WeightMode::example}, {"shuffled", WeightMode::shuffled},
                       {"batch_mean", WeightMode::batch_mean}}}};
constexpr const auto& enum_table(WeightMode) { return weight_mode_names; }

// The WBB objective F for data weights w ([n], on the data's device, the network's dtype) and penalty pen,
// as an Objective of the training loop. minibatch(): the unbiased estimate of F / n stated at the top of this
// file (for the detached weight modes, the authors' variants); certify(): F on the sum scale and ||grad F / n||.
// Random numbers: none of its own in example mode; in the detached modes one permutation of the weights per
// epoch from the loop's stream, right after the loop's own permutation of the examples.
class WbbObjective {
 public:
  WbbObjective(Net& net, const Dataset& d, const torch::Tensor& w, const Penalty& pen,
               WeightMode mode = WeightMode::example)
      : net_(net), d_(d), w_(w), pen_(pen), mode_(mode) {
    step_pen_ = pen;
    step_pen_.lambda = pen.lambda * (1.0 / static_cast<double>(d.n()));
    if (detached()) wperm_.resize(static_cast<std::size_t>(d.n()));
  }
  std::int64_t n() const { return d_.n(); }
  torch::Device device() const { return d_.x.device(); }
  std::vector<torch::Tensor> parameters() { return net_->parameters(); }
  void start() { net_->train(); }
  void begin_epoch(rng::Stream& s) {
    if (!detached()) return;
    permutation(s, wperm_);
    wperm_t_ = torch::from_blob(wperm_.data(), {n()}, torch::TensorOptions().dtype(torch::kLong))
                   .to(device(), false, true);
  }
  MinibatchLoss minibatch(const torch::Tensor& idx, const StepInfo& info) {
    torch::Tensor xb = d_.x.index_select(0, idx), yb = d_.y.index_select(0, idx);
    torch::Tensor wb = w_.index_select(0, detached() ? wperm_t_.slice(0, info.begin, info.end) : idx);
    torch::Tensor out = net_->forward(xb);
    torch::Tensor losses = example_losses(d_.family, out, yb);
    MinibatchLoss r;
    r.loss = mode_ == WeightMode::batch_mean ? losses.mean() * wb.mean() : (wb * losses).mean();
    if (pen_.lambda > 0) r.loss = r.loss + penalty_term(net_, step_pen_);
    r.correct = correct_count(d_.family, out, yb);
    return r;
  }
  Certificate certify(std::int64_t chunk) {  // in minibatch-sized chunks: training's memory
    Certificate c;
    c.objective = full_objective(net_, d_, w_, pen_, true, &c.grad_norm, chunk);
    return c;
  }
  // Held-out examples (nn_control(validation = )): never trained on; the loop reads their loss after every epoch.
  void set_validation(const Dataset* v) { val_ = v; }
  bool has_validation() const { return val_ != nullptr && val_->n() > 0; }
  EpochRecord validation() {
    EpochRecord r;
    const auto la = heldout_loss(net_, *val_);
    r.val_loss = la.first;
    r.val_accuracy = la.second;
    return r;
  }
  std::vector<torch::Tensor> buffers() { return net_->buffers(); }

 private:
  bool detached() const { return mode_ != WeightMode::example; }
  Net& net_;
  const Dataset& d_;
  torch::Tensor w_;
  Penalty pen_, step_pen_;
  WeightMode mode_;
  std::vector<std::int64_t> wperm_;
  torch::Tensor wperm_t_;
  const Dataset* val_ = nullptr;
};

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
