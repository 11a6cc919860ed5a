// scalebayes/nn/predict.hpp -- predictions of a network on the response scale.
//
// response(): gaussian mean, binomial P(y = 1), multinomial class probabilities from the network's raw
// outputs. predict(): one network on inputs, in eval mode (no dropout, batch-norm running statistics).
// predict_draws(): stored draws (flat parameter vectors, Net::copy_to order) on inputs. Used by every
// method that produces networks (nn/wbb.hpp, nn/sgmcmc.hpp, nn/adversarial.hpp, the R glue).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"

namespace scalebayes {
namespace nn {

// Outputs on the response scale: gaussian mean, binomial P(y = 1), multinomial class probabilities.
inline torch::Tensor response(Family f, const torch::Tensor& out) {
  switch (f) {
    case Family::gaussian: return out;
    case Family::binomial: return torch::sigmoid(out);
    case Family::multinomial: return torch::softmax(out, 1);
  }
  return out;
}

// Response-scale predictions for x (rows = examples) in eval mode: a [n, out] tensor on x's device.
inline torch::Tensor predict(Net& net, Family f, const torch::Tensor& x, std::int64_t chunk = 2000) {
  torch::NoGradGuard ng;
  const bool was_training = net->is_training();
  net->eval();
  std::vector<torch::Tensor> parts;
  for (std::int64_t a = 0; a < x.size(0); a += chunk)
    parts.push_back(response(f, net->forward(x.slice(0, a, std::min(x.size(0), a + chunk)))));
  if (was_training) net->train();
  return torch::cat(parts, 0);
}

// Response-scale predictions of T stored draws (params: T blocks of P values, Net::copy_to order; P must be
// the network's parameter count) on x: writes T blocks of [n, spec.n_out()] (row-major) into out. buffers: T
// blocks of the network's buffer values (Net::copy_buffers_to order; batch-norm running statistics), or null
// for a network without buffers (a network with batch norm then predicts with fresh statistics).
inline void predict_draws(const ModelSpec& spec, const DeviceChoice& dev, const double* params, std::size_t P,
                          std::size_t T, const torch::Tensor& x, double* out, const double* buffers = nullptr) {
  Net net(spec, dev.device, dev.dtype);
  if (P != static_cast<std::size_t>(net->n_parameters()))
    throw std::invalid_argument("stored draws have " + std::to_string(P) + " parameters, the network " +
                                std::to_string(net->n_parameters()));
  const std::size_t B = static_cast<std::size_t>(net->n_buffer_values());
  for (std::size_t t = 0; t < T; ++t) {
    net->copy_from(params + t * P);
    if (buffers && B > 0) net->copy_buffers_from(buffers + t * B);
    torch::Tensor p = predict(net, spec.family, x).to(torch::kCPU, torch::kDouble).contiguous();
    const std::size_t m = static_cast<std::size_t>(p.numel());
    std::copy(p.data_ptr<double>(), p.data_ptr<double>() + m, out + t * m);
  }
}

}  // namespace nn
}  // namespace scalebayes
