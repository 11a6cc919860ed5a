// scalebayes/nn/spec.hpp -- a network described as plain data (no torch, no R).
//
// The R side (R/nn_spec.R) resolves a user's nn_mlp() / nn_cnn() into a flat list of layers with every size
// known; the engine builds a LibTorch module from it (nn/net.hpp). Keeping the description torch-free lets
// the glue, the standalone CLI and the tests construct it without compiling LibTorch headers.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalebayes {
namespace nn {

enum class LayerKind {
  linear = 0,       // out features; weight penalized unless `penalized` is false; bias never penalized
  conv2d = 1,       // out channels, kernel, stride, padding ("valid" convolution = padding 0)
  maxpool2d = 2,    // kernel, stride
  batchnorm2d = 3,  // channels taken from the input; affine parameters never penalized
  batchnorm1d = 4,
  flatten = 5,
  relu = 6,
  tanh = 7,
  sigmoid = 8,
  dropout = 9       // rate in [0, 1): x * mask / (1 - rate), mask ~ Bernoulli(1 - rate), in training mode only
};

struct LayerSpec {
  LayerKind kind = LayerKind::linear;
  std::int64_t out = 0;
  std::int64_t kernel = 0;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  bool penalized = true;
  double rate = 0.0;  // dropout rate
};

enum class Family { gaussian = 0, binomial = 1, multinomial = 2 };

// Initialization of weights and biases: PyTorch's default (weights and biases U(+-1/sqrt(fan_in))) or
// Glorot/Xavier uniform weights U(+-sqrt(6/(fan_in + fan_out))) with zero biases (TensorFlow's default).
enum class Init { fan_in_uniform = 0, glorot_uniform = 1 };

struct ModelSpec {
  std::vector<std::int64_t> input;  // shape of one example: {p} or {channels, height, width}
  std::vector<LayerSpec> layers;    // the last layer produces the outputs (1 for gaussian/binomial, K classes)
  Family family = Family::gaussian;
  Init init = Init::fan_in_uniform;
  std::int64_t n_out() const {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it)
      if (it->kind == LayerKind::linear) return it->out;
    throw std::invalid_argument("the network has no linear output layer");
  }
};

inline const char* layer_name(LayerKind k) {
  switch (k) {
    case LayerKind::linear: return "linear";
    case LayerKind::conv2d: return "conv2d";
    case LayerKind::maxpool2d: return "maxpool2d";
    case LayerKind::batchnorm2d: return "batchnorm2d";
    case LayerKind::batchnorm1d: return "batchnorm1d";
    case LayerKind::flatten: return "flatten";
    case LayerKind::relu: return "relu";
    case LayerKind::tanh: return "tanh";
    case LayerKind::sigmoid: return "sigmoid";
    case LayerKind::dropout: return "dropout";
  }
  return "?";
}

}  // namespace nn
}  // namespace scalebayes
