// scalebayes/nn/run.hpp -- what every network run shares, stated once: its description (RunSpec) and the store
// of its kept draws (DrawStore).
//
// A WBB run (nn/wbb.hpp: NetWbbProblem), SG-MCMC chains (nn/sgmcmc.hpp: NetChainProblem) and variational fits
// (nn/vi/fit.hpp: ViProblem) are each a RunSpec -- which network, on which data, on which device, with how many
// torch threads per worker -- plus what only that method needs (a training configuration and a penalty; the
// chain's initial parameters and observation weights; the variational settings). Their outputs are each a
// DrawStore -- one network's parameters and buffers per slot, in double or compact float32 -- plus what only
// that method records (objective and history; running means, traces, latent variables; q's parameters). The
// glue (src/torch_glue.h) fills both parts from R with one function each. Seeds, threads and the monitor are the
// drivers' (parallel::RunSettings, wbb::Settings, sgmcmc::Control), shared with the regression engines.
#pragma once
#include <torch/torch.h>

#include <cstddef>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/spec.hpp"

namespace scalebayes {
namespace nn {

struct RunSpec {
  ModelSpec spec;
  DeviceChoice dev;
  const Dataset* data = nullptr;  // shared, read-only
  const Dataset* validation = nullptr;  // held-out examples (nn_control(validation = )), or null: shared, read-only
  torch::Tensor x_new;            // undefined: no predictions
  int torch_threads = 1;          // torch intra-op threads of each worker
};

// Caller-owned storage of kept draws: slot k holds one network's parameters (n_parameters values, Net::copy_to
// order, at params + k P) and its buffer values (batch-norm running statistics, Net::copy_buffers_to order, at
// buffers + k B), in double or in float32 (params_f / buffers_f: the compact stored draws; a caller sets one of
// the two). A null pointer is "not kept".
struct DrawStore {
  double* params = nullptr;
  double* buffers = nullptr;
  float* params_f = nullptr;
  float* buffers_f = nullptr;
  // Writes the network's current parameters and buffers into slot k (nothing when nothing is kept).
  void put(Net& net, std::size_t k) const {
    if (!params && !params_f && !buffers && !buffers_f) return;
    const std::size_t P = static_cast<std::size_t>(net->n_parameters());
    const std::size_t B = static_cast<std::size_t>(net->n_buffer_values());
    if (params) net->copy_to(params + k * P);
    if (params_f) net->copy_to(params_f + k * P);
    if (buffers && B > 0) net->copy_buffers_to(buffers + k * B);
    if (buffers_f && B > 0) net->copy_buffers_to(buffers_f + k * B);
  }
};

}  // namespace nn
}  // namespace scalebayes
