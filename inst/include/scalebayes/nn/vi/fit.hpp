// scalebayes/nn/vi/fit.hpp -- the negative ELBO as an Objective of the one training loop, and the driver that
// runs variational fits (a lambda grid, replicates) as items of parallel::run_parallel.
//
// ViObjective: on a minibatch B of an n-example data set, the loop minimizes the unbiased estimate of -ELBO / n
//     (1 / K) sum_k (1 / |B|) sum_{i in B} nll_i(theta_k) + kl_weight * KL(q || p) / n
// (times min(1, epoch / kl_warmup) during a KL warm-up; Bai et al.'s "KL weighted by m / n", divided by m; theta_k the K reparameterized forward passes of the layer
// hook, nn/vi/variational.hpp). nll_i: the cross-entropy (multinomial), the Bernoulli negative log-likelihood
// log(1 + e^f) - y f (binomial), and for gaussian (y - f)^2 / (2 s^2) + log s + log(2 pi) / 2
// with the noise sd s fixed or learned: a real negative log-likelihood, so -ELBO is a number with a meaning
// (its description length, KL in bits, is reported beside it). Once per epoch (end_epoch) it reads the epoch's
// mean NLL, the KL and the share of weights q keeps: the trace.
//
// run_vi(): fit i initializes its network (Net::init_from) and q (Variational::init_from) from rng::Stream(seed,
// i), trains with train_loop (minibatch order from the same stream), optionally prunes and retrains, then
// writes q (mu, sigma, phi per parameter), `draws` draws of q with their predictions on x_new, and the trace
// into caller-owned slots indexed by i: the same results for any number of threads.
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/run.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/nn/vi/variational.hpp"
#include "scalebayes/parallel/driver.hpp"

namespace scalebayes {
namespace nn {
namespace vi {

struct TraceRow {
  double epoch = 0, neg_elbo = NAN, nll = NAN, kl = NAN, kept = NAN, noise_sd = NAN;
};

class ViObjective {
 public:
  ViObjective(Net& net, Variational& v, const Dataset& d) : net_(net), v_(v), d_(d), hook_(v, net) {}
  std::int64_t n() const { return d_.n(); }
  torch::Device device() const { return d_.x.device(); }
  std::vector<torch::Tensor> parameters() {
    std::vector<torch::Tensor> p = net_->parameters();
    for (auto& t : v_.parameters()) p.push_back(t);
    return p;
  }
  void start() {
    net_->train();
    nll_sum_ = torch::zeros({}, d_.x.options().dtype(torch::kDouble));
    batches_ = 0;
  }
  void begin_epoch(rng::Stream&) {}
  MinibatchLoss minibatch(const torch::Tensor& idx, const StepInfo& info) {
    const torch::Tensor xb = d_.x.index_select(0, idx), yb = d_.y.index_select(0, idx);
    const int K = std::max(1, v_.settings().samples);
    v_.begin_step();
    torch::Tensor nll, out;
    if (K > 1 && stacks_samples()) {
      // the K passes as one: the minibatch repeated K times, each row with its own noise (the mean over the
      // K m rows is the mean over k of each pass's mean); the last copy's outputs count as the pass's
      const std::int64_t m = xb.size(0);
      std::vector<std::int64_t> rx(static_cast<std::size_t>(xb.dim()), 1), ry(static_cast<std::size_t>(yb.dim()), 1);
      rx[0] = ry[0] = K;
      struct Unstack {  // the weights estimator draws K weight sets for this pass only
        Variational& v;
        ~Unstack() { v.set_stacked(0); }
      } unstack{v_};
      if (v_.settings().estimator == Estimator::weights) v_.set_stacked(K);
      const torch::Tensor all = net_->forward(xb.repeat(rx), hook_);
      nll = nll_examples(all, yb.repeat(ry)).mean();
      out = all.narrow(0, (K - 1) * m, m);
    } else {
      for (int k = 0; k < K; ++k) {
        out = net_->forward(xb, hook_);
        torch::Tensor l = nll_examples(out, yb).mean();
        nll = nll.defined() ? nll + l : l;
      }
      if (K > 1) nll = nll / static_cast<double>(K);
    }
    MinibatchLoss r;
    const double warm = v_.settings().kl_warmup > 0
                            ? std::min(1.0, static_cast<double>(info.epoch + 1) / v_.settings().kl_warmup)
                            : 1.0;
    r.loss = nll + v_.kl() * (warm * v_.settings().kl_weight / static_cast<double>(n()));
    v_.end_step();  // the graph keeps what it needs; the cache goes
    r.correct = correct_count(d_.family, out, yb);
    {
      torch::NoGradGuard ng;
      nll_sum_.add_(nll.detach().to(torch::kDouble));
      ++batches_;
    }
    return r;
  }
  Certificate certify(std::int64_t) { return Certificate(); }  // a stochastic objective: no gradient certificate
  // Held-out examples (nn_control(validation = )): the loss l_i of the network at the mean of q on them
  // (nn/objective.hpp: heldout_loss(), no noise drawn), after every epoch.
  void set_validation(const Dataset* v) { val_ = v; }
  bool has_validation() const { return val_ != nullptr && val_->n() > 0; }
  EpochRecord validation() {
    v_.mean_into_net();
    const auto la = heldout_loss(net_, *val_);
    v_.restore();
    EpochRecord r;
    r.val_loss = la.first;
    r.val_accuracy = la.second;
    return r;
  }
  std::vector<torch::Tensor> buffers() { return net_->buffers(); }
  // K > 1 Monte-Carlo passes run as one forward pass over the minibatch repeated K times: the "local" estimator
  // draws its noise per row (pre-activations), dropout masks are per row; the "weights" estimator draws K weight
  // sets and computes each variational layer as a batched product (pass k's rows with draw k), so every
  // variational layer must be linear. Never with batch norm (its batch statistics would see K copies of each
  // row). Not "per_example": its cost is the per-example weight tensors' arithmetic, not per-pass overhead
  // (bench/vi_samples.R: K = 8 took 17.0 s looped and 19.0 s stacked; K = 4 10.2 and 8.3).
  bool stacks_samples() const {
    if (net_->needs_two_examples() || v_.settings().estimator == Estimator::per_example) return false;
    if (v_.settings().estimator == Estimator::local) return true;
    for (std::size_t i = 0; i < net_->n_layers(); ++i)
      if (v_.layer_active(i) && net_->layer_spec(i).kind != LayerKind::linear) return false;
    return true;
  }
  void end_epoch(std::int64_t epoch) {
    TraceRow t;
    t.epoch = static_cast<double>(epoch);
    {
      torch::NoGradGuard ng;
      t.nll = nll_sum_.item<double>() / static_cast<double>(std::max<std::int64_t>(1, batches_)) *
              static_cast<double>(n());
      t.kl = v_.kl().item<double>();
      const auto k = v_.kept();
      t.kept = k.second > 0 ? k.first / k.second : NAN;
      t.noise_sd = noise_sd();
      nll_sum_.zero_();
    }
    batches_ = 0;
    t.neg_elbo = t.nll + v_.settings().kl_weight * t.kl;
    trace.push_back(t);
    if (progress) progress->sparsity.store(t.kept);
  }

  // Negative log-likelihood per example of raw outputs: gaussian with the noise sd, else the family's loss.
  torch::Tensor nll_examples(const torch::Tensor& out, const torch::Tensor& y) const {
    if (d_.family != Family::gaussian) return example_losses(d_.family, out, y);
    const double c = 0.5 * std::log(2.0 * M_PI);
    const std::int64_t q = y.dim() == 2 ? y.size(1) : 1;
    const torch::Tensor sq = example_losses(d_.family, out, y);  // sum over outputs of (y - f)^2 / 2
    if (v_.noise_learned()) {
      const torch::Tensor ls = v_.log_noise();
      return sq * torch::exp(-2.0 * ls) + static_cast<double>(q) * (ls + c);
    }
    const double s = v_.settings().noise_sd;
    return sq / (s * s) + static_cast<double>(q) * (std::log(s) + c);
  }
  double noise_sd() const {
    if (d_.family != Family::gaussian) return NAN;
    return v_.noise_learned() ? std::exp(v_.log_noise().item<double>()) : v_.settings().noise_sd;
  }

  std::vector<TraceRow> trace;
  TrainProgress* progress = nullptr;

 private:
  Net& net_;
  Variational& v_;
  const Dataset& d_;
  SampleHook hook_;
  torch::Tensor nll_sum_;
  std::int64_t batches_ = 0;
  const Dataset* val_ = nullptr;
};

struct ViProblem : RunSpec {  // the network, data, device and threads (nn/run.hpp), and:
  TrainConfig train;
  std::vector<Settings> fits;     // one per fit (e.g. a lambda grid)
  std::int64_t draws = 100;       // draws of q kept per fit
  double prune = NAN;             // prune after training at this threshold (NaN: no pruning)
  std::int64_t retrain_epochs = 0;
  TrainProgress* progress = nullptr;
};

// Caller-owned outputs, slots indexed by fit i; null: not kept. P parameters, B buffer values, O = n_new * out.
// The draws of q: the DrawStore part (nn/run.hpp), slot i * draws + t = draw t of fit i (batch norm: the same
// running statistics for every draw).
struct ViOutput : DrawStore {
  double* mu = nullptr;         // fit i: P values at mu + i P (the mean of the slab; batch norm: the estimate)
  double* sigma = nullptr;      // P (0 for point-estimated parameters)
  double* phi = nullptr;        // P (1 where q has no inclusion)
  double* mask = nullptr;       // P (0 pruned)
  double* pred = nullptr;       // draws x O per fit
  double* pred_mean_q = nullptr;  // O per fit: the network at the mean of q
  double* pred_stages = nullptr;  // 2 x O per fit (pruning): the mean of q before pruning, after pruning
  std::int64_t trace_rows = 0;  // rows per fit: epochs + retrain_epochs
  double* trace = nullptr;      // trace_rows x 6 per fit (row-major): epoch, -ELBO, NLL, KL, kept, noise sd
  double* accuracy = nullptr;   // trace_rows per fit: the loop's training accuracy of each epoch
  double* epochs = nullptr;     // rows recorded per fit
  double* val_history = nullptr;  // trace_rows x 2 per fit: held-out loss and accuracy per epoch (validation)
  double* best_epoch = nullptr;   // per fit: the epoch of the lowest held-out loss (0 without validation)
  double* steps = nullptr;
  double* kept = nullptr;       // weights kept after pruning (NaN without)
  int* status = nullptr;        // DrawStatus of nn/wbb.hpp: done, diverged, interrupted
};

inline void write_predictions(Net& net, Family f, const torch::Tensor& x, double* out) {
  torch::Tensor p = predict(net, f, x).to(torch::kCPU, torch::kDouble).contiguous();
  std::copy(p.data_ptr<double>(), p.data_ptr<double>() + p.numel(), out);
}

// Runs one fit into slot i of `out`. Returns its status (done = 1, diverged = 2, interrupted = 3).
inline int run_vi_fit(const ViProblem& pb, const ViOutput& out, std::size_t i, std::uint64_t seed,
                      const parallel::StopToken& stop) {
  set_worker_threads(pb.torch_threads);
  Net net(pb.spec, pb.dev.device, pb.dev.dtype);
  Variational v(net, pb.fits[i]);
  rng::Stream s(seed, i);
  net->init_from(s);
  v.init_from(s);
  ViObjective obj(net, v, *pb.data);
  obj.progress = pb.progress;
  obj.set_validation(pb.validation);
  TrainConfig cfg = pb.train;
  cfg.certify = false;
  cfg.grad_tol = 0;
  if (net->needs_two_examples()) cfg.merge_single_batch = true;
  TrainResult r = train_loop(obj, cfg, s, stop, false, pb.progress);
  std::vector<EpochRecord> hist = r.history;
  if (out.val_history) {
    const std::size_t rows = std::min<std::size_t>(r.validation.size(), static_cast<std::size_t>(out.trace_rows));
    double* h = out.val_history + i * static_cast<std::size_t>(out.trace_rows) * 2;
    for (std::size_t e = 0; e < rows; ++e) {
      h[2 * e] = r.validation[e].val_loss;
      h[2 * e + 1] = r.validation[e].val_accuracy;
    }
  }
  if (out.best_epoch) out.best_epoch[i] = static_cast<double>(r.best_epoch);
  const std::int64_t P = net->n_parameters();
  const std::size_t O = pb.x_new.defined() ? static_cast<std::size_t>(pb.x_new.size(0) * net->out_dim()) : 0;
  int status = r.interrupted ? 3 : (r.diverged ? 2 : 1);
  if (std::isfinite(pb.prune) && status == 1) {
    if (out.pred_stages && O) {
      v.mean_into_net();
      write_predictions(net, pb.spec.family, pb.x_new, out.pred_stages + i * 2 * O);
      v.restore();
    }
    const double k = v.prune(pb.prune);
    if (out.kept) out.kept[i] = k;
    if (out.pred_stages && O) {
      v.mean_into_net();
      write_predictions(net, pb.spec.family, pb.x_new, out.pred_stages + i * 2 * O + O);
      v.restore();
    }
    if (pb.retrain_epochs > 0) {
      TrainConfig c2 = cfg;
      c2.epochs = pb.retrain_epochs;
      c2.max_steps = 0;
      c2.patience = 0;  // retraining after pruning: no early stopping
      TrainResult r2 = train_loop(obj, c2, s, stop, false, pb.progress);
      hist.insert(hist.end(), r2.history.begin(), r2.history.end());
      r.steps += r2.steps;
      status = r2.interrupted ? 3 : (r2.diverged ? 2 : 1);
    }
  }
  if (out.trace) {
    const std::size_t rows = std::min<std::size_t>(obj.trace.size(), static_cast<std::size_t>(out.trace_rows));
    double* t = out.trace + i * static_cast<std::size_t>(out.trace_rows) * 6;
    for (std::size_t e = 0; e < rows; ++e) {
      const TraceRow& row = obj.trace[e];
      const double vals[6] = {static_cast<double>(e + 1), row.neg_elbo, row.nll, row.kl, row.kept, row.noise_sd};
      std::copy(vals, vals + 6, t + 6 * e);
      if (out.accuracy && e < hist.size()) out.accuracy[i * static_cast<std::size_t>(out.trace_rows) + e] = hist[e].accuracy;
    }
    if (out.epochs) out.epochs[i] = static_cast<double>(rows);
  }
  if (out.steps) out.steps[i] = static_cast<double>(r.steps);
  if (out.status) out.status[i] = status;
  if (status == 2) return status;  // diverged: q is not finite; nothing more to write
  {
    torch::NoGradGuard ng;
    const std::size_t off = i * static_cast<std::size_t>(P);
    std::vector<double> mu(static_cast<std::size_t>(P)), sg(static_cast<std::size_t>(P), 0.0),
        ph(static_cast<std::size_t>(P), 1.0), mk(static_cast<std::size_t>(P), 1.0);
    net->copy_to(mu.data());
    // offsets of the groups in the flat vector
    std::vector<std::int64_t> start;
    std::int64_t a = 0;
    for (const auto& g : net->groups()) {
      start.push_back(a);
      a += g.tensor.numel();
    }
    auto put = [&](std::vector<double>& dst, std::int64_t at, const torch::Tensor& t) {
      torch::Tensor c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
      std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), dst.begin() + at);
    };
    for (const VarGroup& g : v.groups()) {
      put(sg, start[g.g], v.masked(g, v.sigma_of(g)));  // no graph: the group alone
      put(ph, start[g.g], v.phi(g));
      put(mk, start[g.g], g.mask);
    }
    if (out.mu) std::copy(mu.begin(), mu.end(), out.mu + off);
    if (out.sigma) std::copy(sg.begin(), sg.end(), out.sigma + off);
    if (out.phi) std::copy(ph.begin(), ph.end(), out.phi + off);
    if (out.mask) std::copy(mk.begin(), mk.end(), out.mask + off);
  }
  if (out.pred_mean_q && O) {
    v.mean_into_net();
    write_predictions(net, pb.spec.family, pb.x_new, out.pred_mean_q + i * O);
    v.restore();
  }
  const std::size_t D = static_cast<std::size_t>(pb.draws);
  for (std::size_t t = 0; t < D; ++t) {  // also for an interrupted fit: the state it reached
    v.sample_into_net();
    const std::size_t k = i * D + t;
    out.put(net, k);
    if (out.pred && O) write_predictions(net, pb.spec.family, pb.x_new, out.pred + k * O);
    v.restore();
  }
  return status;
}

inline parallel::RunStatus run_vi(const ViProblem& pb, const ViOutput& out, std::uint64_t seed, int threads,
                                  const parallel::Monitor& monitor = parallel::Monitor()) {
  auto body = [&](std::size_t i, int, const parallel::StopToken& stop) { run_vi_fit(pb, out, i, seed, stop); };
  return parallel::run_parallel(pb.fits.size(), threads, body, monitor);
}

}  // namespace vi
}  // namespace nn
}  // namespace scalebayes
