// scalebayes/nn/spec.hpp -- a network described as plain data (no torch, no R).
//
// The R side (R/nn_spec.R) turns a user's nn_sequential() / nn_mlp() / nn_cnn() into a flat list of layers;
// nn/layers_spec.hpp gives every layer kind its shape rule and parameters (torch-free: layer tables and
// parameter counts are computed there, also in a build without LibTorch), and the engine builds a LibTorch
// module from it (nn/net.hpp). Keeping the description torch-free lets the glue, the standalone CLI and the
// tests construct it without compiling LibTorch headers.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>
#include "scalebayes/enum_names.hpp"

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
  dropout = 9,      // rate in [0, 1): x * mask / (1 - rate), mask ~ Bernoulli(1 - rate), in training mode only
  avgpool2d = 10,   // kernel, stride: the mean over each window
  reshape = 11,     // to `target` (one example's shape; same number of values)
  batchnorm = 12,   // batchnorm1d or batchnorm2d, whichever fits the input (resolved by plan(), layers_spec.hpp)
  conv1d = 13       // out channels, kernel, stride, padding over (channels, length) input
};
// Codes are stored in fitted objects (their layer tables): a new kind takes the next code, none is renumbered.
// layer_kind_from_code() (layers_spec.hpp) is the one check of a code against the kinds that exist.

struct LayerSpec {
  LayerKind kind = LayerKind::linear;
  std::int64_t out = 0;
  std::int64_t kernel = 0;  // window size (square for 2d kinds)
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  bool penalized = true;
  double rate = 0.0;  // dropout rate
  std::vector<std::int64_t> target;  // reshape: the shape of one example after the layer
};

enum class Family { gaussian = 0, binomial = 1, multinomial = 2 };
inline constexpr EnumTable<Family, 3> family_names{
    "family", {{{"gaussian", Family::gaussian}, {"binomial", Family::binomial},
                  {"multinomial", Family::multinomial}}}};
constexpr const auto& enum_table(Family) { return family_names; }

// Initialization of weights and biases: PyTorch's default (weights and biases U(+-1/sqrt(fan_in))) or
// Glorot/Xavier uniform weights U(+-sqrt(6/(fan_in + fan_out))) with zero biases (TensorFlow's default).
enum class Init { fan_in_uniform = 0, glorot_uniform = 1 };
inline constexpr EnumTable<Init, 2> init_names{
    "init", {{{"fan_in", Init::fan_in_uniform}, {"glorot", Init::glorot_uniform}}}};
constexpr const auto& enum_table(Init) { return init_names; }

struct ModelSpec {
  std::vector<std::int64_t> input;  // shape of one example: {p} or {channels, height, width}
  std::vector<LayerSpec> layers;    // the last layer produces the outputs (1 for gaussian/binomial, K classes)
  Family family = Family::gaussian;
  Init init = Init::fan_in_uniform;
  // The number of outputs (the size of the flat last shape); defined in layers_spec.hpp (it plans the network).
  std::int64_t n_out() const;
};

}  // namespace nn
}  // namespace scalebayes

// Shapes, parameters and layer names of every kind (needs the declarations above).
#include "scalebayes/nn/layers_spec.hpp"
