// scalebayes/nn/batched_sgmcmc.hpp -- SG-MCMC chains of one network trained as ONE batched network.
//
// The unbatched engine (nn/sgmcmc.hpp over sgmcmc/chain.hpp) runs one network per chain and thread; for the small
// MLPs of nn_mlp() an iteration is a few hundred tiny tensor operations, and their overhead, not arithmetic, is
// the cost. Here G chains ("members") of one MLP share one BatchedNet (nn/batched.hpp: weights [G, in, out],
// biases [G, 1, out], baddbmm, hand-written backward), and the update rules are those of sgmcmc/updates.hpp and
// the step policies of sgmcmc/steps.hpp, unchanged, over a batched storage policy (BatchedTorchOps): an Array is
// a group's [G, ...] tensor, a Scalar a [G, 1, 1] tensor (one sigma, delta, SGNHT thermostat ... per member) and
// every reduction (sum, dot) is per member. So SGLD, SGHMC, SGNHT, HAMCMC-SA and HAMCMC (sgmcmc/lbfgs.hpp: each
// member's L-BFGS memory, damping and preconditioner are per-member slices and Scalars; its second gradient is
// BatchedChainGroup::gradient(false)) with the SSGL prior, SA / EM / none latent updates and magnitude pruning
// (a k-th value per member) run for every member at once with exactly the formulas of one chain.
//
// Same seed, same draws. Member m of a group is chain c = chain_offset + first + m and uses only what chain c
// uses unbatched: the stream rng::Stream(seed, c) for its minibatches (the partial Fisher-Yates of chain.hpp on
// its own persistent permutation), the substream (seed, c, 1) for its initial parameters (Net::init_from's
// draws) and the seed of its own noise generator, which draws the Langevin / momentum noise of every group in the
// unbatched shape and order ([out, in] for a weight -- [out, in x kernel] for a convolution's --, transposed into
// the batched layout). A member's chain is
// therefore a function of (seed, c) whatever its group or thread; it equals the unbatched chain up to
// floating-point rounding (other matrix-product kernels and reduction orders: tests/testthat/
// test-nn-batched-sgmcmc.R states the tolerance).
//
// The chain itself is sgmcmc::run_chain_members (sgmcmc/chain.hpp), the one chain driver: BatchedChainGroup is its
// Model (the members' storage, the hand-written backward, retirement of a member) and its Recorder; every rule of
// an iteration -- minibatches, SA, the step, the divergence check and the loss rule (loss_factor, loss_floor,
// loss_start, loss_after, with each member's own lowest traced loss), progress and stop requests at the report
// points (report_every and the timed report_ms) -- is the driver's, applied member by member. A member that
// diverges stops alone: its outputs are written at that moment and its slice is neutralized (retire() and
// hold_retired(): parameters, momenta and gradients held at 0, its likelihood gradient masked, no noise drawn)
// while the others go on. Outputs are NetChainOutput slots in the format of NetRecorder (trace rows, running
// means, stored draws, final state, rho, delta, scalars), so R decodes them unchanged. A stop request stops
// every member of the group (their outputs are written, as run_chain's are).
//
// Supported (batched_sgmcmc_support()): specs with a batched form (nn::batch_support: linear layers,
// convolutions, pooling, reshape and activations) and every sampler but HAMCMC-SA's dense sa_form = "matrix" (regression only). The other layers
// run unbatched (run_net_sgmcmc); the R front end falls back automatically (batch = "auto") and refuses
// batch = TRUE with a classed error.
// Header-only, R-free, C++17. Design: inst/design-nn-batched.md ("SG-MCMC chains").
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "scalebayes/nn/batched.hpp"
#include "scalebayes/nn/sgmcmc.hpp"

namespace scalebayes {
namespace nn {

// sigmoid_any_group(): nn/predict.hpp (the batched predictions' link).

// The noise source of a batched group: one generator per member (seeded as the unbatched chain's) and which
// members still run (a stopped member draws nothing more).
struct MemberGenerators {
  std::vector<at::Generator> gens;
  std::vector<char> active;
};

// The storage policy of sgmcmc/storage.hpp for G members at once: Arrays are [G, a, b] tensors (BatchedNet's
// group layout), Scalars [G, 1, 1]; sums and dot products reduce each member's slice. The elementwise members are
// TorchOps' own (nn/sgmcmc.hpp), taken by name; what reads a number back or ranks a whole tensor (value,
// all_finite, prune_smallest) is not, so the private base keeps it out of reach.
struct BatchedTorchOps : private TorchOps {
  using Array = torch::Tensor;
  using Scalar = torch::Tensor;
  using Index = std::int64_t;
  using Rng = MemberGenerators;
  using TorchOps::assign;
  using TorchOps::axpy;
  using TorchOps::clamp;
  using TorchOps::sqrt;
  using TorchOps::ssgl_prior_grad;
  using TorchOps::where;
  using TorchOps::zero_scalar;
  using TorchOps::zeros_like;

  static Index size(const Array& a) { return a.defined() && a.dim() > 0 && a.size(0) > 0 ? a.numel() / a.size(0) : 0; }  // per member
  // One number per member to the host, and back ([G, 1, 1], like's dtype and device; like + v).
  static std::vector<double> values(const Scalar& v) {
    const torch::Tensor h = v.reshape({-1}).to(torch::kCPU, torch::kDouble).contiguous();
    return std::vector<double>(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
  }
  static Scalar from_values(const std::vector<double>& v, const Scalar& like) {
    const torch::Tensor h = torch::tensor(v, torch::TensorOptions().dtype(torch::kDouble));
    return like + h.view({-1, 1, 1}).to(like.options());
  }
  // TorchOps::prune_smallest member by member: zero the floor(s p) smallest |x_j| of each member's slice (p its
  // entries; ties at the threshold included). The k-th value of a member's entries is the k-th value of the
  // unbatched chain's tensor (the same numbers, transposed), so a member is pruned exactly as its chain is.
  static void prune_smallest(Array& x, double s) {
    const std::int64_t p = size(x);
    const std::int64_t k = static_cast<std::int64_t>(std::floor(s * static_cast<double>(p)));
    if (k < 1) return;
    const torch::Tensor a = x.abs();
    const torch::Tensor thr = std::get<0>(a.reshape({x.size(0), p}).kthvalue(std::min<std::int64_t>(k, p), 1));
    x.masked_fill_(a <= thr.view({x.size(0), 1, 1}), 0.0);
  }
  static Scalar sum(const Array& a) { return a.sum({1, 2}, true); }
  static Scalar dot(const Array& a, const Array& b) { return (a * b).sum({1, 2}, true); }
  static Scalar abs_sum_weighted(const Array& w, const Array& x) { return (w * x.abs()).sum({1, 2}, true); }
  static Scalar sq_sum_weighted(const Array& w, const Array& x) { return (w * x.square()).sum({1, 2}, true); }
  // Member m's noise: its generator's standard normals in the unbatched shape [b, a] (Net's [out, in]; a bias
  // [1, out] draws [out, 1], the same numbers as [out]), transposed into the batched [a, b].
  static void add_gaussian(Array& x, double sd, Rng& r) {
    if (sd == 0.0 || x.numel() == 0) return;
    const std::int64_t G = x.size(0);
    bool all = true;
    for (std::int64_t m = 0; m < G; ++m) all = all && r.active[static_cast<std::size_t>(m)];
    torch::Tensor noise = all ? torch::empty({G, x.size(2), x.size(1)}, x.options())
                              : torch::zeros({G, x.size(2), x.size(1)}, x.options());
    for (std::int64_t m = 0; m < G; ++m) {
      if (!r.active[static_cast<std::size_t>(m)]) continue;
      torch::Tensor dst = noise.select(0, m);  // contiguous: normal_ fills it as randn fills a fresh tensor
      at::Generator& gen = r.gens[static_cast<std::size_t>(m)];
      if (gen.device() == x.device()) dst.normal_(0.0, 1.0, gen);
      else dst.copy_(noise_normal(gen, {x.size(2), x.size(1)}, x.options()));
    }
    x.add_(noise.transpose(1, 2), sd);
  }
  static Array inclusion_prob(const Array& x, const Scalar& sigma, const Scalar& delta, double v0, double v1) {
    return sigmoid_any_group(TorchOps::inclusion_logit(x, sigma, delta, v0, v1));
  }
};

using BatchedGroup = sgmcmc::Group<BatchedTorchOps>;

// Whether chains of `spec` with settings `ctl` can run batched, and if not, why (one sentence).
inline BatchSupport batched_sgmcmc_support(const ModelSpec& spec, const sgmcmc::Control& ctl) {
  BatchSupport r = batch_support(spec);
  if (!r.ok) return r;
  if (!sgmcmc::sampler_info(ctl.sampler).batched) {
    r.ok = false;
    r.reason = std::string("the sampler \"") + sgmcmc::sampler_name(ctl.sampler) + "\" has no batched form (batched: " +
               sgmcmc::sampler_names([](const sgmcmc::SamplerInfo& i) { return i.batched; }) + ")";
  } else if (ctl.sampler == sgmcmc::Sampler::hamcmc_sa && ctl.lbfgs.sa_form == sgmcmc::SaForm::matrix) {
    r.ok = false;
    r.reason = "sa_form = \"matrix\" is a dense matrix per chain (batched: \"diagonal\" and \"lowrank\")";
  }
  return r;
}

// The decision for `ctl.chains` chains of `spec` (decide_batch(), nn/batched.hpp: "auto" runs one chain as one
// network).
inline BatchDecision decide_sgmcmc_batch(const BatchChoice& c, const ModelSpec& spec, const sgmcmc::Control& ctl) {
  return decide_batch(c, batched_sgmcmc_support(spec, ctl), "These chains cannot run batched", "chain",
                      ctl.chains == 1);
}

// One group of chains (local indices first .. first + G - 1 of the call) run as one batched network: the Model
// (member storage) and the Recorder (NetRecorder's outputs, member by member) of the one chain driver,
// sgmcmc::run_chain_members (sgmcmc/chain.hpp), which runs every rule of the chain for all members at once.
class BatchedChainGroup {
 public:
  using Ops = BatchedTorchOps;
  BatchedChainGroup(const NetChainProblem& pb, const sgmcmc::Control& ctl, const parallel::RunSettings& run,
                    const std::vector<NetChainOutput>& outs, std::vector<sgmcmc::ChainStatus>& status)
      : pb_(pb), ctl_(ctl), run_(run), outs_(outs), status_(status) {}

  void run(std::size_t first, std::int64_t count, std::atomic<long>& progress, const parallel::StopToken& stop) {
    torch::NoGradGuard ng;
    // A group of one chain runs as two members, the second a neutral placeholder (never active, no output):
    // torch reduces a [1, ...] tensor by another kernel path than a [G > 1, ...] one (a full reduction), which
    // changed the last bit of a sum (measured: the traced delta of a chain 7e-18 apart between groups of 1 and
    // 4), while groups of 2, 3, 4 and 6 agreed bitwise.
    const std::int64_t G = std::max<std::int64_t>(count, 2);
    const Dataset& d = *pb_.data;
    const long N = static_cast<long>(d.n());
    const long n = std::min<long>(ctl_.batch_size, N);
    BatchedNet net(pb_.spec, G, pb_.dev.device, pb_.dev.dtype);
    net_ = &net;
    first_ = first;
    G_ = G;
    opts_ = net.options();
    // 1. per member: streams, initial parameters, noise generator (NetModel's order)
    std::vector<rng::Stream> rs;
    rs.reserve(static_cast<std::size_t>(G));
    rng_.gens.clear();
    rng_.active.assign(static_cast<std::size_t>(G), 0);
    for (std::int64_t m = 0; m < G; ++m) {
      if (m >= count) {  // the placeholder: parameters 0, never drawn for
        rs.emplace_back(run_.seed, 0);
        rng_.gens.push_back(noise_generator(pb_.dev.device));
        continue;
      }
      rng_.active[static_cast<std::size_t>(m)] = 1;
      const std::uint64_t id = static_cast<std::uint64_t>(ctl_.chain_offset + static_cast<long>(first + m));
      rs.emplace_back(run_.seed, id);
      rng::Stream init(run_.seed, id, 1);
      net.init_member(m, init);
      at::Generator gen = noise_generator(pb_.dev.device);
      gen.set_current_seed(init.next());
      rng_.gens.push_back(gen);
      if (pb_.init_params) set_member(m, pb_.init_params + (first + static_cast<std::size_t>(m)) * static_cast<std::size_t>(net.n_parameters()));
    }
    auto& ng_ = net.groups();
    groups_.clear();
    for (auto& pg : ng_) {
      BatchedGroup g;
      g.value = pg.t;  // alias: the rules update the batched network in place
      g.grad = torch::zeros_like(g.value);
      g.momentum = torch::zeros_like(g.value);
      g.sparse = pg.def.penalized;
      g.prior_var = ctl_.prior_var;
      groups_.push_back(g);
    }
    n_active_ = count;
    saved_.assign(static_cast<std::size_t>(G), 0);
    traced_.assign(static_cast<std::size_t>(G), 0);
    last_loss_.assign(static_cast<std::size_t>(G), NAN);
    psum_.clear();
    for (auto& g : groups_) psum_.push_back(torch::zeros_like(g.value));
    if (pb_.x_new.defined()) pred_sum_ = torch::zeros({G, pb_.x_new.size(0), net.out_dim()}, opts_);
    loss_sum_ = torch::zeros({G}, opts_);
    correct_sum_ = torch::zeros({G}, torch::TensorOptions().dtype(torch::kDouble).device(pb_.dev.device));
    loss_count_ = acc_count_ = 0;
    mask_ = torch::ones({G, 1}, opts_);
    set_off();
    batch_.assign(static_cast<std::size_t>(G * n), 0);
    xshape_ = {G, n};
    yshape_ = {G, n};
    for (std::int64_t k = 1; k < d.x.dim(); ++k) xshape_.push_back(d.x.size(k));
    if (d.y.dim() == 2) yshape_.push_back(d.y.size(1));
    scale_ = static_cast<double>(N) / static_cast<double>(n);

    // 2. the chain driver of sgmcmc/chain.hpp over every member
    const std::vector<sgmcmc::ChainStatus> st = sgmcmc::with_step_policy(ctl_, [&](auto& policy) {
      return sgmcmc::run_chain_members(*this, *this, ctl_, policy, rs.data(), progress, stop);
    });
    for (std::int64_t m = 0; m < count; ++m) status_[first_ + static_cast<std::size_t>(m)] = st[static_cast<std::size_t>(m)];
  }

  // The Model of run_chain_members (sgmcmc/chain.hpp): the members' storage.
  std::vector<BatchedGroup>& groups() { return groups_; }
  long members() const { return static_cast<long>(G_); }
  const std::vector<char>& active() const { return rng_.active; }
  long n_obs() const { return static_cast<long>(pb_.data->n()); }
  double lik_terms() const { return static_cast<double>(pb_.data->y.numel()); }  // N q (NetModel's)
  bool regression() const { return pb_.spec.family == Family::gaussian; }
  MemberGenerators& noise_rng() { return rng_; }
  torch::Tensor scalar(double v) const { return torch::full({G_, 1, 1}, v, opts_); }
  // Every member's minibatch idx[m][0..n) in one [G n] index (a placeholder's: its first n examples).
  void minibatch(const std::vector<std::vector<long>>& idx, long n, bool) {
    for (std::int64_t m = 0; m < G_; ++m)
      std::copy(idx[static_cast<std::size_t>(m)].begin(), idx[static_cast<std::size_t>(m)].begin() + n, batch_.begin() + m * n);
    static_assert(sizeof(long) == sizeof(std::int64_t), "minibatch indices are 64-bit");
    const torch::Tensor flat = torch::from_blob(batch_.data(), {G_ * n}, torch::TensorOptions().dtype(torch::kLong)).to(pb_.dev.device);
    const Dataset& d = *pb_.data;
    xb_ = d.x.index_select(0, flat).view(xshape_);
    yb_ = d.y.index_select(0, flat).view(yshape_);
    wb_ = pb_.weights.defined() ? pb_.weights.index_select(0, flat).view({G_, n}) : torch::Tensor();
    gradient(true);
  }
  // a step policy's second gradient (HAMCMC-SA, HAMCMC): same minibatches, current values, nothing recorded
  void gradient(const std::vector<std::vector<long>>&, long) { gradient(false); }
  // (N/n) sum_B r_i^2 = 2 (N/n) sum_B l_i per member
  torch::Tensor resid_ss() const { return last_lsum_.view({G_, 1, 1}) * (2.0 * scale_); }
  // A stopped member: no more noise and a masked likelihood gradient (hold_retired holds its state at 0).
  void retire(std::size_t m) {
    if (!rng_.active[m]) return;
    rng_.active[m] = 0;
    --n_active_;
    set_off();
  }
  void hold_retired(torch::Tensor& sigma) { hold_neutral(sigma); }
  // The divergence check and the last checked state over the ONE flat parameter buffer (one isfinite, one
  // per-member count, one copy per check point instead of a few per group); member_of: each entry's member.
  class FlatCheckpoint {
   public:
    explicit FlatCheckpoint(BatchedChainGroup& g) : grp_(g) {
      BatchedNet& net = *g.net_;
      flat_ = net.parameters()[0].detach();
      member_of_ = torch::zeros({flat_.numel()}, torch::TensorOptions().dtype(torch::kLong));
      for (auto& v : net.views(member_of_))
        v.copy_(torch::arange(g.G_, torch::kLong).view({g.G_, 1, 1}).expand(v.sizes()));
      member_of_ = member_of_.to(g.pb_.dev.device);
      snap_ = flat_.clone();
      snap_views_ = net.views(snap_);
    }
    bool check(const torch::Tensor& sigma, std::vector<char>& ok) const {
      const std::int64_t G = grp_.G_;
      torch::Tensor nonfinite = torch::zeros({G}, grp_.opts_).index_add_(0, member_of_, torch::isfinite(flat_).logical_not().to(grp_.opts_.dtype()));
      torch::Tensor good = (torch::isfinite(sigma) & (sigma > 0)).reshape({G}) & nonfinite.eq(0);
      good = good.to(torch::kCPU).contiguous();
      const bool* p = good.data_ptr<bool>();
      bool all = true;
      for (std::int64_t m = 0; m < G; ++m) {
        ok[static_cast<std::size_t>(m)] = p[m];
        all = all && (p[m] || !grp_.rng_.active[static_cast<std::size_t>(m)]);
      }
      return all;
    }
    void restore(std::size_t m) {
      for (std::size_t g = 0; g < grp_.groups_.size(); ++g)
        grp_.groups_[g].value.select(0, static_cast<std::int64_t>(m)).copy_(snap_views_[g].select(0, static_cast<std::int64_t>(m)));
    }
    void save() { snap_.copy_(flat_); }

   private:
    BatchedChainGroup& grp_;
    torch::Tensor flat_, member_of_, snap_;
    std::vector<torch::Tensor> snap_views_;
  };
  FlatCheckpoint checkpoint() { return FlatCheckpoint(*this); }

  // The Recorder of run_chain_members: NetRecorder's outputs (nn/sgmcmc.hpp) for every running member.
  void save(BatchedChainGroup&, const torch::Tensor& sigma) { record(sigma); }
  void trace(BatchedChainGroup&, long k, const torch::Tensor& sigma, double eps, double tau,
             const sgmcmc::StepStats& stats) {
    trace_rows(k, sigma, eps, tau, stats);
  }
  double last_loss(std::size_t m) const { return last_loss_[m]; }  // the divergence loss rule
  void finish(BatchedChainGroup&, const torch::Tensor& sigma, const sgmcmc::ChainStatus& st, std::size_t m) {
    finish(static_cast<std::int64_t>(m), sigma, st);
  }

 private:

  // Member m's parameters from a block in Net::copy_to order.
  void set_member(std::int64_t m, const double* p) {
    for (auto& g : net_->groups()) {
      const std::int64_t k = g.def.numel();
      torch::Tensor src = torch::from_blob(const_cast<double*>(p), g.def.shape, torch::kDouble);
      g.t.select(0, m).copy_(BatchedNet::member_layout(g, src));
      p += k;
    }
  }

  // The gradients of the current minibatches at the current values; `record`: the first pass of an iteration
  // (its loss and accuracy enter the trace, its summed loss the SA), not a step policy's second gradient.
  void gradient(bool record) {
    const std::int64_t G = G_, n = xb_.size(1);
    torch::Tensor out = net_->forward(xb_, false, true);
    torch::Tensor losses = member_losses(pb_.spec.family, out, yb_);  // [G, n]
    torch::Tensor coef = mask_.expand({G, n});
    if (wb_.defined()) {
      torch::Tensor wb = wb_.to(losses.dtype());
      losses = wb * losses;
      coef = coef * wb;
    }
    net_->backward(loss_gradient(pb_.spec.family, out, yb_, coef), false);
    auto& ng = net_->groups();
    for (std::size_t g = 0; g < groups_.size(); ++g) groups_[g].grad = ng[g].g * (-scale_);
    if (!record) return;
    last_lsum_ = losses.sum(1);  // [G]
    loss_sum_.add_(last_lsum_);
    loss_count_ += n;
    if (pb_.spec.family != Family::gaussian) {
      torch::Tensor c;
      if (pb_.spec.family == Family::multinomial) c = out.argmax(2).eq(yb_).sum(1);
      else if (yb_.dim() == 3) c = out.gt(0).to(yb_.dtype()).eq(yb_).sum({1, 2});
      else c = out.select(2, 0).gt(0).to(yb_.dtype()).eq(yb_).sum(1);
      correct_sum_.add_(c.to(torch::kDouble));
      acc_count_ += static_cast<long>(yb_.numel() / G);
    }
  }

  // member_loss_gradient (nn/batched.hpp) with the binomial sigmoid of any grouping (sigmoid_any_group).
  static torch::Tensor loss_gradient(Family f, const torch::Tensor& out, const torch::Tensor& y,
                                     const torch::Tensor& coef) {
    if (f != Family::binomial) return member_loss_gradient(f, out, y, coef);
    torch::Tensor d = sigmoid_any_group(out) - (y.dim() == 3 ? y : y.unsqueeze(2));
    return d.mul_(coef.unsqueeze(2));
  }

  // Response-scale predictions of every member on x_new ([G, n_new, q], the network's dtype).
  torch::Tensor predict_all() { return net_->predict(pb_.spec.family, pb_.x_new); }

  // Member m of per-group [G, ...] tensors in Net::copy_to order, as a CPU tensor of kind.
  torch::Tensor member_flat(const std::vector<torch::Tensor>& arrays, std::int64_t m, torch::Dtype kind) const {
    std::vector<torch::Tensor> parts;
    const auto& ng = net_->groups();
    for (std::size_t g = 0; g < arrays.size(); ++g) {
      torch::Tensor t = arrays[g].select(0, m);
      if (ng[g].weight) t = t.t();
      parts.push_back(t.reshape({-1}));
    }
    return torch::cat(parts).to(torch::kCPU, kind).contiguous();
  }
  static void copy_host(const torch::Tensor& t, double* out) {
    const torch::Tensor c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), out);
  }
  std::vector<torch::Tensor> values() const {
    std::vector<torch::Tensor> v;
    for (const auto& g : groups_) v.push_back(g.value);
    return v;
  }

  // NetRecorder::save for every running member.
  void record(const torch::Tensor&) {
    for (std::size_t g = 0; g < groups_.size(); ++g) psum_[g].add_(groups_[g].value);
    torch::Tensor pred, pars, parsf;
    if (pred_sum_.defined()) {
      pred = predict_all();
      pred_sum_.add_(pred);
    }
    bool any_param = false, any_pred = false;
    for (std::int64_t m = 0; m < G_; ++m) {
      const std::size_t mm = static_cast<std::size_t>(m);
      if (!rng_.active[mm]) continue;
      const NetChainOutput& o = outs_[first_ + mm];
      const std::size_t stride = std::max<std::size_t>(1, o.keep_stride);
      if (saved_[mm] % stride != 0) continue;
      any_param = any_param || o.params || o.params_f;
      any_pred = any_pred || o.pred_draws;
    }
    torch::Tensor pred_host;
    if (any_pred && pred.defined()) pred_host = pred.to(torch::kCPU, torch::kDouble).contiguous();
    const std::size_t P = static_cast<std::size_t>(net_->n_parameters());
    for (std::int64_t m = 0; m < G_; ++m) {
      const std::size_t mm = static_cast<std::size_t>(m);
      if (!rng_.active[mm]) continue;
      const NetChainOutput& o = outs_[first_ + mm];
      const std::size_t stride = std::max<std::size_t>(1, o.keep_stride);
      const bool store = saved_[mm] % stride == 0;
      const std::size_t slot = saved_[mm] / stride;
      if (store && pred_host.defined() && o.pred_draws) {
        const std::size_t k = static_cast<std::size_t>(pred_host.size(1) * pred_host.size(2));
        const double* src = pred_host.data_ptr<double>() + mm * k;
        std::copy(src, src + k, o.pred_draws + slot * k);
      }
      if (store && any_param) {
        if (o.params) {
          if (!pars.defined()) pars = net_->flat_parameters(torch::kDouble);
          const double* src = pars.data_ptr<double>() + mm * P;
          std::copy(src, src + P, o.params + slot * P);
        }
        if (o.params_f) {
          if (!parsf.defined()) parsf = net_->flat_parameters(torch::kFloat);
          const float* src = parsf.data_ptr<float>() + mm * P;
          std::copy(src, src + P, o.params_f + slot * P);
        }
      }
      ++saved_[mm];
    }
  }

  // NetRecorder::trace for every running member (one host read); returns each member's traced loss.
  std::vector<double> trace_rows(long k, const torch::Tensor& sigma, double eps, double tau,
                                 const sgmcmc::StepStats& st) {
    std::vector<torch::Tensor> cols{sigma.reshape({G_}).to(torch::kDouble)};
    int nd = 0;
    double nrho = 0.0;
    torch::Tensor dsum, rsum, nzero;
    for (auto& g : groups_) {
      if (!g.sparse || BatchedTorchOps::size(g.value) == 0) continue;
      torch::Tensor dl = g.delta.reshape({G_}).to(torch::kDouble);
      torch::Tensor rs = g.rho.sum({1, 2}).to(torch::kDouble);
      torch::Tensor nz = (g.value == 0).sum({1, 2}).to(torch::kDouble);
      dsum = dsum.defined() ? dsum + dl : dl;
      rsum = rsum.defined() ? rsum + rs : rs;
      nzero = nzero.defined() ? nzero + nz : nz;
      ++nd;
      nrho += static_cast<double>(BatchedTorchOps::size(g.value));
    }
    cols.push_back(loss_sum_.to(torch::kDouble));
    cols.push_back(correct_sum_);
    if (nd) {
      cols.push_back(dsum);
      cols.push_back(rsum);
      cols.push_back(nzero);
    }
    torch::Tensor h = torch::stack(cols).to(torch::kCPU).contiguous();
    const double* p = h.data_ptr<double>();
    const double lc = static_cast<double>(loss_count_);
    std::vector<double> L(static_cast<std::size_t>(G_), NAN);
    for (std::int64_t m = 0; m < G_; ++m) {
      const std::size_t mm = static_cast<std::size_t>(m);
      if (!rng_.active[mm]) continue;
      const NetChainOutput& o = outs_[first_ + mm];
      double local[NT_NCOL];
      double* row = o.trace ? o.trace + traced_[mm] * NT_NCOL : local;
      row[NT_ITER] = static_cast<double>(k);
      row[NT_SIGMA] = p[m];
      row[NT_DELTA] = nd ? p[3 * G_ + m] / nd : NAN;
      row[NT_MEANRHO] = nrho > 0 ? p[4 * G_ + m] / nrho : NAN;
      row[NT_LOSS] = loss_count_ > 0 ? p[G_ + m] / lc : NAN;
      row[NT_ACCURACY] = acc_count_ > 0 && pb_.spec.family != Family::gaussian
                             ? p[2 * G_ + m] / static_cast<double>(acc_count_)
                             : NAN;
      row[NT_EPS] = eps;
      row[NT_TAU] = tau;
      const bool per_member = st.member_gamma.size() == static_cast<std::size_t>(G_);
      row[NT_DRIFT] = per_member ? st.member_drift[mm] : st.drift_ratio;
      row[NT_NOISE] = per_member ? st.member_noise[mm] : st.noise_ratio;
      row[NT_GAMMA] = per_member ? st.member_gamma[mm] : st.gamma;
      row[NT_SPARSITY] = nrho > 0 ? p[5 * G_ + m] / nrho : NAN;
      L[mm] = row[NT_LOSS];
      last_loss_[mm] = row[NT_LOSS];
      if (o.status) {
        o.status->loss.store(row[NT_LOSS]);
        o.status->accuracy.store(row[NT_ACCURACY]);
        o.status->sparsity.store(row[NT_SPARSITY]);
        o.status->iteration.store(k);
      }
      if (o.trace) ++traced_[mm];
    }
    loss_sum_.zero_();
    correct_sum_.zero_();
    loss_count_ = 0;
    acc_count_ = 0;
    return L;
  }

  // NetRecorder::finish for member m.
  void finish(std::int64_t m, const torch::Tensor& sigma, const sgmcmc::ChainStatus& st) {
    const std::size_t mm = static_cast<std::size_t>(m);
    const NetChainOutput& o = outs_[first_ + mm];
    if (o.param_final) copy_host(member_flat(values(), m, torch::kDouble), o.param_final);
    const auto& ng = net_->groups();
    double* pm = o.param_mean;
    double* rho = o.rho;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const std::size_t k = static_cast<std::size_t>(BatchedTorchOps::size(groups_[g].value));
      auto slice = [&](const torch::Tensor& t) {
        torch::Tensor s = t.select(0, m);
        return ng[g].weight ? s.t() : s;
      };
      if (pm) {
        if (saved_[mm] > 0) copy_host(slice(psum_[g]) / static_cast<double>(saved_[mm]), pm);
        else std::fill(pm, pm + k, NAN);
        pm += k;
      }
      if (rho) {
        if (groups_[g].sparse && groups_[g].rho.defined()) copy_host(slice(groups_[g].rho), rho);
        else std::fill(rho, rho + k, NAN);
        rho += k;
      }
      if (o.delta)
        o.delta[g] = groups_[g].sparse && groups_[g].delta.defined()
                         ? groups_[g].delta.select(0, m).to(torch::kCPU, torch::kDouble).item<double>()
                         : NAN;
    }
    if (o.pred_mean && pred_sum_.defined()) {
      if (saved_[mm] > 0) copy_host(pred_sum_.select(0, m) / static_cast<double>(saved_[mm]), o.pred_mean);
      else std::fill(o.pred_mean, o.pred_mean + pred_sum_.select(0, m).numel(), NAN);
    }
    if (o.scalars) {
      o.scalars[0] = sigma.select(0, m).to(torch::kCPU, torch::kDouble).item<double>();
      o.scalars[1] = static_cast<double>(saved_[mm]);
      o.scalars[2] = static_cast<double>(traced_[mm]);
      o.scalars[3] = static_cast<double>(st.iterations_done);
      o.scalars[4] = st.diverged ? 1.0 : 0.0;
      o.scalars[5] = static_cast<double>(st.diverged_at);
    }
  }

  // The stopped members (and placeholders): off_, and their likelihood gradients masked.
  void set_off() {
    std::vector<std::int64_t> off;
    for (std::int64_t i = 0; i < G_; ++i)
      if (!rng_.active[static_cast<std::size_t>(i)]) {
        off.push_back(i);
        mask_.select(0, i).zero_();
      }
    off_ = torch::tensor(off, torch::TensorOptions().dtype(torch::kLong)).to(pb_.dev.device);
  }
  // Every stopped member's slice back to a finite neutral state (parameters, momenta, gradients 0; sigma 1;
  // latents at their start): whatever a step did to it, it cannot turn non-finite and never touches the others.
  void hold_neutral(torch::Tensor& sigma) {
    for (auto& g : groups_) {
      g.value.index_fill_(0, off_, 0.0);
      g.momentum.index_fill_(0, off_, 0.0);
      if (g.grad.defined()) g.grad.index_fill_(0, off_, 0.0);
      if (g.sparse && g.rho.defined()) {
        g.rho.index_fill_(0, off_, ctl_.rho_init);
        g.kappa0.index_fill_(0, off_, 0.0);
        g.kappa1.index_fill_(0, off_, 0.0);
        g.delta.index_fill_(0, off_, ctl_.delta_init);
      }
    }
    sigma.index_fill_(0, off_, 1.0);
  }

  const NetChainProblem& pb_;
  const sgmcmc::Control& ctl_;
  const parallel::RunSettings& run_;
  const std::vector<NetChainOutput>& outs_;
  std::vector<sgmcmc::ChainStatus>& status_;
  BatchedNet* net_ = nullptr;
  torch::TensorOptions opts_;
  std::size_t first_ = 0;
  std::int64_t G_ = 0, n_active_ = 0;
  MemberGenerators rng_;
  std::vector<BatchedGroup> groups_;
  std::vector<std::size_t> saved_, traced_;
  std::vector<double> last_loss_;
  std::vector<torch::Tensor> psum_;
  torch::Tensor pred_sum_, loss_sum_, correct_sum_, last_lsum_, mask_, off_;
  torch::Tensor xb_, yb_, wb_;  // the current minibatches ([G, n, ...]) and their example weights
  std::vector<std::int64_t> batch_, xshape_, yshape_;  // their indices ([G n]) and shapes
  double scale_ = 1.0;          // N / n
  long loss_count_ = 0, acc_count_ = 0;
};

// The cache cap of a group of chains: 4 times the WBB draws' (kBatchGroupParams), whose Adam makes eight passes
// over a group's buffers per step where a sampler makes two or three. Measured (2026-11-28, 2-core VM, one thread,
// 4 chains x 200 iterations of MNIST's 784-128-64-10 MLP, 109,386 parameters, on 2,000 digits): one network per
// chain 4.6 s (SGLD) / 9.7 s (HAMCMC-SA); groups of 1 (each with its placeholder: the WBB cap's choice) 7.7 / 14.8
// s; groups of 2 4.3 / 7.5 s; one group of 4 (437,544 parameters) 3.4 / 7.1 s (bench/batched.R section 6).
constexpr std::int64_t kBatchedChainParams = 4 * kBatchGroupParams;

// Runs ctl.chains chains of the network problem batched: contiguous groups of group_size chains (0: automatic,
// batched_group_size(): one group per worker thread within the cache cap), run.threads workers, one group per
// worker at a time. The same inputs and outputs as run_net_sgmcmc() (nn/sgmcmc.hpp); chain c uses stream
// (seed, chain_offset + c) in either. The spec and control must be batched_sgmcmc_support()ed.
inline parallel::RunStatus run_net_sgmcmc_batched(const NetChainProblem& pb, const sgmcmc::Control& ctl,
                                                  const parallel::RunSettings& run,
                                                  const std::vector<NetChainOutput>& outputs,
                                                  std::vector<sgmcmc::ChainStatus>& status,
                                                  std::int64_t group_size = 0,
                                                  const parallel::Monitor& monitor = parallel::Monitor()) {
  ctl.validate();
  if (static_cast<int>(outputs.size()) != ctl.chains) throw std::invalid_argument("one output per chain");
  const BatchSupport bs = batched_sgmcmc_support(pb.spec, ctl);
  if (!bs.ok) throw std::invalid_argument("batched SG-MCMC chains: " + bs.reason);
  status.assign(static_cast<std::size_t>(ctl.chains), sgmcmc::ChainStatus());
  const std::size_t chains = static_cast<std::size_t>(ctl.chains);
  const int threads = device_worker_threads(pb.dev.device, run.threads);
  const bool cpu = pb.dev.device.is_cpu();
  const std::int64_t per_member = cpu ? plan(pb.spec).n_params() : 1;
  const std::int64_t acts = cpu ? batched_activations(pb.spec, ctl.batch_size) : 1;
  std::size_t G = batched_group_size(chains, threads, group_size, per_member, kBatchedChainParams, acts);
  // A group of one chain runs as two members (BatchedChainGroup::run: a neutral placeholder), so where the cap
  // gives groups of one, groups of two chains cost no more and halve the groups. A chain does not depend on its
  // group: no draw changes.
  if (group_size <= 0 && G == 1 && chains >= 2) G = 2;
  const std::size_t groups = (chains + G - 1) / G;
  std::atomic<long> progress{0};
  auto body = [&](std::size_t k, int, const parallel::StopToken& stop) {
    set_worker_threads(pb.torch_threads);
    const std::size_t first = k * G;
    const std::int64_t count = static_cast<std::int64_t>(std::min(G, chains - first));
    BatchedChainGroup grp(pb, ctl, run, outputs, status);
    grp.run(first, count, progress, stop);
  };
  parallel::Monitor mon;
  if (monitor) mon = [&](std::size_t) { return monitor(static_cast<std::size_t>(progress.load())); };
  const int nt = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(groups, static_cast<std::size_t>(std::max(1, threads)))));
  return parallel::run_parallel(groups, nt, body, mon);
}

}  // namespace nn
}  // namespace scalebayes
