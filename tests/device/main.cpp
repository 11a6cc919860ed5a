// sb_device_check -- runs every network engine of scalebayes (inst/include/scalebayes/nn) on two devices and
// checks that they agree (see device_check.hpp for what "agree" and "time" mean).
//
//   sb_device_check [--device auto|cpu|cuda] [--quick] [--threads N] [--seed S] [--only wbb,sgmcmc,vi]
//
// With a CUDA device (auto, or cuda) the reference is the CPU (N worker threads) and the target CUDA; without
// one (or --device cpu) the reference is the CPU on one worker thread and the target the CPU on N (a draw or a
// chain is a function of its seed only, so the two must agree exactly). Prints one row per check and exits
// with status 1 when an "agree" check fails, an engine throws, or a timed run gives non-finite outputs.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "device_check.hpp"

int main(int argc, char** argv) {
  using namespace devcheck;
  Options o;
  std::string device = "auto", only = "wbb,sgmcmc,vi";
  o.threads = static_cast<int>(std::max(2u, std::min(16u, std::thread::hardware_concurrency())));
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("missing value for " + k);
      return argv[++i];
    };
    try {
      if (k == "--quick") o.quick = true;
      else if (k == "--device") device = val();
      else if (k == "--threads") o.threads = std::stoi(val());
      else if (k == "--seed") o.seed = std::stoull(val());
      else if (k == "--only") only = val();
      else throw std::invalid_argument("unknown option " + k);
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  const bool has_cuda = torch::cuda::is_available();
  if (device == "cuda" && !has_cuda) {
    std::cerr << "--device cuda: this LibTorch sees no CUDA device\n";
    return 2;
  }
  o.cuda = has_cuda && device != "cpu";
  Target ref, tgt;
  ref.threads = o.cuda ? o.threads : 1;
  if (o.cuda) {
    tgt.device = torch::Device(torch::kCUDA, 0);
    tgt.threads = 1;
    torch::Tensor warm = torch::ones({256, 256}, torch::TensorOptions().device(tgt.device));
    (void)(warm.mm(warm).sum().item<float>());  // the CUDA context and cuBLAS handle, before any timing
  } else {
    tgt.threads = o.threads;
  }
  std::printf("sb_device_check: LibTorch %s, CUDA %s%s, reference %s, target %s, %s\n", TORCH_VERSION,
              has_cuda ? "available" : "not available",
              has_cuda ? (" (" + std::to_string(torch::cuda::device_count()) + " device(s))").c_str() : "",
              ref.name().c_str(), tgt.name().c_str(), o.quick ? "quick" : "full");
  std::fflush(stdout);
  std::vector<Row> rows;
  auto want = [&](const char* g) { return ("," + only + ",").find(std::string(",") + g + ",") != std::string::npos; };
  auto add = [&](const char* g, std::vector<Row> (*f)(const Options&, const Target&, const Target&)) {
    if (!want(g)) return;
    try {
      for (auto& r : f(o, ref, tgt)) {
        rows.push_back(r);
        std::printf("  %-30s %-5s done\n", r.engine.c_str(), r.check.c_str());
        std::fflush(stdout);
      }
    } catch (const std::exception& e) {
      Row r;
      r.engine = g;
      r.check = "setup";
      r.pass = false;
      r.note = std::string("error: ") + e.what();
      rows.push_back(r);
    }
  };
  add("wbb", check_wbb);
  add("sgmcmc", check_sgmcmc);
  add("vi", check_vi);
  std::printf("\n%-30s %-6s %-8s %-8s %9s %9s %8s %10s %8s %-4s %s\n", "engine", "check", "ref", "target", "ref_s",
              "target_s", "speedup", "rel_diff", "tol", "ok", "note");
  int failed = 0;
  for (const Row& r : rows) {
    const double sp = r.ref_s / r.target_s;
    std::printf("%-30s %-6s %-8s %-8s %9.3f %9.3f %8.2f %10.2e %8.0e %-4s %s\n", r.engine.c_str(), r.check.c_str(),
                r.ref.c_str(), r.target.c_str(), r.ref_s, r.target_s, sp, r.rel_diff, r.tol, r.pass ? "yes" : "NO",
                r.note.c_str());
    failed += r.pass ? 0 : 1;
  }
  std::printf("\n%d checks, %d failed\n", static_cast<int>(rows.size()), failed);
  return failed ? 1 : 0;
}
