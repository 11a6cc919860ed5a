// Glue for sgmcmc_density(): a target written in R (run inline, on this thread), a built-in target (banana,
// gaussian; worker threads) or a minibatched model of sgmcmc_model() (an R log_lik, inline; or a model written
// in C++ against scalebayes/target.hpp, handed over as an external pointer: worker threads when it is
// thread-safe) -> sgmcmc::run_density. No algorithmic code here.
#include "sb_glue.h"
#include "sgmcmc_glue.h"
// after R's headers: R_interrupts_suspended (the variable of BEGIN_SUSPEND_INTERRUPTS)
#include <R_ext/GraphicsEngine.h>
#include "scalebayes/sgmcmc/density.hpp"
#include "scalebayes/target.hpp"

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

// A minibatched model whose log-likelihood is written in R (sgmcmc_model(log_lik = <function>)): lik(theta, rows)
// returns c(log-lik of the rows, its gradient) for 1-based rows, prior(theta) c(log prior, gradient) (NULL: a flat
// prior, not called). R/sgmcmc_model.R wraps the user's functions (the data's rows, the finite-difference
// fallback, the checks of what they return, the held interrupt's mark as for RTarget). Main thread only.
class RBatchTarget {
 public:
  RBatchTarget(const Rcpp::Function& lik, SEXP prior, int d, long N)
      : lik_(lik), prior_(Rf_isNull(prior) ? SEXP(lik) : prior), has_prior_(!Rf_isNull(prior)), d_(d), N_(N), arg_(d) {}
  int dim() const { return d_; }
  long n_obs() const { return N_; }
  bool interrupt_held() const { return held_; }
  double log_lik(const double* x, const long* rows, long n, double* grad) const {
    std::copy(x, x + d_, arg_.begin());
    Rcpp::NumericVector r;
    {
      Suspend s;
      Rcpp::IntegerVector rr(n);
      for (long t = 0; t < n; ++t) rr[t] = static_cast<int>(rows[t] + 1);
      r = lik_(arg_, rr);
    }
    return unpack(r, grad, "log_lik");
  }
  double log_prior(const double* x, double* grad) const {
    if (!has_prior_) {
      std::fill(grad, grad + d_, 0.0);
      return 0.0;
    }
    std::copy(x, x + d_, arg_.begin());
    Rcpp::NumericVector r;
    {
      Suspend s;
      r = prior_(arg_);
    }
    return unpack(r, grad, "log_prior");
  }

 private:
  struct Suspend {
    Rboolean old;
    Suspend() : old(R_interrupts_suspended) { R_interrupts_suspended = TRUE; }
    ~Suspend() { R_interrupts_suspended = old; }
  };
  double unpack(const Rcpp::NumericVector& r, double* grad, const char* what) const {
    static SEXP mark = Rf_install("sb_interrupt");
    if (Rf_getAttrib(r, mark) != R_NilValue) held_ = true;
    if (r.size() != d_ + 1)
      throw std::invalid_argument(std::string("the wrapper of ") + what + " returned " + std::to_string(r.size()) +
                                  " numbers, not " + std::to_string(d_ + 1));
    std::copy(r.begin() + 1, r.end(), grad);
    return r[0];
  }
  Rcpp::Function lik_;
  Rcpp::Function prior_;  // lik_ when there is no prior (never called then)
  bool has_prior_;
  int d_;
  long N_;
  mutable Rcpp::NumericVector arg_;
  mutable bool held_ = false;
};

// The model of an external pointer made by the user's C++ code (scalebayes/target.hpp): its tag must be the
// string kTargetTag and its ABI version this package's; checked before any other call through it.
const scalebayes::Target& xptr_target(SEXP p) {
  if (TYPEOF(p) != EXTPTRSXP) throw std::invalid_argument("the model is not an external pointer");
  SEXP tag = R_ExternalPtrTag(p);
  if (TYPEOF(tag) != STRSXP || Rf_length(tag) != 1 || std::string(CHAR(STRING_ELT(tag, 0))) != scalebayes::kTargetTag)
    throw std::invalid_argument(std::string("the external pointer's tag is not \"") + scalebayes::kTargetTag + "\"");
  const auto* t = static_cast<const scalebayes::Target*>(R_ExternalPtrAddr(p));
  if (t == nullptr) throw std::invalid_argument("the external pointer is NULL (a model saved and reloaded, or released)");
  if (t->abi_version() != scalebayes::kTargetAbiVersion)
    throw std::invalid_argument("the model was compiled against version " + std::to_string(t->abi_version()) +
                                " of scalebayes/target.hpp, this package has version " +
                                std::to_string(scalebayes::kTargetAbiVersion) + ": recompile it");
  return *t;
}

// Whether a target holds an interrupt that R signalled inside it (only a target written in R can).
template <class Target>
bool interrupt_held(const Target&) { return false; }
bool interrupt_held(const RTarget& t) { return t.interrupt_held(); }
bool interrupt_held(const RBatchTarget& t) { return t.interrupt_held(); }

// The control variates of a model target list: cv_center and cv_grad (R/sgmcmc_model.R), or none.
sg::BatchCv batch_cv(const Rcpp::List& target) {
  sg::BatchCv cv;
  if (target.containsElementNamed("cv_center") && !Rf_isNull(target["cv_center"])) {
    Rcpp::NumericVector c = target["cv_center"], g = target["cv_grad"];
    cv.center = Eigen::Map<const Eigen::VectorXd>(c.begin(), c.size());
    cv.grad = Eigen::Map<const Eigen::VectorXd>(g.begin(), g.size());
  }
  return cv;
}

// A model target of the list: f(RBatchTarget or scalebayes::Target, inline_run).
template <class F>
auto with_model_target(const Rcpp::List& target, F f) {
  const std::string type = Rcpp::as<std::string>(target["type"]);
  if (type == "model_r") {
    RBatchTarget t(Rcpp::as<Rcpp::Function>(target["lik"]), target["prior"], Rcpp::as<int>(target["dim"]),
                   static_cast<long>(Rcpp::as<double>(target["nobs"])));
    return f(t, true);
  }
  if (type != "model_xptr") throw std::invalid_argument("unknown model target type '" + type + "'");
  const scalebayes::Target& t = xptr_target(target["ptr"]);
  return f(t, !t.thread_safe());
}

Rcpp::NumericMatrix as_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(m.rows(), m.cols());
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

template <class Target>
Rcpp::List run(const Target& target, const Rcpp::NumericMatrix& init, const Rcpp::List& control,
               const Rcpp::List& run, bool inline_run, const sg::BatchCv* cv = nullptr) {
  sg::Control ctl;
  sbglue::map_chain_control(control, ctl);
  sbglue::map_step_control(control, ctl);
  ctl.method = sg::Method::none;
  if (!sg::is_batch_target<Target>::value) ctl.batch_size = 1;
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
  // an affine reparametrization theta = center + L phi (R/sgmcmc_density.R: the Laplace whitening of HAMCMC-SA /
  // HAMCMC on a full-data target)
  sg::Affine affine;
  if (control.containsElementNamed("reparam_factor") && !Rf_isNull(control["reparam_factor"])) {
    affine.factor = Rcpp::as<Eigen::MatrixXd>(control["reparam_factor"]);
    affine.center = Rcpp::as<Eigen::VectorXd>(control["reparam_center"]);
  }
  sg::DensityRunResult rr =
      sg::run_density(target, ctl, sbglue::run_settings(run), x0, monitor, inline_run, cv, &affine);
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
  if (type == "model_r" || type == "model_xptr") {
    const sg::BatchCv cv = batch_cv(target);
    return with_model_target(target, [&](const auto& t, bool inline_run) {
      return ::run(t, init, control, run, inline_run, &cv);
    });
  }
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
  else if (type == "model_r" || type == "model_xptr") {
    // a minibatched model: its full-data log posterior and gradient (every row)
    with_model_target(target, [&](const auto& t, bool) {
      if (t.dim() != x.nrow()) throw std::invalid_argument("x must have one row per parameter of the target");
      for (int j = 0; j < x.ncol(); ++j) ld[j] = sg::batch_full(t, x.begin() + j * x.nrow(), gr.begin() + j * x.nrow());
      return 0;
    });
  } else throw std::invalid_argument("unknown built-in target '" + type + "'");
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

// The control variates' centre of a model target (sgmcmc::batch_mode: L-BFGS on the full-data negative log
// posterior from x0, polling for an interrupt once per iteration) and the full-data log-likelihood gradient
// there: list(center, grad, status, iterations, evaluations, grad_max, log_density).
// [[Rcpp::export]]
Rcpp::List cpp_sgmcmc_model_mode(const Rcpp::List& target, const Rcpp::NumericVector& x0, int max_iter) {
  return with_model_target(target, [&](const auto& t, bool) {
    scalebayes::math::LbfgsOptions opt;
    opt.max_iter = max_iter;
    const sg::BatchModeResult m = sg::batch_mode(t, Eigen::Map<const Eigen::VectorXd>(x0.begin(), x0.size()), opt,
                                                 [] { return sbglue::user_interrupted(); });
    Rcpp::NumericVector c(m.cv.center.data(), m.cv.center.data() + m.cv.center.size());
    Rcpp::NumericVector g(m.cv.grad.data(), m.cv.grad.data() + m.cv.grad.size());
    return Rcpp::List::create(Rcpp::Named("center") = c, Rcpp::Named("grad") = g,
                              Rcpp::Named("status") = scalebayes::math::lbfgs_status_name(m.lbfgs.status),
                              Rcpp::Named("iterations") = m.lbfgs.iterations,
                              Rcpp::Named("evaluations") = m.lbfgs.evaluations,
                              Rcpp::Named("grad_max") = m.lbfgs.grad_max,
                              Rcpp::Named("log_density") = -m.lbfgs.value);
  });
}

// What a compiled model (external pointer) says about itself: list(dim, nobs, thread_safe); checks the tag and ABI.
// [[Rcpp::export]]
Rcpp::List cpp_sgmcmc_model_info(SEXP ptr) {
  const scalebayes::Target& t = xptr_target(ptr);
  return Rcpp::List::create(Rcpp::Named("dim") = t.dim(), Rcpp::Named("nobs") = static_cast<double>(t.n_obs()),
                            Rcpp::Named("thread_safe") = t.thread_safe());
}

// A model target's log-likelihood over the given rows (1-based) at x, unscaled: c(value, gradient) (the control
// variates' noise measurement of R/sgmcmc_model.R).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_sgmcmc_model_lik(const Rcpp::List& target, const Rcpp::NumericVector& x,
                                         const Rcpp::IntegerVector& rows) {
  return with_model_target(target, [&](const auto& t, bool) {
    if (t.dim() != x.size()) throw std::invalid_argument("x must have one value per parameter of the target");
    std::vector<long> r(rows.size());
    for (R_xlen_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 1 || rows[i] > t.n_obs()) throw std::invalid_argument("rows out of range");
      r[static_cast<std::size_t>(i)] = rows[i] - 1;
    }
    Rcpp::NumericVector out(x.size() + 1);
    out[0] = t.log_lik(x.begin(), r.data(), static_cast<long>(r.size()), out.begin() + 1);
    return out;
  });
}
