// Glue for wbb(loss = ) and wbb(statistic = ) (R/wbb_loss.R): a loss written in R minimized per draw by
// math::lbfgs_minimize inside the one WBB draw loop (wbb::run_draws, inline mode: R code runs on the main thread
// only), and the draws' weights for a statistic. No algorithmic code here.
#include "sb_glue.h"
// after R's headers: R_interrupts_suspended (the variable of BEGIN_SUSPEND_INTERRUPTS)
#include <R_ext/GraphicsEngine.h>
#include <memory>
#include "scalebayes/math/lbfgs_min.hpp"

namespace W = scalebayes::wbb;
namespace M = scalebayes::math;

namespace {

struct SuspendInterrupts {
  Rboolean old;
  SuspendInterrupts() : old(R_interrupts_suspended) { R_interrupts_suspended = TRUE; }
  ~SuspendInterrupts() { R_interrupts_suspended = old; }
};

// The WBB solver of a loss written in R. `fun(theta, weights)` is R/wbb_loss.R's wrapper of the user's loss: it
// returns c(value, gradient) (checked there: length, numbers). Fresh R vectors are handed to R at every call
// (theta) and every draw (weights), so a user's function that keeps them never sees them change. Interrupts are
// suspended during the call: a Ctrl-C stays pending until the driver's next poll (every L-BFGS iteration), where
// sbglue::Progress sees it and the run stops. An interrupt R signals inside the call all the same is caught by
// the wrapper, which calls the loss again at that point and marks its value (attribute "sb_interrupt", as
// sgmcmc_density()'s R targets do): the mark is held (`held`), the run's monitor then asks to stop, and the draw in
// hand is not counted (the draws finished are kept: ?scalebayes-interrupts). An R error propagates as a C++ exception (Rcpp's unwind) and is
// re-raised as the wrapper's classed error.
class RLossSolver {
 public:
  struct Out {
    double* theta;  // draws x p, column-major
    int* status;
    int* iterations;
    int* evaluations;
    double* value;
    double* grad_max;
    std::size_t draws;
  };
  RLossSolver(const Rcpp::Function& fun, const Eigen::VectorXd& init, Eigen::Index n, const M::LbfgsOptions& opt,
              const Out& out, bool* held)
      : fun_(fun), init_(init), n_(n), opt_(opt), out_(out), held_(held) {}
  Eigen::Index n_obs() const { return n_; }
  Eigen::Index n_prior() const { return 0; }
  void set_stop(const scalebayes::parallel::StopToken& stop) { stop_ = stop; }
  void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd&, scalebayes::rng::Stream&) {
    const Eigen::Index p = init_.size();
    // every R allocation with interrupts suspended: an allocation may run the garbage collector, whose end
    // processes a pending interrupt (END_SUSPEND_INTERRUPTS) and would jump out of this C++ frame
    std::unique_ptr<Rcpp::NumericVector> wr;
    {
      SuspendInterrupts s;
      wr.reset(new Rcpp::NumericVector(w.data(), w.data() + w.size()));
    }
    auto f = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& grad) {
      double value = 0.0;
      R_xlen_t size = 0;
      {
        SuspendInterrupts s;
        Rcpp::NumericVector th(theta.data(), theta.data() + p);
        Rcpp::NumericVector r = fun_(th, *wr);
        if (Rf_getAttrib(r, Rf_install("sb_interrupt")) != R_NilValue) *held_ = true;
        size = r.size();
        if (size == p + 1) {
          std::copy(r.begin() + 1, r.end(), grad.data());
          value = r[0];
        }
      }
      if (size != p + 1)
        throw std::invalid_argument("the loss wrapper returned " + std::to_string(size) + " numbers, not " +
                                    std::to_string(p + 1));
      return value;
    };
    Eigen::VectorXd x = init_;
    const M::LbfgsResult res = M::lbfgs_minimize(f, x, opt_, [this]() {
      const bool stop = stop_.stop_requested();  // first: the poll runs the monitor, which stops on a held mark
      return stop || *held_;
    });
    for (Eigen::Index j = 0; j < p; ++j) out_.theta[i + static_cast<std::size_t>(j) * out_.draws] = x(j);
    out_.status[i] = static_cast<int>(res.status);
    out_.iterations[i] = res.iterations;
    out_.evaluations[i] = res.evaluations;
    out_.value[i] = res.value;
    out_.grad_max[i] = res.grad_max;
  }

 private:
  Rcpp::Function fun_;
  Eigen::VectorXd init_;
  Eigen::Index n_;
  M::LbfgsOptions opt_;
  Out out_;
  bool* held_;
  scalebayes::parallel::StopToken stop_;
};

// Writes each draw's data weights into row i of a draws x n matrix (the statistic form's weights).
class WeightsSolver {
 public:
  WeightsSolver(double* out, std::size_t draws, Eigen::Index n) : out_(out), draws_(draws), n_(n) {}
  Eigen::Index n_obs() const { return n_; }
  Eigen::Index n_prior() const { return 0; }
  void solve(std::size_t i, const Eigen::VectorXd& w, const Eigen::VectorXd&, scalebayes::rng::Stream&) {
    for (Eigen::Index k = 0; k < n_; ++k) out_[i + static_cast<std::size_t>(k) * draws_] = w(k);
  }

 private:
  double* out_;
  std::size_t draws_;
  Eigen::Index n_;
};

}  // namespace

// fun: R/wbb_loss.R's wrapper, function(theta, weights) -> c(value, gradient); init: the start of every draw;
// n: number of observations (weights per draw); settings: wbb_engine_settings() (prior "none"); control:
// list(memory, max_iter, tol, and optionally f_cap: the largest value scale of the convergence test). Returns list(theta = draws x p, status, iterations, evaluations, value, grad_max,
// completed, interrupted).
// [[Rcpp::export]]
Rcpp::List cpp_wbb_loss(const Rcpp::Function& fun, const Rcpp::NumericVector& init, double n,
                        const Rcpp::List& settings, const Rcpp::List& control) {
  W::Settings st = sbglue::wbb_settings(settings);
  st.prior = W::PriorWeights::none;
  M::LbfgsOptions opt;
  opt.memory = Rcpp::as<int>(control["memory"]);
  opt.max_iter = Rcpp::as<int>(control["max_iter"]);
  opt.tol = Rcpp::as<double>(control["tol"]);
  if (control.containsElementNamed("f_cap")) opt.f_cap = Rcpp::as<double>(control["f_cap"]);
  const int p = static_cast<int>(init.size());
  const int D = static_cast<int>(st.draws);
  Rcpp::NumericMatrix theta(D, p);
  std::fill(theta.begin(), theta.end(), NA_REAL);
  Rcpp::IntegerVector status(D, NA_INTEGER), iterations(D, NA_INTEGER), evaluations(D, NA_INTEGER);
  Rcpp::NumericVector value(D, NA_REAL), grad_max(D, NA_REAL);
  const RLossSolver::Out out{theta.begin(), status.begin(), iterations.begin(), evaluations.begin(),
                             value.begin(),  grad_max.begin(), static_cast<std::size_t>(D)};
  const Eigen::VectorXd x0 = sbglue::as_map(init);
  const Eigen::Index nobs = static_cast<Eigen::Index>(n);
  sbglue::Progress prog(static_cast<double>(D), settings, "WBB (R loss)");
  bool held = false;  // an interrupt the wrapper caught inside the loss
  const scalebayes::parallel::Monitor monitor = [&](std::size_t done) { return !held && prog(done); };
  const scalebayes::parallel::RunStatus rs = W::run_draws(
      st, [&](int) { return std::make_unique<RLossSolver>(fun, x0, nobs, opt, out, &held); }, monitor, true);
  // the interrupt the wrapper caught is done with: R may leave it pending (signalled inside the loss while
  // suspended), and the next allocation below would raise it
  if (held) R_interrupts_pending = 0;
  return Rcpp::List::create(Rcpp::Named("theta") = theta, Rcpp::Named("status") = status,
                            Rcpp::Named("iterations") = iterations, Rcpp::Named("evaluations") = evaluations,
                            Rcpp::Named("value") = value, Rcpp::Named("grad_max") = grad_max,
                            Rcpp::Named("completed") = static_cast<double>(rs.completed),
                            Rcpp::Named("prefix") = static_cast<double>(rs.prefix),  // draws 1..prefix finished
                            Rcpp::Named("interrupted") = rs.interrupted || prog.interrupted() || held);
}

// The data weights of draws first + 1 .. first + draws (settings: wbb_engine_settings()) for n observations: a
// draws x n matrix, drawn by wbb::run_draws exactly as every WBB run draws them (no prior weights).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_wbb_weights(double n, const Rcpp::List& settings) {
  W::Settings st = sbglue::wbb_settings(settings);
  st.prior = W::PriorWeights::none;
  const Eigen::Index nobs = static_cast<Eigen::Index>(n);
  Rcpp::NumericMatrix out(static_cast<int>(st.draws), static_cast<int>(nobs));
  double* o = out.begin();
  const std::size_t D = st.draws;
  W::run_draws(st, [&](int) { return std::make_unique<WeightsSolver>(o, D, nobs); });
  return out;
}
