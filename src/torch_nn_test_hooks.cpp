// Test hooks of the LibTorch network engine (see test_hooks.h): entry points that tests/testthat calls (through
// tests/testthat/helper-test-hooks.R) to check the engine against references written independently -- the
// variational objective's KL, gradients and inclusions, a network's raw forward pass, the storage and L-BFGS
// operations under both storage policies, the regradient of a network chain and the training loop's
// certificate. No user-facing function calls them; the user-facing entry points are in torch_nn.cpp.
// Compiled only with SCALEBAYES_TEST_HOOKS (configure): without it this unit is empty.
#ifdef SCALEBAYES_TEST_HOOKS
#include "torch_glue.h"
#include "test_hooks.h"

#ifdef SCALEBAYES_HAVE_TORCH
namespace nn = scalebayes::nn;
using namespace sbtorch;  // the shared helpers (torch_glue.h), called unqualified
#endif

// Test hook of the variational engine (float64, CPU): a network at mean parameters `params` (Net::copy_to
// order) with q's rho and logit (one value per parameter; logit ignored unless the prior is spike_slab) and the
// vi settings list of cpp_nn_vi (log_lambda its first entry). what = "kl": KL(q || p) (one value); "grad": `reps`
// replications of the gradient of the minibatch NLL mean over all of x with respect to (mu, rho), a reps x 2P
// matrix; "gamma": `reps` hard Gumbel-softmax inclusions of the variational weights, reps x (weights of q).
Rcpp::NumericMatrix cpp_vi_test(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim, Rcpp::NumericVector y,
                                Rcpp::NumericVector params, Rcpp::NumericVector rho, Rcpp::NumericVector logit,
                                Rcpp::List vi, std::string what, int reps, double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace V = scalebayes::nn::vi;
  nn::TorchThreadGuard torch_threads0;
  nn::set_worker_threads(1);
  const nn::ModelSpec ms = spec_from(spec);
  nn::Net net(ms, torch::kCPU, torch::kDouble);
  V::Settings st = vi_settings_from(vi);
  st.log_lambda = Rcpp::NumericVector(vi["log_lambda"])[0];
  V::Variational v(net, st);
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), 0);
  net->init_from(s);
  v.init_from(s);
  const std::int64_t P = net->n_parameters();
  if (params.size() != P || rho.size() != P || logit.size() != P) Rcpp::stop("params, rho and logit need P values");
  net->copy_from(params.begin());
  std::vector<std::int64_t> start;
  std::int64_t a = 0;
  for (const auto& g : net->groups()) {
    start.push_back(a);
    a += g.tensor.numel();
  }
  {
    torch::NoGradGuard ng;
    for (auto& g : v.groups()) {
      const auto sz = net->groups()[g.g].tensor.sizes();
      g.rho.copy_(torch::from_blob(rho.begin() + start[g.g], sz, torch::kDouble));
      if (g.logit.defined()) g.logit.copy_(torch::from_blob(logit.begin() + start[g.g], sz, torch::kDouble));
    }
  }
  if (what == "kl") {
    Rcpp::NumericMatrix r(1, 1);
    torch::NoGradGuard ng;
    r(0, 0) = v.kl().item<double>();
    return r;
  }
  if (what == "gamma") {
    // the flat inclusion draw of training (logit groups in group order), mapped back to group order
    std::int64_t m = v.n_logit();
    Rcpp::NumericMatrix r(reps, m);
    torch::NoGradGuard ng;
    for (int k = 0; k < reps; ++k) {
      const torch::Tensor t = m > 0 ? v.gamma_flat().to(torch::kDouble).contiguous() : torch::Tensor();
      std::int64_t c = 0;
      for (auto& g : v.groups()) {
        if (!g.logit.defined()) continue;
        for (std::int64_t j = 0; j < g.numel; ++j) r(k, c + j) = t.data_ptr<double>()[g.off + j];
        c += g.numel;
      }
    }
    return r;
  }
  // "grad": the gradient of one forward pass's mean NLL; "grad_step": of a training step's loss (the K = samples
  // passes of ViObjective::minibatch, stacked where it stacks them, plus the KL term) on the whole data
  if (what != "grad" && what != "grad_step") Rcpp::stop("unknown test");
  const nn::DeviceChoice dev = nn::choose_device("cpu", true);
  nn::Dataset d = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), ms.family, dev.options(), y_columns(y, xdim));
  V::ViObjective obj(net, v, d);
  V::SampleHook hook(v, net);
  Rcpp::NumericMatrix r(reps, 2 * P);
  std::vector<double> row(static_cast<std::size_t>(2 * P));
  auto put = [&](std::int64_t at, const torch::Tensor& g) {  // one contiguous copy per tensor
    const torch::Tensor c = g.detach().to(torch::kDouble).contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), row.begin() + at);
  };
  for (int k = 0; k < reps; ++k) {
    net->zero_grad();
    v.zero_rho_grad();
    torch::Tensor l;
    if (what == "grad") {
      l = obj.nll_examples(net->forward(d.x, hook), d.y).mean();
    } else {
      obj.start();
      l = obj.minibatch(torch::arange(d.n(), torch::TensorOptions().dtype(torch::kLong)), nn::StepInfo()).loss;
    }
    l.backward();
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t gi = 0; gi < net->groups().size(); ++gi) {
      const torch::Tensor gr = net->groups()[gi].tensor.grad();
      if (gr.defined()) put(start[gi], gr);
    }
    for (auto& g : v.groups()) {
      const torch::Tensor gr = v.rho_grad(g);
      if (gr.defined()) put(P + start[g.g], gr);
    }
    for (std::int64_t j = 0; j < 2 * P; ++j) r(k, j) = row[static_cast<std::size_t>(j)];
  }
  return r;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Raw outputs of one network with the given parameters on x (test hook for dropout): the network's generator
// is seeded as for draw `stream` of `seed` (Net::init_from), then the parameters are set; train: training
// mode (dropout masks drawn) or prediction mode. Returns n x out, row-major.
Rcpp::NumericVector cpp_nn_forward(Rcpp::List spec, Rcpp::NumericVector params, Rcpp::NumericVector x,
                                   Rcpp::IntegerVector xdim, bool train, double seed, double stream, bool float64) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  const nn::ModelSpec ms = spec_from(spec);
  const nn::DeviceChoice dev = nn::choose_device("cpu", float64);
  nn::Net net(ms, dev.device, dev.dtype);
  if (params.size() != net->n_parameters()) Rcpp::stop("params has the wrong length");
  scalebayes::rng::Stream s(static_cast<std::uint64_t>(seed), static_cast<std::uint64_t>(stream));
  net->init_from(s);
  net->copy_from(params.begin());
  if (train) net->train(); else net->eval();
  const torch::Tensor out =
      net->forward(nn::from_col_major(x.begin(), dims_of(xdim), dev.options())).to(torch::kCPU, torch::kDouble).contiguous();
  return Rcpp::NumericVector(out.data_ptr<double>(), out.data_ptr<double>() + out.numel());
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the storage concept (sgmcmc/storage.hpp): the same operations on the same float64 inputs through
// the Eigen policy and the LibTorch policy (CPU, double). a, b, c: arrays of one length; alpha, sigma, delta:
// numbers. Returns list(eigen = ..., torch = ...), each with dot, axpy (b + alpha a), where_scalar
// (alpha > 0 ? sigma : delta), where_array (c > 0 ? a : b), group_dot (a.b + c.c over two groups), prior_grad,
// inclusion, and after one SA step (omega = alpha) rho, kappa0, kappa1, delta, sigma.
Rcpp::List cpp_test_storage_ops(Rcpp::NumericVector a, Rcpp::NumericVector b, Rcpp::NumericVector c, double alpha,
                                double sigma, double delta) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace sg = scalebayes::sgmcmc;
  const Eigen::Index n = a.size();
  if (b.size() != n || c.size() != n) Rcpp::stop("a, b, c must have one length");
  auto eig = [&](const Rcpp::NumericVector& v) { return Eigen::ArrayXd(Eigen::Map<const Eigen::ArrayXd>(v.begin(), n)); };
  auto ten = [&](const Rcpp::NumericVector& v) {
    return torch::from_blob(const_cast<double*>(v.begin()), {static_cast<std::int64_t>(n)}, torch::kDouble).clone();
  };
  auto vec = [](const torch::Tensor& t) {
    const torch::Tensor u = t.detach().contiguous();
    return Rcpp::NumericVector(u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
  };
  auto vecE = [](const Eigen::ArrayXd& x) { return Rcpp::NumericVector(x.data(), x.data() + x.size()); };
  sg::SSGLHyper h;
  h.v0 = 0.1;
  h.v1 = 10;
  sg::SAInput<sg::EigenOps> inE;
  inE.n_total = 100;
  inE.resid_ss = 42;
  sg::SAInput<nn::TorchOps> inT;
  inT.n_total = 100;
  inT.resid_ss = torch::full({}, 42.0, torch::kDouble);
  Rcpp::List out(2);
  {  // Eigen
    using O = sg::EigenOps;
    std::vector<sg::Group<O>> gs(2);
    gs[0].value = eig(a);
    gs[1].value = eig(c);
    for (auto& g : gs) g.grad = O::zeros_like(g.value);
    Eigen::ArrayXd y = eig(b);
    O::axpy(alpha, eig(a), y);
    const auto v = sg::GroupVector<O>::values(gs);
    sg::init_latents<O>(gs[0], 0.5, delta, h);
    sg::init_latents<O>(gs[1], 0.3, delta, h);
    O::ssgl_prior_grad(gs[0].grad, gs[0].value, gs[0].kappa0, gs[0].kappa1, sigma);
    const Eigen::ArrayXd inc = O::inclusion_prob(gs[0].value, sigma, delta, h.v0, h.v1);
    double sg_ = sigma;
    sg::sa_update<O>(gs, sg_, alpha, h, inE, true);
    out[0] = Rcpp::List::create(
        Rcpp::Named("dot") = O::dot(eig(a), eig(b)), Rcpp::Named("axpy") = vecE(y),
        Rcpp::Named("where_scalar") = O::where(alpha, sigma, delta),
        Rcpp::Named("where_array") = vecE(O::where(eig(c), eig(a), eig(b))), Rcpp::Named("group_dot") = v.dot(v),
        Rcpp::Named("prior_grad") = vecE(gs[0].grad), Rcpp::Named("inclusion") = vecE(inc),
        Rcpp::Named("rho") = vecE(gs[0].rho), Rcpp::Named("kappa0") = vecE(gs[0].kappa0),
        Rcpp::Named("kappa1") = vecE(gs[1].kappa1), Rcpp::Named("delta") = gs[1].delta, Rcpp::Named("sigma") = sg_);
  }
  {  // LibTorch, float64 on the CPU
    using O = nn::TorchOps;
    auto sc = [](double v) { return torch::full({}, v, torch::kDouble); };
    std::vector<sg::Group<O>> gs(2);
    gs[0].value = ten(a);
    gs[1].value = ten(c);
    for (auto& g : gs) g.grad = O::zeros_like(g.value);
    torch::Tensor y = ten(b);
    O::axpy(sc(alpha), ten(a), y);
    const auto v = sg::GroupVector<O>::values(gs);
    sg::init_latents<O>(gs[0], 0.5, sc(delta), h);
    sg::init_latents<O>(gs[1], 0.3, sc(delta), h);
    O::ssgl_prior_grad(gs[0].grad, gs[0].value, gs[0].kappa0, gs[0].kappa1, sc(sigma));
    const torch::Tensor inc = O::inclusion_prob(gs[0].value, sc(sigma), sc(delta), h.v0, h.v1);
    torch::Tensor sg_ = sc(sigma);
    sg::sa_update<O>(gs, sg_, alpha, h, inT, true);
    out[1] = Rcpp::List::create(
        Rcpp::Named("dot") = O::value(O::dot(ten(a), ten(b))), Rcpp::Named("axpy") = vec(y),
        Rcpp::Named("where_scalar") = O::value(O::where(sc(alpha), sc(sigma), sc(delta))),
        Rcpp::Named("where_array") = vec(O::where(ten(c), ten(a), ten(b))),
        Rcpp::Named("group_dot") = O::value(v.dot(v)), Rcpp::Named("prior_grad") = vec(gs[0].grad),
        Rcpp::Named("inclusion") = vec(inc), Rcpp::Named("rho") = vec(gs[0].rho),
        Rcpp::Named("kappa0") = vec(gs[0].kappa0), Rcpp::Named("kappa1") = vec(gs[1].kappa1),
        Rcpp::Named("delta") = O::value(gs[1].delta), Rcpp::Named("sigma") = O::value(sg_));
  }
  out.names() = Rcpp::CharacterVector::create("eigen", "torch");
  return out;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the damped L-BFGS memory (sgmcmc/lbfgs.hpp) through the Eigen and the LibTorch storage (CPU,
// float64): the pairs are the columns of S and Y (oldest first), split into two groups after `split` rows; the
// memory keeps `memory` of them. Returns list(eigen = , torch = ), each with G (G~ v), S (S~ z), diag (diag G~), gamma and sybar
// (s'ybar of the kept pairs).
Rcpp::List cpp_test_lbfgs_ops(Rcpp::NumericMatrix S, Rcpp::NumericMatrix Y, Rcpp::NumericVector v,
                              Rcpp::NumericVector z, int memory, double r, double gamma_min, int split) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace sg = scalebayes::sgmcmc;
  const long d = S.nrow(), m = S.ncol();
  if (Y.nrow() != d || Y.ncol() != m || v.size() != d || z.size() != d || split < 0 || split > d)
    Rcpp::stop("S, Y, v, z must have matching sizes and 0 <= split <= nrow(S)");
  auto run = [&](auto ops_tag, auto to_array, auto to_host, auto scalar0) {
    using O = decltype(ops_tag);
    using GV = sg::GroupVector<O>;
    auto gv = [&](const double* p) {
      GV g;
      g.parts.push_back(to_array(p, split));
      g.parts.push_back(to_array(p + split, d - split));
      return g;
    };
    auto host = [&](const GV& g) {
      Rcpp::NumericVector out(d);
      long o = 0;
      for (const auto& part : g.parts) {
        const std::vector<double> h = to_host(part);
        for (double e : h) out[o++] = e;
      }
      return out;
    };
    sg::DampedLbfgs<O> mem(memory, r, gamma_min);
    for (long k = 0; k < m; ++k) mem.push(gv(&S(0, k)), gv(&Y(0, k)));
    mem.prepare(scalar0());
    Rcpp::NumericVector sy(mem.size());
    for (int i = 0; i < mem.size(); ++i) sy[i] = O::value(mem.sybar(i));
    return Rcpp::List::create(Rcpp::Named("G") = host(mem.apply_G(gv(v.begin()))),
                              Rcpp::Named("S") = host(mem.apply_S(gv(z.begin()))),
                              Rcpp::Named("diag") = host(mem.diag_G(gv(v.begin()))),
                              Rcpp::Named("gamma") = O::value(mem.gamma()), Rcpp::Named("sybar") = sy);
  };
  Rcpp::List out(2);
  out[0] = run(
      sg::EigenOps{}, [](const double* p, long n) { return Eigen::ArrayXd(Eigen::Map<const Eigen::ArrayXd>(p, n)); },
      [](const Eigen::ArrayXd& a) { return std::vector<double>(a.data(), a.data() + a.size()); },
      []() { return 0.0; });
  out[1] = run(
      nn::TorchOps{},
      [](const double* p, long n) {
        return torch::from_blob(const_cast<double*>(p), {static_cast<std::int64_t>(n)}, torch::kDouble).clone();
      },
      [](const torch::Tensor& t) {
        const torch::Tensor u = t.detach().contiguous();
        return std::vector<double>(u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
      },
      []() { return torch::zeros({}, torch::kDouble); });
  out.names() = Rcpp::CharacterVector::create("eigen", "torch");
  return out;
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of DampedLbfgs::push_masked (sgmcmc/lbfgs.hpp) through the batched storage (nn/batched_sgmcmc.hpp,
// float64): a group of two members, member 0 pushed every pair (columns of S and Y, oldest first), member 1 only
// those with keep[k]. Returns list(batched = list(G, S, diag, gamma) with one column / entry per member, single =
// the same from two one-chain memories (TorchOps), member 0's fed every pair and member 1's the kept pairs.
Rcpp::List cpp_test_lbfgs_masked(Rcpp::NumericMatrix S, Rcpp::NumericMatrix Y, Rcpp::LogicalVector keep,
                                 Rcpp::NumericVector v, Rcpp::NumericVector z, int memory, double r,
                                 double gamma_min) {
#ifdef SCALEBAYES_HAVE_TORCH
  namespace sg = scalebayes::sgmcmc;
  const long d = S.nrow(), m = S.ncol();
  if (Y.nrow() != d || Y.ncol() != m || keep.size() != m || v.size() != d || z.size() != d)
    Rcpp::stop("S, Y, keep, v, z must have matching sizes");
  const auto opt = torch::TensorOptions().dtype(torch::kDouble);
  auto col = [&](const double* p) { return torch::from_blob(const_cast<double*>(p), {d}, opt).clone(); };
  auto host = [&](const torch::Tensor& t) {
    const torch::Tensor u = t.detach().contiguous();
    return Rcpp::NumericVector(u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
  };
  using B = nn::BatchedTorchOps;
  using BGV = sg::GroupVector<B>;
  auto bgv = [&](const torch::Tensor& a, const torch::Tensor& b) {  // [2, d, 1]
    BGV g;
    g.parts.push_back(torch::stack({a, b}).view({2, d, 1}));
    return g;
  };
  sg::DampedLbfgs<B> bm(memory, r, gamma_min);
  const torch::Tensor zero2 = torch::zeros({2, 1, 1}, opt);
  for (long k = 0; k < m; ++k) {
    const torch::Tensor kp = torch::tensor(std::vector<double>{1.0, keep[k] ? 1.0 : 0.0}, opt).view({2, 1, 1});
    bm.push_masked(bgv(col(&S(0, k)), col(&S(0, k))), bgv(col(&Y(0, k)), col(&Y(0, k))), kp);
  }
  bm.prepare(zero2);
  const BGV vb = bgv(col(v.begin()), col(v.begin())), zb = bgv(col(z.begin()), col(z.begin()));
  auto members = [&](const BGV& g) {  // d x 2
    Rcpp::NumericVector h = host(g.parts[0].view({2, d}));  // member 0 then member 1: column-major d x 2
    h.attr("dim") = Rcpp::Dimension(d, 2);
    return h;
  };
  Rcpp::List batched = Rcpp::List::create(Rcpp::Named("G") = members(bm.apply_G(vb)),
                                          Rcpp::Named("S") = members(bm.apply_S(zb)),
                                          Rcpp::Named("diag") = members(bm.diag_G(vb)),
                                          Rcpp::Named("gamma") = host(bm.gamma()));
  using T = nn::TorchOps;
  using TGV = sg::GroupVector<T>;
  auto tgv = [&](const torch::Tensor& a) {
    TGV g;
    g.parts.push_back(a);
    return g;
  };
  Rcpp::List single(2);
  for (int member = 0; member < 2; ++member) {
    sg::DampedLbfgs<T> sm(memory, r, gamma_min);
    for (long k = 0; k < m; ++k)
      if (member == 0 || keep[k]) sm.push(tgv(col(&S(0, k))), tgv(col(&Y(0, k))));
    sm.prepare(torch::zeros({}, opt));
    single[member] = Rcpp::List::create(Rcpp::Named("G") = host(sm.apply_G(tgv(col(v.begin()))).parts[0]),
                                        Rcpp::Named("S") = host(sm.apply_S(tgv(col(z.begin()))).parts[0]),
                                        Rcpp::Named("diag") = host(sm.diag_G(tgv(col(v.begin()))).parts[0]),
                                        Rcpp::Named("gamma") = T::value(sm.gamma()));
  }
  return Rcpp::List::create(Rcpp::Named("batched") = batched, Rcpp::Named("single") = single);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

// Test hook of the network model's second gradient (nn/sgmcmc.hpp, NetModel::gradient): a chain model of the
// network (seed, chain 0, its substream for the initial weights) draws minibatch idx (1-based) replayable, then
// asks for the gradient again on the same minibatch. Returns both gradients (flattened, group order), whether the
// dropout generator's state and the batch-norm buffers after the second gradient equal those after the first,
// and the recorded minibatch count before and after (the second gradient records nothing). weights: per-example
// weights of the log-likelihood (length 0: none).
Rcpp::List cpp_test_net_regradient(Rcpp::List spec, Rcpp::NumericVector x, Rcpp::IntegerVector xdim,
                                   Rcpp::NumericVector y, Rcpp::IntegerVector idx, Rcpp::NumericVector weights,
                                   double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  torch::NoGradGuard ng;
  nn::NetChainProblem pb;
  pb.spec = spec_from(spec);
  pb.dev = nn::choose_device("cpu", true);
  const nn::Dataset data = nn::make_dataset(x.begin(), dims_of(xdim), y.begin(), pb.spec.family, pb.dev.options());
  pb.data = &data;
  if (weights.size() > 0)
    pb.weights = torch::from_blob(weights.begin(), {weights.size()}, torch::kDouble).clone();
  scalebayes::sgmcmc::Control ctl;
  scalebayes::rng::Stream init(static_cast<std::uint64_t>(seed), 0, 1);
  nn::NetModel model(pb, ctl, init);
  std::vector<long> ix(idx.begin(), idx.end());
  for (auto& v : ix) v -= 1;
  const long n = static_cast<long>(ix.size());
  auto grads = [&]() {
    std::vector<double> g;
    for (auto& gr : model.groups()) {
      const torch::Tensor t = gr.grad.contiguous();
      g.insert(g.end(), t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
    }
    return Rcpp::NumericVector(g.begin(), g.end());
  };
  auto state = [&]() {
    std::vector<torch::Tensor> st;
    for (const auto& b : model.net()->buffers()) st.push_back(b.clone());
    if (model.net()->has_dropout()) st.push_back(model.net()->dropout_generator().get_state());
    return st;
  };
  auto same = [](const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!torch::equal(a[i], b[i])) return false;
    return true;
  };
  model.minibatch(ix, n, true);
  const Rcpp::NumericVector g1 = grads();
  const auto st1 = state();
  double loss1 = NAN, acc1 = NAN;
  model.gradient(ix, n);
  const Rcpp::NumericVector g2 = grads();
  const bool unchanged = same(st1, state());
  const long recorded = model.recorded_examples();  // only the first pass was recorded
  model.take_means(&loss1, &acc1);
  model.minibatch(ix, n, false);     // a fresh minibatch draws new masks
  const Rcpp::NumericVector g3 = grads();
  return Rcpp::List::create(Rcpp::Named("first") = g1, Rcpp::Named("second") = g2, Rcpp::Named("fresh") = g3,
                            Rcpp::Named("state_unchanged") = unchanged, Rcpp::Named("recorded_loss") = loss1,
                            Rcpp::Named("recorded_examples") = static_cast<double>(recorded),
                            Rcpp::Named("n_buffers") = static_cast<int>(st1.size()));
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

#ifdef SCALEBAYES_HAVE_TORCH
namespace {

// TEST-ONLY objective of cpp_nn_train_check(): a network without hidden layers (one linear layer, p -> 1) plus
// an offset c that the OBJECTIVE owns (a tensor outside the network, updated by the same optimizer):
//     f_i = x_i' beta + b + c,   G(beta, b, c) = sum_i (y_i - f_i)^2 / 2 + (lambda / 2) (||beta||^2 + c^2).
// Its minimizer is known in closed form: c = 0 (b is unpenalized and absorbs the level), and (b, beta) the
// ridge solution solve(X1'X1 + lambda diag(0, 1, ..., 1), X1'y) with X1 = cbind(1, x). The minibatch loss is
// the unbiased estimate of G / n; written here with its own tensor code (not nn/objective.hpp's).
class RidgeOffsetObjective {
 public:
  RidgeOffsetObjective(nn::Net& net, const nn::Dataset& d, double lambda, double offset)
      : net_(net), d_(d), lambda_(lambda) {
    c_ = torch::full({}, offset, d.x.options()).set_requires_grad(true);
  }
  std::int64_t n() const { return d_.n(); }
  torch::Device device() const { return d_.x.device(); }
  std::vector<torch::Tensor> parameters() {
    std::vector<torch::Tensor> p = net_->parameters();
    p.push_back(c_);
    return p;
  }
  void start() { net_->train(); }
  void begin_epoch(scalebayes::rng::Stream&) {}  // no random numbers of its own
  nn::MinibatchLoss minibatch(const torch::Tensor& idx, const nn::StepInfo&) {
    const torch::Tensor xb = d_.x.index_select(0, idx), yb = d_.y.index_select(0, idx);
    nn::MinibatchLoss m;
    m.loss = (yb - net_->forward(xb).select(1, 0) - c_).pow(2).mean() * 0.5 +
             (lambda_ / (2.0 * static_cast<double>(n()))) * (weight().pow(2).sum() + c_.pow(2));
    return m;  // no accuracy
  }
  nn::Certificate certify(std::int64_t) {
    nn::Certificate ct;
    for (auto& p : parameters())
      if (p.grad().defined()) p.grad().zero_();
    const torch::Tensor r = d_.y - net_->forward(d_.x).select(1, 0) - c_;
    const torch::Tensor g = r.pow(2).sum() * 0.5 + (lambda_ / 2.0) * (weight().pow(2).sum() + c_.pow(2));
    (g / static_cast<double>(n())).backward();
    double g2 = 0.0;
    for (auto& p : parameters()) {
      if (p.grad().defined()) {
        g2 += p.grad().pow(2).sum().item<double>();
        p.grad().zero_();
      }
    }
    ct.objective = g.item<double>();
    ct.grad_norm = std::sqrt(g2);
    return ct;
  }
  double offset() const { return c_.item<double>(); }

 private:
  torch::Tensor weight() { return net_->groups().front().tensor; }
  nn::Net& net_;
  const nn::Dataset& d_;
  double lambda_;
  torch::Tensor c_;
};

}  // namespace
#endif

// TEST HOOK (not for users): trains the test-only RidgeOffsetObjective above through the real training loop
// (nn::train_loop) on x (n x p) and y, from the network parameters params0 (p weights, then the bias) and
// offset0, with the training settings of nn_engine_control() and the minibatch order from stream (seed, 0).
// Returns the final parameters, the offset, the loop's counts, its per-epoch history and certificate, and the
// progress counter's steps.
Rcpp::List cpp_nn_train_check(Rcpp::NumericMatrix x, Rcpp::NumericVector y, Rcpp::NumericVector params0,
                              double offset0, double lambda, Rcpp::List control, double seed) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::DeviceChoice dev = nn::choose_device("cpu", Rcpp::as<bool>(control["float64"]));
  nn::ModelSpec ms;
  ms.family = nn::Family::gaussian;
  ms.input = {static_cast<std::int64_t>(x.ncol())};
  ms.layers = {{nn::LayerKind::linear, 1, 0, 1, 0, true}};
  nn::Net net(ms, dev.device, dev.dtype);
  if (params0.size() != net->n_parameters()) Rcpp::stop("params0 must have ncol(x) + 1 values");
  net->copy_from(params0.begin());
  const nn::Dataset d = nn::make_dataset(x.begin(), {x.nrow(), x.ncol()}, y.begin(), ms.family, dev.options());
  const nn::TrainConfig tc = train_from(control);
  RidgeOffsetObjective obj(net, d, lambda, offset0);
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), 0);
  nn::TrainProgress tp;
  const nn::TrainResult r = nn::train_loop(obj, tc, s, scalebayes::parallel::StopToken(), true, &tp);
  Rcpp::NumericVector params(params0.size());
  net->copy_to(params.begin());
  Rcpp::NumericVector hl, ha;
  for (const auto& e : r.history) {
    hl.push_back(e.loss);
    ha.push_back(e.accuracy);
  }
  return Rcpp::List::create(
      Rcpp::Named("params") = params, Rcpp::Named("offset") = obj.offset(),
      Rcpp::Named("steps") = static_cast<double>(r.steps), Rcpp::Named("epochs") = static_cast<double>(r.epochs),
      Rcpp::Named("converged") = r.converged, Rcpp::Named("diverged") = r.diverged,
      Rcpp::Named("objective") = r.objective, Rcpp::Named("grad_norm") = r.grad_norm,
      Rcpp::Named("history_loss") = hl, Rcpp::Named("history_accuracy") = ha,
      Rcpp::Named("steps_counted") = static_cast<double>(tp.steps.load()),
      Rcpp::Named("steps_skipped") = static_cast<double>(tp.skipped.load()));
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}


// Test hook of the batched network (nn/batched.hpp, float64, CPU): G members with parameters `params` (a P x G
// matrix, Net::copy_to order) on inputs x (dims xdim: n examples first; shared: the same n examples for every
// member, otherwise G blocks of m = n / G rows, member g's rows g m + 1 .. (g + 1) m), one forward and one
// backward pass of sum(dout . out) with dout an R array of dim (out, m, G). grouped: convolutions as one grouped
// convolution instead of one call per member. Returns list(out = the outputs (an array of dim (out, m, G)),
// grad = the gradient (P x G), ref_out, ref_grad = the same from one unbatched Net per member with autograd).
Rcpp::List cpp_nn_batched_test(Rcpp::List spec, Rcpp::NumericMatrix params, Rcpp::NumericVector x,
                               Rcpp::IntegerVector xdim, Rcpp::NumericVector dout, bool shared, bool grouped) {
#ifdef SCALEBAYES_HAVE_TORCH
  const nn::ModelSpec ms = spec_from(spec);
  const nn::DeviceChoice dev = nn::choose_device("cpu", true);
  const std::int64_t G = params.ncol(), P = params.nrow();
  nn::BatchedNet bnet(ms, G, dev.device, dev.dtype);
  if (bnet.n_parameters() != P) Rcpp::stop("params must have one row per parameter");
  for (std::int64_t g = 0; g < G; ++g) {
    const double* p = &params(0, static_cast<int>(g));
    for (auto& grp : bnet.groups()) {
      torch::Tensor src = torch::from_blob(const_cast<double*>(p), grp.def.shape, torch::kDouble);
      grp.t.select(0, g).detach().copy_(nn::BatchedNet::member_layout(grp, src));
      p += grp.def.numel();
    }
  }
  bnet.set_grouped_convolutions(grouped);
  torch::Tensor X = nn::from_col_major(x.begin(), dims_of(xdim), dev.options());
  const std::int64_t n = X.size(0), m = shared ? n : n / G;
  if (!shared && m * G != n) Rcpp::stop("x must have G blocks of rows");
  std::vector<std::int64_t> bshape{G, m};
  for (std::int64_t k = 1; k < X.dim(); ++k) bshape.push_back(X.size(k));
  const std::int64_t q = bnet.out_dim();
  if (dout.size() != G * m * q) Rcpp::stop("dout must have out x m x G values");
  const torch::Tensor D = torch::from_blob(dout.begin(), {G, m, q}, torch::kDouble).clone();
  torch::Tensor out, grad;
  {
    torch::NoGradGuard ng;
    out = bnet.forward(shared ? X : X.view(bshape), shared, true);
    bnet.backward(D, false);
    out = out.contiguous();
    grad = bnet.flat_gradient(torch::kDouble);  // [G, P] row-major: the P x G matrix, column g member g
  }
  // The reference: one Net per member, autograd.
  Rcpp::NumericVector ref_out(G * m * q);
  Rcpp::NumericMatrix ref_grad(P, G);
  for (std::int64_t g = 0; g < G; ++g) {
    nn::Net net(ms, dev.device, dev.dtype);
    net->copy_from(&params(0, static_cast<int>(g)));
    net->train();
    for (const auto& pg : net->groups()) pg.tensor.mutable_grad() = torch::Tensor();
    const torch::Tensor xg = shared ? X : X.view(bshape).select(0, g);
    const torch::Tensor o = net->forward(xg);
    (o * D.select(0, g)).sum().backward();
    const torch::Tensor oc = o.detach().contiguous();
    std::copy(oc.data_ptr<double>(), oc.data_ptr<double>() + m * q, ref_out.begin() + g * m * q);
    double* dst = &ref_grad(0, static_cast<int>(g));
    for (const auto& pg : net->groups()) {
      const torch::Tensor gr = pg.tensor.grad().contiguous();
      std::copy(gr.data_ptr<double>(), gr.data_ptr<double>() + gr.numel(), dst);
      dst += gr.numel();
    }
  }
  Rcpp::NumericVector o(out.data_ptr<double>(), out.data_ptr<double>() + out.numel());
  o.attr("dim") = Rcpp::IntegerVector::create(static_cast<int>(q), static_cast<int>(m), static_cast<int>(G));
  ref_out.attr("dim") = o.attr("dim");
  Rcpp::NumericMatrix gm(P, G);
  std::copy(grad.data_ptr<double>(), grad.data_ptr<double>() + grad.numel(), gm.begin());
  return Rcpp::List::create(Rcpp::Named("out") = o, Rcpp::Named("grad") = gm, Rcpp::Named("ref_out") = ref_out,
                            Rcpp::Named("ref_grad") = ref_grad);
#else
  Rcpp::stop("scalebayes was built without LibTorch");
#endif
}

SB_TEST_HOOK(cpp_vi_test)
SB_TEST_HOOK(cpp_nn_forward)
SB_TEST_HOOK(cpp_test_storage_ops)
SB_TEST_HOOK(cpp_test_lbfgs_ops)
SB_TEST_HOOK(cpp_test_lbfgs_masked)
SB_TEST_HOOK(cpp_test_net_regradient)
SB_TEST_HOOK(cpp_nn_train_check)
SB_TEST_HOOK(cpp_nn_batched_test)
#endif  // SCALEBAYES_TEST_HOOKS
