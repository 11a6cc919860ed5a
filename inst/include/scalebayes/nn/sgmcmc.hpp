// scalebayes/nn/sgmcmc.hpp -- a LibTorch network as a Model of the SG-MCMC chain driver (sgmcmc/chain.hpp):
// SGLD / SGHMC with the adaptive spike-and-slab (SSGL) prior on chosen weight tensors (SGLD-SA, SGHMC-SA, -EM,
// annealed and pruned variants of Deng, Zhang, Liang & Lin 2019).
//
// TorchOps is the storage policy: a group is one parameter tensor of the network (weights and biases are
// separate groups; a weight tensor of a layer marked `penalized` in the ModelSpec is a sparse group with its own
// rho, kappa and delta, i.e. "layer l" of the paper; every other tensor has the N(0, prior_var) prior). The
// group's value is a detached alias of the module's parameter, so the update rules change the network in place;
// snapshots for the divergence rollback are copies (TorchOps::assign). Scalars (sigma, delta, the sums of the SA
// step) are 0-dim tensors on the network's device: a step never reads a number back to the host.
//
// NetModel: minibatch gradients by autograd of sum_{i in B} l_i scaled by -N/n (l_i the negative log-likelihood
// of nn/objective.hpp: cross-entropy, Bernoulli deviance / 2, or squared error / 2, so the gaussian gradient is in
// the residual form the driver divides by sigma^2). The minibatches come from the chain's stream (seed, chain)
// exactly as for the GLM; the initial network (Net::init_from) and the seed of the torch generator on the device
// that draws the Langevin / momentum noise come from its substream (seed, chain, 1). A chain is a function of
// (seed, chain) on a given device, for any number of threads, and a network and a GLM chain with the same seed
// visit the same minibatches.
//
// NetRecorder: running averages over kept iterations of the response-scale predictions on x_new and of every
// parameter (the posterior-mean network), optionally every kept draw's predictions and parameters; a trace
// (iteration, sigma, mean delta, mean rho, mean minibatch loss since the last trace point, eps, tau, fraction of
// exactly-zero sparse weights, minibatch accuracy since the last trace point; for a preconditioned step policy
// the relative drift and noise lengths and gamma of that iteration, steps.hpp's StepStats); at the end the final parameters
// and per-weight inclusion probabilities rho.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/objective.hpp"  // example_losses()
#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/run.hpp"
#include "scalebayes/sgmcmc/chain.hpp"

namespace scalebayes {
namespace nn {

struct TorchOps {
  using Array = torch::Tensor;
  using Scalar = torch::Tensor;  // 0-dim, on the parameters' device
  using Index = std::int64_t;
  using Rng = at::Generator;

  static Array zeros_like(const Array& a) { return torch::zeros_like(a); }
  static Index size(const Array& a) { return a.defined() ? a.numel() : 0; }
  static Scalar sum(const Array& a) { return a.sum(); }
  static Scalar dot(const Array& a, const Array& b) { return (a * b).sum(); }
  static void axpy(const Scalar& alpha, const Array& x, Array& y) { y.add_(alpha * x); }
  static Scalar where(const Scalar& c, const Scalar& a, const Scalar& b) { return torch::where(c > 0, a, b); }
  static Scalar abs_sum_weighted(const Array& w, const Array& x) { return (w * x.abs()).sum(); }
  static Scalar sq_sum_weighted(const Array& w, const Array& x) { return (w * x.square()).sum(); }
  static Scalar zero_scalar(const Scalar& like) { return torch::zeros_like(like); }
  static Scalar sqrt(const Scalar& v) { return v.sqrt(); }
  static Scalar clamp(const Scalar& v, double lo, double hi) { return v.clamp(lo, hi); }
  static double value(const Scalar& v) { return v.item<double>(); }
  static std::vector<double> values(const Scalar& v) { return {v.item<double>()}; }
  static Scalar from_values(const std::vector<double>& v, const Scalar& like) { return like + v.at(0); }
  static bool all_finite(const Array& a) { return !a.defined() || a.numel() == 0 || torch::isfinite(a).all().item<bool>(); }
  static bool finite_positive(const Scalar& v) {
    const double d = v.item<double>();
    return std::isfinite(d) && d > 0.0;
  }
  static void assign(Array& dst, const Array& src) {
    if (!dst.defined() || !dst.sizes().equals(src.sizes())) dst = src.detach().clone();
    else dst.copy_(src);
  }
  static void add_gaussian(Array& x, double sd, Rng& gen) {
    if (sd == 0.0 || x.numel() == 0) return;
    x.add_(noise_normal(gen, x.sizes(), x.options()), sd);
  }
  static void ssgl_prior_grad(Array& g, const Array& x, const Array& k0, const Array& k1, const Scalar& sigma) {
    const Scalar is = 1.0 / sigma;
    g -= is * k0 * x.sign() + (is * is) * k1 * x;
  }
  // P(gamma_j = 1 | x_j, sigma, delta), eq. (12): its log-odds, and the probability.
  static Array inclusion_logit(const Array& x, const Scalar& sigma, const Scalar& delta, double v0, double v1) {
    const Scalar c = torch::log(delta) - torch::log1p(-delta) - 0.5 * torch::log(2.0 * M_PI * v1 * sigma * sigma) +
                     torch::log(2.0 * v0 * sigma);
    return c - x.square() / (2.0 * v1 * sigma * sigma) + x.abs() / (v0 * sigma);
  }
  static Array inclusion_prob(const Array& x, const Scalar& sigma, const Scalar& delta, double v0, double v1) {
    return torch::sigmoid(inclusion_logit(x, sigma, delta, v0, v1));
  }
  // Zero the floor(s p) smallest |x_j| (ties at the threshold included, as the Eigen policy does).
  static void prune_smallest(Array& x, double s) {
    const std::int64_t k = static_cast<std::int64_t>(std::floor(s * static_cast<double>(x.numel())));
    if (k < 1) return;
    const torch::Tensor a = x.abs();
    const torch::Tensor thr = std::get<0>(a.flatten().kthvalue(std::min<std::int64_t>(k, x.numel())));
    x.masked_fill_(a <= thr, 0.0);
  }
};

using NetGroup = sgmcmc::Group<TorchOps>;

struct NetChainProblem : RunSpec {  // the network, data, device and threads (nn/run.hpp), and:
  bool keep_pred = false;         // every kept draw's predictions on x_new
  bool keep_params = false;       // every kept draw's parameters
  torch::Tensor weights;          // [n] per-example weights of the log-likelihood on the data's device (undefined: 1)
  // Optional starting parameters (Net::copy_to order), one block of n_parameters per chain of this call; null:
  // the default initialization from the chain's substream (seed, chain, 1). The substream is consumed either
  // way, so the noise generator's seed does not depend on where the chain starts.
  const double* init_params = nullptr;
};

class NetModel {
 public:
  using Ops = TorchOps;
  // init: the substream (seed, chain, 1) for the initial network and the noise generator's seed.
  NetModel(const NetChainProblem& pb, const sgmcmc::Control& ctl, rng::Stream& init)
      : pb_(pb), net_(pb.spec, pb.dev.device, pb.dev.dtype) {
    torch::NoGradGuard ng;
    net_->init_from(init);
    gen_ = noise_generator(pb.dev.device);
    gen_.set_current_seed(init.next());
    for (const auto& pg : net_->groups()) {
      NetGroup g;
      g.value = pg.tensor.detach();  // alias: the rules update the network in place
      g.grad = torch::zeros_like(g.value);
      g.momentum = torch::zeros_like(g.value);
      g.sparse = pg.penalized;
      g.prior_var = ctl.prior_var;
      groups_.push_back(g);
    }
    scale_ = 0.0;
    loss_sum_ = torch::zeros({}, pb.dev.options());
    correct_sum_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(pb.dev.device));
    net_->train();
  }
  std::vector<NetGroup>& groups() { return groups_; }
  // Start the chain from given parameters (Net::copy_to order); the groups alias them, so nothing else changes.
  void start_from(const double* params) {
    torch::NoGradGuard ng;
    net_->copy_from(params);
  }
  std::size_t n_parameters() const { return static_cast<std::size_t>(net_->n_parameters()); }
  long n_obs() const { return static_cast<long>(pb_.data->n()); }
  // N q: every output of every example is a term of the likelihood (y is [N] or [N, q])
  double lik_terms() const { return static_cast<double>(pb_.data->y.numel()); }
  bool regression() const { return pb_.spec.family == Family::gaussian; }
  at::Generator& noise_rng() { return gen_; }
  torch::Tensor scalar(double v) const { return torch::full({}, v, pb_.dev.options()); }

  // The minibatch log-likelihood gradient, recorded in the trace sums (loss, accuracy). replayable: keep the
  // dropout generator's state from before this forward pass, so gradient() can replay the same masks.
  void minibatch(const std::vector<long>& idx, long n, bool replayable = false) {
    if (replayable && net_->has_dropout()) replay_state_ = net_->dropout_generator().get_state();
    torch::Tensor out, yb;
    const torch::Tensor l = forward_backward(idx, n, &out, &yb);
    if (pb_.spec.family != Family::gaussian) {  // minibatch accuracy, accumulated on the device
      torch::NoGradGuard ng;
      const torch::Tensor cls = pb_.spec.family == Family::multinomial
                                    ? out.argmax(1)
                                    : (yb.dim() == 2 ? (out > 0) : (out.select(1, 0) > 0)).to(yb.dtype());
      correct_sum_ = correct_sum_ + (cls == yb).sum();
      acc_count_ += static_cast<long>(yb.numel());  // q outputs of n examples (binomial with y [n, q])
    }
    last_loss_ = l.detach();
    loss_sum_ = loss_sum_ + last_loss_;
    loss_count_ += n;
  }
  // The same gradient at the current parameters on the same minibatch, recording nothing: the dropout masks of
  // the last minibatch() (when it was replayable) and batch-norm running statistics and the dropout generator
  // left as they were.
  void gradient(const std::vector<long>& idx, long n) {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> bufs;
    for (const auto& b : net_->buffers()) bufs.push_back(b.clone());
    torch::Tensor after;
    if (net_->has_dropout()) {
      if (!replay_state_.defined())
        throw std::logic_error("NetModel::gradient: the minibatch was not drawn replayable");
      after = net_->dropout_generator().get_state();
      net_->dropout_generator().set_state(replay_state_);
    }
    forward_backward(idx, n, nullptr, nullptr);
    if (after.defined()) net_->dropout_generator().set_state(after);
    std::size_t i = 0;
    for (auto& b : net_->buffers()) b.copy_(bufs[i++]);
  }
  // (N/n) sum_B r_i^2 = 2 (N/n) sum_B l_i for the squared-error loss l_i = r_i^2 / 2.
  torch::Tensor resid_ss() const { return last_loss_ * (2.0 * scale_); }

  Net& net() { return net_; }
  const NetChainProblem& problem() const { return pb_; }
  long recorded_examples() const { return loss_count_; }  // examples in the trace sums since the last take_means
  // Mean minibatch loss per example and minibatch accuracy (NaN for the gaussian family) since the last call
  // (host reads).
  void take_means(double* loss, double* accuracy) {
    const double c = static_cast<double>(loss_count_);
    *loss = loss_count_ > 0 ? loss_sum_.item<double>() / c : NAN;
    *accuracy = acc_count_ > 0 && pb_.spec.family != Family::gaussian
                    ? correct_sum_.item<double>() / static_cast<double>(acc_count_)
                    : NAN;
    loss_sum_.zero_();
    correct_sum_.zero_();
    loss_count_ = 0;
    acc_count_ = 0;
  }

 private:
  const NetChainProblem& pb_;
  Net net_;
  at::Generator gen_;
  std::vector<NetGroup> groups_;
  // Forward and backward pass on minibatch idx[0..n): every group's grad = -(N/n) d sum_B w_i l_i / d theta.
  // Returns the summed loss; out / yb receive the outputs and responses when asked for.
  torch::Tensor forward_backward(const std::vector<long>& idx, long n, torch::Tensor* out_p, torch::Tensor* yb_p) {
    torch::AutoGradMode grad_on(true);
    static_assert(sizeof(long) == sizeof(std::int64_t), "minibatch indices are 64-bit");
    const torch::Tensor ix = torch::from_blob(const_cast<long*>(idx.data()), {n}, torch::kLong).to(pb_.dev.device);
    const torch::Tensor xb = pb_.data->x.index_select(0, ix), yb = pb_.data->y.index_select(0, ix);
    net_->zero_grad();
    const torch::Tensor out = net_->forward(xb);
    const torch::Tensor l = pb_.weights.defined()
                                ? (pb_.weights.index_select(0, ix) * example_losses(pb_.spec.family, out, yb)).sum()
                                : example_losses(pb_.spec.family, out, yb).sum();
    l.backward();
    scale_ = static_cast<double>(n_obs()) / static_cast<double>(n);
    const auto& pg = net_->groups();
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const torch::Tensor& gr = pg[g].tensor.grad();
      groups_[g].grad = gr.defined() ? gr.detach() * (-scale_) : torch::zeros_like(groups_[g].value);
    }
    if (out_p) *out_p = out;
    if (yb_p) *yb_p = yb;
    return l;
  }
  double scale_ = 0.0;
  torch::Tensor last_loss_, loss_sum_, correct_sum_, replay_state_;
  long loss_count_ = 0, acc_count_ = 0;
};

enum NetTraceCol {
  NT_ITER = 0, NT_SIGMA, NT_DELTA, NT_MEANRHO, NT_LOSS, NT_EPS, NT_TAU, NT_SPARSITY, NT_ACCURACY, NT_DRIFT, NT_NOISE, NT_GAMMA,
  NT_NCOL
};

// What the first chain last traced, for a progress display on the main thread (written by the worker).
struct NetStatus {
  std::atomic<long> iteration{0};
  std::atomic<double> loss{NAN}, accuracy{NAN}, sparsity{NAN};
};

// Caller-owned outputs of one chain; a null pointer means "not kept". The kept draws' parameters and buffers
// (keep_params): the DrawStore part (nn/run.hpp), slot k = the chain's k-th stored draw.
struct NetChainOutput : DrawStore {
  double* pred_mean = nullptr;    // n_new x out (row-major): the posterior predictive mean
  double* pred_draws = nullptr;   // n_kept blocks of n_new x out (keep_pred)
  double* param_mean = nullptr;   // P (Net::copy_to order): posterior mean of every parameter
  double* param_final = nullptr;  // P: the last state
  // Draws stored: every keep_stride-th saved iteration (saved iterations 0, stride, 2 stride, ...: n_kept =
  // ceil(n_saved / stride)); the running means (pred_mean, param_mean) use every saved iteration.
  std::size_t keep_stride = 1;
  double* buffer_final = nullptr; // B: the last state's buffers
  double* rho = nullptr;          // P: final inclusion probability (NaN outside sparse groups)
  double* trace = nullptr;        // n_traced x NT_NCOL, row-major
  double* delta = nullptr;        // one per group (NaN outside sparse groups)
  double* scalars = nullptr;      // [sigma, saved, traced, iterations_done, diverged, diverged_at]
  NetStatus* status = nullptr;    // progress display (chain 0)
};

class NetRecorder {
 public:
  NetRecorder(NetModel& model, const NetChainOutput& out) : out_(out) {
    const NetChainProblem& pb = model.problem();
    B_ = static_cast<std::size_t>(model.net()->n_buffer_values());
    for (auto& g : model.groups()) psum_.push_back(torch::zeros_like(g.value));
    if (pb.x_new.defined()) pred_sum_ = torch::zeros({pb.x_new.size(0), model.net()->out_dim()}, pb.dev.options());
  }
  void save(NetModel& model, const torch::Tensor&) {
    torch::NoGradGuard ng;
    const NetChainProblem& pb = model.problem();
    auto& gs = model.groups();
    for (std::size_t g = 0; g < gs.size(); ++g) psum_[g].add_(gs[g].value);
    const std::size_t stride = std::max<std::size_t>(1, out_.keep_stride);
    const bool store = saved_ % stride == 0;
    const std::size_t slot = saved_ / stride;
    if (pred_sum_.defined()) {
      const torch::Tensor p = predict(model.net(), pb.spec.family, pb.x_new);
      pred_sum_.add_(p);
      if (out_.pred_draws && store) copy_host(p, out_.pred_draws + slot * static_cast<std::size_t>(p.numel()));
    }
    if (store) out_.put(model.net(), slot);
    ++saved_;
  }
  void trace(NetModel& model, long k, const torch::Tensor& sigma, double eps, double tau, const sgmcmc::StepStats& st) {
    double local[NT_NCOL];
    double* row = out_.trace ? out_.trace + traced_ * NT_NCOL : local;
    double dsum = 0.0, rsum = 0.0, nrho = 0.0, nzero = 0.0;
    int nd = 0;
    for (auto& g : model.groups()) {
      if (!g.sparse || g.value.numel() == 0) continue;
      dsum += g.delta.item<double>();
      ++nd;
      rsum += g.rho.sum().item<double>();
      nrho += static_cast<double>(g.value.numel());
      nzero += (g.value == 0).sum().item<double>();
    }
    row[NT_ITER] = static_cast<double>(k);
    row[NT_SIGMA] = sigma.item<double>();
    row[NT_DELTA] = nd ? dsum / nd : NAN;
    row[NT_MEANRHO] = nrho > 0 ? rsum / nrho : NAN;
    model.take_means(&row[NT_LOSS], &row[NT_ACCURACY]);
    last_loss_ = row[NT_LOSS];
    row[NT_EPS] = eps;
    row[NT_TAU] = tau;
    row[NT_DRIFT] = st.drift_ratio;
    row[NT_NOISE] = st.noise_ratio;
    row[NT_GAMMA] = st.gamma;
    row[NT_SPARSITY] = nrho > 0 ? nzero / nrho : NAN;
    if (out_.status) {
      out_.status->loss.store(row[NT_LOSS]);
      out_.status->accuracy.store(row[NT_ACCURACY]);
      out_.status->sparsity.store(row[NT_SPARSITY]);
      out_.status->iteration.store(k);
    }
    if (out_.trace) ++traced_;
  }
  double last_loss() const { return last_loss_; }  // the divergence loss rule (sgmcmc/chain.hpp)
  void finish(NetModel& model, const torch::Tensor& sigma, const sgmcmc::ChainStatus& st) {
    torch::NoGradGuard ng;
    auto& gs = model.groups();
    if (out_.param_final) model.net()->copy_to(out_.param_final);
    if (out_.buffer_final && B_ > 0) model.net()->copy_buffers_to(out_.buffer_final);
    double* pm = out_.param_mean;
    double* rho = out_.rho;
    for (std::size_t g = 0; g < gs.size(); ++g) {
      const std::size_t m = static_cast<std::size_t>(gs[g].value.numel());
      if (pm) {
        if (saved_ > 0) copy_host(psum_[g] / static_cast<double>(saved_), pm);
        else std::fill(pm, pm + m, NAN);
        pm += m;
      }
      if (rho) {
        if (gs[g].sparse && gs[g].rho.defined()) copy_host(gs[g].rho, rho);
        else std::fill(rho, rho + m, NAN);
        rho += m;
      }
      if (out_.delta) out_.delta[g] = gs[g].sparse && gs[g].delta.defined() ? gs[g].delta.item<double>() : NAN;
    }
    if (out_.pred_mean && pred_sum_.defined()) {
      if (saved_ > 0) copy_host(pred_sum_ / static_cast<double>(saved_), out_.pred_mean);
      else std::fill(out_.pred_mean, out_.pred_mean + pred_sum_.numel(), NAN);
    }
    if (out_.scalars) {
      out_.scalars[0] = sigma.item<double>();
      out_.scalars[1] = static_cast<double>(saved_);
      out_.scalars[2] = static_cast<double>(traced_);
      out_.scalars[3] = static_cast<double>(st.iterations_done);
      out_.scalars[4] = st.diverged ? 1.0 : 0.0;
      out_.scalars[5] = static_cast<double>(st.diverged_at);
    }
  }

 private:
  static void copy_host(const torch::Tensor& t, double* out) {
    const torch::Tensor c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), out);
  }
  NetChainOutput out_;
  std::size_t B_ = 0, saved_ = 0, traced_ = 0;
  double last_loss_ = NAN;
  std::vector<torch::Tensor> psum_;
  torch::Tensor pred_sum_;
};

// Runs ctl.chains chains of the network problem; outputs[c] receives chain c. Chain c uses stream
// (seed, chain_offset + c). On a GPU the chains run one after another.
inline parallel::RunStatus run_net_sgmcmc(const NetChainProblem& pb, const sgmcmc::Control& ctl,
                                          const parallel::RunSettings& run, const std::vector<NetChainOutput>& outputs,
                                          std::vector<sgmcmc::ChainStatus>& status,
                                          const parallel::Monitor& monitor = parallel::Monitor()) {
  ctl.validate();
  if (static_cast<int>(outputs.size()) != ctl.chains) throw std::invalid_argument("one output per chain");
  // every minibatch has min(batch_size, N) examples: a batch-norm layer that sees one value per channel cannot
  // train on one (R refuses batch_size = 1 first; this is the engine's own guard)
  if (std::min<long>(ctl.batch_size, static_cast<long>(pb.data->n())) < 2 && plan(pb.spec).needs_two_examples())
    throw std::invalid_argument("batch_size must be at least 2 for a network with batch norm (one example per minibatch)");
  status.assign(static_cast<std::size_t>(ctl.chains), sgmcmc::ChainStatus());
  const int threads = device_worker_threads(pb.dev.device, run.threads);  // one chain at a time on a GPU
  auto chain = [&](std::size_t c, std::atomic<long>& progress, const parallel::StopToken& stop) {
    set_worker_threads(pb.torch_threads);
    torch::NoGradGuard ng;  // the rules update parameters in place; NetModel::minibatch turns autograd on
    const std::uint64_t id = static_cast<std::uint64_t>(ctl.chain_offset + static_cast<long>(c));
    rng::Stream rs(run.seed, id), init(run.seed, id, 1);
    NetModel model(pb, ctl, init);
    if (pb.init_params) model.start_from(pb.init_params + c * model.n_parameters());
    NetRecorder rec(model, outputs[c]);
    status[c] = sgmcmc::run_chain(model, rec, ctl, rs, progress, stop);
  };
  return sgmcmc::run_chains(ctl.chains, threads, chain, monitor);
}

}  // namespace nn
}  // namespace scalebayes
