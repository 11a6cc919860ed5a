// scalebayes/nn/train.hpp -- minibatch training of one weighted objective (nn/objective.hpp).
//
// Everything random comes from the caller's rng::Stream: the initial parameters (Net::init_from, done by the
// caller) and the minibatch order (a Fisher-Yates permutation per epoch). Stopping: a number of epochs, or
// a number of optimizer steps, or earlier when the full-data gradient norm of F / n, checked after each
// epoch when grad_tol > 0, falls below grad_tol. A non-finite minibatch loss stops the run as diverged.
// The stop token (the parallel driver's: set when the monitor asks to stop, e.g. on Ctrl-C) is read before
// every step.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "scalebayes/nn/objective.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace nn {

enum class Optimizer { sgd = 0, adam = 1 };

struct TrainConfig {
  Optimizer optimizer = Optimizer::adam;
  double lr = 1e-3;
  double momentum = 0.9;  // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
  std::int64_t epochs = 100;
  std::int64_t batch_size = 50;
  std::int64_t max_steps = 0;  // > 0: exactly this many steps (epochs ignored)
  double grad_tol = 0.0;
  bool certify = true;  // evaluate F and its gradient norm at the end (one extra pass over the data)
  // How the data weights enter a minibatch. example: w_i multiplies l_i (the method). The other two
  // reproduce the WBB authors' MNIST script, not the method: shuffled weights each example by the weight of
  // an independent random position; batch_mean multiplies the batch's mean loss by the mean weight of an
  // independent random batch (TensorFlow broadcast loss[B] * W[B, 1] to B x B before reduce_mean).
  enum class WeightMode { example = 0, shuffled = 1, batch_mean = 2 } weight_mode = WeightMode::example;
};

struct TrainResult {
  double objective = NAN;  // F at the end (sum scale)
  double grad_norm = NAN;  // ||grad F / n|| at the end (NaN unless certify or grad_tol > 0)
  std::int64_t epochs = 0, steps = 0;
  bool diverged = false, interrupted = false, converged = false;
};

inline void permutation(rng::Stream& s, std::vector<std::int64_t>& perm) {
  const std::int64_t n = static_cast<std::int64_t>(perm.size());
  for (std::int64_t i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::int64_t j = static_cast<std::int64_t>(s.uniform() * static_cast<double>(i + 1));
    if (j > i) j = i;
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
}

inline std::unique_ptr<torch::optim::Optimizer> make_optimizer(Net& net, const TrainConfig& c) {
  if (c.optimizer == Optimizer::sgd)
    return std::make_unique<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(c.lr).momentum(c.momentum));
  return std::make_unique<torch::optim::Adam>(
      net->parameters(), torch::optim::AdamOptions(c.lr).betas(std::make_tuple(c.beta1, c.beta2)).eps(c.eps));
}

// Minimize F for weights w (a [n] tensor on the data's device, dtype of the network) from the network's
// current parameters. `final_check` evaluates F (and its gradient norm) at the end.
inline TrainResult train(Net& net, const Dataset& d, const torch::Tensor& w, const Penalty& pen, const TrainConfig& c,
                         rng::Stream& s, const parallel::StopToken& stop = parallel::StopToken(),
                         bool final_check = true) {
  TrainResult r;
  const std::int64_t n = d.n();
  const std::int64_t B = std::max<std::int64_t>(1, std::min(c.batch_size, n));
  const std::int64_t per_epoch = (n + B - 1) / B;
  const std::int64_t total_steps = c.max_steps > 0 ? c.max_steps : c.epochs * per_epoch;
  const double pen_scale = 1.0 / static_cast<double>(n);
  Penalty step_pen = pen;
  step_pen.lambda = pen.lambda * pen_scale;
  const bool has_penalty = pen.lambda > 0;
  auto opt = make_optimizer(net, c);
  net->train();
  const bool detached = c.weight_mode != TrainConfig::WeightMode::example;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n)), wperm;
  if (detached) wperm.resize(static_cast<std::size_t>(n));
  const auto idx_opt = torch::TensorOptions().dtype(torch::kLong);
  torch::Tensor perm_t, wperm_t;
  std::int64_t step = 0;
  while (step < total_steps) {
    permutation(s, perm);
    perm_t = torch::from_blob(perm.data(), {n}, idx_opt).to(d.x.device(), false, true);
    if (detached) {
      permutation(s, wperm);
      wperm_t = torch::from_blob(wperm.data(), {n}, idx_opt).to(d.x.device(), false, true);
    }
    for (std::int64_t b = 0; b < per_epoch && step < total_steps; ++b, ++step) {
      if (stop.stop_requested()) {
        r.interrupted = true;
        r.steps = step;
        return r;
      }
      const std::int64_t a = b * B, e = std::min(n, a + B);
      torch::Tensor idx = perm_t.slice(0, a, e);
      torch::Tensor xb = d.x.index_select(0, idx), yb = d.y.index_select(0, idx);
      torch::Tensor wb = w.index_select(0, detached ? wperm_t.slice(0, a, e) : idx);
      opt->zero_grad();
      torch::Tensor losses = example_losses(d.family, net->forward(xb), yb);
      torch::Tensor loss = c.weight_mode == TrainConfig::WeightMode::batch_mean ? losses.mean() * wb.mean()
                                                                                 : (wb * losses).mean();
      if (has_penalty) loss = loss + penalty_term(net, step_pen);
      loss.backward();
      opt->step();
      // One host sync per epoch at most: the divergence test reads the last minibatch loss of the epoch.
      if (b == per_epoch - 1 || step + 1 == total_steps) {
        if (!std::isfinite(loss.item<double>())) {
          r.diverged = true;
          r.steps = step + 1;
          return r;
        }
      }
    }
    ++r.epochs;
    if (c.grad_tol > 0 && step < total_steps) {
      double g = NAN;
      full_objective(net, d, w, pen, true, &g, B);
      if (g < c.grad_tol) {
        r.converged = true;
        break;
      }
    }
  }
  r.steps = step;
  if (final_check && c.certify) {
    double g = NAN;
    r.objective = full_objective(net, d, w, pen, true, &g, B);  // in minibatch-sized chunks: training's memory
    r.grad_norm = g;
    if (c.grad_tol > 0 && g < c.grad_tol) r.converged = true;
    if (!std::isfinite(r.objective)) r.diverged = true;
  }
  return r;
}

}  // namespace nn
}  // namespace scalebayes
