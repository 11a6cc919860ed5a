// scalebayes/nn/layers_spec.hpp -- what each layer kind is, without torch: its shape rule and its parameters.
//
// One struct per layer kind (LinearKind, Conv2dKind, ...) states
//   * name:       the kind's name in layer tables and error messages,
//   * props:      what the methods need to know of it (LayerProps: has a weight, may be sparse, Bayesian under
//                 VI, a convolution, has a batched form, the input it takes); the R side reads them
//                 (cpp_nn_layer_kinds()), so no list of "layers with weights" or "layers that batch" is spelled
//                 anywhere else,
//   * out_shape:  the shape of one example after the layer, from the shape before it (throws
//                 std::invalid_argument naming the layer when the input does not fit),
//   * params:     the parameter tensors the layer owns, in order (weight before bias), each with its shape,
//                 whether the prior / penalty applies to it, and its initialization (U(-b, b) or a constant).
// visit_kind() is the one table from a LayerKind to its struct. plan() walks a ModelSpec with it: the shape
// after every layer, the parameter groups and their count. Nothing here needs LibTorch, so the R glue computes
// layer tables in the build without it (src/nn_spec.cpp) and the network itself (nn/net.hpp) builds its
// parameter groups from the same ParamDef list (it checks the tensor shapes its torch modules created against
// them). The torch half of a kind (module registration and forward) lives in nn/net.hpp under the same struct
// name in namespace torch_kinds; inst/design-nn.md shows how to add a kind.
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/spec.hpp"

namespace scalebayes {
namespace nn {

using Shape = std::vector<std::int64_t>;

inline std::string shape_str(const Shape& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? " x " : "") + std::to_string(s[i]);
  return r.empty() ? "()" : r;
}
inline std::int64_t shape_numel(const Shape& s) {
  std::int64_t m = 1;
  for (auto d : s) m *= d;
  return m;
}

// One parameter tensor of a layer. `name` is the torch module's own parameter name ("weight", "bias"): the
// network's group is "<layer base>.<name>", the key of the module's named_parameters().
struct ParamDef {
  std::string name;
  Shape shape;
  bool penalized = false;
  double init_bound = 0.0;  // U(-b, b) at initialization; 0 = the constant init_value
  double init_value = 0.0;
  std::int64_t numel() const { return shape_numel(shape); }
};

// The context a layer is planned in: its position (for messages) and the network's initialization scheme.
struct LayerContext {
  std::string base;  // "layer3_conv2d": the module name and the prefix of error messages
  Init init = Init::fan_in_uniform;
};

// What the methods need to know of a layer kind besides its shape rule and parameters. Every method decides
// from these, never from a list of kinds: a new weighted kind with weighted = sparse = variational = true is
// trained by wbb_nn(), sgld_sa() (with the SSGL prior on it) and bbb() / sparse_vi() with no other edit.
struct LayerProps {
  bool weighted = false;     // owns a weight tensor (its first parameter) that the penalty / prior applies to
  bool sparse = false;       // may carry SG-MCMC's spike-and-slab prior (R: sgld_sa(sparse_layers = ) counts these)
  bool variational = false;  // VI puts q on its weight and bias: needs torch_kinds::Torch<Kind>::functional()
  bool convolution = false;  // one weight shared over positions: inputs are standardized by one mean and sd,
                             // and zero padding of standardized inputs is padding of raw ones with their mean
  const char* input = "any"; // the input it takes, for the kind table: "flat", "(channels, length)", ...
  bool batched = false;      // G networks of it train as one (nn/batched.hpp): its torch half defines
                             // batched_forward() and batched_backward() (nn/net.hpp checks the two agree); a
                             // layer that draws random numbers (dropout > 0) still trains one network at a time
};
constexpr LayerProps weighted_props(bool convolution, const char* input) {
  return LayerProps{true, true, true, convolution, input, true};
}

namespace kinds {

inline void need_rank(const LayerContext& c, const Shape& in, std::size_t rank, const char* what) {
  if (in.size() != rank)
    throw std::invalid_argument(c.base + ": " + what + " (its input is " + shape_str(in) + ")");
}

// Weight and bias of a dense or convolution layer: PyTorch's default U(+-1/sqrt(fan_in)) for both, or
// Glorot uniform weights U(+-sqrt(6 / (fan_in + fan_out))) with zero biases.
inline std::vector<ParamDef> weight_bias(const LayerContext& c, Shape wshape, std::int64_t nbias, bool penalized,
                                         std::int64_t fan_in, std::int64_t fan_out) {
  if (c.init == Init::glorot_uniform) {
    const double bw = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
    return {{"weight", std::move(wshape), penalized, bw, 0.0}, {"bias", {nbias}, false, 0.0, 0.0}};
  }
  const double bw = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return {{"weight", std::move(wshape), penalized, bw, 0.0}, {"bias", {nbias}, false, bw, 0.0}};
}

// Output size of a window (kernel k, stride s, zero padding p) sliding over n positions; throws if none fits.
inline std::int64_t window_out(const LayerContext& c, std::int64_t n, std::int64_t k, std::int64_t s,
                               std::int64_t p, const char* what) {
  if (k < 1 || s < 1 || p < 0)
    throw std::invalid_argument(c.base + ": kernel and stride must be at least 1 and padding at least 0");
  if (n + 2 * p < k)
    throw std::invalid_argument(c.base + ": the " + std::to_string(k) + " x " + std::to_string(k) + " " + what +
                                " is larger than its " + (p ? "padded " : "") + "input (" + std::to_string(n + 2 * p) +
                                " x " + std::to_string(n + 2 * p) + " after padding " + std::to_string(p) + ")");
  return (n + 2 * p - k) / s + 1;
}

inline std::vector<ParamDef> no_params(const LayerContext&, const LayerSpec&, const Shape&) { return {}; }

struct LinearKind {  // out features; weight penalized unless `penalized` is false; bias never
  static constexpr const char* name = "linear";
  static constexpr LayerProps props = weighted_props(false, "flat");
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    need_rank(c, in, 1, "a linear layer needs a flat input (add a flatten layer before it)");
    if (L.out < 1) throw std::invalid_argument(c.base + ": a linear layer needs at least one unit");
    return {L.out};
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return weight_bias(c, {L.out, in[0]}, L.out, L.penalized, in[0], L.out);
  }
};

struct Conv2dKind {  // out channels, square kernel, stride, zero padding
  static constexpr const char* name = "conv2d";
  static constexpr LayerProps props = weighted_props(true, "(channels, height, width)");
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    need_rank(c, in, 3, "a convolution needs (channels, height, width) input");
    if (L.out < 1) throw std::invalid_argument(c.base + ": a convolution needs at least one filter");
    return {L.out, window_out(c, in[1], L.kernel, L.stride, L.padding, "convolution"),
            window_out(c, in[2], L.kernel, L.stride, L.padding, "convolution")};
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    const std::int64_t kk = L.kernel * L.kernel;
    return weight_bias(c, {L.out, in[0], L.kernel, L.kernel}, L.out, L.penalized, in[0] * kk, L.out * kk);
  }
};

struct Conv1dKind {  // out channels, kernel, stride, zero padding, over (channels, length): sequences
  static constexpr const char* name = "conv1d";
  static constexpr LayerProps props = weighted_props(true, "(channels, length)");
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    need_rank(c, in, 2,
              "a 1d convolution needs (channels, length) input, e.g. layer_reshape(c(1, p)) before it on flat input");
    if (L.out < 1) throw std::invalid_argument(c.base + ": a convolution needs at least one filter");
    if (L.kernel < 1 || L.stride < 1 || L.padding < 0)
      throw std::invalid_argument(c.base + ": kernel and stride must be at least 1 and padding at least 0");
    if (in[1] + 2 * L.padding < L.kernel)
      throw std::invalid_argument(c.base + ": the kernel of length " + std::to_string(L.kernel) +
                                  " is longer than its " + (L.padding ? "padded " : "") + "input (length " +
                                  std::to_string(in[1] + 2 * L.padding) + ")");
    return {L.out, (in[1] + 2 * L.padding - L.kernel) / L.stride + 1};
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return weight_bias(c, {L.out, in[0], L.kernel}, L.out, L.penalized, in[0] * L.kernel, L.out * L.kernel);
  }
};

struct NoProps {  // a kind without weights, with a batched form
  static constexpr LayerProps props{false, false, false, false, "any", true};
};

struct Pool2dShape {  // max and average pooling: square window, stride, no padding
  static constexpr LayerProps props{false, false, false, false, "(channels, height, width)", true};
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    need_rank(c, in, 3, "pooling needs (channels, height, width) input");
    return {in[0], window_out(c, in[1], L.kernel, L.stride, 0, "pooling window"),
            window_out(c, in[2], L.kernel, L.stride, 0, "pooling window")};
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return no_params(c, L, in);
  }
};
struct MaxPool2dKind : Pool2dShape {
  static constexpr const char* name = "maxpool2d";
};
struct AvgPool2dKind : Pool2dShape {  // mean over the window (count_include_pad irrelevant: no padding)
  static constexpr const char* name = "avgpool2d";
};

// Batch normalization: scale (1) and shift (0) per channel / feature, never penalized.
inline std::vector<ParamDef> bn_params(std::int64_t channels) {
  return {{"weight", {channels}, false, 0.0, 1.0}, {"bias", {channels}, false, 0.0, 0.0}};
}
// No batched form (props.batched false): a batched network would need per-member batch statistics.
struct BatchNorm2dKind {
  static constexpr const char* name = "batchnorm2d";
  static constexpr LayerProps props{false, false, false, false, "(channels, height, width)", false};
  static Shape out_shape(const LayerContext& c, const LayerSpec&, const Shape& in) {
    need_rank(c, in, 3, "batchnorm2d needs (channels, height, width) input");
    return in;
  }
  static std::vector<ParamDef> params(const LayerContext&, const LayerSpec&, const Shape& in) {
    return bn_params(in[0]);
  }
};
struct BatchNorm1dKind {
  static constexpr const char* name = "batchnorm1d";
  static constexpr LayerProps props{false, false, false, false, "flat or (channels, length)", false};
  static Shape out_shape(const LayerContext& c, const LayerSpec&, const Shape& in) {
    if (in.size() != 1 && in.size() != 2)  // features, or (channels, length) after a 1d convolution
      need_rank(c, in, 1, "batchnorm1d needs a flat or (channels, length) input");
    return in;
  }
  static std::vector<ParamDef> params(const LayerContext&, const LayerSpec&, const Shape& in) {
    return bn_params(in[0]);
  }
};

struct FlattenKind : NoProps {
  static constexpr const char* name = "flatten";
  static Shape out_shape(const LayerContext&, const LayerSpec&, const Shape& in) { return {shape_numel(in)}; }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return no_params(c, L, in);
  }
};

struct ReshapeKind : NoProps {  // to LayerSpec::target (one example's shape); the element count must not change
  static constexpr const char* name = "reshape";
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    if (L.target.empty()) throw std::invalid_argument(c.base + ": a reshape layer needs a target shape");
    for (auto d : L.target)
      if (d < 1) throw std::invalid_argument(c.base + ": the target shape " + shape_str(L.target) + " has a dimension below 1");
    if (shape_numel(L.target) != shape_numel(in))
      throw std::invalid_argument(c.base + ": cannot reshape " + shape_str(in) + " (" + std::to_string(shape_numel(in)) +
                                  " values per example) to " + shape_str(L.target) + " (" +
                                  std::to_string(shape_numel(L.target)) + " values)");
    return L.target;
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return no_params(c, L, in);
  }
};

struct ElementwiseShape : NoProps {  // activations and dropout: the shape is kept, no parameters
  static Shape out_shape(const LayerContext&, const LayerSpec&, const Shape& in) { return in; }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return no_params(c, L, in);
  }
};
struct ReluKind : ElementwiseShape {
  static constexpr const char* name = "relu";
};
struct TanhKind : ElementwiseShape {
  static constexpr const char* name = "tanh";
};
struct SigmoidKind : ElementwiseShape {
  static constexpr const char* name = "sigmoid";
};
struct DropoutKind : NoProps {  // rate in [0, 1)
  static constexpr const char* name = "dropout";
  static Shape out_shape(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    if (!(L.rate >= 0.0 && L.rate < 1.0)) throw std::invalid_argument(c.base + ": the dropout rate must be in [0, 1)");
    return in;
  }
  static std::vector<ParamDef> params(const LayerContext& c, const LayerSpec& L, const Shape& in) {
    return no_params(c, L, in);
  }
};

}  // namespace kinds

// The one table from a kind to its struct: f(KindStruct{}) for the layer's kind. A new kind adds one case
// here, its struct above, and its torch half in nn/net.hpp (torch_kinds::Torch<KindStruct>).
// LayerKind::batchnorm is not a kind of its own: resolve_kind() turns it into batchnorm1d / batchnorm2d.
template <class F>
decltype(auto) visit_kind(LayerKind k, F&& f) {
  switch (k) {
    case LayerKind::linear: return f(kinds::LinearKind{});
    case LayerKind::conv2d: return f(kinds::Conv2dKind{});
    case LayerKind::maxpool2d: return f(kinds::MaxPool2dKind{});
    case LayerKind::batchnorm2d: return f(kinds::BatchNorm2dKind{});
    case LayerKind::batchnorm1d: return f(kinds::BatchNorm1dKind{});
    case LayerKind::flatten: return f(kinds::FlattenKind{});
    case LayerKind::relu: return f(kinds::ReluKind{});
    case LayerKind::tanh: return f(kinds::TanhKind{});
    case LayerKind::sigmoid: return f(kinds::SigmoidKind{});
    case LayerKind::dropout: return f(kinds::DropoutKind{});
    case LayerKind::avgpool2d: return f(kinds::AvgPool2dKind{});
    case LayerKind::reshape: return f(kinds::ReshapeKind{});
    case LayerKind::conv1d: return f(kinds::Conv1dKind{});
    case LayerKind::batchnorm: break;
  }
  throw std::invalid_argument("unknown layer kind " + std::to_string(static_cast<int>(k)));
}

inline const char* layer_name(LayerKind k) {
  if (k == LayerKind::batchnorm) return "batchnorm";
  return visit_kind(k, [](auto K) { return decltype(K)::name; });
}

// The properties of a (resolved) kind; batchnorm has those of batchnorm1d / batchnorm2d (none).
inline LayerProps layer_props(LayerKind k) {
  if (k == LayerKind::batchnorm) return LayerProps{false, false, false, false, "any: 1d or 2d from its input", false};
  return visit_kind(k, [](auto K) { return decltype(K)::props; });
}

// Whether a code names a kind: one that visit_kind() knows (or batchnorm). Kind codes are 0, 1, 2, ... without
// gaps, so the kinds are the codes below layer_kind_count(); a new kind is counted once its case is in
// visit_kind() (whose switch the compiler checks for a missing enum value, -Wswitch): no constant to bump.
inline bool layer_kind_known(int code) {
  if (code < 0) return false;
  const LayerKind k = static_cast<LayerKind>(code);
  if (k == LayerKind::batchnorm) return true;
  try {
    visit_kind(k, [](auto) { return 0; });
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}
inline int layer_kind_count() {
  int n = 0;
  while (layer_kind_known(n)) ++n;
  return n;
}

// The kinds with a batched form (props.batched), by name, comma-separated: what a message names.
inline std::string batched_kind_names() {
  std::string r;
  for (int i = 0; i < layer_kind_count(); ++i) {
    const LayerKind k = static_cast<LayerKind>(i);
    if (layer_props(k).batched) r += (r.empty() ? "" : ", ") + std::string(layer_name(k));
  }
  return r;
}

// A code read from outside (the R glue, a saved fit) as a kind; throws for one that names none.
inline LayerKind layer_kind_from_code(int code) {
  if (!layer_kind_known(code))
    throw std::invalid_argument("unknown layer kind code " + std::to_string(code) + " (codes are 0 to " +
                                std::to_string(layer_kind_count() - 1) + ")");
  return static_cast<LayerKind>(code);
}

// The concrete kind of a layer on its input: batch normalization is 2d on images, 1d on flat input.
inline LayerKind resolve_kind(LayerKind k, const Shape& in) {
  if (k != LayerKind::batchnorm) return k;
  return in.size() == 3 ? LayerKind::batchnorm2d : LayerKind::batchnorm1d;
}

// One planned layer: its (resolved) kind, module name, shapes and parameter tensors.
struct LayerPlan {
  LayerKind kind = LayerKind::linear;
  std::string base;
  Shape in, out;
  std::vector<ParamDef> params;
  std::int64_t n_params() const {
    std::int64_t m = 0;
    for (const auto& p : params) m += p.numel();
    return m;
  }
  // A batch-norm layer that sees one value per channel from each example (batchnorm1d on features or on
  // sequences of length 1, batchnorm2d on 1 x 1 maps): in training mode it needs at least two examples per
  // minibatch (LibTorch: "Expected more than 1 value per channel when training").
  bool needs_two_examples() const {
    if (kind == LayerKind::batchnorm1d) return in.size() == 1 || in[1] == 1;
    return kind == LayerKind::batchnorm2d && in.size() == 3 && in[1] * in[2] == 1;
  }
};

// The whole network: every layer's plan, in order; the network must end flat (its outputs).
struct NetPlan {
  std::vector<LayerPlan> layers;
  Shape out;
  std::int64_t n_params() const {
    std::int64_t m = 0;
    for (const auto& l : layers) m += l.n_params();
    return m;
  }
  // The penalized parameter tensors (ParamDef::penalized): the number of prior weights per WBB draw, the one
  // count Net, BatchedNet and the WBB solvers use.
  std::int64_t n_penalized_groups() const {
    std::int64_t m = 0;
    for (const auto& l : layers)
      for (const auto& p : l.params) m += p.penalized ? 1 : 0;
    return m;
  }
  // Training needs at least two examples per minibatch (a layer's LayerPlan::needs_two_examples()).
  bool needs_two_examples() const {
    for (const auto& l : layers)
      if (l.needs_two_examples()) return true;
    return false;
  }
};

inline NetPlan plan(const ModelSpec& spec) {
  if (spec.input.empty()) throw std::invalid_argument("the input shape is empty");
  for (auto d : spec.input)
    if (d < 1) throw std::invalid_argument("the input shape " + shape_str(spec.input) + " has a dimension below 1");
  NetPlan p;
  Shape shape = spec.input;
  int idx = 0;
  for (const LayerSpec& L0 : spec.layers) {
    LayerSpec L = L0;
    L.kind = resolve_kind(L0.kind, shape);
    LayerPlan lp;
    lp.kind = L.kind;
    lp.base = "layer" + std::to_string(++idx) + "_" + layer_name(L.kind);
    lp.in = shape;
    const LayerContext c{lp.base, spec.init};
    visit_kind(L.kind, [&](auto K) {
      using Kind = decltype(K);
      lp.out = Kind::out_shape(c, L, shape);
      lp.params = Kind::params(c, L, shape);
    });
    shape = lp.out;
    p.layers.push_back(std::move(lp));
  }
  if (shape.size() != 1)
    throw std::invalid_argument("the network must end in a flat output (it ends in " + shape_str(shape) +
                                "): add a flatten layer");
  p.out = shape;
  return p;
}

inline std::int64_t ModelSpec::n_out() const { return plan(*this).out[0]; }

}  // namespace nn
}  // namespace scalebayes
