// scalebayes/sgmcmc/glm.hpp -- adaptive empirical-Bayes SG-MCMC (SGLD-SA / SGHMC-SA) for linear and logistic
// regression with SSGL priors: the Eigen model, output management and the multi-chain driver.
//
// Coefficients are held in two groups: the sparse group (SSGL prior) and the non-sparse group (N(0, sigma0^2)
// prior; the intercept always lives here). The engine transposes X once into a P x N matrix whose rows are the
// sparse columns, then the non-sparse columns, then the intercept, so each observation is one contiguous column
// and a minibatch costs one fused pass per observation (linear predictor, residual, gradient).
//
// Per iteration k = 1..T (Algorithm 1, with the SA step for beta^(k) done at the start of iteration k):
//   1. draw a minibatch B_k (without replacement); r_i = y_i - mu(x_i' beta^(k)); acc = (N/n) sum r_i x_i
//   2. k >= 2 and method != none: SA of the latent variables with omega_{k-1} using beta^(k) and, for the
//      regression sigma, I = (N/n) sum_{B_k} r_i^2 (an unbiased estimate of the full-data residual sum of squares
//      at beta^(k) from a minibatch independent of beta^(k))
//   3. grad = acc / sigma^2 (gaussian) or acc (binomial) + prior gradient; SGLD or SGHMC step -> beta^(k+1);
//      a non-finite state stops the chain and keeps the last good state; then optional magnitude pruning
//   4. output: after burn-in every thin-th iteration the draw of the kept coefficients is stored and the running
//      posterior means / second moments and predictive averages are updated; every trace_every-th iteration
//      (sigma, delta, mean rho, full-data log-likelihood, eps, tau) is recorded.
// Header-only, Eigen + std, no R.
#pragma once
#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/math/logistic.hpp"
#include "scalebayes/math/family.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/sgmcmc/kernels.hpp"
#include "scalebayes/sgmcmc/schedules.hpp"
#include "scalebayes/sgmcmc/updates.hpp"

namespace scalebayes {
namespace sgmcmc {

using scalebayes::Family;  // math/family.hpp
enum class Method { sa, em, none };
enum class Sampler { sgld, sghmc };

struct Control {
  Family family = Family::gaussian;
  Method method = Method::sa;
  Sampler sampler = Sampler::sgld;
  long iterations = 1000, batch_size = 50, burnin = 0, thin = 1, trace_every = 1;
  StepSchedule step;
  SAStep sa;
  Annealing temperature;
  PruneSchedule pruning;
  double friction = 0.1, noise_estimate = 0.0;  // SGHMC
  SSGLHyper hyper;
  double prior_var = 1e4;           // sigma0^2 of the non-sparse group
  double sigma_init = 1.0, delta_init = 0.5, rho_init = 0.5;
  bool fixed_sigma = false;         // keep sigma at sigma_init even when the latents are adapted
  long sa_start = 1;                // the latent variables stay fixed before iteration sa_start + 1 (warm-up)
  std::vector<long> keep;           // coefficient indices (output order) whose draws are stored
  int chains = 1;
  long chain_offset = 0;            // chain c uses stream chain_offset + c (chunks of chains across processes)

  void validate() const {
    if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
    if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
    if (burnin < 0 || burnin >= iterations) throw std::invalid_argument("burnin must lie in [0, iterations)");
    if (thin < 1 || trace_every < 1) throw std::invalid_argument("thin and trace_every must be >= 1");
    if (sa_start < 1) throw std::invalid_argument("sa_start must be >= 1");
    if (chains < 1) throw std::invalid_argument("chains must be >= 1");
    if (!(friction > 0.0 && friction <= 1.0)) throw std::invalid_argument("friction must lie in (0, 1]");
    if (!(noise_estimate >= 0.0 && noise_estimate < friction))
      throw std::invalid_argument("noise_estimate must lie in [0, friction)");
    if (!(prior_var > 0.0)) throw std::invalid_argument("prior_var must be > 0");
    if (!(sigma_init > 0.0)) throw std::invalid_argument("sigma_init must be > 0");
    if (!(delta_init > 0.0 && delta_init < 1.0)) throw std::invalid_argument("delta_init must lie in (0, 1)");
    if (!(rho_init >= 0.0 && rho_init <= 1.0)) throw std::invalid_argument("rho_init must lie in [0, 1]");
    step.validate();
    sa.validate();
    temperature.validate();
    pruning.validate();
    hyper.validate();
  }
};

// Trace columns.
enum TraceCol { T_ITER = 0, T_SIGMA, T_DELTA, T_MEANRHO, T_LOGLIK, T_EPS, T_TAU, T_NCOL };

struct ChainResult {
  Eigen::MatrixXd draws;        // saved x keep.size()
  Eigen::VectorXd post_mean;    // P, output order
  Eigen::VectorXd post_sd;      // P
  Eigen::MatrixXd trace;        // n_trace x T_NCOL
  Eigen::VectorXd beta;         // final (or last good) state, output order
  Eigen::VectorXd rho;          // final rho, output order (NaN for non-sparse coefficients)
  Eigen::VectorXd kappa0, kappa1;  // final kappa, output order (NaN for non-sparse coefficients)
  double sigma = 0.0, delta = 0.0;
  Eigen::VectorXd pred_link, pred_mean;  // running predictive averages for x_test
  long saved = 0, traced = 0, iterations_done = 0;
  bool diverged = false;
  long diverged_at = 0;
  std::string message;
};

// The data in engine order.
struct GlmData {
  Eigen::MatrixXd xt;     // P x N
  Eigen::VectorXd y;      // N
  Eigen::MatrixXd xtest;  // P x m (may have 0 columns)
  long ps = 0, pd = 0;    // sizes of the sparse / non-sparse groups
  std::vector<long> out_to_engine;  // output index -> engine index
  Family family = Family::gaussian;
};

// X: N x p; sparse: length p (nonzero = SSGL prior); output order = (intercept, x columns).
inline GlmData make_data(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                         const std::vector<int>& sparse, bool intercept,
                         const Eigen::Ref<const Eigen::MatrixXd>& x_test, Family family) {
  const long N = x.rows(), p = x.cols();
  if (N < 1 || y.size() != N) throw std::invalid_argument("x and y must have the same number of rows (>= 1)");
  if (static_cast<long>(sparse.size()) != p) throw std::invalid_argument("sparse mask must have one entry per column");
  if (x_test.cols() != p && x_test.rows() > 0) throw std::invalid_argument("x_test must have as many columns as x");
  GlmData d;
  d.family = family;
  const long P = p + (intercept ? 1 : 0);
  std::vector<long> order;  // engine index -> output index
  for (long j = 0; j < p; ++j)
    if (sparse[j]) order.push_back(j + (intercept ? 1 : 0));
  d.ps = static_cast<long>(order.size());
  for (long j = 0; j < p; ++j)
    if (!sparse[j]) order.push_back(j + (intercept ? 1 : 0));
  if (intercept) order.push_back(0);
  d.pd = P - d.ps;
  d.out_to_engine.assign(P, 0);
  for (long e = 0; e < P; ++e) d.out_to_engine[order[e]] = e;
  const long m = x_test.rows();
  d.xt.resize(P, N);
  d.xtest.resize(P, m);
  for (long e = 0; e < P; ++e) {
    const long o = order[e];
    if (intercept && o == 0) {
      d.xt.row(e).setOnes();
      if (m) d.xtest.row(e).setOnes();
    } else {
      const long j = o - (intercept ? 1 : 0);
      d.xt.row(e) = x.col(j).transpose();
      if (m) d.xtest.row(e) = x_test.col(j).transpose();
    }
  }
  d.y = y;
  if (family == Family::binomial) {
    for (long i = 0; i < N; ++i)
      if (!(y[i] == 0.0 || y[i] == 1.0)) throw std::invalid_argument("binomial y must be 0 or 1");
  }
  return d;
}

using math::log1pexp;
inline double inv_logit(double eta) { return math::expit(eta); }

using Grp = Group<EigenOps>;

inline double linpred(const GlmData& d, long i, const Grp& gs, const Grp& gd) {
  const double* col = d.xt.data() + i * d.xt.rows();
  double eta = 0.0;
  if (d.ps) eta += kernels::dot(col, gs.value.data(), d.ps);
  if (d.pd) eta += kernels::dot(col + d.ps, gd.value.data(), d.pd);
  return eta;
}

// Fused minibatch pass: acc_s, acc_d = (N/n) sum r_i x_i with r_i = y_i - mu_i; returns (N/n) sum r_i^2.
inline double minibatch_pass(const GlmData& d, const std::vector<long>& idx, long n, Grp& gs, Grp& gd) {
  const double scale = static_cast<double>(d.y.size()) / static_cast<double>(n);
  gs.grad.setZero();
  gd.grad.setZero();
  double rss = 0.0;
  for (long t = 0; t < n; ++t) {
    const long i = idx[t];
    const double eta = linpred(d, i, gs, gd);
    const double r = d.family == Family::gaussian ? d.y[i] - eta : d.y[i] - inv_logit(eta);
    rss += r * r;
    const double* col = d.xt.data() + i * d.xt.rows();
    if (d.ps) kernels::axpy(r, col, gs.grad.data(), d.ps);
    if (d.pd) kernels::axpy(r, col + d.ps, gd.grad.data(), d.pd);
  }
  gs.grad *= scale;
  gd.grad *= scale;
  return scale * rss;
}

inline double full_loglik(const GlmData& d, const Grp& gs, const Grp& gd, double sigma) {
  const long N = d.y.size();
  double ll = 0.0;
  for (long i = 0; i < N; ++i) {
    const double eta = linpred(d, i, gs, gd);
    if (d.family == Family::gaussian) {
      const double r = d.y[i] - eta;
      ll += -0.5 * std::log(2.0 * M_PI * sigma * sigma) - r * r / (2.0 * sigma * sigma);
    } else {
      ll += d.y[i] * eta - log1pexp(eta);
    }
  }
  return ll;
}

inline double engine_value(const GlmData& d, const Grp& gs, const Grp& gd, long e) {
  return e < d.ps ? gs.value[e] : gd.value[e - d.ps];
}

struct ChainShared {
  std::atomic<long> progress{0};  // iterations done by all chains (read by the monitor)
};

// Run one chain. beta_init is in output order.
inline ChainResult run_chain(const GlmData& d, const Control& ctl, const Eigen::VectorXd& beta_init, int chain,
                             ChainShared& shared, std::uint64_t seed,
                             const parallel::StopToken& stop = parallel::StopToken()) {
  const long N = d.y.size();
  const long P = d.ps + d.pd;
  const long n = std::min<long>(ctl.batch_size, N);
  rng::Stream rs(seed, static_cast<std::uint64_t>(ctl.chain_offset + chain));
  Grp gs, gd;
  gs.sparse = true;
  gd.sparse = false;
  gd.prior_var = ctl.prior_var;
  gs.value.resize(d.ps);
  gd.value.resize(d.pd);
  for (long o = 0; o < P; ++o) {
    const long e = d.out_to_engine[o];
    if (e < d.ps) gs.value[e] = beta_init[o];
    else gd.value[e - d.ps] = beta_init[o];
  }
  for (Grp* g : {&gs, &gd}) {
    g->grad = Eigen::ArrayXd::Zero(g->value.size());
    g->momentum = Eigen::ArrayXd::Zero(g->value.size());
  }
  init_latents<EigenOps>(gs, ctl.rho_init, ctl.delta_init, ctl.hyper);
  std::vector<Grp> groups;  // for sa_update (copied in and out: cheap relative to the pass? no: use swap)
  double sigma = ctl.sigma_init;
  const bool regression = d.family == Family::gaussian;

  const long T = ctl.iterations;
  const long n_save = (T - ctl.burnin) / ctl.thin;
  const long n_trace = T / ctl.trace_every;
  const long K = static_cast<long>(ctl.keep.size());
  const long m = d.xtest.cols();
  ChainResult res;
  res.draws.resize(n_save, K);
  res.trace.resize(n_trace, T_NCOL);
  Eigen::VectorXd sum1 = Eigen::VectorXd::Zero(P), sum2 = Eigen::VectorXd::Zero(P);
  Eigen::VectorXd plink = Eigen::VectorXd::Zero(m), pmean = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd ev(P);  // current beta in engine order (only at save/trace points)

  std::vector<long> idx(N);
  for (long i = 0; i < N; ++i) idx[i] = i;
  Eigen::ArrayXd prev_s, prev_d;
  SAInput sain;
  sain.regression = regression;
  sain.n_total = static_cast<double>(N);
  groups.resize(2);
  long last_report = 0;

  auto gather = [&]() {
    ev.head(d.ps) = gs.value.matrix();
    ev.tail(d.pd) = gd.value.matrix();
  };

  long k = 1;
  for (; k <= T; ++k) {
    if ((k & 255) == 0) {
      shared.progress.fetch_add(k - last_report, std::memory_order_relaxed);
      last_report = k;
      if (stop.stop_requested()) break;
    }
    // 1. minibatch (partial Fisher-Yates on a persistent permutation)
    if (n < N) {
      for (long t = 0; t < n; ++t) {
        const long j = t + static_cast<long>(rs.uniform() * static_cast<double>(N - t));
        std::swap(idx[t], idx[j < N ? j : N - 1]);
      }
    }
    const double rss = minibatch_pass(d, idx, n, gs, gd);
    // 2. SA of the latent variables
    const bool do_sa = k > ctl.sa_start && ctl.method != Method::none;
    const long j_sa = k - ctl.sa_start;  // SA step index: omega_{k-1} without warm-up
    if (do_sa && d.ps > 0) {
      sain.resid_ss = rss;
      std::swap(groups[0], gs);
      std::swap(groups[1], gd);
      sa_update<EigenOps>(groups, sigma, ctl.sa.at(j_sa), ctl.hyper, sain, !ctl.fixed_sigma);
      std::swap(groups[0], gs);
      std::swap(groups[1], gd);
    } else if (do_sa && regression && !ctl.fixed_sigma) {
      // no sparse coefficients: only sigma is adapted
      sain.resid_ss = rss;
      std::vector<Grp> none;
      sa_update<EigenOps>(none, sigma, ctl.sa.at(j_sa), ctl.hyper, sain, true);
    }
    // 3. gradient and step
    const double tau = ctl.temperature.at(k);
    const double eps = ctl.step.at(k);
    if (regression) {
      const double is2 = 1.0 / (sigma * sigma);
      gs.grad *= is2;
      gd.grad *= is2;
    }
    if (d.ps) add_prior_grad<EigenOps>(gs, sigma);
    if (d.pd) add_prior_grad<EigenOps>(gd, sigma);
    prev_s = gs.value;
    prev_d = gd.value;
    if (ctl.sampler == Sampler::sgld) {
      sgld_step<EigenOps>(gs, eps, tau, rs);
      sgld_step<EigenOps>(gd, eps, tau, rs);
    } else {
      sghmc_step<EigenOps>(gs, eps, ctl.friction, ctl.noise_estimate, tau, rs);
      sghmc_step<EigenOps>(gd, eps, ctl.friction, ctl.noise_estimate, tau, rs);
    }
    if (!EigenOps::all_finite(gs.value) || !EigenOps::all_finite(gd.value) || !std::isfinite(sigma) ||
        !(sigma > 0.0)) {
      gs.value = prev_s;
      gd.value = prev_d;
      res.diverged = true;
      res.diverged_at = k;
      res.message = "the sampler produced a non-finite state at iteration " + std::to_string(k) +
                    " (step size too large for the curvature of the posterior?)";
      break;
    }
    //    magnitude pruning of beta^(k+1) (Algorithm 1); pruned weights get gradients and noise next time
    if (ctl.pruning.on && d.ps > 0) prune<EigenOps>(gs, ctl.pruning.at(k));
    // 4. output
    const bool save = k > ctl.burnin && (k - ctl.burnin) % ctl.thin == 0;
    const bool trace = k % ctl.trace_every == 0;
    if (save || trace) gather();
    if (save) {
      const long s = res.saved++;
      for (long c = 0; c < K; ++c) res.draws(s, c) = ev[d.out_to_engine[ctl.keep[c]]];
      sum1 += ev;
      sum2 += ev.cwiseAbs2();
      if (m) {
        const Eigen::VectorXd eta = d.xtest.transpose() * ev;
        plink += eta;
        if (d.family == Family::gaussian) pmean += eta;
        else
          for (long i = 0; i < m; ++i) pmean[i] += inv_logit(eta[i]);
      }
    }
    if (trace) {
      const long t = res.traced++;
      res.trace(t, T_ITER) = static_cast<double>(k);
      res.trace(t, T_SIGMA) = sigma;
      res.trace(t, T_DELTA) = gs.delta;
      res.trace(t, T_MEANRHO) = d.ps ? gs.rho.mean() : NAN;
      res.trace(t, T_LOGLIK) = full_loglik(d, gs, gd, sigma);
      res.trace(t, T_EPS) = eps;
      res.trace(t, T_TAU) = tau;
    }
  }
  shared.progress.fetch_add((k > T ? T : k) - last_report, std::memory_order_relaxed);
  res.iterations_done = res.diverged ? k - 1 : std::min(k - 1, T);
  res.draws.conservativeResize(res.saved, K);
  res.trace.conservativeResize(res.traced, T_NCOL);
  // summaries in output order
  res.post_mean.resize(P);
  res.post_sd.resize(P);
  res.beta.resize(P);
  res.rho.resize(P);
  res.kappa0.resize(P);
  res.kappa1.resize(P);
  gather();
  const double ns = static_cast<double>(res.saved);
  for (long o = 0; o < P; ++o) {
    const long e = d.out_to_engine[o];
    if (res.saved > 0) {
      const double mu = sum1[e] / ns;
      res.post_mean[o] = mu;
      res.post_sd[o] = res.saved > 1 ? std::sqrt(std::max(0.0, (sum2[e] - ns * mu * mu) / (ns - 1.0))) : NAN;
    } else {
      res.post_mean[o] = NAN;
      res.post_sd[o] = NAN;
    }
    res.beta[o] = ev[e];
    res.rho[o] = e < d.ps ? gs.rho[e] : NAN;
    res.kappa0[o] = e < d.ps ? gs.kappa0[e] : NAN;
    res.kappa1[o] = e < d.ps ? gs.kappa1[e] : NAN;
  }
  res.sigma = sigma;
  res.delta = gs.delta;
  if (m && res.saved > 0) {
    res.pred_link = plink / ns;
    res.pred_mean = pmean / ns;
  } else {
    res.pred_link = Eigen::VectorXd::Constant(m, NAN);
    res.pred_mean = Eigen::VectorXd::Constant(m, NAN);
  }
  return res;
}

struct RunResult {
  std::vector<ChainResult> chains;
  bool interrupted = false;
};

// Run ctl.chains chains on run.threads threads; chain c uses rng::Stream(run.seed, chain_offset + c), so the
// result does not depend on the number of threads, nor on how chains are split into chunks across processes.
// monitor(iterations_done) is called on the calling thread about every 100 ms (iterations of all chains); it
// returns false to stop (each chain then stops within 256 iterations and the result has interrupted = true).
inline RunResult run_sgld_sa(const GlmData& d, const Control& ctl, const parallel::RunSettings& run,
                             const Eigen::MatrixXd& beta_init, const parallel::Monitor& monitor = parallel::Monitor()) {
  ctl.validate();
  const long P = d.ps + d.pd;
  if (beta_init.rows() != P || beta_init.cols() != ctl.chains)
    throw std::invalid_argument("beta_init must be P x chains");
  for (long c : ctl.keep)
    if (c < 0 || c >= P) throw std::invalid_argument("keep index out of range");
  RunResult out;
  out.chains.resize(ctl.chains);
  ChainShared shared;
  auto body = [&](std::size_t c, int, const parallel::StopToken& stop) {
    out.chains[c] = run_chain(d, ctl, beta_init.col(static_cast<long>(c)), static_cast<int>(c), shared, run.seed, stop);
  };
  parallel::Monitor mon;
  if (monitor) mon = [&](std::size_t) { return monitor(static_cast<std::size_t>(shared.progress.load())); };
  const parallel::RunStatus st = parallel::run_parallel(static_cast<std::size_t>(ctl.chains), run.threads, body, mon);
  out.interrupted = st.interrupted;
  return out;
}

}  // namespace sgmcmc
}  // namespace scalebayes
