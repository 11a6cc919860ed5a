// tests/device/check_sgmcmc.cpp -- SG-MCMC chains of a network (nn/sgmcmc.hpp over sgmcmc/chain.hpp): SGHMC-SA
// and HAMCMC-SA (its linear-cost forms, "lowrank" and "diagonal") with the SSGL prior on the weights; SGHMC-SA
// chains as one batched network (nn/batched_sgmcmc.hpp), on both devices and against the unbatched chains.
#include "scalebayes/nn/batched_sgmcmc.hpp"
#include "scalebayes/nn/sgmcmc.hpp"

#include "device_check.hpp"

namespace devcheck {

namespace {

namespace sg = scalebayes::sgmcmc;

// `chains` chains of `iterations`; outputs: the posterior-mean predictions on the first 100 rows and the final
// parameters of every chain. batched: the chains as one batched network per worker (group_size 0: the engine's
// automatic groups).
Outcome chain_run(const nn::ModelSpec& spec, const Data& d, const Target& t, sg::Sampler sampler, sg::SaForm form,
                  int chains, long iterations, std::uint64_t seed, bool batched = false,
                  std::int64_t group_size = 0) {
  const nn::DeviceChoice dev = t.choice();
  const nn::Dataset data = nn::make_dataset(d.x.data(), d.dims, d.y.data(), spec.family, dev.options());
  nn::NetChainProblem pb;
  pb.spec = spec;
  pb.dev = dev;
  pb.data = &data;
  const std::int64_t n_new = std::min<std::int64_t>(100, d.n());
  pb.x_new = data.x.slice(0, 0, n_new).clone();
  pb.torch_threads = 1;
  sg::Control ctl;
  ctl.iterations = iterations;
  ctl.burnin = iterations / 2;
  ctl.trace_every = std::max<long>(1, iterations / 10);
  ctl.batch_size = 50;
  ctl.chains = chains;
  ctl.sampler = sampler;
  ctl.lbfgs.sa_form = form;
  const double N = static_cast<double>(d.n());
  ctl.step.type = sg::StepSchedule::Type::constant;
  ctl.step.eps0 = sampler == sg::Sampler::sghmc ? 0.03 / N : 0.3 / N;
  ctl.hyper.v0 = 0.1;
  ctl.hyper.v1 = 10.0;
  ctl.sa_start = iterations / 10;
  nn::Net probe(spec, torch::kCPU, torch::kFloat);
  const std::size_t P = static_cast<std::size_t>(probe->n_parameters());
  const std::size_t G = probe->groups().size();
  const std::size_t m = static_cast<std::size_t>(n_new * probe->out_dim());
  std::vector<std::vector<double>> pred(chains, std::vector<double>(m)), pmean(chains, std::vector<double>(P)),
      pfinal(chains, std::vector<double>(P)), rho(chains, std::vector<double>(P)),
      trace(chains, std::vector<double>(static_cast<std::size_t>(ctl.n_traced()) * nn::NT_NCOL)),
      delta(chains, std::vector<double>(G)), scalars(chains, std::vector<double>(6));
  std::vector<nn::NetChainOutput> outs(static_cast<std::size_t>(chains));
  for (int c = 0; c < chains; ++c) {
    auto& o = outs[static_cast<std::size_t>(c)];
    o.pred_mean = pred[c].data();
    o.param_mean = pmean[c].data();
    o.param_final = pfinal[c].data();
    o.rho = rho[c].data();
    o.trace = trace[c].data();
    o.delta = delta[c].data();
    o.scalars = scalars[c].data();
  }
  std::vector<sg::ChainStatus> status;
  scalebayes::parallel::RunSettings rs;
  rs.seed = seed;
  rs.threads = t.threads;
  Outcome out;
  out.seconds = wall_seconds([&] {
    if (batched) nn::run_net_sgmcmc_batched(pb, ctl, rs, outs, status, group_size);
    else nn::run_net_sgmcmc(pb, ctl, rs, outs, status);
  });
  for (const auto& s : status)
    if (s.diverged) throw std::runtime_error("a chain diverged: " + s.message);
  for (int c = 0; c < chains; ++c) {
    out.values.insert(out.values.end(), pred[c].begin(), pred[c].end());
    out.values.insert(out.values.end(), pfinal[c].begin(), pfinal[c].end());
  }
  return out;
}

}  // namespace

std::vector<Row> check_sgmcmc(const Options& o, const Target& ref, const Target& tgt) {
  std::vector<Row> rows;
  const Data d = regression(405, 13, o.seed);
  const nn::ModelSpec spec = mlp(13, {50, 50}, 1, nn::Family::gaussian);
  struct Case {
    const char* name;
    sg::Sampler sampler;
    sg::SaForm form;
  };
  const Case cases[] = {{"sghmc-sa mlp 13-50-50-1", sg::Sampler::sghmc, sg::SaForm::lowrank},
                        {"hamcmc-sa lowrank mlp", sg::Sampler::hamcmc_sa, sg::SaForm::lowrank},
                        {"hamcmc-sa diagonal mlp", sg::Sampler::hamcmc_sa, sg::SaForm::diagonal}};
  for (const Case& k : cases) {
    auto run = [&](const Target& t, bool timing) {
      return timing ? chain_run(spec, d, t, k.sampler, k.form, 4, o.quick ? 300 : 1000, o.seed)
                    : chain_run(spec, d, t, k.sampler, k.form, 2, 200, o.seed);
    };
    for (auto& r : agree_and_time(k.name, o, ref, tgt, run, 1e-6)) rows.push_back(r);
  }
  // SGHMC-SA chains as one batched network (the bench: 8 chains of the Boston network)
  auto runb = [&](const Target& t, bool timing) {
    return timing ? chain_run(spec, d, t, sg::Sampler::sghmc, sg::SaForm::diagonal, 8, o.quick ? 300 : 2000, o.seed,
                              true)
                  : chain_run(spec, d, t, sg::Sampler::sghmc, sg::SaForm::diagonal, 4, 200, o.seed, true);
  };
  for (auto& r : agree_and_time("sghmc-sa batched mlp 13-50-50-1", o, ref, tgt, runb, 1e-6)) rows.push_back(r);
  // HAMCMC-SA chains (low-rank form: each chain's L-BFGS memories as slices of batched tensors) as one batched network
  auto runh = [&](const Target& t, bool timing) {
    return timing ? chain_run(spec, d, t, sg::Sampler::hamcmc_sa, sg::SaForm::lowrank, 8, o.quick ? 300 : 1000,
                              o.seed, true)
                  : chain_run(spec, d, t, sg::Sampler::hamcmc_sa, sg::SaForm::lowrank, 4, 200, o.seed, true);
  };
  for (auto& r : agree_and_time("hamcmc-sa lowrank batched mlp", o, ref, tgt, runh, 1e-6)) rows.push_back(r);
  // batched = unbatched, and a chain does not depend on its group (float64, the reference device)
  for (sg::Sampler smp : {sg::Sampler::sghmc, sg::Sampler::hamcmc_sa}) {
    const bool h = smp == sg::Sampler::hamcmc_sa;
    rows.push_back(batched_equals_unbatched(h ? "hamcmc-sa lowrank batched = unbatched" : "sghmc-sa batched = unbatched",
                                            ref, 1e-10, [&](const Target& t, std::int64_t g) {
      return chain_run(spec, d, t, smp, h ? sg::SaForm::lowrank : sg::SaForm::diagonal, 4, 60, o.seed, g > 0, g);
    }));
  }
  return rows;
}

}  // namespace devcheck
