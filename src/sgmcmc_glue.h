// Glue shared by the SG-MCMC entry points (sgld_sa.cpp for the GLM, torch_nn.cpp for networks): the R control
// list (R/sgld_sa.R, R/sgmcmc_control.R) -> sgmcmc::Control. No algorithmic code here.
#pragma once
#include <string>

#include "sb_glue.h"
#include "scalebayes/sgmcmc/chain.hpp"

namespace sbglue {

inline double sgmcmc_num(const Rcpp::List& l, const char* name) { return Rcpp::as<double>(l[name]); }
// An optional entry: present and not NULL (settings added later, and NULL for "not set").
inline bool has(const Rcpp::List& l, const char* name) { return l.containsElementNamed(name) && !Rf_isNull(l[name]); }

// The three parts of the settings (sgmcmc/chain.hpp, steps.hpp), each mapped here once. Every option is read by
// name with the engine's table (enum_arg(), scalebayes/enum_names.hpp): an unknown name is an error naming the
// valid ones, never a silent default.
inline void map_chain_control(const Rcpp::List& c, scalebayes::sgmcmc::ChainControl& ctl) {
  ctl.iterations = static_cast<long>(sgmcmc_num(c, "iterations"));
  ctl.batch_size = static_cast<long>(sgmcmc_num(c, "batch_size"));
  ctl.burnin = static_cast<long>(sgmcmc_num(c, "burnin"));
  ctl.thin = static_cast<long>(sgmcmc_num(c, "thin"));
  ctl.trace_every = static_cast<long>(sgmcmc_num(c, "trace_every"));
  ctl.pruning.on = Rcpp::as<bool>(c["prune"]);
  ctl.pruning.S = sgmcmc_num(c, "prune_S");
  ctl.pruning.D = sgmcmc_num(c, "prune_D");
  ctl.pruning.U = sgmcmc_num(c, "prune_U");
  Rcpp::IntegerVector keep = c["keep"];  // 1-based, output order
  for (int v : keep) ctl.keep.push_back(static_cast<long>(v) - 1);
  ctl.chains = Rcpp::as<int>(c["chains"]);
  ctl.chain_offset = static_cast<long>(sgmcmc_num(c, "chain_offset"));
  if (has(c, "check_every")) ctl.check_every = static_cast<long>(sgmcmc_num(c, "check_every"));
  if (has(c, "report_every")) ctl.report_every = static_cast<long>(sgmcmc_num(c, "report_every"));
  if (has(c, "loss_factor")) ctl.loss_factor = sgmcmc_num(c, "loss_factor");
  if (has(c, "loss_floor")) ctl.loss_floor = sgmcmc_num(c, "loss_floor");
  if (has(c, "loss_start")) ctl.loss_start = sgmcmc_num(c, "loss_start");
  if (has(c, "loss_after")) ctl.loss_after = static_cast<long>(sgmcmc_num(c, "loss_after"));
}

inline void map_step_control(const Rcpp::List& c, scalebayes::sgmcmc::StepControl& ctl) {
  namespace sg = scalebayes::sgmcmc;
  ctl.sampler = sg::sampler_from_name(Rcpp::as<std::string>(c["sampler"]));
  ctl.step.type = enum_arg<sg::StepSchedule::Type>(c, "step_schedule");
  ctl.step.eps0 = sgmcmc_num(c, "step_size");
  ctl.step.gamma = sgmcmc_num(c, "step_power");
  ctl.step.decay = sgmcmc_num(c, "step_decay");
  if (has(c, "cycles")) ctl.step.cycles = static_cast<long>(sgmcmc_num(c, "cycles"));
  if (has(c, "explore")) ctl.step.explore = sgmcmc_num(c, "explore");
  if (has(c, "explore_noise")) ctl.step.explore_noise = Rcpp::as<bool>(c["explore_noise"]);
  if (has(c, "iterations")) ctl.step.total = static_cast<long>(sgmcmc_num(c, "iterations"));
  Rcpp::NumericVector ms = c["step_milestones"];
  for (double v : ms) ctl.step.milestones.push_back(static_cast<long>(v));
  ctl.temperature.tau0 = sgmcmc_num(c, "temperature");
  ctl.temperature.r = sgmcmc_num(c, "anneal");
  if (has(c, "anneal_every")) ctl.temperature.every = static_cast<long>(sgmcmc_num(c, "anneal_every"));
  ctl.friction = sgmcmc_num(c, "friction");
  ctl.noise_estimate = sgmcmc_num(c, "noise_estimate");
  // the fixed preconditioner of SGLD / SGHMC / SGNHT (steps.hpp: Metric): a square factor L, or L's diagonal
  if (has(c, "metric_factor") && !Rf_isNull(c["metric_factor"])) {
    SEXP m = c["metric_factor"];
    if (Rf_isMatrix(m)) ctl.metric.factor = Rcpp::as<Eigen::MatrixXd>(m);
    else ctl.metric.diag = Rcpp::as<Eigen::VectorXd>(m);
  }
  // pSGLD (steps.hpp: RmspropControl); optional entries, its defaults otherwise
  if (has(c, "rmsprop_alpha")) ctl.rmsprop.alpha = sgmcmc_num(c, "rmsprop_alpha");
  if (has(c, "rmsprop_lambda")) ctl.rmsprop.lambda = sgmcmc_num(c, "rmsprop_lambda");
  if (has(c, "rmsprop_adapt")) ctl.rmsprop.adapt = enum_arg<sg::RmspropControl::Adapt>(c, "rmsprop_adapt");
  // HAMCMC-SA / HAMCMC (sgmcmc/lbfgs.hpp); optional entries, defaults of LbfgsControl otherwise
  auto& lb = ctl.lbfgs;
  if (has(c, "memory")) lb.memory = static_cast<int>(sgmcmc_num(c, "memory"));
  if (has(c, "precond_A")) lb.precond.A = sgmcmc_num(c, "precond_A");
  if (has(c, "precond_Z")) lb.precond.Z = sgmcmc_num(c, "precond_Z");
  if (has(c, "precond_alpha")) lb.precond.alpha = sgmcmc_num(c, "precond_alpha");
  if (has(c, "damping_r")) lb.damping_r = sgmcmc_num(c, "damping_r");
  if (has(c, "gamma_min")) lb.gamma_min = sgmcmc_num(c, "gamma_min");
  if (has(c, "normalize")) lb.normalize = Rcpp::as<bool>(c["normalize"]);
  if (has(c, "precond_init"))
    lb.init_curvature = enum_arg<sg::PrecondInit>(c, "precond_init") == sg::PrecondInit::curvature;
  if (has(c, "probe_size")) lb.probe_size = sgmcmc_num(c, "probe_size");
  if (has(c, "sa_memories")) lb.sa_memories = static_cast<int>(sgmcmc_num(c, "sa_memories"));
  if (has(c, "sa_form")) lb.sa_form = enum_arg<sg::SaForm>(c, "sa_form");
  if (has(c, "curvature")) lb.curvature = enum_arg<sg::Curvature>(c, "curvature");
}

inline void map_prior_control(const Rcpp::List& c, scalebayes::sgmcmc::PriorControl& ctl) {
  namespace sg = scalebayes::sgmcmc;
  ctl.method = enum_arg<sg::Method>(c, "method");
  ctl.sa.em = ctl.method == sg::Method::em;
  ctl.sa.A = sgmcmc_num(c, "sa_A");
  ctl.sa.Z = sgmcmc_num(c, "sa_Z");
  ctl.sa.alpha = sgmcmc_num(c, "sa_alpha");
  if (has(c, "sa_cap")) ctl.sa.cap = sgmcmc_num(c, "sa_cap");
  ctl.hyper.v0 = sgmcmc_num(c, "v0");
  ctl.hyper.v1 = sgmcmc_num(c, "v1");
  ctl.hyper.a = sgmcmc_num(c, "a");
  ctl.hyper.b = sgmcmc_num(c, "b");
  ctl.hyper.nu = sgmcmc_num(c, "nu");
  ctl.hyper.lambda = sgmcmc_num(c, "lambda");
  if (has(c, "kappa0_init")) ctl.hyper.kappa0_start = sgmcmc_num(c, "kappa0_init");  // NaN: implied by rho
  if (has(c, "kappa1_init")) ctl.hyper.kappa1_start = sgmcmc_num(c, "kappa1_init");
  ctl.prior_var = sgmcmc_num(c, "prior_var");
  ctl.sigma_init = sgmcmc_num(c, "sigma_init");
  ctl.delta_init = sgmcmc_num(c, "delta_init");
  ctl.rho_init = sgmcmc_num(c, "rho_init");
  ctl.fixed_sigma = Rcpp::as<bool>(c["fixed_sigma"]);
  if (has(c, "likelihood_sd")) {
    const double s = sgmcmc_num(c, "likelihood_sd");
    ctl.lik_var = s * s;
  }
  ctl.sa_start = static_cast<long>(sgmcmc_num(c, "sa_start"));
  if (has(c, "rho_start") && !Rf_isNull(c["rho_start"])) ctl.rho_start = Rcpp::as<std::vector<double>>(c["rho_start"]);
}

// The settings of a network chain (torch_nn.cpp): the network's family is its ModelSpec's, so Control::family
// (the GLM's) is not read here; a regression reads it with sgmcmc_glm_control().
inline scalebayes::sgmcmc::Control sgmcmc_control(const Rcpp::List& c) {
  namespace sg = scalebayes::sgmcmc;
  sg::Control ctl;
  map_chain_control(c, ctl);
  map_step_control(c, ctl);
  map_prior_control(c, ctl);
  // the GLM's control-variate centre (sgmcmc/glm.hpp, CvState), output order
  if (has(c, "gram")) ctl.gram = Rcpp::as<bool>(c["gram"]);
  if (has(c, "cv_center") && !Rf_isNull(c["cv_center"])) ctl.cv_center = Rcpp::as<std::vector<double>>(c["cv_center"]);
  return ctl;
}

// The settings of a GLM chain (sgld_sa.cpp): sgmcmc_control() and the regression's family by name
// (math/family.hpp's family_names: gaussian, binomial, poisson; a network's "multinomial" is an error here).
inline scalebayes::sgmcmc::Control sgmcmc_glm_control(const Rcpp::List& c) {
  scalebayes::sgmcmc::Control ctl = sgmcmc_control(c);
  ctl.family = enum_arg<scalebayes::Family>(c, "family");
  return ctl;
}

}  // namespace sbglue
