// sb_nn_wbb -- WBB draws of a network from IDX files, without R, over the package's engine headers
// (inst/include/scalebayes/nn, wbb/driver.hpp). For machines with a (CUDA) LibTorch and no R.
//
//   sb_nn_wbb --train-images F --train-labels F --test-images F --test-labels F [--n 500] [--draws 100]
//             [--hidden 128,64 | --cnn] [--lambda 1e-4] [--epochs 100] [--batch 50] [--lr 1e-3]
//             [--device cpu|cuda|auto] [--threads 1] [--seed 1] [--scale 255]
// Prints one line per draw (draw, test accuracy, objective, gradient norm) and the total time.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "scalebayes/nn/idx.hpp"
#include "scalebayes/nn/wbb.hpp"

namespace nn = scalebayes::nn;

int main(int argc, char** argv) {
  std::map<std::string, std::string> a = {{"--n", "500"},      {"--draws", "10"},  {"--hidden", "128,64"},
                                          {"--lambda", "1e-4"}, {"--epochs", "100"}, {"--batch", "50"},
                                          {"--lr", "1e-3"},     {"--device", "auto"}, {"--threads", "1"},
                                          {"--seed", "1"},      {"--scale", "255"}};
  bool cnn = false;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--cnn") { cnn = true; continue; }
    if (i + 1 >= argc) { std::cerr << "missing value for " << k << "\n"; return 2; }
    a[k] = argv[++i];
  }
  for (const char* k : {"--train-images", "--train-labels", "--test-images", "--test-labels"})
    if (!a.count(k)) { std::cerr << "need " << k << " (uncompressed IDX files)\n"; return 2; }
  try {
    const nn::IdxArray xi = nn::read_idx_file(a["--train-images"]), yi = nn::read_idx_file(a["--train-labels"]);
    const nn::IdxArray xt = nn::read_idx_file(a["--test-images"]), yt = nn::read_idx_file(a["--test-labels"]);
    const double scale = std::stod(a["--scale"]);
    const std::int64_t n = std::min<std::int64_t>(std::stoll(a["--n"]), xi.dims[0]);
    const std::int64_t h = xi.dims[1], w = xi.dims[2], N = xi.dims[0];
    // the first n training examples (column-major, examples first): copy rows 0..n-1
    std::vector<double> x(static_cast<std::size_t>(n * h * w)), y(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < h * w; ++j)
      for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i + n * j)] = xi.values[static_cast<std::size_t>(i + N * j)] / scale;
    for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = yi.values[static_cast<std::size_t>(i)];
    std::vector<double> xtest(xt.values);
    for (auto& v : xtest) v /= scale;

    nn::ModelSpec spec;
    spec.family = nn::Family::multinomial;
    spec.input = {1, h, w};
    using K = nn::LayerKind;
    if (cnn) {  // 2-Conv-2-FC (Deng et al. 2019, Appendix D.1), same padding
      spec.layers = {{K::conv2d, 32, 5, 1, 2, true}, {K::relu}, {K::maxpool2d, 0, 2, 2, 0, false},
                     {K::conv2d, 64, 5, 1, 2, true}, {K::relu}, {K::maxpool2d, 0, 2, 2, 0, false},
                     {K::flatten}, {K::linear, 200, 0, 1, 0, true}, {K::relu}, {K::linear, 10, 0, 1, 0, true}};
    } else {
      spec.layers = {{K::flatten}};
      std::stringstream ss(a["--hidden"]);
      std::string tok;
      while (std::getline(ss, tok, ',')) {
        spec.layers.push_back({K::linear, std::stoll(tok), 0, 1, 0, true});
        spec.layers.push_back({K::relu});
      }
      spec.layers.push_back({K::linear, 10, 0, 1, 0, true});
    }
    nn::NetWbbProblem pb;
    pb.spec = spec;
    pb.dev = nn::choose_device(a["--device"], false);
    const nn::Dataset data = nn::make_dataset(x.data(), {n, 1, h, w}, y.data(), spec.family, pb.dev.options());
    pb.data = &data;
    pb.x_new = nn::from_col_major(xtest.data(), {xt.dims[0], 1, h, w}, pb.dev.options());
    pb.train.lr = std::stod(a["--lr"]);
    pb.train.epochs = std::stoll(a["--epochs"]);
    pb.train.batch_size = std::stoll(a["--batch"]);
    pb.lambda = std::stod(a["--lambda"]);
    scalebayes::wbb::Settings st;
    st.seed = std::stoull(a["--seed"]);
    st.draws = std::stoull(a["--draws"]);
    st.threads = nn::device_worker_threads(pb.dev.device, std::stoi(a["--threads"]));
    st.prior = scalebayes::wbb::PriorWeights::common;
    const std::size_t m = static_cast<std::size_t>(xt.dims[0]) * 10;
    std::vector<double> pred(st.draws * m), obj(st.draws), gn(st.draws), steps(st.draws);
    std::vector<int> status(st.draws);
    nn::NetWbbOutput out;
    out.pred = pred.data(); out.objective = obj.data(); out.grad_norm = gn.data(); out.steps = steps.data();
    out.status = status.data();
    nn::BlasThreadGuard blas1;
    std::cout << "device " << pb.dev.device.str() << ", n = " << n << ", draws = " << st.draws << "\n";
    const auto t0 = std::chrono::steady_clock::now();
    nn::run_net_wbb(pb, out, st);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t t = 0; t < st.draws; ++t) {
      std::size_t right = 0;
      for (std::int64_t i = 0; i < xt.dims[0]; ++i) {
        const double* p = pred.data() + t * m + static_cast<std::size_t>(i) * 10;
        const int cls = static_cast<int>(std::max_element(p, p + 10) - p);
        right += cls == static_cast<int>(yt.values[static_cast<std::size_t>(i)]);
      }
      std::printf("draw %zu accuracy %.4f objective %.4g grad_norm %.3g\n", t + 1,
                  static_cast<double>(right) / static_cast<double>(xt.dims[0]), obj[t], gn[t]);
    }
    std::printf("seconds %.2f (%.3f per draw)\n", sec, sec / static_cast<double>(st.draws));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
