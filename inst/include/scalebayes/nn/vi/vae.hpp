// scalebayes/nn/vi/vae.hpp -- the variational autoencoder (Kingma & Welling 2014) on the one training loop.
//
// Two networks built from ModelSpecs: the encoder maps an example x (any input shape) to 2q outputs, the mean
// and the log-variance of the Gaussian q(z | x) = N(m(x), diag(exp(v(x)))); the decoder maps a latent value z
// (input shape {q}) to D Bernoulli logits f(z), D the number of values of one example (its n x q outputs
// machinery: binomial with a [n, D] response, y = x flattened, values in [0, 1]). With the prior p(z) = N(0, I),
// the ELBO of example i is
//     L_i = E_{q(z | x_i)} [log p(x_i | z)] - KL(q(z | x_i) || N(0, I)),
//     log p(x | z) = sum_d [x_d f_d - log(1 + e^{f_d})]          (continuous x in [0, 1]: the cross-entropy)
//     KL = (1/2) sum_j (m_j^2 + e^{v_j} - 1 - v_j)                 (closed form)
// and VaeObjective, an Objective of train_loop() (nn/train.hpp), estimates -(sum_i L_i) / n on a minibatch B by
//     (1 / |B|) sum_{i in B} [ (1/K) sum_k NLL_i(z_ik) + KL_i ],   z_ik = m(x_i) + exp(v(x_i) / 2) eps_ik
// (the reparameterization trick, eps ~ N(0, I) from the objective's OWN generator, on the data's device, seeded
// from the fit's stream after both networks are initialized; never torch's global generator). Once per epoch
// (end_epoch) one host read records the epoch's mean ELBO, reconstruction NLL and KL per example (means over
// the epoch's minibatches, weighted by their sizes, at the parameters of each step): the trace.
//
// run_vae() runs the fit as item 0 of parallel::run_parallel (progress and Ctrl-C as every network method;
// the result depends only on the seed): rng::Stream(seed, 0) initializes the encoder, then the decoder, then
// seeds the noise generator, then gives the loop its minibatch orders.
//
// Helpers on trained networks (eval mode, in chunks): encode() (means and standard deviations of q(z | x)),
// decode() (pixel probabilities sigmoid(f(z))), generate() (decoded draws of the prior), elbo() (a Monte-Carlo estimate of L_i with K draws per
// example, noise from an rng::Stream drawn in double on the host, so the estimate does not depend on the
// device or the thread count).
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/nn/data.hpp"
#include "scalebayes/nn/net.hpp"
#include "scalebayes/nn/objective.hpp"
#include "scalebayes/nn/train.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace nn {
namespace vi {

// The encoder's and decoder's specifications checked against each other and the data: the encoder ends in 2q
// outputs, the decoder takes {q} and ends in D outputs. Throws std::invalid_argument otherwise.
inline void check_vae_specs(const ModelSpec& enc, const ModelSpec& dec, std::int64_t latent, std::int64_t D) {
  if (latent < 1) throw std::invalid_argument("the latent dimension must be at least 1");
  if (enc.n_out() != 2 * latent)
    throw std::invalid_argument("the encoder has " + std::to_string(enc.n_out()) + " outputs; a VAE with " +
                                std::to_string(latent) + " latent dimensions needs " + std::to_string(2 * latent) +
                                " (means and log-variances)");
  if (dec.input.size() != 1 || dec.input[0] != latent)
    throw std::invalid_argument("the decoder's input must be the " + std::to_string(latent) + " latent values");
  if (dec.n_out() != D)
    throw std::invalid_argument("the decoder has " + std::to_string(dec.n_out()) + " outputs; the data have " +
                                std::to_string(D) + " values per example");
}

// KL(N(m, diag(e^v)) || N(0, I)) per row of m, v [n, q]: [n].
inline torch::Tensor kl_standard_normal(const torch::Tensor& m, const torch::Tensor& logvar) {
  return 0.5 * (m.pow(2) + torch::exp(logvar) - 1.0 - logvar).sum(1);
}

// Bernoulli negative log-likelihood per example, summed over its D values: logits f [n, D], x [n, D] in [0, 1].
inline torch::Tensor bernoulli_nll(const torch::Tensor& f, const torch::Tensor& x) {
  return example_losses(Family::binomial, f, x);
}

class VaeObjective {
 public:
  // x: the examples [n, ...] (the encoder's input shape) on the device; samples: K reparameterized draws per
  // example and step.
  VaeObjective(Net& encoder, Net& decoder, const torch::Tensor& x, std::int64_t latent, int samples = 1)
      : enc_(encoder), dec_(decoder), x_(x), y_(x.flatten(1)), q_(latent), K_(std::max(1, samples)) {
    gen_ = noise_generator(x.device());
    gen_.set_current_seed(0);  // seeded by seed_from() after initialization
  }
  // The noise generator's seed: the stream's next value (call after both networks' init_from).
  void seed_from(rng::Stream& s) { gen_.set_current_seed(s.next()); }

  std::int64_t n() const { return x_.size(0); }
  torch::Device device() const { return x_.device(); }
  std::vector<torch::Tensor> parameters() {
    std::vector<torch::Tensor> p = enc_->parameters();
    for (auto& t : dec_->parameters()) p.push_back(t);
    return p;
  }
  void start() {
    enc_->train();
    dec_->train();
    const auto opt = torch::TensorOptions().dtype(torch::kDouble).device(x_.device());
    nll_sum_ = torch::zeros({}, opt);
    kl_sum_ = torch::zeros({}, opt);
    seen_ = 0;
  }
  void begin_epoch(rng::Stream&) {}

  MinibatchLoss minibatch(const torch::Tensor& idx, const StepInfo&) {
    const torch::Tensor xb = x_.index_select(0, idx), yb = y_.index_select(0, idx);
    const std::int64_t m = xb.size(0);
    const torch::Tensor h = enc_->forward(xb);
    const torch::Tensor mu = h.slice(1, 0, q_), logvar = h.slice(1, q_, 2 * q_);
    const torch::Tensor eps = noise_normal(gen_, {K_, m, q_}, mu.options());
    const torch::Tensor z = (mu.unsqueeze(0) + torch::exp(0.5 * logvar).unsqueeze(0) * eps).reshape({K_ * m, q_});
    const torch::Tensor f = dec_->forward(z);
    const torch::Tensor yk = K_ > 1 ? yb.repeat({K_, 1}) : yb;
    const torch::Tensor nll = bernoulli_nll(f, yk).reshape({K_, m}).mean(0);  // [m]: mean over the K draws
    const torch::Tensor kl = kl_standard_normal(mu, logvar);                  // [m]
    MinibatchLoss r;
    r.loss = (nll + kl).mean();
    {
      torch::NoGradGuard ng;
      nll_sum_.add_(nll.detach().sum().to(torch::kDouble));
      kl_sum_.add_(kl.detach().sum().to(torch::kDouble));
      seen_ += m;
    }
    return r;
  }
  Certificate certify(std::int64_t) { return Certificate(); }  // a stochastic objective: no gradient certificate

  struct Row {
    double epoch = 0, elbo = NAN, nll = NAN, kl = NAN;  // per example
  };
  void end_epoch(std::int64_t epoch) {
    Row r;
    r.epoch = static_cast<double>(epoch);
    {
      torch::NoGradGuard ng;
      const torch::Tensor h = torch::stack({nll_sum_, kl_sum_}).to(torch::kCPU);  // the one host read
      const double* p = h.data_ptr<double>();
      const double c = static_cast<double>(std::max<std::int64_t>(1, seen_));
      r.nll = p[0] / c;
      r.kl = p[1] / c;
      nll_sum_.zero_();
      kl_sum_.zero_();
    }
    seen_ = 0;
    r.elbo = -(r.nll + r.kl);
    trace.push_back(r);
  }

  std::vector<Row> trace;

 private:
  Net& enc_;
  Net& dec_;
  torch::Tensor x_, y_;
  std::int64_t q_;
  std::int64_t K_;
  at::Generator gen_;
  torch::Tensor nll_sum_, kl_sum_;
  std::int64_t seen_ = 0;
};

// ---- Helpers on trained networks ------------------------------------------------------------------------------

// Means and standard deviations of q(z | x) for the rows of x (eval mode): [n, q] each, on x's device.
inline std::pair<torch::Tensor, torch::Tensor> encode(Net& enc, const torch::Tensor& x, std::int64_t latent,
                                                      std::int64_t chunk = 2000) {
  torch::NoGradGuard ng;
  const bool was = enc->is_training();
  enc->eval();
  std::vector<torch::Tensor> m, s;
  for (std::int64_t a = 0; a < x.size(0); a += chunk) {
    const torch::Tensor h = enc->forward(x.slice(0, a, std::min(x.size(0), a + chunk)));
    m.push_back(h.slice(1, 0, latent));
    s.push_back(torch::exp(0.5 * h.slice(1, latent, 2 * latent)));
  }
  if (was) enc->train();
  return {torch::cat(m, 0), torch::cat(s, 0)};
}

// Pixel probabilities sigmoid(f(z)) for the rows of z [n, q] (eval mode): [n, D].
inline torch::Tensor decode(Net& dec, const torch::Tensor& z, std::int64_t chunk = 2000) {
  torch::NoGradGuard ng;
  const bool was = dec->is_training();
  dec->eval();
  std::vector<torch::Tensor> p;
  for (std::int64_t a = 0; a < z.size(0); a += chunk)
    p.push_back(torch::sigmoid(dec->forward(z.slice(0, a, std::min(z.size(0), a + chunk)))));
  if (was) dec->train();
  return torch::cat(p, 0);
}

// Standard normal values [rows, cols] from a stream (double on the host, then to `opt`).
inline torch::Tensor stream_normals(rng::Stream& s, std::int64_t rows, std::int64_t cols, const torch::TensorOptions& opt) {
  std::vector<double> v(static_cast<std::size_t>(rows * cols));
  for (auto& e : v) e = s.normal();
  return torch::from_blob(v.data(), {rows, cols}, torch::kDouble).to(opt, false, true);
}

// n new examples from the model: z ~ N(0, I) (n x q standard normals from s, in that order), decoded to pixel
// probabilities. Returns {z [n, q], probabilities [n, D]} in the decoder's dtype.
inline std::pair<torch::Tensor, torch::Tensor> generate(Net& dec, std::int64_t n, std::int64_t latent, rng::Stream& s) {
  const torch::Tensor z = stream_normals(s, n, latent, dec->groups().front().tensor.options());
  return {z, decode(dec, z)};
}

// A Monte-Carlo estimate of the ELBO per example with K draws of z per example (eval mode), and its two terms:
// [n, 3] (ELBO, reconstruction NLL averaged over the draws, KL in closed form) as double on the CPU. The noise:
// for each example in order, K x q standard normals from s.
inline torch::Tensor elbo(Net& enc, Net& dec, const torch::Tensor& x, std::int64_t latent, int K, rng::Stream& s,
                          std::int64_t chunk = 500) {
  torch::NoGradGuard ng;
  const bool we = enc->is_training(), wd = dec->is_training();
  enc->eval();
  dec->eval();
  K = std::max(1, K);
  const torch::Tensor y = x.flatten(1);
  std::vector<torch::Tensor> out;
  for (std::int64_t a = 0; a < x.size(0); a += chunk) {
    const std::int64_t b = std::min(x.size(0), a + chunk), m = b - a;
    const torch::Tensor h = enc->forward(x.slice(0, a, b));
    const torch::Tensor mu = h.slice(1, 0, latent), lv = h.slice(1, latent, 2 * latent);
    const torch::Tensor eps = stream_normals(s, m * K, latent, mu.options()).reshape({m, K, latent});
    const torch::Tensor z = (mu.unsqueeze(1) + torch::exp(0.5 * lv).unsqueeze(1) * eps).reshape({m * K, latent});
    const torch::Tensor yk = y.slice(0, a, b).unsqueeze(1).expand({m, K, y.size(1)}).reshape({m * K, y.size(1)});
    const torch::Tensor nll = bernoulli_nll(dec->forward(z), yk).reshape({m, K}).mean(1);
    const torch::Tensor kl = kl_standard_normal(mu, lv);
    out.push_back(torch::stack({-(nll + kl), nll, kl}, 1).to(torch::kCPU, torch::kDouble));
  }
  if (we) enc->train();
  if (wd) dec->train();
  return torch::cat(out, 0).contiguous();
}

// ---- The fit --------------------------------------------------------------------------------------------------

struct VaeProblem {
  ModelSpec encoder, decoder;
  std::int64_t latent = 2;
  int samples = 1;
  DeviceChoice dev;
  torch::Tensor x;  // [n, ...] on dev (shared, read-only)
  TrainConfig train;
  int torch_threads = 1;
  TrainProgress* progress = nullptr;
};

// Caller-owned outputs (null: not kept).
struct VaeOutput {
  double* enc_params = nullptr;   // the encoder's parameters (Net::copy_to order)
  double* dec_params = nullptr;
  double* enc_buffers = nullptr;  // batch-norm running statistics (Net::copy_buffers_to order)
  double* dec_buffers = nullptr;
  std::int64_t trace_rows = 0;    // rows available: max_epochs()
  double* trace = nullptr;        // trace_rows x 4 (row-major): epoch, ELBO, NLL, KL per example
  double* loss = nullptr;         // trace_rows: the loop's mean minibatch loss per epoch (= -ELBO per example)
  double* epochs = nullptr;       // rows recorded
  double* steps = nullptr;
  int* status = nullptr;          // 1 done, 2 diverged, 3 interrupted
};

inline int run_vae_fit(const VaeProblem& pb, const VaeOutput& out, std::uint64_t seed, const parallel::StopToken& stop) {
  set_worker_threads(pb.torch_threads);
  check_vae_specs(pb.encoder, pb.decoder, pb.latent, pb.x[0].numel());
  Net enc(pb.encoder, pb.dev.device, pb.dev.dtype), dec(pb.decoder, pb.dev.device, pb.dev.dtype);
  rng::Stream s(seed, 0);
  enc->init_from(s);
  dec->init_from(s);
  VaeObjective obj(enc, dec, pb.x, pb.latent, pb.samples);
  obj.seed_from(s);
  TrainConfig cfg = pb.train;
  cfg.certify = false;
  cfg.grad_tol = 0;
  if (enc->needs_two_examples() || dec->needs_two_examples()) cfg.merge_single_batch = true;
  const TrainResult r = train_loop(obj, cfg, s, stop, false, pb.progress);
  const int status = r.interrupted ? 3 : (r.diverged ? 2 : 1);
  const std::size_t rows = std::min<std::size_t>(obj.trace.size(), static_cast<std::size_t>(out.trace_rows));
  if (out.trace) {
    for (std::size_t e = 0; e < rows; ++e) {
      const auto& t = obj.trace[e];
      const double v[4] = {t.epoch, t.elbo, t.nll, t.kl};
      std::copy(v, v + 4, out.trace + 4 * e);
      if (out.loss && e < r.history.size()) out.loss[e] = r.history[e].loss;
    }
  }
  if (out.epochs) *out.epochs = static_cast<double>(rows);
  if (out.steps) *out.steps = static_cast<double>(r.steps);
  if (out.status) *out.status = status;
  if (out.enc_params) enc->copy_to(out.enc_params);
  if (out.dec_params) dec->copy_to(out.dec_params);
  if (out.enc_buffers && enc->n_buffer_values() > 0) enc->copy_buffers_to(out.enc_buffers);
  if (out.dec_buffers && dec->n_buffer_values() > 0) dec->copy_buffers_to(out.dec_buffers);
  return status;
}

inline parallel::RunStatus run_vae(const VaeProblem& pb, const VaeOutput& out, std::uint64_t seed, int threads,
                                   const parallel::Monitor& monitor = parallel::Monitor()) {
  auto body = [&](std::size_t, int, const parallel::StopToken& stop) { run_vae_fit(pb, out, seed, stop); };
  return parallel::run_parallel(1, threads, body, monitor);
}

}  // namespace vi
}  // namespace nn
}  // namespace scalebayes
