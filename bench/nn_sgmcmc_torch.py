# PyTorch reference for bench/nn_sgmcmc.R: the SGHMC-SA sampler of scalebayes (sgmcmc/chain.hpp with
# nn/sgmcmc.hpp), written directly in PyTorch: the same network (2-Conv-2-FC, same padding), minibatches drawn
# without replacement, sum-scale gradient (N/n) x minibatch, SSGL prior with per-weight rho/kappa and a delta
# per sparse tensor (here the first FC layer, as in the paper's Table 2), the SA step of eqs (12)-(15), SGHMC
# in the Saatci-Wilson form, one intra-op thread.
# Usage: python3 nn_sgmcmc_torch.py DIR   (DIR holds x.f32, y.i32, meta.txt written by bench/nn_sgmcmc.R)
# Prints one line: "seconds <s> loss <last minibatch loss>".
import sys, time, math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
d = sys.argv[1]
meta = dict(l.split() for l in open(d + "/meta.txt"))
n, c, h, w = (int(meta[k]) for k in ("n", "c", "h", "w"))
epochs, batch = int(meta["epochs"]), int(meta["batch"])
lr, tau, fric = float(meta["lr"]), float(meta["tau"]), float(meta["friction"])
v0, v1, a, nu, lam = (float(meta[k]) for k in ("v0", "v1", "a", "nu", "lambda"))
prior_var = float(meta["prior_var"])
xs = np.fromfile(d + "/x.f32", dtype=np.float32)
ys = np.fromfile(d + "/y.i32", dtype=np.int32)

t0 = time.perf_counter()
x = torch.from_numpy(xs).reshape(n, c, h, w).clone()
y = torch.from_numpy(ys).long()
g = torch.Generator().manual_seed(1)
net = nn.Sequential(nn.Conv2d(c, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 5, padding=2),
                    nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 7 * 7, 200), nn.ReLU(), nn.Linear(200, 10))
params = list(net.parameters())
sparse = [params[4]]  # fc1.weight
b = float(sum(p.numel() for p in sparse))
mom = [torch.zeros_like(p) for p in params]
rho = [torch.full_like(p, 0.5) for p in sparse]
k0 = [(1 - r) / v0 for r in rho]
k1 = [r / v1 for r in rho]
delta = [torch.tensor(0.5) for _ in sparse]
sigma = torch.tensor(1.0)
T = epochs * math.ceil(n / batch)
perm = torch.arange(n)
for k in range(1, T + 1):
    # minibatch without replacement (partial Fisher-Yates), as the driver does
    idx = torch.randperm(n, generator=g)[:batch]
    net.zero_grad()
    loss = F.cross_entropy(net(x[idx]), y[idx], reduction="sum")
    loss.backward()
    scale = n / batch
    with torch.no_grad():
        grads = [-scale * p.grad for p in params]
        if k > 1:  # SA step omega_{k-1}
            om = min(1.0, 10.0 * (k - 1 + 1000.0) ** -0.7)
            Rb = torch.zeros(()); J = torch.zeros(()); P = 0.0
            for j, p in enumerate(sparse):
                cst = torch.log(delta[j]) - torch.log1p(-delta[j]) - 0.5 * torch.log(2 * math.pi * v1 * sigma ** 2) + torch.log(2 * v0 * sigma)
                incl = torch.sigmoid(cst - p ** 2 / (2 * v1 * sigma ** 2) + p.abs() / (v0 * sigma))
                rho[j] = (1 - om) * rho[j] + om * incl
                k0[j] = (1 - om) * k0[j] + om * (1 - rho[j]) / v0
                k1[j] = (1 - om) * k1[j] + om * rho[j] / v1
                pl = p.numel()
                delta[j] = ((1 - om) * delta[j] + om * (rho[j].sum() + a - 1) / (a + b + pl - 2)).clamp(1e-12, 1 - 1e-12)
                P += pl
                Rb = Rb + (k0[j] * p.abs()).sum()
                J = J + (k1[j] * p ** 2).sum()
            A = P + nu + 2
            C = J + nu * lam
            st = (Rb + torch.sqrt(Rb * Rb + 4 * A * C)) / (2 * A)
            sigma = (1 - om) * sigma + om * st
        for i, p in enumerate(params):
            if i == 4:
                grads[i] -= k0[0] * p.sign() / sigma + k1[0] * p / sigma ** 2
            else:
                grads[i] -= p / prior_var
            mom[i] = (1 - fric) * mom[i] + lr * grads[i]
            mom[i].add_(torch.randn(p.shape, generator=g), alpha=math.sqrt(2 * fric * lr / tau))
            p.add_(mom[i])
print("seconds", time.perf_counter() - t0, "loss", float(loss) / batch)
