// scalebayes/nn/predict.hpp -- predictions of a network on the response scale.
//
// response(): gaussian mean, binomial P(y = 1), multinomial class probabilities from the network's raw
// outputs (member_response(): the same for the members of a batched network). predict(): one network on inputs, in eval mode (no dropout, batch-norm running statistics).
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

// Outputs on the response scale: gaussian mean, binomial P(y = 1), multinomial class probabilities (softmax
// over the last dimension: out [n, q], or [G, n, q] for the members of a batched network, member_response()).
inline torch::Tensor response(Family f, const torch::Tensor& out) {
  switch (f) {
    case Family::gaussian: return out;
    case Family::binomial: return torch::sigmoid(out);
    case Family::multinomial: return torch::softmax(out, -1);
  }
  return out;
}

// sigmoid(x) through torch's vectorized kernel for every element. torch's CPU sigmoid computes a tensor's
// elements in vector chunks and its last numel % (2 x vector width) elements by a scalar formula (std::exp
// against SLEEF's exp: they differ in the last bit for some inputs), so whether an element of member m takes the
// scalar path would depend on how many members share the tensor (measured: float32 inclusion probabilities 3e-8
// apart between groups of 1 and 4 chains). Evaluated on a copy padded to a multiple of 64 elements, no element
// takes the scalar path, and a member's values are those of any other grouping. (log, exp, tanh of contiguous
// tensors go through torch's vml loops, whose tail is a partial vector: the same arithmetic.)
inline torch::Tensor sigmoid_any_group(const torch::Tensor& x) {
  constexpr std::int64_t chunk = 64;  // a multiple of 2 x the widest vector (AVX-512 float: 16 lanes)
  const std::int64_t n = x.numel();
  const std::int64_t np = (n + chunk - 1) / chunk * chunk;
  if (np == n && x.is_contiguous()) return torch::sigmoid(x);
  torch::Tensor buf = torch::zeros({np}, x.options());
  buf.narrow(0, 0, n).copy_(x.reshape({-1}));
  return torch::sigmoid(buf).narrow(0, 0, n).view(x.sizes());
}

// response() of the members of a batched network (out [G, n, q]), the predictions of batched WBB draws and
// batched chains: the same links, binomial through sigmoid_any_group() so that a member's predictions do not
// depend on the members it shares the tensor with.
inline torch::Tensor member_response(Family f, const torch::Tensor& out) {
  return f == Family::binomial ? sigmoid_any_group(out) : response(f, out);
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
