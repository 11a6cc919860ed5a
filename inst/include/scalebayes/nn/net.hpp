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
#include <string>
#include <vector>

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

class NetImpl : public torch::nn::Module {
 public:
  NetImpl(const ModelSpec& spec, torch::Device device, torch::Dtype dtype) : spec_(spec) {
    std::vector<std::int64_t> shape = spec.input;
    int idx = 0;
    for (const LayerSpec& L : spec.layers) {
      Layer lay;
      lay.spec = L;
      const std::string base = "layer" + std::to_string(++idx) + "_" + layer_name(L.kind);
      switch (L.kind) {
        case LayerKind::linear: {
          if (shape.size() != 1) throw std::invalid_argument(base + ": a linear layer needs a flat input (add flatten)");
          lay.linear = register_module(base, torch::nn::Linear(shape[0], L.out));
          add_weight_bias(base, lay.linear->weight, lay.linear->bias, L.penalized, shape[0], L.out);
          shape = {L.out};
          break;
        }
        case LayerKind::conv2d: {
          if (shape.size() != 3) throw std::invalid_argument(base + ": a convolution needs (channels, height, width) input");
          lay.conv = register_module(
              base, torch::nn::Conv2d(torch::nn::Conv2dOptions(shape[0], L.out, L.kernel).stride(L.stride).padding(L.padding)));
          add_weight_bias(base, lay.conv->weight, lay.conv->bias, L.penalized, shape[0] * L.kernel * L.kernel,
                          L.out * L.kernel * L.kernel);
          const std::int64_t h = (shape[1] + 2 * L.padding - L.kernel) / L.stride + 1;
          const std::int64_t w = (shape[2] + 2 * L.padding - L.kernel) / L.stride + 1;
          if (h < 1 || w < 1) throw std::invalid_argument(base + ": the kernel is larger than its input");
          shape = {L.out, h, w};
          break;
        }
        case LayerKind::maxpool2d: {
          if (shape.size() != 3) throw std::invalid_argument(base + ": pooling needs (channels, height, width) input");
          const std::int64_t h = (shape[1] - L.kernel) / L.stride + 1, w = (shape[2] - L.kernel) / L.stride + 1;
          if (h < 1 || w < 1) throw std::invalid_argument(base + ": the pooling window is larger than its input");
          shape = {shape[0], h, w};
          break;
        }
        case LayerKind::batchnorm2d: {
          if (shape.size() != 3) throw std::invalid_argument(base + ": batchnorm2d needs (channels, height, width) input");
          lay.bn2 = register_module(base, torch::nn::BatchNorm2d(shape[0]));
          groups_.push_back({base + ".weight", lay.bn2->weight, false, 0.0, 1.0});
          groups_.push_back({base + ".bias", lay.bn2->bias, false, 0.0, 0.0});
          break;
        }
        case LayerKind::batchnorm1d: {
          if (shape.size() != 1) throw std::invalid_argument(base + ": batchnorm1d needs a flat input");
          lay.bn1 = register_module(base, torch::nn::BatchNorm1d(shape[0]));
          groups_.push_back({base + ".weight", lay.bn1->weight, false, 0.0, 1.0});
          groups_.push_back({base + ".bias", lay.bn1->bias, false, 0.0, 0.0});
          break;
        }
        case LayerKind::dropout: {
          if (!(L.rate >= 0.0 && L.rate < 1.0)) throw std::invalid_argument(base + ": the dropout rate must be in [0, 1)");
          if (L.rate > 0.0) has_dropout_ = true;
          break;
        }
        case LayerKind::flatten: {
          std::int64_t m = 1;
          for (auto d : shape) m *= d;
          shape = {m};
          break;
        }
        default:
          break;  // activations keep the shape
      }
      layers_.push_back(lay);
    }
    if (shape.size() != 1) throw std::invalid_argument("the network must end in a flat (linear) output");
    out_dim_ = shape[0];
    if (has_dropout_) {  // seeded again by init_from(); a fixed seed until then (never the global state)
      gen_ = at::globalContext().defaultGenerator(device).clone();
      gen_.set_current_seed(0);
    }
    this->to(device, dtype);
    // Re-read the parameter handles: to() may have replaced them.
    refresh_groups();
  }

  torch::Tensor forward(torch::Tensor x) {
    for (Layer& lay : layers_) {
      switch (lay.spec.kind) {
        case LayerKind::linear: x = lay.linear->forward(x); break;
        case LayerKind::conv2d: x = lay.conv->forward(x); break;
        case LayerKind::maxpool2d: x = torch::max_pool2d(x, {lay.spec.kernel, lay.spec.kernel}, {lay.spec.stride, lay.spec.stride}); break;
        case LayerKind::batchnorm2d: x = lay.bn2->forward(x); break;
        case LayerKind::batchnorm1d: x = lay.bn1->forward(x); break;
        case LayerKind::flatten: x = x.flatten(1); break;
        case LayerKind::relu: x = torch::relu(x); break;
        case LayerKind::tanh: x = torch::tanh(x); break;
        case LayerKind::sigmoid: x = torch::sigmoid(x); break;
        case LayerKind::dropout:
          if (is_training() && lay.spec.rate > 0.0) {
            const double keep = 1.0 - lay.spec.rate;
            x = x * torch::empty_like(x).bernoulli_(keep, gen_) / keep;
          }
          break;
      }
    }
    return x;
  }

  const std::vector<ParamGroup>& groups() const { return groups_; }
  std::int64_t out_dim() const { return out_dim_; }
  bool has_dropout() const { return has_dropout_; }
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
    for (Layer& lay : layers_) {
      if (lay.bn2) lay.bn2->reset_running_stats();
      if (lay.bn1) lay.bn1->reset_running_stats();
    }
    if (has_dropout_) gen_.set_current_seed(s.next());
  }

  // All parameters as one double vector (group order, row-major within a tensor) and back.
  void copy_to(double* out) const {
    torch::NoGradGuard ng;
    for (const auto& g : groups_) {
      torch::Tensor c = g.tensor.detach().to(torch::kCPU, torch::kDouble).contiguous();
      const std::int64_t m = c.numel();
      std::copy(c.data_ptr<double>(), c.data_ptr<double>() + m, out);
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

 private:
  struct Layer {
    LayerSpec spec;
    torch::nn::Linear linear{nullptr};
    torch::nn::Conv2d conv{nullptr};
    torch::nn::BatchNorm2d bn2{nullptr};
    torch::nn::BatchNorm1d bn1{nullptr};
  };
  void add_weight_bias(const std::string& base, const torch::Tensor& w, const torch::Tensor& b, bool penalized,
                       std::int64_t fan_in, std::int64_t fan_out) {
    if (spec_.init == Init::glorot_uniform) {
      const double bw = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
      groups_.push_back({base + ".weight", w, penalized, bw, 0.0});
      groups_.push_back({base + ".bias", b, false, 0.0, 0.0});
    } else {
      const double bw = 1.0 / std::sqrt(static_cast<double>(fan_in));
      groups_.push_back({base + ".weight", w, penalized, bw, 0.0});
      groups_.push_back({base + ".bias", b, false, bw, 0.0});
    }
  }
  void refresh_groups() {
    std::size_t k = 0;
    for (Layer& lay : layers_) {
      if (lay.linear) { groups_[k++].tensor = lay.linear->weight; groups_[k++].tensor = lay.linear->bias; }
      if (lay.conv) { groups_[k++].tensor = lay.conv->weight; groups_[k++].tensor = lay.conv->bias; }
      if (lay.bn2) { groups_[k++].tensor = lay.bn2->weight; groups_[k++].tensor = lay.bn2->bias; }
      if (lay.bn1) { groups_[k++].tensor = lay.bn1->weight; groups_[k++].tensor = lay.bn1->bias; }
    }
  }
  ModelSpec spec_;
  bool has_dropout_ = false;
  at::Generator gen_;  // dropout masks (defined only with dropout layers)
  std::vector<Layer> layers_;
  std::vector<ParamGroup> groups_;
  std::int64_t out_dim_ = 0;
};
TORCH_MODULE(Net);

}  // namespace nn
}  // namespace scalebayes
