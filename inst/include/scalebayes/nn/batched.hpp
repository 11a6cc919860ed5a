// scalebayes/nn/batched.hpp -- many WBB draws of one network trained as ONE batched network.
//
// For small networks the cost of a WBB draw is per-operation overhead (a 13-50-50-1 MLP step is ~100 tiny
// tensor operations), not arithmetic. BatchedNet holds G networks ("members") of one architecture as one
// network whose parameters carry a leading member dimension -- a linear layer's weight is [G, in, out] and
// its bias [G, 1, out] -- so one torch::baddbmm computes the layer for every member, and activations are
// elementwise. Each member m minimizes its own WBB objective (nn/objective.hpp)
//     F_m = sum_i w_mi l_i(theta_m) + lambda sum_g w0_mg ||W_mg||^2
// by the minibatch estimate of F_m / n on its own minibatch (the same scale as WbbObjective). The gradient is
// that of the SUM over members (computed by hand, BatchedNet::backward): in member m's slice it is exactly
// member m's gradient, and the optimizers (Adam, SGD with momentum, RMSprop: torch's own, train.hpp's
// make_optimizer, over one flat parameter buffer) are elementwise, so every member takes exactly its own step.
//
// Randomness: member m of a group is WBB draw t = first_draw + i (local index i) and uses only the stream
// rng::Stream(seed, t), in the order of the unbatched draw (nn/wbb.hpp over wbb/driver.hpp): the n data
// weights, the prior weights (both drawn by the WBB driver's group mode, wbb::run_draw_groups(), with the code
// of one draw: the keying is written once), the initial parameters (Net::init_from's draws: group by group, every tensor in
// the row-major order of Net's own [out, in] layout), then one Fisher-Yates permutation per epoch (and, in the
// detached weight modes, the weight permutation after it). So each member has its own minibatch order: the
// minibatch inputs are gathered per member ([G, bs, in], one index_select). A member's result is therefore a
// function of its (seed, t) only, whatever the group it trains in; the batched kernels (bmm per member matrix,
// reductions along a member's own row) make it bitwise equal across group sizes and threads in our tests, and
// equal to the unbatched draw up to floating-point rounding (different matrix-product kernels and layouts).
//
// Training is the one loop of nn/train.hpp (train_members()): a group is its member objective (BatchedWbbGroup:
// the members' storage, their permutations, the minibatch with the gradient by hand, their retirement).
// Per member: divergence (a non-finite last minibatch loss of an epoch, read once per epoch by the loop, or a
// non-finite final certificate) stops that member only: its outputs are written at that moment, then its
// slice is neutralized (parameters, data and prior weights and optimizer state set to 0, so it stays exactly 0
// and costs nothing but arithmetic) while the others go on. grad_tol early stops likewise.
// The stop token is read before every step (all members of a group are then interrupted). Outputs are the
// NetWbbOutput slots of nn/wbb.hpp: predictions, parameters in Net::copy_to order, objective and gradient-norm
// certificate, steps, status, per-epoch history.
//
// Supported (batch_support()): specs whose every layer kind has a batched form -- the kind table says so
// (LayerProps::batched, nn/layers_spec.hpp; the forward and backward live with the kind's torch half,
// nn/net.hpp) -- and draws no random numbers (dropout > 0: masks come from one generator per network in call
// order), any family, weight mode and optimizer. Today: linear, convolution (1d, 2d), pooling (max, average),
// flatten, reshape, relu, tanh, sigmoid, dropout with rate 0; batch norm has none (per-member statistics).
//
// Threads: run_net_wbb_batched() sizes the groups (batched_group_size()) and runs them through the WBB
// driver's group mode (wbb::run_draw_groups(): contiguous groups, one group per worker at a time, one
// BatchedWbbSolver per worker). R-free, header-only.
//
// Use (the device program, a CLI): fill NetWbbProblem, NetWbbOutput and wbb::Settings exactly as for
// run_net_wbb() (nn/wbb.hpp) and call run_net_wbb_batched(pb, out, st) instead; batch_support(spec) says
// first whether the spec has a batched form. Design and measurements: inst/design-nn-batched.md.
#pragma once
#include <torch/torch.h>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/predict.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/nn/wbb.hpp"
#include "scalebayes/wbb/driver.hpp"

namespace scalebayes {
namespace nn {

// Whether a network and training configuration can run batched, and if not, why (one sentence). From the kind
// table alone: every layer's kind must have a batched form (LayerProps::batched, nn/layers_spec.hpp; its torch
// half then defines batched_forward / batched_backward, nn/net.hpp), and no layer may draw random numbers from
// its network's generator (dropout > 0: masks come from one generator per network in call order).
struct BatchSupport {
  bool ok = true;
  std::string reason;
};

inline BatchSupport batch_support(const ModelSpec& spec) {
  BatchSupport r;
  for (const LayerSpec& L : spec.layers) {
    if (!layer_props(L.kind).batched) {
      r.ok = false;
      r.reason = std::string("a ") + layer_name(L.kind) + " layer has no batched form (batched: " +
                 batched_kind_names() + ")";
    } else if (torch_kinds::layer_random(L)) {
      r.ok = false;
      r.reason = std::string("a ") + layer_name(L.kind) +
                 " layer draws random numbers (dropout masks) from one generator per network";
    }
    if (!r.ok) return r;
  }
  return r;
}

// The `batch` argument of wbb_nn() / wbb(model = ) and sgld_sa() / hamcmc_sa() with a network: "auto", on (TRUE:
// the engine's group sizes; a number: that many members per group) or off (FALSE). R checks its type and passes
// it through; decide_batch() below is the one place that resolves it.
struct BatchChoice {
  enum class Mode { automatic, on, off };
  Mode mode = Mode::automatic;
  std::int64_t group = 0;  // on: members per group (0: the engine's sizes, batched_group_size())
};

// Why a run trains one network at a time (none: it runs batched).
enum class Unbatched { none, off, unsupported, one_member, validation };
inline constexpr EnumTable<Unbatched, 5> unbatched_names{
    "unbatched rule",
    {{{"none", Unbatched::none}, {"off", Unbatched::off}, {"unsupported", Unbatched::unsupported},
      {"one_member", Unbatched::one_member}, {"validation", Unbatched::validation}}}};
constexpr const auto& enum_table(Unbatched) { return unbatched_names; }

struct BatchDecision {
  bool batched = false;
  std::int64_t group = 0;   // batched: members per group (0: the engine's sizes)
  bool supported = false;   // the run has a batched form (BatchSupport::ok)
  Unbatched why = Unbatched::none;
  std::string reason;       // why one network at a time, one phrase ("" when batched)
};

// A batch forced on (TRUE or a group size) for a run without a batched form. Its message starts with
// "[arg batch] " (the glue's convention for an argument error: R's sb_call_engine() raises it as a classed
// input error naming the argument) and its second line says what to do.
struct BatchRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The one rule of `batch`, for WBB draws and SG-MCMC chains alike (what: "This network cannot be trained
// batched" / "These chains cannot run batched"; one_network: what a member then is, "thread" / "chain"):
// 1. FALSE: one network per thread.
// 2. No batched form (`support`): "auto" trains one network at a time (the reason recorded), a forced batch is
//    refused (BatchRefused).
// 3. "auto" on one member (`single`: one SG-MCMC chain) runs one network: a batched group of one chain runs as
//    two members (a neutral placeholder keeps the chain bitwise the same as in larger groups,
//    nn/batched_sgmcmc.hpp), so it would do twice the arithmetic -- measured (2026-11-28, one thread,
//    SGHMC-SA, fixed steps) one network against batched 2.7-3.3 / 2.9-3.3 s for the 13-50-50-1 Boston MLP
//    (2,000 iterations), 1.4-1.8 / 2.5-2.7 s for the 784-128-64-10 MLP on 1,000 MNIST digits (300
//    iterations), 1.8-1.9 / 3.4-3.9 s for a small MNIST CNN (200 iterations). A forced batch still batches.
// 4. Held-out validation (`validation`, nn_control(validation = )): the batched networks have no validation
//    hook, so one network per thread, whatever was asked (R says so in a message).
// 5. Otherwise batched: "auto" and TRUE in the engine's group sizes, a number in groups of that many.
// "auto" batches every run with a batched form: bench/RESULTS.md, "Batched WBB draws of networks" and
// "Batched SG-MCMC chains" (8 SGHMC-SA chains of the Boston MLP 4.0-4.2 times as fast batched on one thread; 100
// WBB draws of a 13-50-50-1 MLP 8 times as fast as one network per thread).
inline BatchDecision decide_batch(const BatchChoice& c, const BatchSupport& support, const std::string& what,
                                  const std::string& one_network, bool single = false, bool validation = false) {
  BatchDecision d;
  d.supported = support.ok;
  auto unbatched = [&](Unbatched why, std::string reason) {
    d.batched = false;
    d.group = 0;
    d.why = why;
    d.reason = std::move(reason);
    return d;
  };
  if (c.mode == BatchChoice::Mode::off) return unbatched(Unbatched::off, "batch = FALSE");
  if (!support.ok) {
    if (c.mode == BatchChoice::Mode::automatic) return unbatched(Unbatched::unsupported, support.reason);
    throw BatchRefused("[arg batch] " + what + ": " + support.reason + ".\nUse `batch = FALSE` (or \"auto\"): one " +
                       "network per " + one_network + ".");
  }
  if (c.mode == BatchChoice::Mode::automatic && single) return unbatched(Unbatched::one_member, "one chain");
  if (validation) {
    return unbatched(Unbatched::validation, "held-out examples (nn_control(validation = )) have no batched form");
  }
  d.batched = true;
  d.group = c.mode == BatchChoice::Mode::on ? std::max<std::int64_t>(0, c.group) : 0;
  return d;
}

// The decision for WBB draws of `spec` (validation: held-out examples are scored every epoch).
inline BatchDecision decide_wbb_batch(const BatchChoice& c, const ModelSpec& spec, bool validation) {
  return decide_batch(c, batch_support(spec), "This network cannot be trained batched", "thread", false, validation);
}

// G networks of one (batch-supported) architecture with a leading member dimension. All parameters live in
// ONE flat buffer (group by group; group g is a contiguous [G, in, out] weight or [G, 1, out] bias block), and
// so do their gradients: the optimizer (torch's own, make_optimizer) updates one tensor per step instead of
// one per layer, with exactly the elementwise arithmetic it applies to each tensor. Each layer is computed by
// its kind's batched form (torch_kinds::Torch<Kind>::batched_forward / batched_backward, nn/net.hpp, which
// also states the layouts: a weight is stored as the transpose of Net's, so that every per-member rule --
// priors, noise, pruning, copies in Net::copy_to order -- treats linear and convolution weights alike);
// this class owns the buffers, the order of the layers and the member-major shapes between them.
class BatchedNet {
 public:
  struct Layer {
    torch_kinds::BatchedLayer b;  // the kind's batched state (parameter views, what backward needs)
    torch::Tensor (*forward)(torch_kinds::BatchedLayer&, torch::Tensor, torch_kinds::BatchedPass&) = nullptr;
    torch::Tensor (*backward)(torch_kinds::BatchedLayer&, torch::Tensor, const torch_kinds::BatchedGrad&) = nullptr;
    int weight = -1, bias = -1;  // group indices (a weighted kind)
  };
  struct Group {  // one parameter tensor of every member (Net's group g)
    ParamDef def;  // Net's shape ([out, in] for a weight, [out] for a bias)
    std::vector<std::int64_t> shape;  // [G, in, out] or [G, 1, out]
    std::int64_t offset = 0;          // in the flat buffer
    bool weight = false;              // stored as the transpose of Net's layout (seen as [out, rest])
    torch::Tensor t, g;  // views of the parameter and gradient buffers
  };

  BatchedNet(const ModelSpec& spec, std::int64_t members, torch::Device device, torch::Dtype dtype)
      : G_(members), opt_(torch::TensorOptions().dtype(dtype).device(device)) {
    const BatchSupport bs = batch_support(spec);
    if (!bs.ok) throw std::invalid_argument("no batched network for this specification: " + bs.reason);
    const NetPlan p = plan(spec);
    std::int64_t off = 0;
    for (std::size_t i = 0; i < p.layers.size(); ++i) {
      const LayerPlan& lp = p.layers[i];
      Layer L;
      L.b.spec = spec.layers[i];
      L.b.spec.kind = lp.kind;
      L.b.in = lp.in;
      L.b.out = lp.out;
      L.b.G = G_;
      L.b.grouped = !device.is_cpu();
      visit_kind(lp.kind, [&](auto K) {
        using T = torch_kinds::Torch<decltype(K)>;
        if constexpr (torch_kinds::has_batched_form<T>::value) {
          L.forward = &T::batched_forward;
          L.backward = &T::batched_backward;
        }
      });
      if (!lp.params.empty()) {  // a weighted kind: weight then bias (LayerProps::weighted)
        if (!layer_props(lp.kind).weighted || lp.params.size() != 2)
          throw std::logic_error(lp.base + ": a batched layer's parameters are one weight and one bias");
        const ParamDef& w = lp.params[0];
        const ParamDef& b = lp.params[1];
        const std::int64_t out = w.shape[0], in = w.numel() / out;  // a convolution: in channels x kernel
        L.b.wshape = w.shape;
        L.weight = static_cast<int>(groups_.size());
        groups_.push_back({w, {G_, in, out}, off, true, {}, {}});
        off += G_ * in * out;
        L.bias = static_cast<int>(groups_.size());
        groups_.push_back({b, {G_, 1, out}, off, false, {}, {}});
        off += G_ * out;
        if (first_param_ < 0) first_param_ = static_cast<int>(i);
      }
      layers_.push_back(L);
    }
    out_dim_ = p.out[0];
    for (const auto& g : groups_) P_ += g.def.numel();
    n_pen_ = p.n_penalized_groups();
    flat_ = torch::zeros({std::max<std::int64_t>(off, 1)}, opt_).requires_grad_(true);
    gflat_ = torch::zeros({std::max<std::int64_t>(off, 1)}, opt_);
    flat_.mutable_grad() = gflat_;
    const auto pv = views(flat_.detach()), gv = views(gflat_);
    for (std::size_t k = 0; k < groups_.size(); ++k) {
      groups_[k].t = pv[k];
      groups_[k].g = gv[k];
    }
    for (Layer& L : layers_) {
      if (L.weight < 0) continue;
      L.b.W = groups_[static_cast<std::size_t>(L.weight)].t;
      L.b.gW = groups_[static_cast<std::size_t>(L.weight)].g;
      L.b.B = groups_[static_cast<std::size_t>(L.bias)].t;
      L.b.gB = groups_[static_cast<std::size_t>(L.bias)].g;
    }
  }

  std::int64_t members() const { return G_; }
  std::int64_t n_parameters() const { return P_; }  // per member
  std::int64_t n_penalized_groups() const { return n_pen_; }
  std::int64_t out_dim() const { return out_dim_; }
  const torch::TensorOptions& options() const { return opt_; }
  std::vector<Group>& groups() { return groups_; }
  // Convolutions as one grouped convolution (true: the default off the CPU) or one call per member.
  void set_grouped_convolutions(bool on) {
    for (Layer& L : layers_) L.b.grouped = on;
  }
  // What the optimizer updates: the one flat parameter tensor (its grad() is the gradient buffer).
  std::vector<torch::Tensor> parameters() const { return {flat_}; }
  // The group views [G, ...] of any tensor laid out as the flat buffer (the optimizer's state, e.g.).
  std::vector<torch::Tensor> views(const torch::Tensor& flat) const {
    std::vector<torch::Tensor> r;
    for (const auto& g : groups_) {
      std::int64_t k = 1;
      for (auto d : g.shape) k *= d;
      r.push_back(flat.narrow(0, g.offset, k).view(g.shape));
    }
    return r;
  }
  // One member's slice [a, b] of group g from a tensor in Net's shape (g.def.shape): the same numbers, in the
  // batched layout (a weight transposed, a bias as a row).
  static torch::Tensor member_layout(const Group& g, const torch::Tensor& net_shaped) {
    return g.weight ? net_shaped.reshape({g.shape[2], -1}).t() : net_shaped.reshape({1, -1});
  }

  // Member m's parameters from stream s: exactly Net::init_from's draws (group by group, row-major in Net's
  // layout, drawn in double and rounded to the dtype). Draws nothing more (no dropout in a batched network).
  void init_member(std::int64_t m, rng::Stream& s) {
    torch::NoGradGuard ng;
    std::vector<double> buf;
    for (auto& g : groups_) {
      const std::int64_t k = g.def.numel();
      buf.resize(static_cast<std::size_t>(k));
      if (g.def.init_bound > 0) {
        for (auto& v : buf) v = (2.0 * s.uniform() - 1.0) * g.def.init_bound;
      } else {
        for (auto& v : buf) v = g.def.init_value;
      }
      torch::Tensor src = torch::from_blob(buf.data(), g.def.shape, torch::kDouble);  // Net's [out, in] / [out]
      g.t.select(0, m).copy_(member_layout(g, src));
    }
  }

  // Forward pass. x: per-member inputs [G, m, ...] (shared = false), or inputs shared by every member [m, ...]
  // (shared = true: the certificate and predictions). Returns the outputs [G, m, out]. With keep, every layer
  // keeps what the backward pass needs.
  torch::Tensor forward(torch::Tensor x, bool shared, bool keep) {
    torch_kinds::BatchedPass pass;
    pass.shared = shared;  // x still without the member dimension
    pass.keep = keep;
    for (Layer& L : layers_) x = L.forward(L.b, std::move(x), pass);
    if (pass.shared) x = x.unsqueeze(0).expand({G_, x.size(0), x.size(1)});  // a network without weights
    shared_in_ = shared;
    return x;
  }

  // The gradient of sum over members and examples of (dout . out) with respect to every parameter, from the
  // last forward(keep = true): written into the gradient buffer (accumulate: added to it). Every layer first
  // sees d in its output's shape [G, m, out...]; the layers below the first weighted one are not visited.
  void backward(torch::Tensor d, bool accumulate) {
    torch_kinds::BatchedGrad gr;
    gr.accumulate = accumulate;
    for (int i = static_cast<int>(layers_.size()) - 1; i >= 0 && i >= first_param_; --i) {
      Layer& L = layers_[static_cast<std::size_t>(i)];
      gr.shared_input = shared_in_ && i == first_param_;
      gr.need_input = i > first_param_;
      d = L.backward(L.b, d.reshape(torch_kinds::member_shape(G_, L.b.out, d.size(1))), gr);
    }
  }

  // Per member: sum_g w0[:, g] ||W_g||^2 over the penalized groups ([G]); w0 [G, n_penalized_groups].
  torch::Tensor penalty(const torch::Tensor& w0) const {
    torch::Tensor s;
    std::int64_t g = 0;
    for (const auto& grp : groups_) {
      if (!grp.def.penalized) continue;
      torch::Tensor t = grp.t.pow(2).sum({1, 2}) * w0.select(1, g++);
      s = s.defined() ? s + t : t;
    }
    if (!s.defined()) return torch::zeros({G_}, opt_);
    return s;
  }
  // Adds the gradient of coef * sum_g w0[:, g] ||W_g||^2 (per member) to the gradient buffer.
  void add_penalty_gradient(const torch::Tensor& w0, double coef) {
    std::int64_t g = 0;
    for (auto& grp : groups_) {
      if (!grp.def.penalized) continue;
      grp.g.addcmul_(grp.t, (w0.select(1, g++) * (2.0 * coef)).view({G_, 1, 1}));
    }
  }
  // Per member: the squared Euclidean norm of the gradient buffer ([G], double).
  torch::Tensor grad_norm2() const {
    torch::Tensor s = torch::zeros({G_}, opt_.dtype(torch::kDouble));
    for (const auto& grp : groups_) s += grp.g.pow(2).reshape({G_, -1}).sum(1).to(torch::kDouble);
    return s;
  }

  // Every member's parameters (or the gradient buffer) in Net::copy_to order: a CPU [G, P] tensor of kind
  // (double or float).
  torch::Tensor flat_parameters(torch::Dtype kind) const { return net_order(false, kind); }
  torch::Tensor flat_gradient(torch::Dtype kind) const { return net_order(true, kind); }

  // Response-scale predictions of every member on inputs x shared by all ([n, ...]): [G, n, q] on x's device,
  // the network's dtype, in chunks of `chunk` examples (member_response()).
  torch::Tensor predict(Family f, const torch::Tensor& x, std::int64_t chunk = 2000) {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> parts;
    for (std::int64_t a = 0; a < x.size(0); a += chunk)
      parts.push_back(member_response(f, forward(x.slice(0, a, std::min(x.size(0), a + chunk)), true, false)));
    return parts.size() == 1 ? parts[0] : torch::cat(parts, 1);
  }

 private:
  std::int64_t G_;
  torch::TensorOptions opt_;
  std::vector<Layer> layers_;
  std::vector<Group> groups_;
  std::int64_t out_dim_ = 0, P_ = 0, n_pen_ = 0;
  torch::Tensor flat_, gflat_;
  int first_param_ = -1;  // the first weighted layer (the backward pass stops there)
  bool shared_in_ = false;

  torch::Tensor net_order(bool gradient, torch::Dtype kind) const {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> parts;
    for (const auto& g : groups_) {
      torch::Tensor t = gradient ? g.g : g.t;
      if (g.weight) t = t.transpose(1, 2);  // [G, out, in]: Net's layout
      parts.push_back(t.reshape({G_, -1}));
    }
    return torch::cat(parts, 1).to(torch::kCPU, kind).contiguous();
  }
};

// d loss_i / d out_i of every member's examples: out [G, m, q], y [G, m] or [G, m, q] -> [G, m, q]
// (gaussian (out - y), binomial sigmoid(out) - y, multinomial softmax(out) - onehot(y)), times coef [G, m].
inline torch::Tensor member_loss_gradient(Family f, const torch::Tensor& out, const torch::Tensor& y,
                                          const torch::Tensor& coef) {
  torch::Tensor d;
  switch (f) {
    case Family::gaussian: d = out - (y.dim() == 3 ? y : y.unsqueeze(2)); break;
    case Family::binomial: d = torch::sigmoid(out) - (y.dim() == 3 ? y : y.unsqueeze(2)); break;
    case Family::multinomial: {
      d = torch::softmax(out, 2);
      const torch::Tensor yi = y.unsqueeze(2);
      d.scatter_(2, yi, d.gather(2, yi) - 1.0);
      break;
    }
  }
  return d.mul_(coef.unsqueeze(2));
}

// Per-example losses of every member: out [G, m, q], y [G, m] or [G, m, q] -> [G, m] (example_losses on the
// flattened batch: the same elementwise operations as one network's).
inline torch::Tensor member_losses(Family f, const torch::Tensor& out, const torch::Tensor& y) {
  const std::int64_t G = out.size(0), m = out.size(1), q = out.size(2);
  torch::Tensor yy = y.dim() == 3 ? y.reshape({G * m, q}) : y.reshape({G * m});
  return example_losses(f, out.reshape({G * m, q}), yy).view({G, m});
}

// One group of WBB draws trained as one batched network (wbb::DrawGroup: the members' weights and streams, keyed
// by wbb::run_draw_groups()); writes the NetWbbOutput slots of those draws.
class BatchedWbbGroup {
 public:
  // a member objective of the one training loop (nn/train.hpp, train_members()): the gradient by hand, a
  // member below grad_tol retired at once (its slice is freed)
  static constexpr bool hand_backward = true;
  static constexpr bool retire_converged = true;
  BatchedWbbGroup(const NetWbbProblem& pb, const NetWbbOutput& out) : pb_(pb), out_(out) {}

  void run(wbb::DrawGroup& grp, const parallel::StopToken& stop) {
    const Dataset& d = *pb_.data;
    const std::int64_t n = d.n();
    const std::int64_t G = static_cast<std::int64_t>(grp.size());
    BatchedNet net(pb_.spec, G, pb_.dev.device, pb_.dev.dtype);
    net_ = &net;
    first_ = grp.first;
    G_ = G;
    streams_ = &grp.streams;
    const TrainConfig& c = pb_.train;
    // per member: data and prior weights (drawn by the driver), initial parameters from its stream (the
    // unbatched draw's order)
    const std::int64_t npen = net.n_penalized_groups();
    std::vector<double> wbuf(static_cast<std::size_t>(G * n)), w0buf(static_cast<std::size_t>(G * npen), 1.0);
    for (std::int64_t m = 0; m < G; ++m) {
      const Eigen::VectorXd& w = grp.w[static_cast<std::size_t>(m)];
      const Eigen::VectorXd& w0 = grp.w0[static_cast<std::size_t>(m)];
      std::copy(w.data(), w.data() + n, wbuf.data() + m * n);
      Penalty pen;  // Penalty::weight(): none -> 1, one -> shared, else one per group
      pen.w0.assign(w0.data(), w0.data() + w0.size());
      for (std::int64_t g = 0; g < npen; ++g) w0buf[static_cast<std::size_t>(m * npen + g)] = pen.weight(static_cast<std::size_t>(g));
      net.init_member(m, grp.streams[static_cast<std::size_t>(m)]);
    }
    w_ = torch::from_blob(wbuf.data(), {G, n}, torch::kDouble).to(net.options(), false, true);
    if (pb_.normalize_weights) w_ = w_ / w_.mean(1, true);
    w0_ = torch::from_blob(w0buf.data(), {G, npen}, torch::kDouble).to(net.options(), false, true);
    lambda_ = pb_.lambda;
    step_lambda_ = pb_.lambda * (1.0 / static_cast<double>(n));
    detached_ = c.weight_mode != WeightMode::example;
    batch_mean_ = c.weight_mode == WeightMode::batch_mean;
    perm_.resize(static_cast<std::size_t>(n));
    perms_.resize(static_cast<std::size_t>(G * n));
    wperms_.resize(detached_ ? static_cast<std::size_t>(G * n) : 0);
    xshape_ = {G, 0};
    for (std::size_t k = 1; k < static_cast<std::size_t>(d.x.dim()); ++k) xshape_.push_back(d.x.size(static_cast<std::int64_t>(k)));
    yshape_ = {G, 0};
    if (d.y.dim() == 2) yshape_.push_back(d.y.size(1));
    active_.assign(static_cast<std::size_t>(G), 1);
    torch::NoGradGuard no_graph;  // gradients by hand (BatchedNet::backward)
    train_members(*this, c, stop, pb_.progress);  // every member takes the loop's schedule
  }

  // ---- the member objective (train_members()) ----
  std::int64_t members() const { return G_; }
  std::int64_t n() const { return pb_.data->n(); }
  torch::Device device() const { return pb_.dev.device; }
  std::vector<torch::Tensor> parameters() { return net_->parameters(); }
  void start(torch::optim::Optimizer& opt) { opt_ = &opt; }
  // Every active member's permutation of the examples from its own stream (and, in the detached weight modes,
  // WbbObjective::begin_epoch's permutation of the weights right after it); a retired member's stream is no
  // longer read.
  void begin_epoch(const std::vector<char>& active) {
    const std::int64_t n = this->n();
    std::vector<rng::Stream>& s = *streams_;
    for (std::int64_t m = 0; m < G_; ++m) {
      if (!active[static_cast<std::size_t>(m)]) continue;
      permutation(s[static_cast<std::size_t>(m)], perm_);
      std::copy(perm_.begin(), perm_.end(), perms_.begin() + m * n);
      if (detached_) {
        permutation(s[static_cast<std::size_t>(m)], perm_);
        std::copy(perm_.begin(), perm_.end(), wperms_.begin() + m * n);
      }
    }
    const auto idx_opt = torch::TensorOptions().dtype(torch::kLong);
    perm_t_ = torch::from_blob(perms_.data(), {G_, n}, idx_opt).to(device(), false, true);
    if (detached_) wperm_t_ = torch::from_blob(wperms_.data(), {G_, n}, idx_opt).to(device(), false, true);
  }
  // Every member's minibatch (its own examples, [G, bs]): the forward pass, the loss when the loop reads it
  // (WbbObjective::minibatch's value), the correct counts when the history is recorded, and the gradient by
  // hand: d loss / d out_i = l_i' w_i / bs (batch_mean: l_i' mean(w) / bs).
  MinibatchLoss minibatch(const StepInfo& info) {
    const Dataset& d = *pb_.data;
    BatchedNet& net = *net_;
    const std::int64_t bs = info.end - info.begin;
    torch::Tensor idx = perm_t_.slice(1, info.begin, info.end);  // [G, bs]
    torch::Tensor flat = idx.reshape({-1});
    xshape_[1] = bs;
    yshape_[1] = bs;
    torch::Tensor xb = d.x.index_select(0, flat).view(xshape_);
    torch::Tensor yb = d.y.index_select(0, flat).view(yshape_);
    torch::Tensor wb = w_.gather(1, detached_ ? wperm_t_.slice(1, info.begin, info.end) : idx);
    torch::Tensor outb = net.forward(xb, false, true);
    MinibatchLoss r;
    if (info.read) {
      torch::Tensor losses = member_losses(d.family, outb, yb);
      r.loss = batch_mean_ ? losses.mean(1) * wb.mean(1) : (wb * losses).mean(1);
      if (lambda_ > 0) r.loss = r.loss + net.penalty(w0_) * step_lambda_;
    }
    torch::Tensor coef = batch_mean_ ? (wb.mean(1, true) / static_cast<double>(bs)).expand({G_, bs})
                                     : wb / static_cast<double>(bs);
    net.backward(member_loss_gradient(d.family, outb, yb, coef), false);
    if (lambda_ > 0) net.add_penalty_gradient(w0_, step_lambda_);
    if (pb_.train.history) r.correct = correct_count(d.family, outb, yb, true);
    return r;
  }
  Certificates certify(std::int64_t chunk) {
    Certificates ct;
    certify(chunk, ct.objective, ct.grad_norm);
    return ct;
  }
  // Members ms end: interrupted (no parameters written, as unbatched) or their outputs written (the certificate
  // when given), then their slices neutralized.
  void retire(const std::vector<std::int64_t>& ms, Outcome o, std::int64_t steps, const Certificates* ct,
              const std::vector<std::vector<EpochRecord>>& hist) {
    if (o == Outcome::interrupted) {
      for (std::int64_t m : ms) {
        const std::size_t i = first_ + static_cast<std::size_t>(m);
        if (out_.status) out_.status[i] = interrupted;
        if (out_.steps) out_.steps[i] = static_cast<double>(steps);
        write_history(hist[static_cast<std::size_t>(m)], i);
      }
      return;
    }
    finish(ms, o == Outcome::diverged ? diverged : done, steps, ct ? &ct->objective : nullptr,
           ct ? &ct->grad_norm : nullptr, hist);
  }

 private:
  // The objective F (sum scale) and ||grad F / n|| of every member, over the data in chunks (full_objective's
  // computation for every member at once).
  void certify(std::int64_t chunk, std::vector<double>& obj, std::vector<double>& gn) {
    const Dataset& d = *pb_.data;
    const std::int64_t n = d.n();
    BatchedNet& net = *net_;
    for (auto& g : net.groups()) g.g.zero_();
    torch::Tensor total = torch::zeros({G_}, torch::TensorOptions().dtype(torch::kDouble).device(pb_.dev.device));
    for (std::int64_t a = 0; a < n; a += chunk) {
      const std::int64_t b = std::min(n, a + chunk);
      torch::Tensor xb = d.x.slice(0, a, b), yb = d.y.slice(0, a, b), wb = w_.slice(1, a, b);
      torch::Tensor out = net.forward(xb, true, true);  // [G, m, q]
      std::vector<std::int64_t> ys{G_};
      for (auto k : yb.sizes()) ys.push_back(k);
      const torch::Tensor yg = yb.unsqueeze(0).expand(ys);
      total += (wb * member_losses(d.family, out, yg)).sum(1).to(torch::kDouble);  // [G]
      net.backward(member_loss_gradient(d.family, out, yg, wb / static_cast<double>(n)), true);
    }
    if (lambda_ > 0) {
      total += (net.penalty(w0_) * lambda_).to(torch::kDouble);
      net.add_penalty_gradient(w0_, lambda_ / static_cast<double>(n));
    }
    torch::Tensor h = torch::stack({total, net.grad_norm2().sqrt()}).to(torch::kCPU).contiguous();
    obj.assign(h.data_ptr<double>(), h.data_ptr<double>() + G_);
    gn.assign(h.data_ptr<double>() + G_, h.data_ptr<double>() + 2 * G_);
  }

  // Writes the outputs of members ms (status st; certificate values when given), then neutralizes them.
  void finish(const std::vector<std::int64_t>& ms, int st, std::int64_t steps, const std::vector<double>* obj,
              const std::vector<double>* gn, const std::vector<std::vector<EpochRecord>>& hist) {
    BatchedNet& net = *net_;
    torch::Tensor pars, pred;
    const bool f32 = out_.params_f != nullptr;
    if (out_.params || out_.params_f) pars = net.flat_parameters(f32 ? torch::kFloat : torch::kDouble);
    if (out_.pred && pb_.x_new.defined())  // a CPU double [G, n_new, q] tensor
      pred = net.predict(pb_.spec.family, pb_.x_new).to(torch::kCPU, torch::kDouble).contiguous();
    const std::size_t P = static_cast<std::size_t>(net.n_parameters());
    for (std::int64_t m : ms) {
      const std::size_t i = first_ + static_cast<std::size_t>(m);
      int status = st;
      double o = obj ? (*obj)[static_cast<std::size_t>(m)] : NAN, g = gn ? (*gn)[static_cast<std::size_t>(m)] : NAN;
      if (obj && (!std::isfinite(o) || !std::isfinite(g))) status = diverged;
      write_history(hist[static_cast<std::size_t>(m)], i);
      if (out_.status) out_.status[i] = status;
      if (out_.steps) out_.steps[i] = static_cast<double>(steps);
      if (out_.objective) out_.objective[i] = o;
      if (out_.grad_norm) out_.grad_norm[i] = g;
      if (pars.defined()) {
        if (f32) {
          const float* src = pars.data_ptr<float>() + static_cast<std::size_t>(m) * P;
          std::copy(src, src + P, out_.params_f + i * P);
        } else {
          const double* src = pars.data_ptr<double>() + static_cast<std::size_t>(m) * P;
          std::copy(src, src + P, out_.params + i * P);
        }
      }
      if (pred.defined()) {
        const std::size_t k = static_cast<std::size_t>(pred.size(1) * pred.size(2));
        const double* src = pred.data_ptr<double>() + static_cast<std::size_t>(m) * k;
        std::copy(src, src + k, out_.pred + i * k);
      }
    }
    neutralize(ms);
  }

  // Member m's per-epoch history into draw slot i of the output (rows recorded in out_.epochs).
  void write_history(const std::vector<EpochRecord>& hist, std::size_t i) {
    if (!out_.history) return;
    const std::size_t rows = std::min(hist.size(), static_cast<std::size_t>(out_.history_rows));
    double* h = out_.history + i * static_cast<std::size_t>(out_.history_rows) * 2;
    for (std::size_t e = 0; e < rows; ++e) {
      h[2 * e] = hist[e].loss;
      h[2 * e + 1] = hist[e].accuracy;
    }
    if (out_.epochs) out_.epochs[i] = static_cast<double>(rows);
  }

  // A finished member's slice: parameters, data and prior weights and optimizer state 0. Its loss is then
  // exactly 0 with a zero gradient, and every optimizer leaves it at 0: it never touches the others.
  void neutralize(const std::vector<std::int64_t>& ms) {
    torch::NoGradGuard ng;
    for (std::int64_t m : ms) {
      if (!active_[static_cast<std::size_t>(m)]) continue;
      active_[static_cast<std::size_t>(m)] = 0;
      for (auto& g : net_->groups()) {
        g.t.select(0, m).zero_();
        g.g.select(0, m).zero_();
      }
      w_.select(0, m).zero_();
      w0_.select(0, m).zero_();
      for (auto& kv : opt_->state()) {
        auto zero = [&](const torch::Tensor& t) {  // a state tensor laid out as the flat parameter buffer
          if (!t.defined() || t.dim() != 1) return;
          for (auto& v : net_->views(t)) v.select(0, m).zero_();
        };
        if (auto* a = dynamic_cast<torch::optim::AdamParamState*>(kv.second.get())) {
          zero(a->exp_avg());
          zero(a->exp_avg_sq());
          zero(a->max_exp_avg_sq());
        } else if (auto* sg = dynamic_cast<torch::optim::SGDParamState*>(kv.second.get())) {
          zero(sg->momentum_buffer());
        } else if (auto* r = dynamic_cast<torch::optim::RMSpropParamState*>(kv.second.get())) {
          zero(r->square_avg());
          zero(r->momentum_buffer());
          zero(r->grad_avg());
        }
      }
    }
  }

  const NetWbbProblem& pb_;
  NetWbbOutput out_;
  BatchedNet* net_ = nullptr;
  torch::optim::Optimizer* opt_ = nullptr;
  std::vector<rng::Stream>* streams_ = nullptr;
  std::size_t first_ = 0;
  std::int64_t G_ = 0;
  torch::Tensor w_, w0_, perm_t_, wperm_t_;
  double lambda_ = 0.0, step_lambda_ = 0.0;
  bool detached_ = false, batch_mean_ = false;
  std::vector<char> active_;  // members not yet neutralized
  std::vector<std::int64_t> perm_, perms_, wperms_, xshape_, yshape_;
};

// Members per group. A group size g > 0 is taken as given (capped at the draws). 0 = automatic: one group per
// worker thread, unless a group would hold more than kBatchGroupParams parameters (members x parameters per
// member) or more than kBatchGroupActivations activation values (members x activations per member, one
// minibatch's; the callers pass 1 for both on a GPU: no cap there): then groups of at most that many, as many
// groups as a multiple of the threads, sizes balanced.
// The parameter cap keeps a group's parameters, gradient and optimizer state (4 buffers) in the cache: the
// optimizer's elementwise passes over a flat buffer that spills to memory made 100 draws of the 784-128-64-10
// MLP in one group slower than one network per thread (bench/RESULTS.md). The activation cap does the same for
// the layer outputs of convolutional networks, where they, not the parameters, are the working set: 16 WBB
// draws of a small MNIST CNN (conv c 3x3, pool 2, conv 2c 3x3, pool 2, dense 32; batch 50) in one group were
// 1.26 / 1.16 times as fast as one network per thread at c = 1 / 2 (2.3 / 4.0 million activation values per
// group) but 0.91 / 0.78 times at c = 4 / 8 (7.2 / 13.9 million; bench/batched.R section 7). An MLP never
// reaches it (the 784-128-64-10 MLP: 50,000 values per member, its parameter cap is lower).
// A member's result never depends on its group.
constexpr std::int64_t kBatchGroupParams = 131072;
constexpr std::int64_t kBatchGroupActivations = 2097152;
inline std::size_t batched_group_size(std::size_t draws, int threads, std::int64_t group_size,
                                      std::int64_t params_per_member = 1,
                                      std::int64_t cap_params = kBatchGroupParams,
                                      std::int64_t activations_per_member = 1) {
  if (draws == 0) return 1;
  if (group_size > 0) return std::min<std::size_t>(draws, static_cast<std::size_t>(group_size));
  const std::size_t t = static_cast<std::size_t>(std::max(1, threads));
  const std::size_t one_per_thread = std::max<std::size_t>(1, (draws + t - 1) / t);
  const std::int64_t by_params = cap_params / std::max<std::int64_t>(1, params_per_member);
  const std::int64_t by_acts = kBatchGroupActivations / std::max<std::int64_t>(1, activations_per_member);
  const std::size_t cap = static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(by_params, by_acts)));
  if (one_per_thread <= cap) return one_per_thread;
  std::size_t groups = (draws + cap - 1) / cap;
  groups = (groups + t - 1) / t * t;
  return std::max<std::size_t>(1, (draws + groups - 1) / groups);
}
// The activation values of one member on a minibatch of `batch` examples: the input and every layer's output.
inline std::int64_t batched_activations(const ModelSpec& spec, std::int64_t batch) {
  const NetPlan p = plan(spec);
  std::int64_t per_example = 1;
  for (auto d : spec.input) per_example *= d;
  for (const LayerPlan& lp : p.layers) {
    std::int64_t k = 1;
    for (auto d : lp.out) k *= d;
    per_example += k;
  }
  return per_example * std::max<std::int64_t>(1, batch);
}

// The batched network as a group solver of the WBB driver (wbb::run_draw_groups(), wbb/driver.hpp): one per
// worker thread, created on it (its torch thread setting); each group of draws is one BatchedWbbGroup.
class BatchedWbbSolver {
 public:
  BatchedWbbSolver(const NetWbbProblem& pb, const NetWbbOutput& out)
      : pb_(pb), out_(out), n_pen_(plan(pb.spec).n_penalized_groups()) {
    set_worker_threads(pb.torch_threads);
  }
  Eigen::Index n_obs() const { return pb_.data->n(); }
  Eigen::Index n_prior() const { return static_cast<Eigen::Index>(n_pen_); }
  void solve_group(wbb::DrawGroup& g, const parallel::StopToken& stop) {
    BatchedWbbGroup grp(pb_, out_);
    grp.run(g, stop);
  }

 private:
  const NetWbbProblem& pb_;
  NetWbbOutput out_;
  std::int64_t n_pen_ = 0;
};

// Runs the draws of `st` (local indices 0 .. st.draws - 1, global first_draw + i) batched: contiguous groups of
// group_size members (0: automatic, batched_group_size()), st.threads workers, one group per worker at a time
// (wbb::run_draw_groups: the keying of every draw is the driver's). The same inputs and outputs as
// run_net_wbb() (nn/wbb.hpp); the spec must be batch_support()ed. The monitor is called with the number of
// finished draws.
inline parallel::RunStatus run_net_wbb_batched(const NetWbbProblem& pb, const NetWbbOutput& out,
                                               const wbb::Settings& st, std::int64_t group_size = 0,
                                               const parallel::Monitor& monitor = parallel::Monitor()) {
  const BatchSupport bs = batch_support(pb.spec);
  if (!bs.ok) throw std::invalid_argument("batched WBB draws: " + bs.reason);
  // the cache cap is the CPU's: on a GPU one group of every draw (the glue runs one worker there)
  const bool cpu = pb.dev.device.is_cpu();
  const std::int64_t per_member = cpu ? plan(pb.spec).n_params() : 1;
  const std::int64_t acts = cpu ? batched_activations(pb.spec, pb.train.batch_size) : 1;
  const std::size_t G = batched_group_size(st.draws, st.threads, group_size, per_member, kBatchGroupParams, acts);
  auto factory = [&](int) { return std::make_unique<BatchedWbbSolver>(pb, out); };
  return wbb::run_draw_groups(st, G, factory, monitor);
}

}  // namespace nn
}  // namespace scalebayes
