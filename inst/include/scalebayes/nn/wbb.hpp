// scalebayes/nn/wbb.hpp -- the network as a weighted solver of the WBB driver (wbb/driver.hpp).
//
// Draw t: the driver draws n data weights and the prior weights from stream (seed, t); NetWbbSolver then
// initializes a fresh network from the same stream, trains it on
//     sum_i w_i l_i(theta) + lambda * sum_g w0_g ||W_g||^2        (nn/objective.hpp)
// with the minibatch order from the same stream, and writes the draw's outputs into caller-owned buffers
// (response-scale predictions on new inputs, optionally every parameter, the objective and its gradient
// norm, the per-epoch history). One solver (one network) per worker thread, created on that thread with its own torch thread
// setting; the training data are shared read-only. The draw is a function of (seed, t) only.
#pragma once
#include <torch/torch.h>

#include <Eigen/Dense>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/run.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/wbb/driver.hpp"

namespace scalebayes {
namespace nn {

struct NetWbbProblem : RunSpec {  // the network, data, device and threads (nn/run.hpp), and:
  TrainConfig train;
  double lambda = 0.0;
  bool normalize_weights = false;  // w / mean(w) (the WBB authors' MNIST script); not the method
  TrainProgress* progress = nullptr;  // shared by the workers: steps taken, last epoch's loss (display)
};

enum DrawStatus : int { not_run = 0, done = 1, diverged = 2, interrupted = 3 };

// Caller-owned outputs, one slot per local draw index; a null pointer means "not kept". The draws' parameters
// and buffers: the DrawStore part (nn/run.hpp), slot i = draw i.
struct NetWbbOutput : DrawStore {
  double* pred = nullptr;       // draw i: n_new x out, row-major, at pred + i * n_new * out
  double* objective = nullptr;  // F at the end of training (sum scale)
  double* grad_norm = nullptr;  // ||grad F / n|| at the end (when the stopping rule computed it)
  double* steps = nullptr;      // optimizer steps taken
  int* status = nullptr;        // DrawStatus
  // Per-epoch history (train.history): draw i holds history_rows rows of (loss, accuracy), row-major, at
  // history + i * history_rows * 2 (history_rows = max_epochs(train, n)); epochs[i] of them were recorded.
  double* history = nullptr;
  std::int64_t history_rows = 0;
  double* epochs = nullptr;
  // With held-out examples (pb.validation): draw i's held-out loss and accuracy after each epoch, history_rows
  // rows of 2 at val_history + i * history_rows * 2 (NaN where not run), and the best epoch (1-based).
  double* val_history = nullptr;
  double* best_epoch = nullptr;
};

class NetWbbSolver {
 public:
  NetWbbSolver(const NetWbbProblem& pb, const NetWbbOutput& out) : pb_(pb), out_(out), net_(nullptr) {
    set_worker_threads(pb.torch_threads);
    net_ = Net(pb.spec, pb.dev.device, pb.dev.dtype);
  }
  void set_stop(const parallel::StopToken& stop) { stop_ = stop; }  // called by wbb::run_draws
  Eigen::Index n_obs() const { return pb_.data->n(); }
  Eigen::Index n_prior() const { return net_->n_penalized_groups(); }
  std::int64_t n_parameters() const { return net_->n_parameters(); }

  void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd& w0, rng::Stream& s) {
    net_->init_from(s);
    torch::Tensor wt = torch::from_blob(const_cast<double*>(w.data()), {w.size()}, torch::kDouble)
                           .to(pb_.dev.options(), false, true);
    if (pb_.normalize_weights) wt = wt / wt.mean();
    Penalty pen;
    pen.lambda = pb_.lambda;
    pen.w0.assign(w0.data(), w0.data() + w0.size());
    const TrainResult r = train(net_, *pb_.data, wt, pen, pb_.train, s, stop_, true, pb_.progress, pb_.validation);
    if (out_.val_history) {
      const std::size_t rows = std::min(r.validation.size(), static_cast<std::size_t>(out_.history_rows));
      double* h = out_.val_history + i * static_cast<std::size_t>(out_.history_rows) * 2;
      for (std::size_t e = 0; e < rows; ++e) {
        h[2 * e] = r.validation[e].val_loss;
        h[2 * e + 1] = r.validation[e].val_accuracy;
      }
    }
    if (out_.best_epoch) out_.best_epoch[i] = static_cast<double>(r.best_epoch);
    const int st = r.interrupted ? interrupted : (r.diverged ? diverged : done);
    if (out_.history) {
      const std::size_t rows = std::min(r.history.size(), static_cast<std::size_t>(out_.history_rows));
      double* h = out_.history + i * static_cast<std::size_t>(out_.history_rows) * 2;
      for (std::size_t e = 0; e < rows; ++e) {
        h[2 * e] = r.history[e].loss;
        h[2 * e + 1] = r.history[e].accuracy;
      }
      if (out_.epochs) out_.epochs[i] = static_cast<double>(rows);
    }
    if (out_.status) out_.status[i] = st;
    if (out_.steps) out_.steps[i] = static_cast<double>(r.steps);
    if (out_.objective) out_.objective[i] = r.objective;
    if (out_.grad_norm) out_.grad_norm[i] = r.grad_norm;
    if (st == interrupted) return;
    out_.put(net_, i);
    if (out_.pred && pb_.x_new.defined()) {
      torch::Tensor p = predict(net_, pb_.spec.family, pb_.x_new).to(torch::kCPU, torch::kDouble).contiguous();
      const std::size_t m = static_cast<std::size_t>(p.numel());
      std::copy(p.data_ptr<double>(), p.data_ptr<double>() + m, out_.pred + i * m);
    }
  }

 private:
  const NetWbbProblem& pb_;
  NetWbbOutput out_;
  parallel::StopToken stop_;
  Net net_;
};

// Runs the draws of `st` for a network problem. A stop request of the monitor reaches the training loops
// in progress through the driver's stop token (they return within one optimizer step).
inline parallel::RunStatus run_net_wbb(const NetWbbProblem& pb, const NetWbbOutput& out, const wbb::Settings& st,
                                       const parallel::Monitor& monitor = parallel::Monitor()) {
  auto factory = [&](int) { return std::make_unique<NetWbbSolver>(pb, out); };
  return wbb::run_draws(st, factory, monitor);
}

}  // namespace nn
}  // namespace scalebayes
