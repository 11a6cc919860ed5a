// tests/device/check_wbb.cpp -- WBB draws of networks (nn/wbb.hpp over wbb/driver.hpp): an MLP regression and
// a CNN classifier, one network per draw; the same MLP and CNN as one batched network (nn/batched.hpp: on a GPU
// the CNN's convolutions are grouped convolutions, on the CPU one call per member), on both devices and against
// the unbatched draws.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "scalebayes/nn/batched.hpp"
#include "scalebayes/nn/wbb.hpp"

#include "device_check.hpp"

namespace devcheck {

namespace {

// `draws` WBB draws of `spec` on d (first n_new rows of d as new inputs); outputs: predictions and objectives.
// batched: the draws as one batched network per worker (group_size 0: the engine's automatic groups).
Outcome wbb_run(const nn::ModelSpec& spec, const Data& d, std::int64_t n_new, const Target& t, std::size_t draws,
                std::int64_t epochs, double lr, std::uint64_t seed, bool batched = false, std::int64_t group_size = 0) {
  const nn::DeviceChoice dev = t.choice();
  nn::NetWbbProblem pb;
  pb.spec = spec;
  pb.dev = dev;
  const nn::Dataset data = nn::make_dataset(d.x.data(), d.dims, d.y.data(), spec.family, dev.options());
  pb.data = &data;
  pb.x_new = data.x.slice(0, 0, n_new).clone();
  pb.train.lr = lr;
  pb.train.epochs = epochs;
  pb.train.batch_size = 50;
  pb.train.history = false;
  pb.lambda = 1e-4;
  pb.torch_threads = 1;
  nn::Net probe(spec, torch::kCPU, torch::kFloat);
  const std::size_t m = static_cast<std::size_t>(n_new * probe->out_dim());
  std::vector<double> pred(m * draws), obj(draws), gn(draws);
  std::vector<int> status(draws, 0);
  nn::NetWbbOutput out;
  out.pred = pred.data();
  out.objective = obj.data();
  out.grad_norm = gn.data();
  out.status = status.data();
  scalebayes::wbb::Settings st;
  st.seed = seed;
  st.draws = draws;
  st.threads = nn::device_worker_threads(dev.device, t.threads);
  Outcome o;
  o.seconds = wall_seconds([&] {
    if (batched) nn::run_net_wbb_batched(pb, out, st, group_size);
    else nn::run_net_wbb(pb, out, st);
  });
  for (int s : status)
    if (s != nn::done) throw std::runtime_error("a WBB draw did not finish (status " + std::to_string(s) + ")");
  o.values = pred;
  o.values.insert(o.values.end(), obj.begin(), obj.end());
  return o;
}

// A network's batched rows: its draws as one batched network on both devices (agree, time) and, on the reference
// device in float64, batched = unbatched with groups of 1 against 4 identical. run(target, timing, group): the
// timing run, or the agreement run unbatched (group -1) or batched (0: the engine's groups; g > 0: groups of g).
void add_batched_rows(std::vector<Row>& rows, const std::string& engine, const std::string& equals, const Options& o,
                      const Target& ref, const Target& tgt,
                      const std::function<Outcome(const Target&, bool, std::int64_t)>& run) {
  for (auto& r : agree_and_time(engine, o, ref, tgt, [&](const Target& t, bool timing) { return run(t, timing, 0); },
                                1e-7))
    rows.push_back(r);
  rows.push_back(batched_equals_unbatched(equals, ref, 1e-7, [&](const Target& t, std::int64_t g) {
    return run(t, false, g ? g : -1);
  }));
}

}  // namespace

std::vector<Row> check_wbb(const Options& o, const Target& ref, const Target& tgt) {
  std::vector<Row> rows;
  {  // the Boston network: 13-50-50-1, 405 rows
    const Data d = regression(405, 13, o.seed);
    const nn::ModelSpec spec = mlp(13, {50, 50}, 1, nn::Family::gaussian);
    auto run = [&](const Target& t, bool timing) {
      return timing ? wbb_run(spec, d, 100, t, o.quick ? 4 : 20, o.quick ? 10 : 100, 1e-3, o.seed)
                    : wbb_run(spec, d, 100, t, 3, 3, 1e-3, o.seed);
    };
    for (auto& r : agree_and_time("wbb mlp 13-50-50-1", o, ref, tgt, run, 1e-7)) rows.push_back(r);
    // the same draws as one batched network (the bench: 100 draws x 100 epochs); batched = unbatched
    add_batched_rows(rows, "wbb batched mlp 13-50-50-1", "wbb batched = unbatched", o, ref, tgt,
                     [&](const Target& t, bool timing, std::int64_t g) {
                       return timing ? wbb_run(spec, d, 100, t, o.quick ? 20 : 100, o.quick ? 10 : 100, 1e-3, o.seed, true)
                                     : wbb_run(spec, d, 100, t, 6, 3, 1e-3, o.seed, g >= 0, std::max<std::int64_t>(g, 0));
                     });
  }
  {  // a CNN on 28 x 28 images
    const Data d = images(o.quick ? 300 : 2000, 28, false, o.seed);
    const nn::ModelSpec spec = cnn(28);
    const Data a = head(d, 256);  // the agreement run's data: the first 256 images
    auto run = [&](const Target& t, bool timing) {
      return timing ? wbb_run(spec, d, 200, t, 2, o.quick ? 1 : 3, 1e-3, o.seed) : wbb_run(spec, a, 64, t, 2, 1, 1e-3, o.seed);
    };
    for (auto& r : agree_and_time("wbb cnn 28x28", o, ref, tgt, run, 1e-7)) rows.push_back(r);
    // the same CNN batched (on a GPU: grouped convolutions, against the CPU's one convolution per member)
    add_batched_rows(rows, "wbb batched cnn 28x28", "wbb batched cnn = unbatched", o, ref, tgt,
                     [&](const Target& t, bool timing, std::int64_t g) {
                       return timing ? wbb_run(spec, d, 200, t, o.quick ? 4 : 16, o.quick ? 1 : 3, 1e-3, o.seed, true)
                                     : wbb_run(spec, a, 64, t, 4, 1, 1e-3, o.seed, g >= 0, std::max<std::int64_t>(g, 0));
                     });
  }
  return rows;
}

}  // namespace devcheck
