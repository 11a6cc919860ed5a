// tests/device/check_vi.cpp -- variational fits (nn/vi/fit.hpp): Bayes by Backprop (Gaussian prior, local
// reparameterization) and spike-and-slab VI (Bai et al.), and the variational autoencoder (nn/vi/vae.hpp).
#include "scalebayes/nn/vi/fit.hpp"
#include "scalebayes/nn/vi/vae.hpp"

#include "device_check.hpp"

namespace devcheck {

namespace {

namespace V = scalebayes::nn::vi;

// One variational fit; outputs: the mean and sd of q, its inclusion probabilities and the predictions of the
// network at the mean of q on the first 100 rows.
Outcome vi_run(const nn::ModelSpec& spec, const Data& d, const Target& t, const V::Settings& st, std::int64_t epochs,
               std::uint64_t seed) {
  const nn::DeviceChoice dev = t.choice();
  const nn::Dataset data = nn::make_dataset(d.x.data(), d.dims, d.y.data(), spec.family, dev.options());
  V::ViProblem pb;
  pb.spec = spec;
  pb.dev = dev;
  pb.data = &data;
  const std::int64_t n_new = std::min<std::int64_t>(100, d.n());
  pb.x_new = data.x.slice(0, 0, n_new).clone();
  pb.train.lr = 5e-3;
  pb.train.epochs = epochs;
  pb.train.batch_size = 128;
  pb.train.certify = false;
  pb.draws = 0;
  pb.fits.push_back(st);
  nn::Net probe(spec, torch::kCPU, torch::kFloat);
  const std::size_t P = static_cast<std::size_t>(probe->n_parameters());
  const std::size_t O = static_cast<std::size_t>(n_new * probe->out_dim());
  const std::int64_t rows = nn::max_epochs(pb.train, data.n());
  std::vector<double> mu(P), sigma(P), phi(P), mask(P), pmq(O), trace(static_cast<std::size_t>(rows) * 6),
      acc(static_cast<std::size_t>(rows)), epochs_done(1), steps(1), kept(1);
  std::vector<int> status(1, 0);
  V::ViOutput out;
  out.mu = mu.data();
  out.sigma = sigma.data();
  out.phi = phi.data();
  out.mask = mask.data();
  out.pred_mean_q = pmq.data();
  out.trace_rows = rows;
  out.trace = trace.data();
  out.accuracy = acc.data();
  out.epochs = epochs_done.data();
  out.steps = steps.data();
  out.kept = kept.data();
  out.status = status.data();
  Outcome o;
  o.seconds = wall_seconds([&] { V::run_vi(pb, out, seed, nn::device_worker_threads(dev.device, t.threads)); });
  if (status[0] != 1) throw std::runtime_error("the variational fit did not finish (status " + std::to_string(status[0]) + ")");
  for (const auto* v : {&mu, &sigma, &phi, &pmq}) o.values.insert(o.values.end(), v->begin(), v->end());
  return o;
}

// A VAE (784-128-2x2 encoder, 2-128-784 decoder); outputs: both networks' parameters and the ELBO trace.
Outcome vae_run(const Data& d, const Target& t, std::int64_t epochs, std::uint64_t seed) {
  const nn::DeviceChoice dev = t.choice();
  const std::int64_t D = d.dims[1], latent = 2;
  V::VaeProblem pb;
  pb.encoder = mlp(D, {128}, 2 * latent, nn::Family::gaussian);
  pb.decoder = mlp(latent, {128}, D, nn::Family::gaussian);
  pb.latent = latent;
  pb.samples = 1;
  pb.dev = dev;
  pb.x = nn::from_col_major(d.x.data(), d.dims, dev.options());
  pb.train.lr = 1e-3;
  pb.train.epochs = epochs;
  pb.train.batch_size = 100;
  pb.torch_threads = 1;
  nn::Net pe(pb.encoder, torch::kCPU, torch::kFloat), pd(pb.decoder, torch::kCPU, torch::kFloat);
  const std::int64_t rows = nn::max_epochs(pb.train, d.n());
  std::vector<double> ep(static_cast<std::size_t>(pe->n_parameters())), dp(static_cast<std::size_t>(pd->n_parameters())),
      trace(static_cast<std::size_t>(rows) * 4), loss(static_cast<std::size_t>(rows)), epochs_done(1), steps(1);
  int status = 0;
  V::VaeOutput out;
  out.enc_params = ep.data();
  out.dec_params = dp.data();
  out.trace_rows = rows;
  out.trace = trace.data();
  out.loss = loss.data();
  out.epochs = epochs_done.data();
  out.steps = steps.data();
  out.status = &status;
  Outcome o;
  o.seconds = wall_seconds([&] { V::run_vae(pb, out, seed, 1); });
  if (status != 1) throw std::runtime_error("the VAE fit did not finish (status " + std::to_string(status) + ")");
  for (const auto* v : {&ep, &dp, &trace}) o.values.insert(o.values.end(), v->begin(), v->end());
  return o;
}

}  // namespace

std::vector<Row> check_vi(const Options& o, const Target& ref, const Target& tgt) {
  std::vector<Row> rows;
  const Data big = images(o.quick ? 500 : 2000, 28, true, o.seed);
  const Data small = head(big, 256);
  const nn::ModelSpec spec = mlp(784, {128, 64}, 10, nn::Family::multinomial);
  {
    V::Settings st;  // bbb(): Gaussian prior, local reparameterization
    st.prior = V::Prior::gaussian;
    st.estimator = V::Estimator::local;
    auto run = [&](const Target& t, bool timing) {
      return timing ? vi_run(spec, big, t, st, o.quick ? 2 : 10, o.seed) : vi_run(spec, small, t, st, 2, o.seed);
    };
    for (auto& r : agree_and_time("bbb mlp 784-128-64-10", o, ref, tgt, run, 1e-7)) rows.push_back(r);
  }
  {
    V::Settings st;  // sparse_vi(): spike-and-slab prior and q, Gumbel-softmax inclusions
    st.prior = V::Prior::spike_slab;
    st.estimator = V::Estimator::weights;
    st.log_lambda = -2.5;
    st.prior_sd = 1.3;
    auto run = [&](const Target& t, bool timing) {
      return timing ? vi_run(spec, big, t, st, o.quick ? 2 : 10, o.seed) : vi_run(spec, small, t, st, 2, o.seed);
    };
    for (auto& r : agree_and_time("sparse_vi mlp 784-128-64-10", o, ref, tgt, run, 1e-7)) rows.push_back(r);
  }
  for (const V::Estimator est : {V::Estimator::local, V::Estimator::weights}) {
    V::Settings st;  // K = 4 Monte-Carlo passes stacked into one (ViObjective::stacks_samples())
    st.samples = 4;
    st.estimator = est;
    if (est == V::Estimator::weights) {
      st.prior = V::Prior::spike_slab;
      st.log_lambda = -2.5;
      st.prior_sd = 1.3;
    }
    auto run = [&](const Target& t, bool timing) {
      return timing ? vi_run(spec, big, t, st, o.quick ? 2 : 10, o.seed) : vi_run(spec, small, t, st, 2, o.seed);
    };
    const std::string name = est == V::Estimator::local ? "bbb K=4 stacked" : "sparse_vi K=4 stacked";
    for (auto& r : agree_and_time(name + " mlp 784-128-64-10", o, ref, tgt, run, 1e-7)) rows.push_back(r);
  }
  {
    auto run = [&](const Target& t, bool timing) {
      return timing ? vae_run(big, t, o.quick ? 2 : 10, o.seed) : vae_run(small, t, 2, o.seed);
    };
    for (auto& r : agree_and_time("vae 784-128-2", o, ref, tgt, run, 1e-7)) rows.push_back(r);
  }
  return rows;
}

}  // namespace devcheck
