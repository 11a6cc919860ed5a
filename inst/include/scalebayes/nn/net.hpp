// scalebayes/nn/net.hpp -- a LibTorch network built from a ModelSpec, initialized from a random stream.
//
// Net is an ordinary torch::nn::Module: a list of layers applied in order. Parameters are exposed as groups
// (one per tensor, layer order, weight before bias) so that penalties, priors and samplers address them
// uniformly. Initialization follows PyTorch's default for Linear and Conv2d (weights and biases uniform on
// +-1/sqrt(fan_in)) but draws every number from an rng::Stream, so a draw's initial network depends only on
// (seed, draw index), never on a global generator, a thread or a device.
//
// Dropout layers draw their masks from a torch generator owned by the network, on the network's device, seeded
// by init_from() from the same stream after the parameters: a dropout network's masks depend only on (seed,
// draw index) too. A network without dropout draws nothing more from the stream (its draws are unchanged).
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scalebayes/nn/layers_spec.hpp"
#include "scalebayes/nn/spec.hpp"
#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace nn {

struct ParamGroup {
  std::string name;
  torch::Tensor tensor;  // the module's parameter (aliases it: copy before you keep a snapshot)
  bool penalized = false;
  double init_bound = 0.0;  // U(-b, b) at initialization; 0 = constant (batch-norm scale 1, shift 0)
  double init_value = 0.0;
};

// The torch half of every layer kind: the module it registers (make; null for parameter-free kinds), its
// forward, and optionally reset() (running statistics, called by init_from) and random() (whether it draws
// from the network's generator). Shapes and parameters are the torch-free half (nn/layers_spec.hpp, same
// struct names); a kind's module must create exactly the parameter tensors its ParamDef list names (NetImpl
// checks names and shapes).
namespace torch_kinds {

struct ForwardContext {
  bool training = false;
  at::Generator* gen = nullptr;  // the network's mask generator (defined with dropout layers)
};

struct Slot {  // one layer of a Net
  LayerSpec spec;
  std::shared_ptr<torch::nn::Module> module;  // registered with the network (null for parameter-free kinds)
  std::shared_ptr<void> impl;                 // the same module as its own type (Module is a virtual base)
  torch::Tensor (*forward)(Slot&, torch::Tensor, ForwardContext&) = nullptr;
  void (*reset)(Slot&) = nullptr;
};

using ModulePtr = std::shared_ptr<torch::nn::Module>;

// Keep a typed handle to a new module in the slot; returns it as a Module for registration.
template <class Holder>
ModulePtr keep(Slot& s, Holder h) {
  s.impl = h.ptr();
  return h.ptr();
}
template <class Impl>
Impl& impl(Slot& s) {
  return *static_cast<Impl*>(s.impl.get());
}

struct NoModule {
  static ModulePtr make(Slot&, const LayerSpec&, const Shape&) { return nullptr; }
  static void reset(Slot&) {}
  static bool random(const LayerSpec&) { return false; }
  // A weighted kind's layer as a function of given weight and bias tensors (bias may be undefined): what the
  // variational objectives (nn/vi/) compute the layer with. Every kind whose props say `variational` defines it.
  static torch::Tensor functional(const LayerSpec& L, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) {
    throw std::logic_error(std::string("layer kind ") + layer_name(L.kind) + " has no weights to sample");
  }
};

template <class Kind>
struct Torch;  // one specialization per kind

template <>
struct Torch<kinds::LinearKind> : NoModule {
  static ModulePtr make(Slot& s, const LayerSpec& L, const Shape& in) { return keep(s, torch::nn::Linear(in[0], L.out)); }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) { return impl<torch::nn::LinearImpl>(s).forward(x); }
  static torch::Tensor functional(const LayerSpec&, const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& B) {
    return torch::nn::functional::linear(x, W, B);
  }
};
template <>
struct Torch<kinds::Conv2dKind> : NoModule {
  static ModulePtr make(Slot& s, const LayerSpec& L, const Shape& in) {
    return keep(s, torch::nn::Conv2d(torch::nn::Conv2dOptions(in[0], L.out, L.kernel).stride(L.stride).padding(L.padding)));
  }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) { return impl<torch::nn::Conv2dImpl>(s).forward(x); }
  static torch::Tensor functional(const LayerSpec& L, const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& B) {
    namespace F = torch::nn::functional;
    return F::conv2d(x, W, F::Conv2dFuncOptions().bias(B).stride(L.stride).padding(L.padding));
  }
};
template <>
struct Torch<kinds::Conv1dKind> : NoModule {
  static ModulePtr make(Slot& s, const LayerSpec& L, const Shape& in) {
    return keep(s, torch::nn::Conv1d(torch::nn::Conv1dOptions(in[0], L.out, L.kernel).stride(L.stride).padding(L.padding)));
  }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) { return impl<torch::nn::Conv1dImpl>(s).forward(x); }
  static torch::Tensor functional(const LayerSpec& L, const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& B) {
    namespace F = torch::nn::functional;
    return F::conv1d(x, W, F::Conv1dFuncOptions().bias(B).stride(L.stride).padding(L.padding));
  }
};

template <>
struct Torch<kinds::MaxPool2dKind> : NoModule {
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) {
    return torch::max_pool2d(x, {s.spec.kernel, s.spec.kernel}, {s.spec.stride, s.spec.stride});
  }
};
template <>
struct Torch<kinds::AvgPool2dKind> : NoModule {
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) {
    return torch::avg_pool2d(x, {s.spec.kernel, s.spec.kernel}, {s.spec.stride, s.spec.stride});
  }
};
template <class Impl, class Holder>
struct TorchBatchNorm : NoModule {
  static ModulePtr make(Slot& s, const LayerSpec&, const Shape& in) { return keep(s, Holder(in[0])); }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) { return impl<Impl>(s).forward(x); }
  static void reset(Slot& s) { impl<Impl>(s).reset_running_stats(); }
};
template <>
struct Torch<kinds::BatchNorm2dKind> : TorchBatchNorm<torch::nn::BatchNorm2dImpl, torch::nn::BatchNorm2d> {};
template <>
struct Torch<kinds::BatchNorm1dKind> : TorchBatchNorm<torch::nn::BatchNorm1dImpl, torch::nn::BatchNorm1d> {};
template <>
struct Torch<kinds::FlattenKind> : NoModule {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return x.flatten(1); }
};
template <>
struct Torch<kinds::ReshapeKind> : NoModule {
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) {
    std::vector<std::int64_t> d{x.size(0)};
    d.insert(d.end(), s.spec.target.begin(), s.spec.target.end());
    return x.reshape(d);
  }
};
template <>
struct Torch<kinds::ReluKind> : NoModule {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return torch::relu(x); }
};
template <>
struct Torch<kinds::TanhKind> : NoModule {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return torch::tanh(x); }
};
template <>
struct Torch<kinds::SigmoidKind> : NoModule {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return torch::sigmoid(x); }
};
template <>
struct Torch<kinds::DropoutKind> : NoModule {
  static bool random(const LayerSpec& L) { return L.rate > 0.0; }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext& c) {
    if (c.training && s.spec.rate > 0.0) {
      const double keep = 1.0 - s.spec.rate;
      x = x * torch::empty_like(x).bernoulli_(keep, *c.gen) / keep;
    }
    return x;
  }
};

// A weighted layer computed from given weight and bias tensors (the kind's functional form).
inline torch::Tensor apply_weights(const LayerSpec& L, const torch::Tensor& x, const torch::Tensor& W,
                                   const torch::Tensor& B) {
  return visit_kind(L.kind, [&](auto K) { return Torch<decltype(K)>::functional(L, x, W, B); });
}

}  // namespace torch_kinds

// A layer hook replaces the forward of chosen parameter layers (kinds whose props are `variational`) for one
// forward pass: the
// variational objectives (nn/vi/) compute those layers from sampled weights or from the pre-activation
// distribution (local reparameterization) while every other layer (activations, pooling, reshape, dropout,
// batch norm) runs as written once above. active(i): whether layer i (0-based, the ModelSpec's order) is
// replaced; forward(i, spec, x): its output on x.
struct LayerHook {
  virtual ~LayerHook() = default;
  virtual bool active(std::size_t layer) const = 0;
  virtual torch::Tensor forward(std::size_t layer, const LayerSpec& spec, const torch::Tensor& x) = 0;
};

class NetImpl : public torch::nn::Module {
 public:
  NetImpl(const ModelSpec& spec, torch::Device device, torch::Dtype dtype) : spec_(spec) {
    const NetPlan p = plan(spec);  // shapes and parameters, torch-free (throws for a layer that does not fit)
    for (std::size_t i = 0; i < p.layers.size(); ++i) {
      const LayerPlan& lp = p.layers[i];
      torch_kinds::Slot slot;
      slot.spec = spec.layers[i];
      slot.spec.kind = lp.kind;  // batchnorm resolved to 1d / 2d
      visit_kind(lp.kind, [&](auto K) {
        using T = torch_kinds::Torch<decltype(K)>;
        torch_kinds::ModulePtr m = T::make(slot, slot.spec, lp.in);
        if (m) slot.module = register_module(lp.base, m);
        slot.forward = &T::forward;
        slot.reset = &T::reset;
        if (T::random(slot.spec)) has_dropout_ = true;
      });
      if (!lp.params.empty()) {
        if (!slot.module) throw std::logic_error(lp.base + ": parameters planned but no module registered");
        const auto own = slot.module->named_parameters(/*recurse=*/false);
        if (own.size() != lp.params.size()) throw std::logic_error(lp.base + ": module and plan disagree on parameters");
        for (const ParamDef& d : lp.params) {
          const torch::Tensor* t = own.find(d.name);
          if (!t || !t->sizes().equals(d.shape))
            throw std::logic_error(lp.base + "." + d.name + ": module and plan disagree on the tensor");
          group_layer_.push_back(i);
          groups_.push_back({lp.base + "." + d.name, *t, d.penalized, d.init_bound, d.init_value});
        }
      }
      layers_.push_back(slot);
    }
    out_dim_ = p.out[0];
    needs_two_ = p.needs_two_examples();
    if (has_dropout_) {  // seeded again by init_from(); a fixed seed until then (never the global state)
      gen_ = at::globalContext().defaultGenerator(device).clone();
      gen_.set_current_seed(0);
    }
    this->to(device, dtype);
    // Re-read the parameter handles: to() may have replaced them.
    refresh_groups();
  }

  torch::Tensor forward(torch::Tensor x) {
    torch_kinds::ForwardContext c{is_training(), has_dropout_ ? &gen_ : nullptr};
    for (torch_kinds::Slot& lay : layers_) x = lay.forward(lay, std::move(x), c);
    return x;
  }

  // The forward pass with the layers the hook marks active computed by the hook (nn/vi/).
  torch::Tensor forward(torch::Tensor x, LayerHook& hook) {
    torch_kinds::ForwardContext c{is_training(), has_dropout_ ? &gen_ : nullptr};
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      torch_kinds::Slot& lay = layers_[i];
      x = hook.active(i) ? hook.forward(i, lay.spec, x) : lay.forward(lay, std::move(x), c);
    }
    return x;
  }

  const std::vector<ParamGroup>& groups() const { return groups_; }
  // The layer (0-based) each parameter group belongs to, and each layer's resolved spec.
  std::size_t group_layer(std::size_t g) const { return group_layer_[g]; }
  std::size_t n_layers() const { return layers_.size(); }
  const LayerSpec& layer_spec(std::size_t i) const { return layers_[i].spec; }
  std::int64_t out_dim() const { return out_dim_; }
  bool has_dropout() const { return has_dropout_; }
  // Training needs minibatches of at least two examples (a batch-norm layer: NetPlan::needs_two_examples()).
  bool needs_two_examples() const { return needs_two_; }
  // The generator of the dropout masks (defined only when has_dropout()): its state can be saved and restored to
  // replay a minibatch's masks (NetModel::gradient).
  at::Generator& dropout_generator() { return gen_; }
  std::int64_t n_parameters() const {
    std::int64_t m = 0;
    for (const auto& g : groups_) m += g.tensor.numel();
    return m;
  }
  std::int64_t n_penalized_groups() const {
    std::int64_t m = 0;
    for (const auto& g : groups_) m += g.penalized ? 1 : 0;
    return m;
  }

  // Fill every parameter from the stream, group by group, each tensor in row-major order; reset batch-norm
  // running statistics. Values are drawn in double and rounded to the network's dtype, so float32 and
  // float64 networks start from the same numbers (up to rounding). With dropout layers, the next value of
  // the stream then seeds the network's mask generator (nothing more is drawn without dropout).
  void init_from(rng::Stream& s) {
    torch::NoGradGuard ng;
    std::vector<double> buf;
    for (auto& g : groups_) {
      const std::int64_t m = g.tensor.numel();
      buf.resize(static_cast<std::size_t>(m));
      if (g.init_bound > 0) {
        for (auto& v : buf) v = (2.0 * s.uniform() - 1.0) * g.init_bound;
      } else {
        for (auto& v : buf) v = g.init_value;
      }
      g.tensor.copy_(torch::from_blob(buf.data(), g.tensor.sizes(), torch::kDouble));
    }
    for (torch_kinds::Slot& lay : layers_) lay.reset(lay);
    if (has_dropout_) gen_.set_current_seed(s.next());
  }

  // All parameters as one vector (group order, row-major within a tensor; T = double, or float for compact
  // stored draws) and back.
  template <class T>
  void copy_to(T* out) const {
    static_assert(std::is_same<T, double>::value || std::is_same<T, float>::value, "double or float");
    torch::NoGradGuard ng;
    const auto kind = std::is_same<T, float>::value ? torch::kFloat : torch::kDouble;
    for (const auto& g : groups_) {
      torch::Tensor c = g.tensor.detach().to(torch::kCPU, kind).contiguous();
      const std::int64_t m = c.numel();
      std::copy(c.data_ptr<T>(), c.data_ptr<T>() + m, out);
      out += m;
    }
  }
  void copy_from(const double* in) {
    torch::NoGradGuard ng;
    for (auto& g : groups_) {
      g.tensor.copy_(torch::from_blob(const_cast<double*>(in), g.tensor.sizes(), torch::kDouble));
      in += g.tensor.numel();
    }
  }

  // The buffers (batch-norm running mean, running variance and batch count: the state a network in eval mode
  // predicts with besides its parameters) as one double vector, in registration order, and back. A draw's
  // predictions on new inputs need its buffers as well as its parameters; networks without batch norm have none.
  std::int64_t n_buffer_values() const {
    std::int64_t m = 0;
    for (const auto& b : this->named_buffers(/*recurse=*/true)) m += b.value().numel();
    return m;
  }
  std::vector<std::pair<std::string, std::int64_t>> buffer_shapes() const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& b : this->named_buffers(/*recurse=*/true)) out.emplace_back(b.key(), b.value().numel());
    return out;
  }
  template <class T>
  void copy_buffers_to(T* out) const {
    torch::NoGradGuard ng;
    const auto kind = std::is_same<T, float>::value ? torch::kFloat : torch::kDouble;
    for (const auto& b : this->named_buffers(/*recurse=*/true)) {
      torch::Tensor c = b.value().detach().to(torch::kCPU, kind).contiguous();
      std::copy(c.data_ptr<T>(), c.data_ptr<T>() + c.numel(), out);
      out += c.numel();
    }
  }
  void copy_buffers_from(const double* in) {
    torch::NoGradGuard ng;
    for (auto& b : this->named_buffers(/*recurse=*/true)) {
      torch::Tensor t = b.value();
      t.copy_(torch::from_blob(const_cast<double*>(in), t.sizes(), torch::kDouble));
      in += t.numel();
    }
  }

 private:
  void refresh_groups() {
    const auto all = this->named_parameters(/*recurse=*/true);
    for (auto& g : groups_) g.tensor = all[g.name];
  }
  ModelSpec spec_;
  bool has_dropout_ = false;
  bool needs_two_ = false;
  at::Generator gen_;  // dropout masks (defined only with dropout layers)
  std::vector<torch_kinds::Slot> layers_;
  std::vector<ParamGroup> groups_;
  std::vector<std::size_t> group_layer_;
  std::int64_t out_dim_ = 0;
};
TORCH_MODULE(Net);

}  // namespace nn
}  // namespace scalebayes
