// Test hooks of the WBB driver (tests/testthat/test-wbb-driver.R, helper-wbb-weights.R): two small weighted
// solvers run through scalebayes::wbb::run_draws() and a group solver through wbb::run_draw_groups(), beside
// the package's real ones (wbb/glm.hpp, genlasso/trend_filter.hpp). Compiled only with SCALEBAYES_TEST_HOOKS (see test_hooks.h).
#ifdef SCALEBAYES_TEST_HOOKS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "sb_glue.h"
#include "scalebayes/wbb/driver.hpp"
#include "test_hooks.h"

namespace wbb = scalebayes::wbb;

namespace {
// Records what the driver hands it: the data weights, the prior weights, then one more uniform from the
// draw's stream (the stream must reach the solver right after the weights).
class RecordSolver {
 public:
  RecordSolver(Eigen::Index n, Eigen::Index n_prior, Eigen::Map<Eigen::MatrixXd>& out)
      : n_(n), m_(n_prior), out_(out) {}
  Eigen::Index n_obs() const { return n_; }
  Eigen::Index n_prior() const { return m_; }
  void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd& w0, scalebayes::rng::Stream& s) {
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    out_.row(r).head(n_) = w.transpose();
    out_.row(r).segment(n_, w0.size()) = w0.transpose();
    out_(r, n_ + w0.size()) = s.uniform();
  }

 protected:
  Eigen::Map<Eigen::MatrixXd>& out() { return out_; }

 private:
  Eigen::Index n_, m_;
  Eigen::Map<Eigen::MatrixXd>& out_;
};

// The group solver of the same record (wbb::run_draw_groups()): member m of a group is recorded as RecordSolver
// records draw g.first + m, and one more column says which group (its first local index) solved it.
class RecordGroupSolver : public RecordSolver {
 public:
  using RecordSolver::RecordSolver;
  void solve_group(wbb::DrawGroup& g, const scalebayes::parallel::StopToken&) {
    Eigen::Map<Eigen::MatrixXd>& o = out();
    for (std::size_t m = 0; m < g.size(); ++m) {
      solve(g.first + m, g.w[m], g.w0[m], g.streams[m]);
      o(static_cast<Eigen::Index>(g.first + m), o.cols() - 1) = static_cast<double>(g.first);
    }
  }
};

// RecordGroupSolver that, in the group starting at local draw `stop_first`, records its first half of members,
// raises `ask_stop` (the check's monitor then asks the driver to stop) and returns once the run's stop token is
// set (at most 30 s): a stop request arriving in the middle of a group.
class StoppingGroupSolver : public RecordGroupSolver {
 public:
  StoppingGroupSolver(Eigen::Index n, Eigen::Index m, Eigen::Map<Eigen::MatrixXd>& out, long stop_first,
                      std::atomic<bool>& ask_stop)
      : RecordGroupSolver(n, m, out), stop_first_(stop_first), ask_stop_(ask_stop) {}
  void solve_group(wbb::DrawGroup& g, const scalebayes::parallel::StopToken& stop) {
    if (static_cast<long>(g.first) != stop_first_) {
      RecordGroupSolver::solve_group(g, stop);
      return;
    }
    Eigen::Map<Eigen::MatrixXd>& o = out();
    for (std::size_t m = 0; m < (g.size() + 1) / 2; ++m) {
      solve(g.first + m, g.w[m], g.w0[m], g.streams[m]);
      o(static_cast<Eigen::Index>(g.first + m), o.cols() - 1) = static_cast<double>(g.first);
    }
    ask_stop_ = true;
    for (int k = 0; k < 30000 && !stop.stop_requested(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

 private:
  long stop_first_;
  std::atomic<bool>& ask_stop_;
};

// Weighted ridge estimate of a mean: argmin_mu sum_i w_i (y_i - mu)^2 / 2 + lambda w0 mu^2 / 2
// = sum_i w_i y_i / (sum_i w_i + lambda w0) (w0 = 1 without prior weights).
class RidgeMeanSolver {
 public:
  RidgeMeanSolver(const Eigen::VectorXd& y, double lambda, Eigen::Map<Eigen::MatrixXd>& out)
      : y_(y), lambda_(lambda), out_(out) {}
  Eigen::Index n_obs() const { return y_.size(); }
  Eigen::Index n_prior() const { return 1; }
  void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd& w0, scalebayes::rng::Stream&) {
    const double pw = w0.size() ? w0(0) : 1.0;
    out_(static_cast<Eigen::Index>(i), 0) = w.dot(y_) / (w.sum() + lambda_ * pw);
  }

 private:
  const Eigen::VectorXd& y_;
  double lambda_;
  Eigen::Map<Eigen::MatrixXd>& out_;
};
}  // namespace

// solver 0: RecordSolver with n_prior prior terms (draws x (n + prior weights + 1)); 1: RidgeMeanSolver
// (draws x 1). settings: R/wbb_run.R's wbb_engine_settings().
Rcpp::NumericMatrix cpp_wbb_driver_check(Rcpp::NumericVector y, double lambda, int solver, int n_prior,
                                         Rcpp::List settings) {
  const wbb::Settings st = sbglue::wbb_settings(settings);
  const Eigen::VectorXd yv = sbglue::as_map(y);
  const Eigen::Index n = yv.size(), T = static_cast<Eigen::Index>(st.draws);
  const Eigen::Index width = solver == 0 ? n + wbb::prior_weight_count(st.prior, n_prior) + 1 : 1;
  Rcpp::NumericMatrix res(static_cast<int>(T), static_cast<int>(width));
  Eigen::Map<Eigen::MatrixXd> out(res.begin(), T, width);
  sbglue::Progress prog(static_cast<double>(T), false, "check");
  if (solver == 0) {
    wbb::run_draws(st, [&](int) { return std::unique_ptr<RecordSolver>(new RecordSolver(n, n_prior, out)); },
                   prog.monitor());
  } else {
    wbb::run_draws(st, [&](int) { return std::unique_ptr<RidgeMeanSolver>(new RidgeMeanSolver(yv, lambda, out)); },
                   prog.monitor());
  }
  return res;
}

SB_TEST_HOOK(cpp_wbb_driver_check)

// The group mode: RecordGroupSolver through wbb::run_draw_groups() with groups of group_size draws
// (draws x (n + prior weights + 2): cpp_wbb_driver_check's solver 0 columns, then the group's first draw).
// stop_group >= 0: a stop request in the middle of the group of that index (its first half of members
// recorded, then the monitor asks to stop and the solver returns once the run's token says so), as a Ctrl-C
// in the middle of a batched group. Returns the record (rows of draws never solved stay 0) and
// RunStatus.completed and .interrupted.
Rcpp::List cpp_wbb_driver_groups_check(int n, int n_prior, int group_size, Rcpp::List settings, int stop_group) {
  const wbb::Settings st = sbglue::wbb_settings(settings);
  const Eigen::Index T = static_cast<Eigen::Index>(st.draws);
  const Eigen::Index width = n + wbb::prior_weight_count(st.prior, n_prior) + 2;
  Rcpp::NumericMatrix res(static_cast<int>(T), static_cast<int>(width));
  Eigen::Map<Eigen::MatrixXd> out(res.begin(), T, width);
  std::atomic<bool> ask_stop{false};
  const std::size_t G = static_cast<std::size_t>(std::max(1, group_size));
  const scalebayes::parallel::RunStatus rs = wbb::run_draw_groups(
      st, G,
      [&](int) {
        return std::unique_ptr<StoppingGroupSolver>(
            new StoppingGroupSolver(n, n_prior, out, stop_group < 0 ? -1 : static_cast<long>(stop_group) * static_cast<long>(G), ask_stop));
      },
      [&](std::size_t) { return !ask_stop.load(); });
  return Rcpp::List::create(Rcpp::Named("record") = res,
                            Rcpp::Named("completed") = static_cast<double>(rs.completed),
                            Rcpp::Named("interrupted") = rs.interrupted);
}

SB_TEST_HOOK(cpp_wbb_driver_groups_check)
#endif  // SCALEBAYES_TEST_HOOKS
