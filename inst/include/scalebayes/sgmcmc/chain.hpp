// scalebayes/sgmcmc/chain.hpp -- the SG-MCMC chain driver of Deng, Zhang, Liang & Lin (2019), generic over the
// model: one loop for the Eigen GLM (glm.hpp) and the LibTorch network (nn/sgmcmc.hpp).
//
// A Model owns its parameters as a list of groups (updates.hpp) and provides
//   using Ops = ...;                                   // storage policy (storage.hpp)
//   std::vector<Group<Ops>>& groups();                 // values, grads, momenta, latents; sparse groups carry SSGL
//   long n_obs() const;                                // N
//   double lik_terms() const;                          // terms of the likelihood with variance sigma^2: N, or N q
//                                                      // for a network with q Gaussian outputs (eq. 14's N)
//   bool regression() const;                           // Gaussian likelihood with variance sigma^2
//   typename Ops::Rng& noise_rng();                    // the Langevin / momentum noise
//   typename Ops::Scalar scalar(double) const;         // a number where the parameters live
//   void minibatch(const std::vector<long>& idx, long n);   // grad = (N/n) sum_{i in idx[0..n)} d log-lik_i / d theta
//                                                      // (gaussian: the residual form sum r_i d mu_i, i.e. times sigma^2)
//   void gradient(const std::vector<long>& idx, long n);    // the same gradient at the CURRENT values on the same
//                                                      // minibatch, recording nothing (no trace, no new dropout
//                                                      // masks, the model's random state left as it was): the
//                                                      // second gradient of a step policy (steps.hpp)
//   typename Ops::Scalar resid_ss();                   // (N/n) sum_B r_i^2 of the last minibatch (regression only)
// minibatch(idx, n, replayable) with replayable = true (asked for by a policy with needs_regradient) keeps what
// gradient() needs to replay the minibatch (a network's dropout generator state); false costs nothing.
// and a Recorder (the storage of the chain's output) provides
//   void save(Model&, const Scalar& sigma);            // a kept iteration (after burn-in, every thin-th)
//   void trace(Model&, long k, const Scalar& sigma, double eps, double tau, const StepStats&);
//   void finish(Model&, const Scalar& sigma, const ChainStatus&);
// and optionally
//   double last_loss() const;                          // the mean training loss per example traced last (the
//                                                      // loss rule of step 4 below; a Recorder without it has none)
//
// Per iteration k = 1..T (Algorithm 1, with the SA step for theta^(k) done at the start of iteration k):
//   1. draw a minibatch B_k (without replacement; partial Fisher-Yates on a persistent permutation drawn from the
//      chain's stream); the model fills the gradients
//   2. k > sa_start and method != none: SA of the latent variables with omega_{k - sa_start} using theta^(k) and,
//      for the regression sigma, I = (N/n) sum_{B_k} r_i^2
//   3. posterior_gradient (steps.hpp): gradient / sigma^2 (regression; / lik_var when the likelihood's variance is
//      fixed) + prior gradient; then the step policy (SGLD, SGHMC, ...: steps.hpp) moves every group ->
//      theta^(k+1) (inverse temperature tau_k, step eps_k); then magnitude pruning of the sparse groups to the rate
//      S (1 - D^(k/U)) when on
//   4. divergence: at check points (every check_every iterations, and at save / trace points and the last
//      iteration) a non-finite state restores the last checked state (values are COPIED into place: a group's
//      value may be a network's parameter) and stops the chain. The loss rule (loss_factor > 0, a Recorder with
//      last_loss()): at a trace point, a mean training loss per example (since the previous trace point) that is
//      not finite, or exceeds loss_factor * max(min(loss_start, the lowest traced before), loss_floor), also
//      stops the chain as diverged (its state is finite but has left the posterior: an SGLD network whose loss
//      went from 0.19 to 9.5e18 in a few hundred iterations before turning non-finite). loss_floor is the
//      caller's loss of a constant prediction, so a chain near a perfect fit is not stopped by noise around a
//      tiny loss; loss_start (0: none) the loss where a chain starts (a network's untrained output: about 0),
//      so that a chain that explodes before its first trace point is caught there too. With loss_after > 0 the
//      factor part applies only after iteration loss_after (a non-finite loss always stops the chain): a
//      regression passes its burn-in, because a preconditioned chain (HAMCMC-SA) can make a transient excursion
//      in its first iterations, while its curvature memory is young, and come back (measured: a training loss
//      of 2e48 at iteration 40 of a linear-Gaussian posterior that the kept draws then sample within Monte-Carlo
//      error); what the rule must catch is a chain whose kept draws are off (SGLD at 10 times a sound step:
//      coefficients of 3e6 to the end).
//   5. output through the Recorder.
// Nothing in a step reads a number back from a device: the check, save and trace points are the only
// synchronisations, so check_every > 1 keeps a GPU busy. Progress is published through an atomic counter and a
// stop request is honoured at report points: every report_every iterations (256 for the GLM, 1 for a network or
// an R target), and, with report_ms > 0 (default 50), also at any iteration where more than report_ms ms have
// passed since the last report point. The clock is read at clock points whose interval follows the iteration's
// cost (it starts at 1, doubles while clock points come less than 5 ms apart and halves when more than 20 ms,
// never above report_every), so a cheap iteration pays one clock read per few ms and an expensive one is
// interrupted within about report_ms, or one iteration when an iteration takes longer, at any size and form.
// The report points touch no random number: the chain's draws depend only on its stream.
// Header-only, std, no R.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <utility>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/math/family.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/sgmcmc/schedules.hpp"
#include "scalebayes/sgmcmc/steps.hpp"
#include "scalebayes/sgmcmc/updates.hpp"

namespace scalebayes {
namespace sgmcmc {

using scalebayes::Family;  // math/family.hpp
enum class Method { sa, em, none };

inline Method method_from_name(const std::string& s) {
  if (s == "sa") return Method::sa;
  if (s == "em") return Method::em;
  if (s == "none") return Method::none;
  throw std::invalid_argument("unknown method '" + s + "' (known: \"sa\", \"em\", \"none\")");
}

// The chain part of the settings: length, minibatches, output points, chains.
struct ChainControl {
  long iterations = 1000, batch_size = 50, burnin = 0, thin = 1, trace_every = 1;
  long check_every = 1;             // divergence check interval (iterations)
  long report_every = 256;          // progress / stop-request interval (iterations): 1 for expensive models
  double report_ms = 50.0;          // > 0: also a report point when this many ms passed since the last (0: off)
  double loss_factor = 0.0;         // > 0: the loss rule of divergence (see the head of this file); 0: off
  double loss_floor = 0.0;          // its floor: the training loss per example of a constant prediction
  double loss_start = 0.0;          // its level before the first trace point (0: none)
  long loss_after = 0;              // the factor part of the loss rule applies after this iteration only (a
                                    // regression's burn-in: see the head of this file)
  PruneSchedule pruning;
  std::vector<long> keep;           // GLM: coefficient indices (output order) whose draws are stored
  bool gram = true;                 // GLM: the Gram form of full-data gaussian gradients where it applies (glm.hpp)
  std::vector<double> cv_center;    // GLM: the control variates' centre, output order (empty: plain minibatch
                                    // gradients; glm.hpp, CvState)
  int chains = 1;
  long chain_offset = 0;            // chain c uses stream chain_offset + c (chunks of chains across processes)
  void validate() const {
    if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
    if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
    if (burnin < 0 || burnin >= iterations) throw std::invalid_argument("burnin must lie in [0, iterations)");
    if (thin < 1 || trace_every < 1) throw std::invalid_argument("thin and trace_every must be >= 1");
    if (check_every < 1 || report_every < 1) throw std::invalid_argument("check_every and report_every must be >= 1");
    if (!(report_ms >= 0.0)) throw std::invalid_argument("report_ms must be >= 0");
    if (chains < 1) throw std::invalid_argument("chains must be >= 1");
    if (!(loss_factor >= 0.0) || !(loss_floor >= 0.0) || !(loss_start >= 0.0) || loss_after < 0)
      throw std::invalid_argument("loss_factor, loss_floor, loss_start and loss_after must be >= 0");
    pruning.validate();
  }
  long n_saved() const { return (iterations - burnin) / thin; }
  long n_traced() const { return iterations / trace_every; }
};

// The prior part: the SSGL hierarchy, how its latent variables are adapted, sigma and the likelihood's variance.
struct PriorControl {
  Method method = Method::sa;
  SAStep sa;
  SSGLHyper hyper;
  double prior_var = 1e4;           // sigma0^2 of the non-sparse groups
  double sigma_init = 1.0, delta_init = 0.5, rho_init = 0.5;
  bool fixed_sigma = false;         // keep sigma at sigma_init even when the latents are adapted
  double lik_var = 0.0;             // > 0: the Gaussian likelihood's variance is fixed at this value (sigma then
                                    // enters the prior only); 0: the likelihood's variance is sigma^2
  long sa_start = 1;                // the latent variables stay fixed before iteration sa_start + 1 (warm-up)
  std::vector<double> rho_start;    // non-empty: rho's start per parameter, flattened in group order (Eigen storage;
                                    // entries of non-sparse groups ignored), kappa implied by it unless given
  void validate() const {
    if (sa_start < 1) throw std::invalid_argument("sa_start must be >= 1");
    if (!(prior_var > 0.0)) throw std::invalid_argument("prior_var must be > 0");
    if (!(sigma_init > 0.0)) throw std::invalid_argument("sigma_init must be > 0");
    if (!(delta_init > 0.0 && delta_init < 1.0)) throw std::invalid_argument("delta_init must lie in (0, 1)");
    if (!(rho_init >= 0.0 && rho_init <= 1.0)) throw std::invalid_argument("rho_init must lie in [0, 1]");
    if (!(lik_var >= 0.0) || !std::isfinite(lik_var)) throw std::invalid_argument("lik_var must be >= 0 and finite");
    sa.validate();
    hyper.validate();
  }
};

// All settings of a run: the three parts (each validated and mapped from R once, src/sgmcmc_glue.h) and the
// GLM's family. The parts are bases, so `ctl.iterations`, `ctl.sampler`, `ctl.hyper` read as before and a part
// can be handed on alone (`const StepControl&` to a step policy).
struct Control : ChainControl, StepControl, PriorControl {
  Family family = Family::gaussian;
  void validate() const {
    ChainControl::validate();
    StepControl::validate();
    PriorControl::validate();
  }
};

// Whether a Recorder reports its last traced loss (the loss rule of divergence).
template <class R, class = void>
struct has_last_loss : std::false_type {};
template <class R>
struct has_last_loss<R, std::void_t<decltype(std::declval<const R&>().last_loss())>> : std::true_type {};

struct ChainStatus {
  long iterations_done = 0;
  bool diverged = false;
  long diverged_at = 0;
  std::string message;
};

// Run one chain of `model` (already initialized: values, zero grads and momenta) with step policy `policy`
// (steps.hpp) and the minibatches of stream rs. Returns what happened; the output went to `rec`.
template <class Model, class Recorder, class Step>
ChainStatus run_chain(Model& model, Recorder& rec, const Control& ctl, Step& policy, rng::Stream& rs,
                      std::atomic<long>& progress, const parallel::StopToken& stop = parallel::StopToken()) {
  using Ops = typename Model::Ops;
  using Scalar = typename Ops::Scalar;
  using Array = typename Ops::Array;
  auto& groups = model.groups();
  const long N = model.n_obs();
  const long n = std::min<long>(ctl.batch_size, N);
  const bool regression = model.regression();
  Scalar sigma = model.scalar(ctl.sigma_init);
  bool has_sparse = false, has_prunable = false;
  for (auto& g : groups) {
    has_prunable = has_prunable || (g.can_prune() && Ops::size(g.value) > 0);
    if (!g.sparse) continue;
    init_latents<Ops>(g, ctl.rho_init, model.scalar(ctl.delta_init), ctl.hyper);
    has_sparse = has_sparse || Ops::size(g.value) > 0;
  }
  if (!ctl.rho_start.empty()) {
    if constexpr (std::is_same<Ops, EigenOps>::value) {
      std::size_t o = 0;
      for (auto& g : groups) {
        const std::size_t s = static_cast<std::size_t>(Ops::size(g.value));
        if (o + s > ctl.rho_start.size()) throw std::invalid_argument("rho_start has fewer entries than parameters");
        if (g.sparse && s) {
          for (std::size_t j = 0; j < s; ++j) g.rho[static_cast<long>(j)] = std::min(1.0, std::max(0.0, ctl.rho_start[o + j]));
          if (std::isnan(ctl.hyper.kappa0_start)) g.kappa0 = (1.0 - g.rho) / ctl.hyper.v0;
          if (std::isnan(ctl.hyper.kappa1_start)) g.kappa1 = g.rho / ctl.hyper.v1;
        }
        o += s;
      }
      if (o != ctl.rho_start.size()) throw std::invalid_argument("rho_start must have one entry per parameter");
    } else {
      throw std::invalid_argument("rho_start is implemented for regression only");
    }
  }
  SAInput<Ops> sain;
  sain.regression = regression;
  sain.n_total = model.lik_terms();
  const bool adapt_sigma_only = regression && !ctl.fixed_sigma;
  const bool fixed_lik = regression && ctl.lik_var > 0.0;
  const Scalar lik_is2 = model.scalar(fixed_lik ? 1.0 / ctl.lik_var : 1.0);

  std::vector<long> idx(N);
  for (long i = 0; i < N; ++i) idx[i] = i;
  std::vector<Array> snap(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(snap[g], groups[g].value);

  // The posterior gradient at the current values and latents, grads holding the likelihood gradient.
  auto to_posterior = [&]() {
    if (fixed_lik) posterior_gradient<Ops>(groups, sigma, true, lik_is2);
    else if (regression) posterior_gradient<Ops>(groups, sigma, true, 1.0 / (sigma * sigma));
    else posterior_gradient<Ops>(groups, sigma, false, lik_is2);
  };
  // A step policy's second gradient: same minibatch, current values, nothing recorded.
  auto regrad = [&]() {
    model.gradient(idx, n);
    to_posterior();
  };
  policy.start(groups);

  ChainStatus st;
  const long T = ctl.iterations;
  long last_report = 0, clock_gap = 1, next_clock = 1;
  using Clock = std::chrono::steady_clock;
  const bool timed = ctl.report_ms > 0.0;
  auto last_report_time = Clock::now(), last_clock_time = last_report_time;
  auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  double best_loss = ctl.loss_start > 0.0 ? ctl.loss_start : INFINITY;  // the loss rule's lowest level so far
  long k = 1;
  for (; k <= T; ++k) {
    bool report = k % ctl.report_every == 0;
    if (!report && timed && k >= next_clock) {
      const auto now = Clock::now();
      const double ms = ms_between(last_clock_time, now);
      last_clock_time = now;
      if (ms < 5.0) clock_gap = std::min(ctl.report_every, 2 * clock_gap);
      else if (ms > 20.0) clock_gap = std::max(1L, clock_gap / 2);
      next_clock = k + clock_gap;
      report = ms_between(last_report_time, now) > ctl.report_ms;
    }
    if (report) {
      progress.fetch_add(k - last_report, std::memory_order_relaxed);
      last_report = k;
      if (timed) last_report_time = Clock::now();
      if (stop.stop_requested()) break;
    }
    // 1. minibatch
    if (n < N) {
      for (long t = 0; t < n; ++t) {
        const long j = t + static_cast<long>(rs.uniform() * static_cast<double>(N - t));
        std::swap(idx[t], idx[j < N ? j : N - 1]);
      }
    }
    model.minibatch(idx, n, Step::needs_regradient);
    // 2. SA of the latent variables
    if (k > ctl.sa_start && ctl.method != Method::none && (has_sparse || adapt_sigma_only)) {
      if (regression) sain.resid_ss = model.resid_ss();
      sa_update<Ops>(groups, sigma, ctl.sa.at(k - ctl.sa_start), ctl.hyper, sain, !ctl.fixed_sigma);
    }
    // 3. posterior gradient and the step
    const bool trace = k % ctl.trace_every == 0;
    StepContext sc;
    StepStats stats;
    sc.k = k;
    sc.tau = ctl.temperature.at(k);
    sc.eps = ctl.step.at(k);
    if (trace) sc.stats = &stats;
    to_posterior();
    policy.step(groups, sc, model.noise_rng(), regrad);
    const bool save = k > ctl.burnin && (k - ctl.burnin) % ctl.thin == 0;
    const bool check = k % ctl.check_every == 0 || save || trace || k == T;
    // 4. divergence: back to the last checked state
    if (check) {
      bool ok = Ops::finite_positive(sigma);
      for (auto& g : groups) ok = ok && Ops::all_finite(g.value);
      if (!ok) {
        for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(groups[g].value, snap[g]);
        st.diverged = true;
        st.diverged_at = k;
        st.message = "the sampler produced a non-finite state at iteration " + std::to_string(k) +
                     " (step size too large for the curvature of the posterior?)";
        break;
      }
    }
    //    magnitude pruning of theta^(k+1) (Algorithm 1); pruned weights get gradients and noise next time
    if (ctl.pruning.on && has_prunable)
      for (auto& g : groups) prune<Ops>(g, ctl.pruning.at(k));
    if (check)
      for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(snap[g], groups[g].value);
    // 5. output
    if (save) rec.save(model, sigma);
    if (trace) {
      rec.trace(model, k, sigma, sc.eps, sc.tau, stats);
      if constexpr (has_last_loss<Recorder>::value) {
        if (ctl.loss_factor > 0.0) {
          const double L = rec.last_loss();
          if (!std::isfinite(L) || (k > ctl.loss_after && L > ctl.loss_factor * std::max(best_loss, ctl.loss_floor))) {
            st.diverged = true;
            st.diverged_at = k;
            char buf[160];
            std::snprintf(buf, sizeof buf, "the training loss per example reached %.4g at iteration %ld (reference level %.4g)",
                          L, k, best_loss);
            st.message = buf;
            ++k;  // iteration k was done and recorded
            break;
          }
          best_loss = std::min(best_loss, L);
        }
      }
    }
  }
  progress.fetch_add((k > T ? T : k) - last_report, std::memory_order_relaxed);
  st.iterations_done = st.diverged ? k - 1 : std::min(k - 1, T);
  rec.finish(model, sigma, st);
  return st;
}

// The same with the step policy `ctl` names (steps.hpp: with_step_policy), built for this chain.
template <class Model, class Recorder>
ChainStatus run_chain(Model& model, Recorder& rec, const Control& ctl, rng::Stream& rs, std::atomic<long>& progress,
                      const parallel::StopToken& stop = parallel::StopToken()) {
  return with_step_policy(ctl, [&](auto& policy) { return run_chain(model, rec, ctl, policy, rs, progress, stop); });
}

// Runs `chains` chains on `threads` threads: chain_body(c, progress, stop) runs chain c (it builds its model and
// recorder on the worker thread and calls run_chain with the shared progress counter). monitor(iterations of
// all chains) is called on the calling thread about every 100 ms; returning false stops every chain within
// report_every iterations (its report points, see run_chain).
//
// Inline mode (`inline_run`): the chains run one after the other on the CALLING thread (`threads` is ignored),
// for a model that may only be evaluated there (a target written in R). The monitor is then called at the
// chain's report points (every report_every iterations, or report_ms, where run_chain asks its StopToken) and once at the end;
// returning false stops the chain in hand at that point and runs no further chain. An exception of a chain
// propagates at once. The draws are those of the threaded mode: chain c's randomness is its own stream.
template <class ChainBody>
parallel::RunStatus run_chains(int chains, int threads, ChainBody chain_body,
                               const parallel::Monitor& monitor = parallel::Monitor(), bool inline_run = false) {
  std::atomic<long> progress{0};
  if (inline_run) {
    parallel::RunStatus st;
    std::atomic<bool> stop{false};
    const std::function<void()> poll = [&]() {
      if (monitor && !stop.load() && !monitor(static_cast<std::size_t>(progress.load()))) {
        stop = true;
        st.interrupted = true;
      }
    };
    const parallel::StopToken token(&stop, &poll);
    for (int c = 0; c < chains && !stop.load(); ++c) {
      chain_body(static_cast<std::size_t>(c), progress, token);
      if (!stop.load()) ++st.completed;
    }
    st.prefix = st.completed;
    if (monitor && !st.interrupted) monitor(static_cast<std::size_t>(progress.load()));
    return st;
  }
  auto body = [&](std::size_t c, int, const parallel::StopToken& stop) { chain_body(c, progress, stop); };
  parallel::Monitor mon;
  if (monitor) mon = [&](std::size_t) { return monitor(static_cast<std::size_t>(progress.load())); };
  return parallel::run_parallel(static_cast<std::size_t>(chains), threads, body, mon);
}

}  // namespace sgmcmc
}  // namespace scalebayes
