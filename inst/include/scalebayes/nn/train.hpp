// scalebayes/nn/train.hpp -- the one minibatch training loop, over any Objective.
//
// The loop itself is train_members() (below): it trains a group of members that share the schedule, one network
// (train_loop(), a group of one) or a batched group of WBB draws (nn/batched.hpp). The rules described here are
// its rules, applied to every member.
//
// train_loop(obj, config, stream) minimizes an objective by minibatch steps of one optimizer (SGD with
// momentum, Adam, RMSprop) over the parameters the objective declares. Everything random comes from the
// caller's rng::Stream: the minibatch order (a Fisher-Yates permutation per epoch), then whatever the
// objective draws per epoch (Objective::begin_epoch, right after the loop's permutation); the initial
// parameters are the caller's business (Net::init_from, before the loop). Stopping: a number of epochs, or a
// number of optimizer steps, or earlier when the objective's gradient-norm certificate, checked after each
// epoch when grad_tol > 0, falls below grad_tol. A non-finite minibatch loss stops the run as diverged. The
// stop token (the parallel driver's: set when the monitor asks to stop, e.g. on Ctrl-C) is read before every
// step. Host reads: one per epoch (the last minibatch loss for the divergence test, with the epoch's history
// sums in the same read), none per step.
//
// Objective concept (nn/objective.hpp holds StepInfo, MinibatchLoss, Certificate and WbbObjective, the first
// implementation; src/torch_nn_test_hooks.cpp's cpp_nn_train_check has a test-only one):
//   std::int64_t n() const;                 // examples: the loop permutes 0..n-1 every epoch
//   torch::Device device() const;           // where the loop puts the minibatch indices
//   std::vector<torch::Tensor> parameters(); // what the optimizer updates (WBB: net->parameters(); a
//                                           // variational objective adds its own tensors here)
//   void start();                           // once, after the optimizer is built (WBB: net->train())
//   void begin_epoch(rng::Stream& s);       // per-epoch random numbers, after the loop's permutation
//   MinibatchLoss minibatch(const torch::Tensor& idx, const StepInfo& info);
//       // the loss on the minibatch of examples idx (positions info.begin..info.end of the epoch's
//       // permutation), on a stated scale: an unbiased estimate of (objective) / n, so that the learning
//       // rate is on the mean-loss scale (WBB: of F / n). Monte-Carlo noise (e.g. a negative ELBO's
//       // reparameterized draws) belongs to the objective and must come from its own generator seeded from
//       // the stream (as dropout's masks do), never from torch's global state.
//   Certificate certify(std::int64_t chunk); // the objective and ||grad (objective / n)|| over parameters(),
//                                           // in chunks of `chunk` examples (grad_tol checks, final check)
// and optionally
//   bool has_validation() const;            // held-out examples given (TrainConfig::validate reads them)
//   EpochRecord validation();               // after every epoch: the loss (and accuracy) on the held-out
//                                           // examples, unweighted, in eval mode, no graph (one host read)
//   std::vector<torch::Tensor> buffers();   // state restored with the parameters (batch-norm statistics)
//   void end_epoch(std::int64_t epochs);    // after every completed epoch (a variational objective records
//                                           // its epoch's NLL, KL and sparsity there: one host read)
// The loop calls zero_grad, minibatch, backward and the optimizer step, in that order, once per step.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "scalebayes/nn/objective.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace nn {

enum class Optimizer { sgd = 0, adam = 1, rmsprop = 2 };
inline constexpr EnumTable<Optimizer, 3> optimizer_names{
    "optimizer", {{{"sgd", Optimizer::sgd}, {"adam", Optimizer::adam}, {"rmsprop", Optimizer::rmsprop}}}};
constexpr const auto& enum_table(Optimizer) { return optimizer_names; }

struct TrainConfig {
  Optimizer optimizer = Optimizer::adam;
  double lr = 1e-3;
  double momentum = 0.9;  // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam; eps also rmsprop's
  double alpha = 0.99;  // rmsprop's decay of the squared-gradient average (momentum 0, not centered)
  std::int64_t epochs = 100;
  std::int64_t batch_size = 50;
  std::int64_t max_steps = 0;  // > 0: exactly this many steps (epochs ignored)
  double grad_tol = 0.0;
  bool certify = true;  // evaluate the objective and its gradient norm at the end (one extra pass over the data)
  bool history = true;  // per-epoch mean minibatch loss and accuracy (TrainResult::history)
  // The WBB objective's weight mode (nn/objective.hpp); read by the WBB wrapper train() below, not the loop.
  using WeightMode = nn::WeightMode;
  WeightMode weight_mode = WeightMode::example;
  // The network has a batch-norm layer that needs more than one example per channel in training mode
  // (needs_two_examples(), nn/layers_spec.hpp): a last minibatch of one example joins the one before it
  // (one step fewer per epoch). Off, or when no epoch ends in a one-example batch, nothing changes.
  bool merge_single_batch = false;
  // Validation (an objective with has_validation()): record the held-out loss after every epoch; with
  // patience > 0 stop once `patience` epochs in a row have not lowered the best held-out loss, and end with the
  // parameters (and buffers) of the best epoch. No random numbers are used, so a run without held-out examples
  // is unchanged.
  std::int64_t patience = 0;
};

// Steps per epoch and steps in all of a run with this configuration on n examples.
inline std::int64_t batch_size_for(const TrainConfig& c, std::int64_t n) {
  return std::max<std::int64_t>(1, std::min(c.batch_size, n));
}
inline std::int64_t steps_per_epoch(const TrainConfig& c, std::int64_t n) {
  const std::int64_t B = batch_size_for(c, n);
  const std::int64_t per = (n + B - 1) / B;
  return c.merge_single_batch && per > 1 && n % B == 1 ? per - 1 : per;
}
inline std::int64_t total_steps(const TrainConfig& c, std::int64_t n) {
  return c.max_steps > 0 ? c.max_steps : c.epochs * steps_per_epoch(c, n);
}
// Epochs (the last one possibly partial) of a run that is not stopped early: the history's rows per fit.
inline std::int64_t max_epochs(const TrainConfig& c, std::int64_t n) {
  const std::int64_t per = steps_per_epoch(c, n);
  return (total_steps(c, n) + per - 1) / per;
}

// One epoch of the history: the mean of its minibatch losses (the objective's minibatch scale) and the
// fraction of its minibatch examples classified correctly in training mode (NaN without an accuracy).
// (EpochRecord: nn/objective.hpp, with the other types of the loop's interface)

struct TrainResult {
  double objective = NAN;  // the objective at the end (its certify() scale; WBB: F, sum scale)
  double grad_norm = NAN;  // ||grad (objective / n)|| at the end (NaN unless certify or grad_tol > 0)
  std::int64_t epochs = 0, steps = 0;
  bool diverged = false, interrupted = false, converged = false;
  bool stopped_early = false;  // patience ran out (the parameters are those of best_epoch)
  std::int64_t best_epoch = 0;  // 1-based epoch of the lowest held-out loss (0 without validation)
  std::vector<EpochRecord> validation;  // one per completed epoch with held-out examples (val_loss, val_accuracy)
  std::vector<EpochRecord> history;  // one per epoch read (config.history); a diverged epoch included
};

// Progress shared by every worker of a run, for a display on the main thread: optimizer steps taken, steps a
// fit did not need (stopped early: converged or diverged), so that steps + skipped reaches fits x
// total_steps(); the most recent epoch's history record of any worker.
struct TrainProgress {
  std::atomic<long> steps{0};
  std::atomic<long> skipped{0};
  std::atomic<double> loss{NAN}, accuracy{NAN};
  std::atomic<double> sparsity{NAN};  // variational fits: the share of weights kept (NaN otherwise)
};

inline std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<torch::Tensor>& params,
                                                               const TrainConfig& c) {
  switch (c.optimizer) {
    case Optimizer::sgd:
      return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(c.lr).momentum(c.momentum));
    case Optimizer::rmsprop:
      return std::make_unique<torch::optim::RMSprop>(
          params, torch::optim::RMSpropOptions(c.lr).alpha(c.alpha).eps(c.eps).momentum(0.0).centered(false));
    case Optimizer::adam:
      break;
  }
  return std::make_unique<torch::optim::Adam>(
      params, torch::optim::AdamOptions(c.lr).betas(std::make_tuple(c.beta1, c.beta2)).eps(c.eps));
}
inline std::unique_ptr<torch::optim::Optimizer> make_optimizer(Net& net, const TrainConfig& c) {
  return make_optimizer(net->parameters(), c);
}

template <class O, class = void>
struct has_validation_hook : std::false_type {};
template <class O>
struct has_validation_hook<O, std::void_t<decltype(std::declval<O&>().validation())>> : std::true_type {};
template <class O, class = void>
struct has_buffers_hook : std::false_type {};
template <class O>
struct has_buffers_hook<O, std::void_t<decltype(std::declval<O&>().buffers())>> : std::true_type {};

// Early stopping's memory: the held-out loss of the best epoch so far and a copy of the objective's parameters
// (and buffers) then.
struct BestState {
  double loss = INFINITY;
  std::int64_t epoch = 0, since = 0;
  std::vector<torch::Tensor> params, buffers;
  template <class Objective>
  void save(Objective& obj) {
    torch::NoGradGuard ng;
    params.clear();
    for (auto& t : obj.parameters()) params.push_back(t.detach().clone());
    buffers.clear();
    if constexpr (has_buffers_hook<Objective>::value)
      for (auto& t : obj.buffers()) buffers.push_back(t.detach().clone());
  }
  template <class Objective>
  void restore(Objective& obj) {
    if (params.empty()) return;
    torch::NoGradGuard ng;
    auto p = obj.parameters();
    for (std::size_t i = 0; i < p.size() && i < params.size(); ++i) p[i].copy_(params[i]);
    if constexpr (has_buffers_hook<Objective>::value) {
      auto b = obj.buffers();
      for (std::size_t i = 0; i < b.size() && i < buffers.size(); ++i) b[i].copy_(buffers[i]);
    }
  }
};

template <class O, class = void>
struct has_end_epoch : std::false_type {};
template <class O>
struct has_end_epoch<O, std::void_t<decltype(std::declval<O&>().end_epoch(std::int64_t()))>> : std::true_type {};

// ---- The one loop, over members ------------------------------------------------------------------------
// train_members(obj, config, stop, progress) is THE training loop: every rule of a minibatch run (the schedule of
// epochs and steps, the stop token read before every step, progress counts, the one host read per epoch with the
// history and the divergence test, validation and patience, the grad_tol test, the final certificate) is
// written here once. It trains obj.members() networks at once that share the schedule; each member is retired
// alone (divergence, grad_tol) and the loop ends when none is left. One network (train_loop() below) is a group
// of one (OneMember); a batched group of WBB draws (nn/batched.hpp, BatchedWbbGroup) is a group of G whose
// storage is one batched network with its gradient by hand.
//
// Member objective concept (beyond n(), device(), parameters() of the Objective concept above):
//   std::int64_t members() const;
//   static constexpr bool hand_backward;     // minibatch() writes the gradient itself: the loop calls neither
//                                            // zero_grad nor backward (only the optimizer step)
//   static constexpr bool retire_converged;  // a member below grad_tol is retired at once with that certificate
//                                            // (its storage is freed); false: it ends the loop and is certified
//                                            // at the end, after the best epoch is restored (one network)
//   void start(torch::optim::Optimizer&);    // once, after the loop built the optimizer
//   void begin_epoch(const std::vector<char>& active);  // the epoch's permutation(s) and per-epoch numbers,
//                                            // drawn for the active members only (each from its own stream)
//   MinibatchLoss minibatch(const StepInfo&); // the loss per member ([] or [G]; may be undefined unless
//                                            // info.read) and the correct counts (when recording history)
//   Certificates certify(std::int64_t chunk); // per member
//   void retire(const std::vector<std::int64_t>& ms, Outcome, std::int64_t steps, const Certificates*,
//               const std::vector<std::vector<EpochRecord>>& history);  // members ms end (their history so far)
// and optionally has_validation()/validation()/buffers()/end_epoch() as above.
enum class Outcome { done, converged, diverged, interrupted };
struct Certificates {
  std::vector<double> objective, grad_norm;
};
// What the loop reports beyond the members' retirements.
struct LoopResult {
  std::int64_t epochs = 0, steps = 0;
  bool stopped_early = false;
  std::int64_t best_epoch = 0;
  std::vector<EpochRecord> validation;
};

template <class M>
LoopResult train_members(M& obj, const TrainConfig& c, const parallel::StopToken& stop = parallel::StopToken(),
                         TrainProgress* progress = nullptr, bool final_check = true) {
  LoopResult r;
  const std::int64_t n = obj.n();
  const std::int64_t G = obj.members();
  const std::int64_t B = batch_size_for(c, n);
  const std::int64_t per_epoch = steps_per_epoch(c, n);
  const std::int64_t total = total_steps(c, n);
  auto opt = make_optimizer(obj.parameters(), c);
  obj.start(*opt);
  const auto acc_opt = torch::TensorOptions().dtype(torch::kDouble).device(obj.device());
  std::vector<char> active(static_cast<std::size_t>(G), 1), held(static_cast<std::size_t>(G), 0);
  std::int64_t n_active = G;
  std::vector<std::vector<EpochRecord>> hist(static_cast<std::size_t>(G));
  torch::Tensor loss_sum, correct_sum;
  bool has_correct = false;
  std::int64_t step = 0;
  BestState best;
  auto retire = [&](const std::vector<std::int64_t>& ms, Outcome o, std::int64_t steps, const Certificates* ct) {
    if (ms.empty()) return;
    for (std::int64_t m : ms) {
      active[static_cast<std::size_t>(m)] = 0;
      --n_active;
    }
    if (progress && o != Outcome::interrupted && total > steps)
      progress->skipped.fetch_add(static_cast<long>((total - steps) * static_cast<std::int64_t>(ms.size())));
    obj.retire(ms, o, steps, ct, hist);
  };
  auto active_members = [&]() {
    std::vector<std::int64_t> ms;
    for (std::int64_t m = 0; m < G; ++m)
      if (active[static_cast<std::size_t>(m)]) ms.push_back(m);
    return ms;
  };
  while (step < total && n_active > 0) {
    obj.begin_epoch(active);
    loss_sum = correct_sum = torch::Tensor();  // the epoch's sums, shaped as the members' losses
    std::int64_t batches = 0, seen = 0;
    for (std::int64_t b = 0; b < per_epoch && step < total; ++b, ++step) {
      if (stop.stop_requested()) {
        r.steps = step;
        retire(active_members(), Outcome::interrupted, step, nullptr);
        return r;
      }
      StepInfo info;
      info.step = step;
      info.epoch = r.epochs;
      info.batch = b;
      info.begin = b * B;
      info.end = b == per_epoch - 1 ? n : std::min(n, info.begin + B);  // the last takes the rest (merged)
      const bool epoch_end = b == per_epoch - 1 || step + 1 == total;
      info.read = c.history || epoch_end;
      if constexpr (!M::hand_backward) opt->zero_grad();
      MinibatchLoss m = obj.minibatch(info);
      if constexpr (!M::hand_backward) m.loss.backward();
      opt->step();
      if (progress) progress->steps.fetch_add(static_cast<long>(n_active), std::memory_order_relaxed);
      if (c.history) {  // on the device, no host read
        torch::NoGradGuard ng;
        if (!loss_sum.defined()) {
          loss_sum = torch::zeros(m.loss.sizes(), acc_opt);
          correct_sum = torch::zeros(m.loss.sizes(), acc_opt);
        }
        loss_sum.add_(m.loss.detach().to(torch::kDouble));
        if (m.correct.defined()) {
          correct_sum.add_(m.correct);
          has_correct = true;
        }
        ++batches;
        seen += info.end - info.begin;
      }
      // One host read per epoch: the divergence test reads the last minibatch loss of the epoch of every
      // member (and the history sums with it).
      if (epoch_end) {
        torch::Tensor h;
        if (c.history) {
          h = torch::stack({m.loss.detach().to(torch::kDouble), loss_sum, correct_sum}).to(torch::kCPU);
        } else {
          h = m.loss.detach().to(torch::kDouble).reshape({-1}).to(torch::kCPU);
        }
        h = h.contiguous();
        const double* p = h.data_ptr<double>();
        std::vector<std::int64_t> bad;
        for (std::int64_t k = 0; k < G; ++k) {
          if (!active[static_cast<std::size_t>(k)]) continue;
          if (c.history) {
            EpochRecord rec;
            rec.loss = p[G + k] / static_cast<double>(batches);
            rec.accuracy = has_correct ? p[2 * G + k] / static_cast<double>(seen) : NAN;
            hist[static_cast<std::size_t>(k)].push_back(rec);
            if (progress) {
              progress->loss.store(rec.loss);
              progress->accuracy.store(rec.accuracy);
            }
          }
          if (!std::isfinite(p[k])) bad.push_back(k);
        }
        retire(bad, Outcome::diverged, step + 1, nullptr);
        if (n_active == 0) {
          r.steps = step + 1;
          return r;
        }
      }
    }
    ++r.epochs;
    if constexpr (has_end_epoch<M>::value) obj.end_epoch(r.epochs);
    if constexpr (has_validation_hook<M>::value) {
      if (obj.has_validation()) {
        const EpochRecord v = obj.validation();
        r.validation.push_back(v);
        if (v.val_loss < best.loss) {  // NaN never improves
          best.loss = v.val_loss;
          best.epoch = r.epochs;
          best.since = 0;
          if (c.patience > 0) best.save(obj);
        } else {
          ++best.since;
        }
        r.best_epoch = best.epoch;
        if (c.patience > 0 && best.since >= c.patience && step < total) {
          r.stopped_early = true;
          break;
        }
      }
    }
    if (c.grad_tol > 0 && step < total) {
      const Certificates ct = obj.certify(B);
      std::vector<std::int64_t> conv;
      for (std::int64_t k = 0; k < G; ++k)
        if (active[static_cast<std::size_t>(k)] && ct.grad_norm[static_cast<std::size_t>(k)] < c.grad_tol)
          conv.push_back(k);
      if constexpr (M::retire_converged) {
        retire(conv, Outcome::converged, step, c.certify ? &ct : nullptr);
      } else {  // certified at the end (below)
        for (std::int64_t k : conv) {
          active[static_cast<std::size_t>(k)] = 0;
          held[static_cast<std::size_t>(k)] = 1;
          --n_active;
        }
      }
    }
  }
  // the end: the members still training and those held at grad_tol, after the best epoch's state is restored
  r.steps = step;
  std::vector<std::int64_t> rest, conv;
  for (std::int64_t k = 0; k < G; ++k) {
    if (held[static_cast<std::size_t>(k)]) {
      conv.push_back(k);
      active[static_cast<std::size_t>(k)] = 1;
      ++n_active;
    } else if (active[static_cast<std::size_t>(k)]) {
      rest.push_back(k);
    }
  }
  if (rest.empty() && conv.empty()) return r;
  if (c.patience > 0 && best.epoch > 0 && best.epoch < r.epochs) best.restore(obj);  // the best epoch's state
  Certificates ct;
  const bool cert = final_check && c.certify;
  if (cert) ct = obj.certify(B);
  retire(conv, Outcome::converged, step, cert ? &ct : nullptr);
  retire(rest, Outcome::done, step, cert ? &ct : nullptr);
  return r;
}

// One network's objective (the Objective concept above) as a group of one: the loop's permutation of the
// examples from the caller's stream, then the objective's own per-epoch numbers; its retirement is the
// TrainResult.
template <class Objective>
class OneMember {
 public:
  static constexpr bool hand_backward = false;
  static constexpr bool retire_converged = false;
  OneMember(Objective& obj, rng::Stream& s, TrainResult& r, const TrainConfig& c)
      : obj_(obj), s_(s), r_(r), c_(c), perm_(static_cast<std::size_t>(obj.n())) {}
  std::int64_t members() const { return 1; }
  std::int64_t n() const { return obj_.n(); }
  torch::Device device() const { return obj_.device(); }
  std::vector<torch::Tensor> parameters() { return obj_.parameters(); }
  void start(torch::optim::Optimizer&) { obj_.start(); }
  void begin_epoch(const std::vector<char>&) {
    permutation(s_, perm_);
    perm_t_ = torch::from_blob(perm_.data(), {obj_.n()}, torch::TensorOptions().dtype(torch::kLong))
                  .to(obj_.device(), false, true);
    obj_.begin_epoch(s_);
  }
  MinibatchLoss minibatch(const StepInfo& info) { return obj_.minibatch(perm_t_.slice(0, info.begin, info.end), info); }
  Certificates certify(std::int64_t chunk) {
    const Certificate ct = obj_.certify(chunk);
    return Certificates{{ct.objective}, {ct.grad_norm}};
  }
  bool has_validation() const {
    if constexpr (has_validation_hook<Objective>::value) return obj_.has_validation();
    return false;
  }
  EpochRecord validation() {
    if constexpr (has_validation_hook<Objective>::value) return obj_.validation();
    return EpochRecord();
  }
  std::vector<torch::Tensor> buffers() {
    if constexpr (has_buffers_hook<Objective>::value) return obj_.buffers();
    return {};
  }
  void end_epoch(std::int64_t epochs) {
    if constexpr (has_end_epoch<Objective>::value) obj_.end_epoch(epochs);
  }
  void retire(const std::vector<std::int64_t>&, Outcome o, std::int64_t steps, const Certificates* ct,
              const std::vector<std::vector<EpochRecord>>& history) {
    r_.history = history[0];
    r_.steps = steps;
    r_.interrupted = o == Outcome::interrupted;
    r_.diverged = o == Outcome::diverged;
    r_.converged = o == Outcome::converged;
    if (!ct) return;
    r_.objective = ct->objective[0];
    r_.grad_norm = ct->grad_norm[0];
    if (c_.grad_tol > 0 && r_.grad_norm < c_.grad_tol) r_.converged = true;
    // a non-finite objective or gradient norm (e.g. inputs that overflow single precision): not a fit
    if (!std::isfinite(r_.objective) || !std::isfinite(r_.grad_norm)) r_.diverged = true;
  }

 private:
  Objective& obj_;
  rng::Stream& s_;
  TrainResult& r_;
  const TrainConfig& c_;
  std::vector<std::int64_t> perm_;
  torch::Tensor perm_t_;
};

// Minimize the objective from its current parameters (one network: train_members() over OneMember).
// `final_check` evaluates the certificate at the end (when c.certify). `progress` (optional) counts steps for a
// display.
template <class Objective>
TrainResult train_loop(Objective& obj, const TrainConfig& c, rng::Stream& s,
                       const parallel::StopToken& stop = parallel::StopToken(), bool final_check = true,
                       TrainProgress* progress = nullptr) {
  TrainResult r;
  OneMember<Objective> one(obj, s, r, c);
  LoopResult lr = train_members(one, c, stop, progress, final_check);
  r.epochs = lr.epochs;
  r.stopped_early = lr.stopped_early;
  r.best_epoch = lr.best_epoch;
  r.validation = std::move(lr.validation);
  return r;
}

// The WBB fit: minimize F for weights w (a [n] tensor on the data's device, dtype of the network) from the
// network's current parameters (WbbObjective with c.weight_mode through train_loop).
// `validation`: held-out examples (or null), whose loss the loop records after every epoch (TrainConfig::patience).
inline TrainResult train(Net& net, const Dataset& d, const torch::Tensor& w, const Penalty& pen, const TrainConfig& c,
                         rng::Stream& s, const parallel::StopToken& stop = parallel::StopToken(),
                         bool final_check = true, TrainProgress* progress = nullptr,
                         const Dataset* validation = nullptr) {
  WbbObjective obj(net, d, w, pen, c.weight_mode);
  obj.set_validation(validation);
  if (net->needs_two_examples() && !c.merge_single_batch) {
    TrainConfig c2 = c;
    c2.merge_single_batch = true;
    return train_loop(obj, c2, s, stop, final_check, progress);
  }
  return train_loop(obj, c, s, stop, final_check, progress);
}

}  // namespace nn
}  // namespace scalebayes
