// Glue for sgmcmc_density(): a target written in R (run inline, on this thread) or a built-in target (banana,
// gaussian; worker threads) -> sgmcmc::run_density. No algorithmic code here.
#include "sb_glue.h"
#include "sgmcmc_glue.h"
// after R's headers: R_interrupts_suspended (the variable of BEGIN_SUSPEND_INTERRUPTS)
#include <R_ext/GraphicsEngine.h>
#include "scalebayes/sgmcmc/density.hpp"

namespace sg = scalebayes::sgmcmc;

namespace {

// A target written in R: f(beta) returns c(log density, gradient) (R/sgmcmc_density.R wraps the user's function,
// which returns list(log_density, gradient), and checks what it returns). Called on the main thread only
// (run_chains' inline mode). Interrupts are suspended while it runs, so a Ctrl-C inside the user's function
// stays pending until the driver's next report point, where the monitor sees it and the chain stops with the
// draws it has (instead of an R interrupt unwinding through the engine). Some R code signals the interrupt even
// while interrupts are suspended (Sys.sleep() waiting in select()): the wrapper catches that condition, calls the
// target again at the same point and marks its value (attribute "sb_interrupt"); the mark is held here and the
// run's monitor (see run() below) turns it into the stop request at the next report point.
class RTarget {
 public:
  RTarget(const Rcpp::Function& f, int d) : f_(f), d_(d), arg_(d) {}
  int dim() const { return d_; }
  bool interrupt_held() const { return held_; }
  double eval(const double* x, double* grad) const {
    std::copy(x, x + d_, arg_.begin());
    Rcpp::NumericVector r;
    {
      Suspend s;
      r = f_(arg_);
    }
    static SEXP mark = Rf_install("sb_interrupt");
    if (Rf_getAttrib(r, mark) != R_NilValue) held_ = true;
    if (r.size() != d_ + 1)
      throw std::invalid_argument("the target's wrapper returned " + std::to_string(r.size()) + " numbers, not " +
                                  std::to_string(d_ + 1));
    std::copy(r.begin() + 1, r.end(), grad);
    return r[0];
  }

 private:
  struct Suspend {
    Rboolean old;
    Suspend() : old(R_interrupts_suspended) { R_interrupts_suspended = TRUE; }
    ~Suspend() { R_interrupts_suspended = old; }
  };
  Rcpp::Function f_;
  int d_;
  mutable Rcpp::NumericVector arg_;
  mutable bool held_ = false;
};

// Whether a target holds an interrupt that R signalled inside it (only a target written in R can).
template <class Target>
bool interrupt_held(const Target&) { return false; }
bool interrupt_held(const RTarget& t) { return t.interrupt_held(); }

Rcpp::NumericMatrix as_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(m.rows(), m.cols());
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

template <class Target>
Rcpp::List run(const Target& target, const Rcpp::NumericMatrix& init, const Rcpp::List& control,
               const Rcpp::List& run, bool inline_run) {
  sg::Control ctl;
  sbglue::map_chain_control(control, ctl);
  sbglue::map_step_control(control, ctl);
  ctl.method = sg::Method::none;
  ctl.batch_size = 1;
  Eigen::MatrixXd x0 = sbglue::as_map(init);
  sbglue::Progress prog(static_cast<double>(ctl.iterations) * ctl.chains, run, "SG-MCMC");
  bool held = false;
  const scalebayes::parallel::Monitor monitor = [&](std::size_t done) {
    if (interrupt_held(target)) {
      held = true;
      return false;
    }
    return prog(done);
  };
  sg::DensityRunResult rr = sg::run_density(target, ctl, sbglue::run_settings(run), x0, monitor, inline_run);
  Rcpp::List chains(rr.chains.size());
  for (std::size_t c = 0; c < rr.chains.size(); ++c) {
    const sg::DensityChainResult& r = rr.chains[c];
    chains[c] = Rcpp::List::create(
        Rcpp::Named("draws") = as_r(r.draws), Rcpp::Named("trace") = as_r(r.trace),
        Rcpp::Named("state") = Rcpp::NumericVector(r.state.data(), r.state.data() + r.state.size()),
        Rcpp::Named("saved") = static_cast<double>(r.saved),
        Rcpp::Named("iterations_done") = static_cast<double>(r.iterations_done),
        Rcpp::Named("diverged") = r.diverged, Rcpp::Named("diverged_at") = static_cast<double>(r.diverged_at),
        Rcpp::Named("message") = r.message, Rcpp::Named("bad_gradient_at") = static_cast<double>(r.bad_gradient_at),
        Rcpp::Named("bad_log_density_at") = static_cast<double>(r.bad_log_density_at));
  }
  return Rcpp::List::create(Rcpp::Named("chains") = chains,
                            Rcpp::Named("interrupted") = rr.interrupted || prog.interrupted() || held);
}

// The gaussian target of a target list: from its precision `prec` when the list has one (R computes it once
// per run with cpp_sgmcmc_gaussian_precision()), else from `cov`.
sg::GaussianTarget gaussian_target(const Rcpp::List& target) {
  Rcpp::NumericVector m = target["mean"];
  if (target.containsElementNamed("prec")) {
    Rcpp::NumericMatrix Q = target["prec"];
    return sg::GaussianTarget(sbglue::as_map(m), sbglue::as_map(Q), sg::GaussianTarget::Precision{});
  }
  Rcpp::NumericMatrix S = target["cov"];
  return sg::GaussianTarget(sbglue::as_map(m), sbglue::as_map(S));
}

}  // namespace

// target: list(type = "r", fun, dim) | list(type = "banana") | list(type = "gaussian", mean, cov);
// init: d x chains; control: the engine control list (R/sgmcmc_density.R); run: run_settings().
// [[Rcpp::export]]
Rcpp::List cpp_sgmcmc_density(const Rcpp::List& target, const Rcpp::NumericMatrix& init, const Rcpp::List& control,
                              const Rcpp::List& run) {
  const std::string type = Rcpp::as<std::string>(target["type"]);
  if (type == "r") {
    RTarget t(Rcpp::as<Rcpp::Function>(target["fun"]), Rcpp::as<int>(target["dim"]));
    return ::run(t, init, control, run, true);
  }
  if (type == "banana") return ::run(sg::BananaTarget(), init, control, run, false);
  if (type == "gaussian") return ::run(gaussian_target(target), init, control, run, false);
  throw std::invalid_argument("unknown target type '" + type + "'");
}

// The log density and gradient of a built-in target at the columns of x (d x m): list(log_density, gradient).
// [[Rcpp::export]]
Rcpp::List cpp_sgmcmc_target_eval(const Rcpp::List& target, const Rcpp::NumericMatrix& x) {
  const std::string type = Rcpp::as<std::string>(target["type"]);
  Rcpp::NumericVector ld(x.ncol());
  Rcpp::NumericMatrix gr(x.nrow(), x.ncol());
  auto go = [&](const auto& t) {
    if (t.dim() != x.nrow()) throw std::invalid_argument("x must have one row per parameter of the target");
    for (int j = 0; j < x.ncol(); ++j) ld[j] = t.eval(x.begin() + j * x.nrow(), gr.begin() + j * x.nrow());
  };
  if (type == "banana") go(sg::BananaTarget());
  else if (type == "gaussian") go(gaussian_target(target));
  else throw std::invalid_argument("unknown built-in target '" + type + "'");
  return Rcpp::List::create(Rcpp::Named("log_density") = ld, Rcpp::Named("gradient") = gr);
}

// The precision cov^-1 of a gaussian target (sgmcmc::gaussian_precision), polling for an interrupt between its
// column blocks: NULL when the user interrupted (R then signals the interrupt).
// [[Rcpp::export]]
SEXP cpp_sgmcmc_gaussian_precision(const Rcpp::NumericMatrix& cov) {
  Eigen::MatrixXd q;
  const bool done = sg::gaussian_precision(sbglue::as_map(cov), q, [] { return !sbglue::user_interrupted(); });
  if (!done) return R_NilValue;
  Rcpp::NumericMatrix out(q.rows(), q.cols());
  std::copy(q.data(), q.data() + q.size(), out.begin());
  return out;
}

// n exact draws of the banana target (n x 2) from stream (seed, 0).
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_banana_exact(double n, double seed) {
  return as_r(sg::banana_exact(static_cast<long>(n), sbglue::seed_from_r(seed)));
}
