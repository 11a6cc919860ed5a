// scalebayes/wbb/driver.hpp -- the ONE weighted-Bayesian-bootstrap draw loop, for any weighted solver.
//
// The WBB (Newton, Polson & Xu 2021) draws fresh random weights and solves one weighted optimization per
// draw; only the optimization differs between models. run_draws() owns everything else:
//
//   * keying: draw i of this run (local index, 0 <= i < draws) is global draw t = first_draw + i and uses the
//     single stream rng::Stream(seed, t). From it, in this fixed order, the driver draws the n data weights
//     (Exp(1), multinomial counts of an n-out-of-n resample, or all 1), then the prior weights: n_prior of them for
//     PriorWeights::separate, 1 for common, none for none (all Exp(1)). The SAME stream is then handed to
//     the solver, which may keep drawing from it (a network's initialization, minibatch order). Chunks of
//     draws computed anywhere (threads, future workers, machines) therefore combine exactly.
//   * parallelism: parallel::run_parallel over draws; one solver instance per worker thread, created lazily
//     by the factory ON that worker's thread (so a LibTorch solver can set thread-local torch settings), and
//     destroyed on the calling thread after the run.
//   * progress and interrupts: the parallel::Monitor (sbglue::Progress in the R glue) is called on the
//     calling thread; a stop request ends the run after the draws in hand (RunStatus.interrupted).
//   * inline mode (`inline_run = true`): the draws run one after the other on the CALLING thread with one solver
//     (`threads` is ignored), for a solver that may only run there (a loss written in R: R code runs on R's main
//     thread only). The monitor is polled before every draw and wherever the solver asks its StopToken (the
//     token's `poll`, as sgmcmc::run_chains' inline mode does); a stop request ends the run with the draws
//     completed (a draw cut short is not counted); a solver's exception propagates at once. The draws are those of
//     the threaded mode: the keying above is the same code.
//   * group mode (run_draw_groups()): contiguous groups of draws, one group per worker at a time, for a solver
//     that computes a whole group at once (nn::BatchedWbbSolver: G networks as one batched network). The driver
//     keys every member of the group and draws its weights (begin_draw(), the code of one draw) and hands the
//     group -- each member's weights and its stream, positioned after them -- to the solver, so a draw is a
//     function of (seed, t) whatever its group.
//
// Solver concept (see wbb/glm.hpp, genlasso/trend_filter.hpp, gibbs/compare.hpp and the test solvers):
//   Eigen::Index n_obs() const;      // number of data weights per draw
//   Eigen::Index n_prior() const;    // number of separate prior weights (penalty terms)
//   void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd& w0, rng::Stream& s);
//     // solves draw i (local index) and writes the result into its own preallocated output slot i
//   void set_stop(const parallel::StopToken&);   // optional: the run's stop token, for solvers whose one
//                                               // draw runs long enough to need it (nn::NetWbbSolver)
// Group solver concept (run_draw_groups()): n_obs() and n_prior() as above, and
//   void solve_group(DrawGroup& g, const parallel::StopToken& stop);
//     // solves draws g.first .. g.first + g.size() - 1 (local indices), member m from g.w[m], g.w0[m] and the
//     // stream g.streams[m], and writes their output slots
// Factory: any callable `make_solver(int worker)` returning a std::unique_ptr (or other owning pointer) to
// a solver. Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace wbb {

enum class PriorWeights { separate = 0, common = 1, none = 2 };
enum class WeightDist { exponential = 0, multinomial = 1, unit = 2 };  // unit: all 1 (plain fits)
inline constexpr EnumTable<PriorWeights, 3> prior_weights_names{
    "prior weights", {{{"separate", PriorWeights::separate}, {"common", PriorWeights::common},
                         {"none", PriorWeights::none}}}};
constexpr const auto& enum_table(PriorWeights) { return prior_weights_names; }
inline constexpr EnumTable<WeightDist, 3> weight_dist_names{
    "weight distribution", {{{"exponential", WeightDist::exponential}, {"multinomial", WeightDist::multinomial},
                               {"unit", WeightDist::unit}}}};
constexpr const auto& enum_table(WeightDist) { return weight_dist_names; }

// The one settings carrier of every WBB run: the run settings (seed, threads) plus the draw range and weights.
struct Settings : parallel::RunSettings {
  std::size_t first_draw = 0;  // global index of the first draw computed here (chunks combine exactly)
  std::size_t draws = 0;       // number of draws computed here
  WeightDist dist = WeightDist::exponential;
  PriorWeights prior = PriorWeights::separate;
};

// Number of prior weights drawn per draw for a solver with n_prior penalty terms.
inline Eigen::Index prior_weight_count(PriorWeights prior, Eigen::Index n_prior) {
  if (prior == PriorWeights::separate) return n_prior;
  return prior == PriorWeights::common ? 1 : 0;
}

// n data weights: i.i.d. Exp(1), or the counts of n uniform picks among n (the classical bootstrap).
inline void draw_data_weights(rng::Stream& s, WeightDist dist, Eigen::VectorXd& w) {
  const Eigen::Index n = w.size();
  if (dist == WeightDist::exponential) {
    for (Eigen::Index i = 0; i < n; ++i) w(i) = s.exponential();
  } else if (dist == WeightDist::unit) {
    w.setOnes();  // no random numbers used: draw t is the plain fit from stream (seed, t)
  } else {
    w.setZero();
    for (Eigen::Index k = 0; k < n; ++k) {
      const Eigen::Index i = static_cast<Eigen::Index>(s.uniform() * static_cast<double>(n));
      w(i < n ? i : n - 1) += 1.0;
    }
  }
}

// Prior weights: i.i.d. Exp(1), as many as w0 holds (prior_weight_count()).
inline void draw_prior_weights(rng::Stream& s, Eigen::VectorXd& w0) {
  for (Eigen::Index j = 0; j < w0.size(); ++j) w0(j) = s.exponential();
}

// The keying of draw i (local index) of a run, the one place it is written: the stream (seed, first_draw + i),
// from which its n_obs data weights and then its prior weights (prior_weight_count(st.prior, n_prior)) are
// drawn into w and w0. Returns the stream, positioned after them, for the solver.
inline rng::Stream begin_draw(const Settings& st, std::size_t i, Eigen::Index n_obs, Eigen::Index n_prior,
                              Eigen::VectorXd& w, Eigen::VectorXd& w0) {
  rng::Stream s(st.seed, st.first_draw + i);
  w.resize(n_obs);
  draw_data_weights(s, st.dist, w);
  w0.resize(prior_weight_count(st.prior, n_prior));
  draw_prior_weights(s, w0);
  return s;
}

// A group of draws for a group solver (run_draw_groups()): local indices first .. first + size() - 1, member m
// with its weights w[m], w0[m] and its stream (begin_draw()).
struct DrawGroup {
  std::size_t first = 0;
  std::vector<rng::Stream> streams;
  std::vector<Eigen::VectorXd> w, w0;
  std::size_t size() const { return streams.size(); }
};

namespace detail {
template <class S, class = void>
struct takes_stop_token : std::false_type {};
template <class S>
struct takes_stop_token<S, std::void_t<decltype(std::declval<S&>().set_stop(std::declval<const parallel::StopToken&>()))>>
    : std::true_type {};
}  // namespace detail

// Runs draws first_draw .. first_draw + draws - 1. Returns how many finished and whether the monitor
// asked to stop; the first exception of a solver is rethrown here.
template <class Factory>
parallel::RunStatus run_draws(const Settings& st, Factory&& make_solver,
                              const parallel::Monitor& monitor = parallel::Monitor(), bool inline_run = false) {
  using SolverPtr = decltype(make_solver(0));
  const int nt = inline_run ? 1 : static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(st.draws, static_cast<std::size_t>(std::max(1, st.threads)))));
  std::vector<SolverPtr> solvers(static_cast<std::size_t>(nt));
  struct alignas(64) Scratch {  // padded: workers never share a cache line
    Eigen::VectorXd w, w0;
  };
  std::vector<Scratch> scratch(static_cast<std::size_t>(nt));
  auto body = [&](std::size_t i, int worker, const parallel::StopToken& stop) {
    SolverPtr& sp = solvers[static_cast<std::size_t>(worker)];
    if (!sp) {
      sp = make_solver(worker);
      if (!sp) throw std::runtime_error("WBB driver: the solver factory returned no solver");
      // a solver whose single draw runs long (a network's training) may take the run's stop token
      if constexpr (detail::takes_stop_token<decltype(*sp)>::value) sp->set_stop(stop);
    }
    Scratch& sc = scratch[static_cast<std::size_t>(worker)];
    rng::Stream s = begin_draw(st, i, sp->n_obs(), sp->n_prior(), sc.w, sc.w0);
    sp->solve(i, sc.w, sc.w0, s);
  };
  if (inline_run) {
    parallel::RunStatus status;
    std::atomic<bool> stop{false};
    std::size_t done = 0;
    const std::function<void()> poll = [&]() {
      if (monitor && !stop.load() && !monitor(done)) {
        stop = true;
        status.interrupted = true;
      }
    };
    const parallel::StopToken token(&stop, &poll);
    for (std::size_t i = 0; i < st.draws; ++i) {
      poll();
      if (stop.load()) break;
      body(i, 0, token);
      if (stop.load()) break;  // the draw may have been cut short
      ++done;
    }
    status.completed = done;
    status.prefix = done;  // one after the other: the finished draws are the first `done`
    if (monitor && !status.interrupted) monitor(done);
    return status;
  }
  return parallel::run_parallel(st.draws, nt, body, monitor);
}

// Group mode: draws first_draw .. first_draw + draws - 1 in contiguous groups of group_size (the last one
// smaller), st.threads workers, one group per worker at a time, one solver per worker (created on it). The
// monitor is called with the number of draws in finished groups (a group a stop request cut short is not
// counted; RunStatus.completed is that number).
template <class Factory>
parallel::RunStatus run_draw_groups(const Settings& st, std::size_t group_size, Factory&& make_solver,
                                    const parallel::Monitor& monitor = parallel::Monitor()) {
  using SolverPtr = decltype(make_solver(0));
  const std::size_t G = std::max<std::size_t>(1, group_size);
  const std::size_t groups = st.draws == 0 ? 0 : (st.draws + G - 1) / G;
  const int nt = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(groups, static_cast<std::size_t>(std::max(1, st.threads)))));
  std::vector<SolverPtr> solvers(static_cast<std::size_t>(nt));
  std::atomic<std::size_t> draws_done{0};
  auto body = [&](std::size_t k, int worker, const parallel::StopToken& stop) {
    SolverPtr& sp = solvers[static_cast<std::size_t>(worker)];
    if (!sp) {
      sp = make_solver(worker);
      if (!sp) throw std::runtime_error("WBB driver: the solver factory returned no solver");
    }
    DrawGroup g;
    g.first = k * G;
    const std::size_t count = std::min(G, st.draws - g.first);
    g.w.resize(count);
    g.w0.resize(count);
    g.streams.reserve(count);
    for (std::size_t m = 0; m < count; ++m)
      g.streams.push_back(begin_draw(st, g.first + m, sp->n_obs(), sp->n_prior(), g.w[m], g.w0[m]));
    sp->solve_group(g, stop);
    if (!stop.stop_requested()) draws_done.fetch_add(count);
  };
  parallel::Monitor mon;
  if (monitor) mon = [&](std::size_t) { return monitor(draws_done.load()); };
  parallel::RunStatus rs = parallel::run_parallel(groups, nt, body, mon);
  rs.completed = draws_done.load();
  return rs;
}

}  // namespace wbb
}  // namespace scalebayes
