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

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
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
// from the network's generator), functional() (a weighted kind: the layer from given weight and bias, for VI)
// and its batched form, batched_forward() and batched_backward() (below: a kind whose props say `batched`).
// Shapes and parameters are the torch-free half (nn/layers_spec.hpp, same struct names); a kind's module must
// create exactly the parameter tensors its ParamDef list names (NetImpl checks names and shapes).
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

// ---- Batched forms (the layers of nn/batched.hpp's BatchedNet) ---------------------------------------------
// G networks ("members") of one architecture computed as one network: a weighted layer's parameters carry a
// leading member dimension -- a weight is stored [G, in, out], the transpose of Net's [out, in] (a convolution's
// [out, in, k(, k)] seen as [out, in x kernel]), a bias [G, 1, out] -- activations are member-major,
// [G, m, one example's shape], and the gradient is computed by hand (no autograd graph), with torch's own
// backward kernels where it has them. A kind whose props say `batched` defines in its Torch<> specialization
//   static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& pass);
//       // x: [G, m, in...], or [m, in...] while pass.shared (inputs shared by every member: the certificate
//       // and predictions); a kind that makes them member-major sets pass.shared = false. With pass.keep it
//       // keeps in L (saved, indices) what its backward pass needs.
//   static torch::Tensor batched_backward(BatchedLayer& L, torch::Tensor d, const BatchedGrad& grad);
//       // d: the gradient of the layer's output, [G, m, out...]; writes (grad.accumulate: adds) the gradients
//       // of its parameters into L.gW, L.gB; returns the gradient of its input (any shape holding
//       // [G, m, in...]; not used when !grad.need_input).
// check_batched_forms() below holds the props and these members to each other.
struct BatchedLayer {
  LayerSpec spec;            // the layer (kind resolved)
  Shape in, out;             // one example's shapes
  std::int64_t G = 0;        // members
  Shape wshape;              // a weighted kind: Net's weight shape ([out, in], [out, in, k(, k)])
  torch::Tensor W, B;        // a weighted kind: its parameters ([G, in, out], [G, 1, out] views)
  torch::Tensor gW, gB;      // ... and their gradients (views of the gradient buffer)
  bool grouped = false;      // convolutions: one grouped call (the default off the CPU) or one call per member
  torch::Tensor saved, indices;  // kept by the forward pass (keep) for the backward pass
};
struct BatchedPass {
  bool shared = false;  // x has no member dimension yet
  bool keep = false;    // keep what the backward pass needs
};
struct BatchedGrad {
  bool shared_input = false;  // the layer's input was shared by every member
  bool need_input = true;     // the gradient of the input is wanted (false below the first weighted layer)
  bool accumulate = false;    // add to the gradient buffers (otherwise overwrite them)
};
// [G, m, one example's shape]
inline std::vector<std::int64_t> member_shape(std::int64_t G, const Shape& ex, std::int64_t m) {
  std::vector<std::int64_t> r{G, m};
  r.insert(r.end(), ex.begin(), ex.end());
  return r;
}
// x's leading dimensions ([m] shared, [G, m] otherwise) followed by one example's shape.
inline std::vector<std::int64_t> example_shape(const Shape& ex, bool shared, const torch::Tensor& x) {
  std::vector<std::int64_t> r{x.size(0)};
  if (!shared) r.push_back(x.size(1));
  r.insert(r.end(), ex.begin(), ex.end());
  return r;
}

// Batched linear layer: one baddbmm for every member (per-member inputs), one addmm per member (shared ones).
struct BatchedLinear {
  static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& p) {
    if (p.keep) L.saved = x;
    if (p.shared) {
      // [m, in] x [G, in, out] -> [G, m, out], one product per member: a broadcast matmul would pick its
      // kernel by G (measured: float32 predictions 6e-8 apart between groups of 20 and 10), this keeps
      // a member's outputs independent of its group.
      std::vector<torch::Tensor> per(static_cast<std::size_t>(L.G));
      for (std::int64_t g = 0; g < L.G; ++g) per[static_cast<std::size_t>(g)] = torch::addmm(L.B[g], x, L.W[g]);
      x = torch::stack(per);
    } else {
      x = torch::baddbmm(L.B, x, L.W);
    }
    p.shared = false;
    return x;
  }
  static torch::Tensor batched_backward(BatchedLayer& L, torch::Tensor d, const BatchedGrad& gr) {
    const torch::Tensor& a = L.saved;
    if (gr.accumulate) {
      if (gr.shared_input) {
        for (std::int64_t g = 0; g < L.G; ++g) L.gW[g].addmm_(a.t(), d[g]);  // per member (see forward)
      } else {
        L.gW.add_(torch::bmm(a.transpose(1, 2), d));
      }
      L.gB.add_(d.sum(1, true));
    } else {
      if (gr.shared_input) {
        for (std::int64_t g = 0; g < L.G; ++g) {  // per member (see forward)
          torch::Tensor wg = L.gW[g];
          at::mm_out(wg, a.t(), d[g]);
        }
      } else {
        at::bmm_out(L.gW, a.transpose(1, 2), d);
      }
      at::sum_out(L.gB, d, {1}, true);
    }
    return gr.need_input ? torch::bmm(d, L.W.transpose(1, 2)) : torch::Tensor();
  }
};

// Batched convolution over D spatial dimensions. On the CPU each member's convolution is its own torch call on
// its own slice (a grouped convolution, groups = G over [m, G C, ...], was slower there -- 0.6-1.1 times,
// bench/batched.R -- and oneDNN's grouped float32 kernel changed a member's outputs with G: 4e-6 apart between
// groups of 16 and 3 for one input channel); on other devices the layer is one grouped convolution
// (BatchedNet::set_grouped_convolutions() forces either way, for the tests).
template <int D>
struct BatchedConv {
  static std::vector<std::int64_t> per_dim(std::int64_t v) { return std::vector<std::int64_t>(D, v); }
  // The members' weights in torch's layout [G, out, in, k(, k)] (a contiguous copy of the stored transpose).
  static torch::Tensor weight(const BatchedLayer& L) {
    std::vector<std::int64_t> sh{L.G};
    sh.insert(sh.end(), L.wshape.begin(), L.wshape.end());
    return L.W.transpose(1, 2).contiguous().view(sh);
  }
  // A member-major [G, m, C, ...] tensor (or a shared [m, C, ...] one) as a grouped convolution's input
  // [m, G C, ...]; and back.
  static torch::Tensor to_grouped(const BatchedLayer& L, const torch::Tensor& x, bool shared, const Shape& ex) {
    const torch::Tensor xm = shared ? x.unsqueeze(0).expand(member_shape(L.G, ex, x.size(0))) : x;
    std::vector<std::int64_t> gs{xm.size(1), L.G * ex[0]};
    gs.insert(gs.end(), ex.begin() + 1, ex.end());
    return xm.transpose(0, 1).reshape(gs);
  }
  static torch::Tensor from_grouped(const BatchedLayer& L, const torch::Tensor& y, const Shape& ex) {
    std::vector<std::int64_t> ys{y.size(0), L.G};
    ys.insert(ys.end(), ex.begin(), ex.end());
    return y.reshape(ys).transpose(0, 1).contiguous();
  }
  static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& p) {
    if (p.keep) L.saved = x;
    const bool shared = p.shared;
    p.shared = false;
    const torch::Tensor Wc = weight(L);
    const auto st = per_dim(L.spec.stride), pad = per_dim(L.spec.padding), dil = per_dim(1), opad = per_dim(0);
    if (L.grouped) {
      const torch::Tensor y = at::convolution(to_grouped(L, x, shared, L.in), Wc.flatten(0, 1), L.B.reshape({-1}), st,
                                              pad, dil, false, opad, L.G);
      return from_grouped(L, y, L.out);
    }
    std::vector<torch::Tensor> per(static_cast<std::size_t>(L.G));
    for (std::int64_t g = 0; g < L.G; ++g)
      per[static_cast<std::size_t>(g)] =
          at::convolution(shared ? x : x[g], Wc[g], L.B[g].reshape({-1}), st, pad, dil, false, opad, 1);
    return torch::stack(per);
  }
  static torch::Tensor batched_backward(BatchedLayer& L, torch::Tensor d, const BatchedGrad& gr) {
    const torch::Tensor& a = L.saved;  // the layer's input (member-major, or shared)
    const torch::Tensor Wc = weight(L);
    const auto st = per_dim(L.spec.stride), pad = per_dim(L.spec.padding), dil = per_dim(1), opad = per_dim(0);
    const std::int64_t out = L.out[0], G = L.G;
    const std::array<bool, 3> mask{gr.need_input, true, true};
    auto put = [&gr](torch::Tensor dst, const torch::Tensor& src) {
      if (gr.accumulate) dst.add_(src);
      else dst.copy_(src);
    };
    if (L.grouped) {
      const std::vector<std::int64_t> bias_sizes{G * out};
      const auto r = at::convolution_backward(to_grouped(L, d, false, L.out), to_grouped(L, a, gr.shared_input, L.in),
                                              Wc.flatten(0, 1), bias_sizes, st, pad, dil, false, opad, G, mask);
      put(L.gW, std::get<1>(r).reshape({G, out, -1}).transpose(1, 2));
      put(L.gB, std::get<2>(r).reshape({G, 1, out}));
      return gr.need_input ? from_grouped(L, std::get<0>(r), L.in) : torch::Tensor();
    }
    const std::vector<std::int64_t> bias_sizes{out};
    std::vector<torch::Tensor> gi(gr.need_input ? static_cast<std::size_t>(G) : 0);
    for (std::int64_t g = 0; g < G; ++g) {
      const auto r = at::convolution_backward(d[g], gr.shared_input ? a : a[g], Wc[g], bias_sizes, st, pad, dil, false,
                                              opad, 1, mask);
      put(L.gW[g], std::get<1>(r).reshape({out, -1}).t());
      put(L.gB[g], std::get<2>(r).reshape({1, out}));
      if (gr.need_input) gi[static_cast<std::size_t>(g)] = std::get<0>(r);
    }
    return gr.need_input ? torch::stack(gi) : torch::Tensor();
  }
};

// Batched 2d pooling (max or average): every member's maps at once, as one batch of [C, H, W] maps.
template <bool Max>
struct BatchedPool2d {
  static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& p) {
    if (p.keep) L.saved = x;
    const torch::Tensor x4 = x.reshape({-1, L.in[0], L.in[1], L.in[2]});
    const std::vector<std::int64_t> k{L.spec.kernel, L.spec.kernel}, st{L.spec.stride, L.spec.stride};
    torch::Tensor y;
    if constexpr (Max) {
      auto r = at::max_pool2d_with_indices(x4, k, st, {0, 0}, {1, 1}, false);
      y = std::get<0>(r);
      if (p.keep) L.indices = std::get<1>(r);
    } else {
      y = at::avg_pool2d(x4, k, st, {0, 0}, false, true, c10::nullopt);
    }
    return y.reshape(example_shape(L.out, p.shared, x));
  }
  static torch::Tensor batched_backward(BatchedLayer& L, torch::Tensor d, const BatchedGrad&) {
    const std::vector<std::int64_t> k{L.spec.kernel, L.spec.kernel}, st{L.spec.stride, L.spec.stride};
    const std::int64_t m = d.size(1);
    const torch::Tensor d4 = d.reshape({-1, L.out[0], L.out[1], L.out[2]});
    const torch::Tensor a4 = L.saved.reshape({-1, L.in[0], L.in[1], L.in[2]});
    if constexpr (Max) {
      d = at::max_pool2d_with_indices_backward(d4, a4, k, st, {0, 0}, {1, 1}, false, L.indices);
    } else {
      d = at::avg_pool2d_backward(d4, a4, k, st, {0, 0}, false, true, c10::nullopt);
    }
    return d.reshape(member_shape(L.G, L.in, m));
  }
};

// Batched flatten and reshape: one example's shape changes, not its values (the gradient is reshaped by the
// batched network's backward loop, to each layer's output shape).
struct BatchedReshape {
  static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& p) {
    return x.reshape(example_shape(L.out, p.shared, x));
  }
  static torch::Tensor batched_backward(BatchedLayer&, torch::Tensor d, const BatchedGrad&) { return d; }
};

// Batched elementwise activation y = f(x); its backward reads the output y (torch's *_backward(d, y) kernels).
template <torch::Tensor (*F)(const torch::Tensor&), torch::Tensor (*Back)(const torch::Tensor&, const torch::Tensor&)>
struct BatchedActivation {
  static torch::Tensor batched_forward(BatchedLayer& L, torch::Tensor x, BatchedPass& p) {
    x = F(x);
    if (p.keep) L.saved = x;
    return x;
  }
  static torch::Tensor batched_backward(BatchedLayer& L, torch::Tensor d, const BatchedGrad&) { return Back(d, L.saved); }
};
inline torch::Tensor relu_of(const torch::Tensor& x) { return torch::relu(x); }
inline torch::Tensor tanh_of(const torch::Tensor& x) { return torch::tanh(x); }
inline torch::Tensor sigmoid_of(const torch::Tensor& x) { return torch::sigmoid(x); }
// relu's from its output: y > 0 iff x > 0
inline torch::Tensor relu_backward(const torch::Tensor& d, const torch::Tensor& y) { return at::threshold_backward(d, y, 0); }
inline torch::Tensor tanh_backward(const torch::Tensor& d, const torch::Tensor& y) { return at::tanh_backward(d, y); }
inline torch::Tensor sigmoid_backward(const torch::Tensor& d, const torch::Tensor& y) { return at::sigmoid_backward(d, y); }

template <class Kind>
struct Torch;  // one specialization per kind

template <>
struct Torch<kinds::LinearKind> : NoModule, BatchedLinear {
  static ModulePtr make(Slot& s, const LayerSpec& L, const Shape& in) { return keep(s, torch::nn::Linear(in[0], L.out)); }
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) { return impl<torch::nn::LinearImpl>(s).forward(x); }
  static torch::Tensor functional(const LayerSpec&, const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& B) {
    return torch::nn::functional::linear(x, W, B);
  }
};
template <>
struct Torch<kinds::Conv2dKind> : NoModule, BatchedConv<2> {
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
struct Torch<kinds::Conv1dKind> : NoModule, BatchedConv<1> {
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
struct Torch<kinds::MaxPool2dKind> : NoModule, BatchedPool2d<true> {
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) {
    return torch::max_pool2d(x, {s.spec.kernel, s.spec.kernel}, {s.spec.stride, s.spec.stride});
  }
};
template <>
struct Torch<kinds::AvgPool2dKind> : NoModule, BatchedPool2d<false> {
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
struct Torch<kinds::FlattenKind> : NoModule, BatchedReshape {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return x.flatten(1); }
};
template <>
struct Torch<kinds::ReshapeKind> : NoModule, BatchedReshape {
  static torch::Tensor forward(Slot& s, torch::Tensor x, ForwardContext&) {
    std::vector<std::int64_t> d{x.size(0)};
    d.insert(d.end(), s.spec.target.begin(), s.spec.target.end());
    return x.reshape(d);
  }
};
template <>
struct Torch<kinds::ReluKind> : NoModule, BatchedActivation<relu_of, relu_backward> {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return torch::relu(x); }
};
template <>
struct Torch<kinds::TanhKind> : NoModule, BatchedActivation<tanh_of, tanh_backward> {
  static torch::Tensor forward(Slot&, torch::Tensor x, ForwardContext&) { return torch::tanh(x); }
};
template <>
struct Torch<kinds::SigmoidKind> : NoModule, BatchedActivation<sigmoid_of, sigmoid_backward> {
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
  // Batched: the identity, which it is at rate 0; a layer with rate > 0 draws from its network's generator
  // (random()), so batch_support() (nn/batched.hpp) trains it one network at a time.
  static torch::Tensor batched_forward(BatchedLayer&, torch::Tensor x, BatchedPass&) { return x; }
  static torch::Tensor batched_backward(BatchedLayer&, torch::Tensor d, const BatchedGrad&) { return d; }
};

// Whether a kind's torch half has a batched form (batched_forward and batched_backward).
template <class T, class = void>
struct has_batched_form : std::false_type {};
template <class T>
struct has_batched_form<T, std::void_t<decltype(&T::batched_forward), decltype(&T::batched_backward)>>
    : std::true_type {};
// Compiled, never called: every kind's props.batched (the table R reads) says whether its torch half has the
// batched members (visit_kind instantiates the check for every kind).
inline void check_batched_forms() {
  visit_kind(LayerKind::linear, [](auto K) {
    using Kind = decltype(K);
    static_assert(has_batched_form<Torch<Kind>>::value == Kind::props.batched,
                  "a layer kind's props.batched (nn/layers_spec.hpp) and its batched_forward / batched_backward "
                  "(nn/net.hpp) must agree");
    return 0;
  });
}

// Whether a layer draws random numbers from its network's generator (dropout with rate > 0).
inline bool layer_random(const LayerSpec& L) {
  return visit_kind(L.kind, [&](auto K) { return Torch<decltype(K)>::random(L); });
}

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
    n_pen_ = p.n_penalized_groups();
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
  std::int64_t n_penalized_groups() const { return n_pen_; }  // NetPlan::n_penalized_groups()

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
  std::int64_t out_dim_ = 0, n_pen_ = 0;
};
TORCH_MODULE(Net);

}  // namespace nn
}  // namespace scalebayes
