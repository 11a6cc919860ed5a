// scalebayes/sgmcmc/chain.hpp -- the SG-MCMC chain driver of Deng, Zhang, Liang & Lin (2019), generic over the
// model: one loop for the Eigen GLM (glm.hpp), the LibTorch network (nn/sgmcmc.hpp), density targets
// (density.hpp) and G chains of one network stored as one batched network (nn/batched_sgmcmc.hpp: a Model of
// several members, see run_chain_members).
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
#include <limits>
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
// by name (R: sgld_sa(method = ))
inline constexpr EnumTable<Method, 3> method_names{
    "method", {{{"sa", Method::sa}, {"em", Method::em}, {"none", Method::none}}}};
constexpr const auto& enum_table(Method) { return method_names; }

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
  // Iteration k is kept: after the burn-in, every thin-th, and not in a cyclical schedule's exploration stage.
  bool kept(long k) const { return k > burnin && (k - burnin) % thin == 0 && !step.exploring(k); }
  // The kept iterations (ChainControl::n_saved() less those of the exploration stages).
  long n_saved() const {
    if (!(step.type == StepSchedule::Type::cyclical && step.explore > 0.0)) return ChainControl::n_saved();
    long n = 0;
    for (long k = burnin + thin; k <= iterations; k += thin) n += kept(k) ? 1 : 0;
    return n;
  }
};

// Whether a Recorder reports its last traced loss (the loss rule of divergence): last_loss() for one chain,
// last_loss(member) for a Model of several members.
template <class R, class = void>
struct has_last_loss : std::false_type {};
template <class R>
struct has_last_loss<R, std::void_t<decltype(std::declval<const R&>().last_loss())>> : std::true_type {};
template <class R, class = void>
struct has_member_loss : std::false_type {};
template <class R>
struct has_member_loss<R, std::void_t<decltype(std::declval<const R&>().last_loss(std::size_t()))>> : std::true_type {};
// Whether a Model holds several chains ("members") at once (see run_chain_members): it has members().
template <class M, class = void>
struct has_members : std::false_type {};
template <class M>
struct has_members<M, std::void_t<decltype(std::declval<const M&>().members())>> : std::true_type {};
// Whether a Model keeps its own last checked state (checkpoint(): see GroupCheckpoint).
template <class M, class = void>
struct has_checkpoint : std::false_type {};
template <class M>
struct has_checkpoint<M, std::void_t<decltype(std::declval<M&>().checkpoint())>> : std::true_type {};

struct ChainStatus {
  long iterations_done = 0;
  bool diverged = false;
  long diverged_at = 0;
  std::string message;
};

// The last checked state of a chain's groups (step 4 of the head of this file) for the divergence check:
// check(sigma, ok) sets ok[m] for every member m (here the one chain: sigma finite and positive, every value
// finite), restore(m) puts member m's last checked values back (COPIED into place), save() takes the current
// values as the last checked. A Model of several members may keep its own (checkpoint(): the same three
// members over its storage, e.g. one flat buffer of every member's parameters).
template <class Ops>
class GroupCheckpoint {
 public:
  explicit GroupCheckpoint(std::vector<Group<Ops>>& groups) : groups_(groups), snap_(groups.size()) { save(); }
  bool check(const typename Ops::Scalar& sigma, std::vector<char>& ok) const {
    bool all = Ops::finite_positive(sigma);
    for (auto& g : groups_) all = all && Ops::all_finite(g.value);
    ok[0] = all;
    return all;
  }
  void restore(std::size_t) {
    for (std::size_t g = 0; g < groups_.size(); ++g) Ops::assign(groups_[g].value, snap_[g]);
  }
  void save() {
    for (std::size_t g = 0; g < groups_.size(); ++g) Ops::assign(snap_[g], groups_[g].value);
  }

 private:
  std::vector<Group<Ops>>& groups_;
  std::vector<typename Ops::Array> snap_;
};

// The chain driver: run the chains ("members") of `model` (already initialized: values, zero grads and momenta)
// with step policy `policy` (steps.hpp); member m draws its minibatches from streams[m]. Returns one status per
// member; the output went to `rec`.
//
// A Model of one chain (the GLM, a network, a density) is one member, always; its interface is the one at the
// head of this file and streams holds one stream. A Model of several members (members() > 1: G chains stored
// together, e.g. one batched network, nn/batched_sgmcmc.hpp) has Ops whose Scalar holds one number per member
// and whose reductions are per member, and provides besides
//   long members() const;                              // G
//   const std::vector<char>& active() const;           // which members still run (a placeholder never does)
//   void retire(std::size_t m);                        // member m stops: no noise, no likelihood gradient more
//   void hold_retired(Scalar& sigma);                  // the retired members' state back to a finite neutral one
//                                                      // (after each step and a retirement): it never reaches
//                                                      // the running members
//   void minibatch(const std::vector<std::vector<long>>& idx, long n, bool replayable);  // member m: idx[m][0..n)
//   void gradient(const std::vector<std::vector<long>>& idx, long n);
//   auto checkpoint();                                 // optional: see GroupCheckpoint
// and its Recorder save() / trace() for every running member, last_loss(m) and finish(model, sigma, st, m) for
// member m. Every rule of an iteration (steps 1-5 at the head of this file) is the one chain's applied member by
// member: a member that diverges (a non-finite state at a check point, or the loss rule at a trace point) gets
// its last checked state back, its status and outputs at that moment (rec.finish) and is retired while the others
// go on; the chain stops when no member runs. A member's draws depend only on its stream and its model's
// member state, whatever the others do. Progress counts member-iterations (the iterations of the running
// members, counted at the start of each iteration).
template <class Model, class Recorder, class Step>
std::vector<ChainStatus> run_chain_members(Model& model, Recorder& rec, const Control& ctl, Step& policy,
                                           rng::Stream* streams, std::atomic<long>& progress,
                                           const parallel::StopToken& stop = parallel::StopToken()) {
  using Ops = typename Model::Ops;
  using Scalar = typename Ops::Scalar;
  constexpr bool several = has_members<Model>::value;
  auto& groups = model.groups();
  const long N = model.n_obs();
  const long n = std::min<long>(ctl.batch_size, N);
  const bool regression = model.regression();
  std::size_t G = 1;
  std::vector<char> active(1, 1);  // the driver's copy of which members run
  if constexpr (several) {
    G = static_cast<std::size_t>(model.members());
    active = model.active();
  }
  long n_active = 0;
  for (char a : active) n_active += a ? 1 : 0;
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

  // each member's persistent permutation of the examples (partial Fisher-Yates from its stream)
  std::vector<std::vector<long>> idx(G, std::vector<long>(static_cast<std::size_t>(N)));
  for (auto& v : idx)
    for (long i = 0; i < N; ++i) v[static_cast<std::size_t>(i)] = i;
  auto cp = [&]() {
    if constexpr (has_checkpoint<Model>::value) return model.checkpoint();
    else return GroupCheckpoint<Ops>(groups);
  }();
  std::vector<char> ok(G, 1);

  // The posterior gradient at the current values and latents, grads holding the likelihood gradient.
  auto to_posterior = [&]() {
    if (fixed_lik) posterior_gradient<Ops>(groups, sigma, true, lik_is2);
    else if (regression) posterior_gradient<Ops>(groups, sigma, true, 1.0 / (sigma * sigma));
    else posterior_gradient<Ops>(groups, sigma, false, lik_is2);
  };
  // A step policy's second gradient: same minibatch, current values, nothing recorded.
  auto regrad = [&]() {
    if constexpr (several) model.gradient(idx, n);
    else model.gradient(idx[0], n);
    to_posterior();
  };
  auto finish = [&](std::size_t m, const ChainStatus& s) {
    if constexpr (several) rec.finish(model, sigma, s, m);
    else rec.finish(model, sigma, s);
  };
  auto retire = [&](std::size_t m) {
    active[m] = 0;
    --n_active;
    if constexpr (several) model.retire(m);
  };
  policy.start(groups);

  std::vector<ChainStatus> st(G);
  const long T = ctl.iterations;
  long pending = 0, clock_gap = 1, next_clock = 1;
  using Clock = std::chrono::steady_clock;
  const bool timed = ctl.report_ms > 0.0;
  auto last_report_time = Clock::now(), last_clock_time = last_report_time;
  auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  // the loss rule's lowest level so far, per member
  std::vector<double> best_loss(G, ctl.loss_start > 0.0 ? ctl.loss_start : INFINITY);
  long k = 1;
  for (; k <= T; ++k) {
    pending += n_active;
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
      progress.fetch_add(pending, std::memory_order_relaxed);
      pending = 0;
      if (timed) last_report_time = Clock::now();
      if (stop.stop_requested()) break;
    }
    // 1. minibatch of every running member from its own stream
    if (n < N) {
      for (std::size_t m = 0; m < G; ++m) {
        if (!active[m]) continue;
        rng::Stream& rs = streams[m];
        std::vector<long>& v = idx[m];
        for (long t = 0; t < n; ++t) {
          const long j = t + static_cast<long>(rs.uniform() * static_cast<double>(N - t));
          std::swap(v[static_cast<std::size_t>(t)], v[static_cast<std::size_t>(j < N ? j : N - 1)]);
        }
      }
    }
    if constexpr (several) model.minibatch(idx, n, Step::needs_regradient);
    else model.minibatch(idx[0], n, Step::needs_regradient);
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
    // (a cyclical schedule's exploration stage: zero temperature, the step without noise)
    sc.tau = ctl.step.cold(k) ? std::numeric_limits<double>::infinity() : ctl.temperature.at(k);
    sc.eps = ctl.step.at(k);
    sc.burnin = ctl.burnin;
    sc.n_obs = static_cast<double>(N);
    if (trace) sc.stats = &stats;
    if constexpr (several) sc.active = &model.active();
    to_posterior();
    policy.step(groups, sc, model.noise_rng(), regrad);
    if constexpr (several) {
      if (n_active < static_cast<long>(G)) model.hold_retired(sigma);
    }
    const bool save = ctl.kept(k);
    const bool check = k % ctl.check_every == 0 || save || trace || k == T;
    // 4. divergence of a member: back to its last checked state, its outputs, retired
    if (check && !cp.check(sigma, ok)) {
      bool retired = false;
      for (std::size_t m = 0; m < G; ++m) {
        if (!active[m] || ok[m]) continue;
        cp.restore(m);
        st[m].diverged = true;
        st[m].diverged_at = k;
        st[m].message = "the sampler produced a non-finite state at iteration " + std::to_string(k) +
                        " (step size too large for the curvature of the posterior?)";
        st[m].iterations_done = k - 1;
        finish(m, st[m]);
        retire(m);
        retired = true;
      }
      if (n_active == 0) break;
      if constexpr (several) {
        if (retired) model.hold_retired(sigma);
      }
      (void)retired;
    }
    //    magnitude pruning of theta^(k+1) (Algorithm 1); pruned weights get gradients and noise next time
    if (ctl.pruning.on && has_prunable)
      for (auto& g : groups) prune<Ops>(g, ctl.pruning.at(k));
    if (check) cp.save();
    // 5. output
    if (save) rec.save(model, sigma);
    if (trace) {
      rec.trace(model, k, sigma, sc.eps, sc.tau, stats);
      if constexpr (has_last_loss<Recorder>::value || has_member_loss<Recorder>::value) {
        if (ctl.loss_factor > 0.0) {
          bool retired = false;
          for (std::size_t m = 0; m < G; ++m) {
            if (!active[m]) continue;
            double L;
            if constexpr (has_member_loss<Recorder>::value) L = rec.last_loss(m);
            else L = rec.last_loss();
            if (!std::isfinite(L) ||
                (k > ctl.loss_after && L > ctl.loss_factor * std::max(best_loss[m], ctl.loss_floor))) {
              st[m].diverged = true;
              st[m].diverged_at = k;
              char buf[160];
              std::snprintf(buf, sizeof buf,
                            "the training loss per example reached %.4g at iteration %ld (reference level %.4g)", L, k,
                            best_loss[m]);
              st[m].message = buf;
              st[m].iterations_done = k;  // iteration k was done and recorded
              finish(m, st[m]);
              retire(m);
              retired = true;
            } else {
              best_loss[m] = std::min(best_loss[m], L);
            }
          }
          if (n_active == 0) {
            ++k;
            break;
          }
          if constexpr (several) {
            if (retired) model.hold_retired(sigma);
          }
          (void)retired;
        }
      }
    }
  }
  progress.fetch_add(pending, std::memory_order_relaxed);
  for (std::size_t m = 0; m < G; ++m) {
    if (!active[m]) continue;
    st[m].iterations_done = std::min(k - 1, T);
    finish(m, st[m]);
  }
  return st;
}

// Run one chain of `model` (already initialized: values, zero grads and momenta) with step policy `policy`
// (steps.hpp) and the minibatches of stream rs: run_chain_members with one member. Returns what happened; the
// output went to `rec`.
template <class Model, class Recorder, class Step>
ChainStatus run_chain(Model& model, Recorder& rec, const Control& ctl, Step& policy, rng::Stream& rs,
                      std::atomic<long>& progress, const parallel::StopToken& stop = parallel::StopToken()) {
  static_assert(!has_members<Model>::value, "a Model of several members runs through run_chain_members");
  return run_chain_members(model, rec, ctl, policy, &rs, progress, stop)[0];
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
