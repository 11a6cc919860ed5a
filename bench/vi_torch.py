# PyTorch references for bench/vi.R: one epoch of
#   --task sparse_vi : Algorithm 1 of Bai, Song and Cheng (2020) with the settings of the authors' Figure 1 code
#                      (inst/design-vi-reference.md, section 1): 200-7-7-7-1 ReLU, spike-and-slab on weights AND
#                      biases, theta = gamma * (mu + softplus(rho) * eps), gamma ~ Bern(sigmoid(logit)) drawn by a
#                      hard Gumbel-softmax (straight-through, temperature tau), one weight draw per minibatch (the
#                      "weights" estimator), K Monte-Carlo draws, closed-form KL weighted by m / n, Gaussian
#                      likelihood with noise sd 1, Adam 5e-3, batch 512, sigma0 = 1.3,
#                      lambda = exp(-{log T + delta [(L + 1) log N + log(sqrt(n) p)]}), delta = 0.1,
#                      mu ~ U(-0.6, 0.6), rho = -6, phi = 0.99.
#   --task bbb       : Bayes by Backprop with the local reparameterization trick (Kingma et al. 2015) on an MLP
#                      784-400-400-10 (ReLU), mean-field Gaussian q, sigma = softplus(rho), N(0, 1) prior on weights
#                      and biases, closed-form Gaussian KL weighted by m / n, softmax likelihood, Adam 1e-3,
#                      batch 100; mu ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (torch.nn.Linear's default), rho = -5.
# Both losses per minibatch are  sum_i NLL_i + (m / n) KL  (the authors' scaling: m / n times the negative ELBO
# estimate of eq. (1)), with m the nominal batch size, also for a shorter last batch (as the authors do).
#
# Run with /usr/bin/python3 (torch 1.13). Usage:
#   /usr/bin/python3 bench/vi_torch.py --task sparse_vi --threads 1 --epochs 20 --data train.npy --seed 1
# --data: a .npy (2-D float64, as bench/vi_torch_check.R writes) or a headerless CSV; column 1 is y (sparse_vi:
# the response; bbb: the class 0..9), the other columns are x. Without --data the script generates the data
# itself (sparse_vi: the authors' generator, n = 3000, p = 200; bbb: n = 10000 uniform inputs with the labels of
# a random linear teacher).
# Prints one JSON line: per-epoch wall time (median over the epochs after --warmup), mean minibatch loss of each
# epoch (first, last), the NLL and KL parts at the end, and a fitted summary.
import argparse, json, math, statistics, time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_data(path):
    if path.endswith(".npy"):
        a = np.load(path)
    else:
        a = np.loadtxt(path, delimiter=",", ndmin=2)
    return a[:, 1:], a[:, 0]


# --------------------------------------------------------------------------------------------------------------
# Spike-and-slab variational layer (Bai et al. 2020, Algorithm 1)
class SpikeSlabLinear(nn.Module):
    def __init__(self, fan_in, fan_out, mu_range=0.6, rho0=-6.0, phi0=0.99):
        super().__init__()
        logit0 = math.log(phi0 / (1.0 - phi0))
        self.w_mu = nn.Parameter(torch.empty(fan_out, fan_in).uniform_(-mu_range, mu_range))
        self.w_rho = nn.Parameter(torch.full((fan_out, fan_in), rho0))
        self.w_logit = nn.Parameter(torch.full((fan_out, fan_in), logit0))
        self.b_mu = nn.Parameter(torch.empty(fan_out).uniform_(-mu_range, mu_range))
        self.b_rho = nn.Parameter(torch.full((fan_out,), rho0))
        self.b_logit = nn.Parameter(torch.full((fan_out,), logit0))

    def forward(self, x, tau, kl_consts):
        # one draw of the weights and biases for the whole minibatch; the closed-form KL of the same parameters
        log_lam, log1m_lam, log_sigma0, sigma0_sq = kl_consts
        out, kl = [], 0.0
        for mu, rho, logit in ((self.w_mu, self.w_rho, self.w_logit), (self.b_mu, self.b_rho, self.b_logit)):
            sigma = F.softplus(rho)
            u = torch.rand_like(logit)
            soft = torch.sigmoid((logit + torch.log(u) - torch.log1p(-u)) / tau)  # relaxed gamma (backward)
            hard = (soft > 0.5).to(soft.dtype)                                    # Bernoulli(phi) (forward)
            gamma = hard + (soft - soft.detach())
            out.append(gamma * (mu + sigma * torch.randn_like(mu)))
            phi = torch.sigmoid(logit)
            kl = kl + (phi * (F.logsigmoid(logit) - log_lam) + (1 - phi) * (F.logsigmoid(-logit) - log1m_lam)
                       + phi * (log_sigma0 - torch.log(sigma) + (sigma * sigma + mu * mu) / (2 * sigma0_sq) - 0.5)
                       ).sum()
        self.kl = kl
        return F.linear(x, out[0], out[1])


class SparseVINet(nn.Module):
    def __init__(self, p, hidden=(7, 7, 7), sigma0=1.3, delta=0.1, n=3000, lam=None):
        super().__init__()
        sizes = (p,) + tuple(hidden) + (1,)
        self.layers = nn.ModuleList(SpikeSlabLinear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        T = sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))
        L, N = len(hidden), hidden[0]
        if lam is None:
            lam = math.exp(-(math.log(T) + delta * ((L + 1) * math.log(N) + math.log(math.sqrt(n) * p))))
        self.T, self.lam, self.sigma0 = T, lam, sigma0
        self.kl_consts = (math.log(lam), math.log1p(-lam), math.log(sigma0), sigma0 ** 2)

    def forward(self, x, tau):
        for i, layer in enumerate(self.layers):
            x = layer(x, tau, self.kl_consts)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x.squeeze(-1)

    def kl(self):  # KL of q || prior, as computed in the last forward pass (it does not depend on the draw)
        return sum(layer.kl for layer in self.layers)


# --------------------------------------------------------------------------------------------------------------
# Bayes by Backprop with the local reparameterization trick
class LocalGaussLinear(nn.Module):
    def __init__(self, fan_in, fan_out, rho0=-5.0):
        super().__init__()
        bound = 1.0 / math.sqrt(fan_in)
        self.w_mu = nn.Parameter(torch.empty(fan_out, fan_in).uniform_(-bound, bound))
        self.w_rho = nn.Parameter(torch.full((fan_out, fan_in), rho0))
        self.b_mu = nn.Parameter(torch.empty(fan_out).uniform_(-bound, bound))
        self.b_rho = nn.Parameter(torch.full((fan_out,), rho0))

    def forward(self, x):
        w_sigma, b_sigma = F.softplus(self.w_rho), F.softplus(self.b_rho)
        mean = F.linear(x, self.w_mu, self.b_mu)
        var = F.linear(x * x, w_sigma * w_sigma, b_sigma * b_sigma)
        # KL(N(mu, sigma^2) || N(0, 1)), summed, from the same sigma
        self.kl = sum((-torch.log(sd) + 0.5 * (sd * sd + mu * mu) - 0.5).sum()
                      for mu, sd in ((self.w_mu, w_sigma), (self.b_mu, b_sigma)))
        return mean + var.sqrt() * torch.randn_like(mean)


class BBBNet(nn.Module):
    def __init__(self, sizes=(784, 400, 400, 10)):
        super().__init__()
        self.layers = nn.ModuleList(LocalGaussLinear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x

    def kl(self):  # as computed in the last forward pass
        return sum(layer.kl for layer in self.layers)


# --------------------------------------------------------------------------------------------------------------
def authors_data(n, p, rng):
    x = rng.uniform(-1, 1, (n, p))
    y = 7 * x[:, 1] / (1 + x[:, 0] ** 2) + 5 * np.sin(x[:, 2] * x[:, 3]) + 2 * x[:, 4] + rng.normal(0, 1, n)
    return x, y


def teacher_data(n, p, rng):
    x = rng.uniform(0, 1, (n, p))
    y = np.argmax((x - 0.5) @ rng.normal(size=(p, 10)), axis=1).astype(np.float64)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=["sparse_vi", "bbb"], required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1, help="epochs left out of the median")
    ap.add_argument("--data", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                    help="float32 as the package's default; the authors' script runs in float64")
    ap.add_argument("--batch", type=int, default=None, help="default: 512 (sparse_vi), 100 (bbb)")
    ap.add_argument("--lr", type=float, default=None, help="default: 5e-3 (sparse_vi), 1e-3 (bbb)")
    ap.add_argument("--K", type=int, default=1, help="sparse_vi: Monte-Carlo draws per minibatch")
    ap.add_argument("--tau", type=float, default=0.5)
    ap.add_argument("--delta", type=float, default=0.1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64
    torch.set_default_dtype(dtype)
    rng = np.random.default_rng(args.seed)
    sparse = args.task == "sparse_vi"
    if args.data is not None:
        x_np, y_np = read_data(args.data)
    else:
        x_np, y_np = authors_data(3000, 200, rng) if sparse else teacher_data(10000, 784, rng)
    n, p = x_np.shape
    x = torch.as_tensor(x_np, dtype=dtype).contiguous()
    if sparse:
        y = torch.as_tensor(y_np, dtype=dtype)
        net = SparseVINet(p, delta=args.delta, n=n)
        batch, lr = args.batch or 512, args.lr or 5e-3
        half_log_2pi = 0.5 * math.log(2 * math.pi)

        def nll_fn(xb, yb):  # K draws, each one weight sample for the whole minibatch
            tot = 0.0
            for _ in range(args.K):
                r = yb - net(xb, args.tau)
                tot = tot + (0.5 * r * r).sum() + half_log_2pi * r.numel()
            return tot / args.K
    else:
        y = torch.as_tensor(y_np).long()
        net = BBBNet((p, 400, 400, int(y.max()) + 1))
        batch, lr = args.batch or 100, args.lr or 1e-3

        def nll_fn(xb, yb):
            return F.cross_entropy(net(xb), yb, reduction="sum")

    kl_weight = batch / n
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    times, losses = [], []
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n)
        acc = torch.zeros(())
        nb = 0
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            opt.zero_grad(set_to_none=True)
            nll = nll_fn(x[idx], y[idx])  # forward pass(es); sets the layers' KL
            loss = nll + kl_weight * net.kl()
            loss.backward()
            opt.step()
            acc += loss.detach()
            nb += 1
        times.append(time.perf_counter() - t0)
        losses.append(acc.item() / nb)

    # summary at the end (not timed): KL; sparse_vi: 30-draw train RMSE, sparsity
    with torch.no_grad():
        out = {"task": args.task, "threads": args.threads, "dtype": args.dtype, "n": n, "p": p, "batch": batch,
               "lr": lr, "epochs": args.epochs, "warmup": args.warmup, "torch": torch.__version__,
               "epoch_seconds_median": statistics.median(times[args.warmup:] or times),
               "epoch_seconds_q10_q90": [float(np.quantile(times[args.warmup:] or times, q)) for q in (0.1, 0.9)],
               "loss_first_epoch": losses[0], "loss_last_epoch": losses[-1]}
        if args.epochs <= 50:
            out["epoch_seconds"] = [round(t, 5) for t in times]
        if sparse:
            out["lambda"], out["T"] = net.lam, net.T
            pred = torch.stack([net(x, args.tau) for _ in range(30)]).mean(0)
            out["train_rmse_30_draws"] = float(((pred - y) ** 2).mean().sqrt())
            phis = torch.cat([torch.sigmoid(t).flatten() for nm, t in net.named_parameters() if "logit" in nm])
            out["share_phi_gt_half"] = float((phis > 0.5).double().mean())
            w1 = torch.sigmoid(net.layers[0].w_logit) > 0.5  # fan_out x p
            out["inputs_selected"] = [int(j) + 1 for j in torch.nonzero(w1.any(0)).flatten()][:20]
            out["kl"] = float(net.kl())
        else:
            logits = net(x)
            out["train_nll_per_point"] = float(F.cross_entropy(logits, y))
            out["train_accuracy"] = float((logits.argmax(1) == y).double().mean())
            out["kl"] = float(net.kl())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
