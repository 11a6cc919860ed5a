# The batched PyTorch reference of bench/batched.R section 4: C SGHMC-SA chains of one MLP trained as ONE batched
# network (weights with a leading chain dimension, torch.baddbmm, autograd), written the way a PyTorch user would
# write sgld_sa(model = nn_mlp(...), sampler = "sghmc", method = "sa") for a gaussian response: each chain its own
# minibatch (without replacement), the SSGL prior on every weight tensor (v0 = 1, v1 = 10, a = b = 1, nu = lambda
# = 1) and N(0, 1e4) on the biases, the SA step omega_k = min(1, 10 (k + 1000)^-0.7) of rho, kappa0, kappa1,
# delta and sigma (eqs. 12-15 of Deng et al. 2019), SGHMC with friction 0.1 and step eps0 k^(-1/3), and the
# running mean of the predictions on the test rows after burn-in (half the iterations).
#
# usage: python3 batched_sgmcmc_torch.py X.f32 Y.f32 XTEST.f32 N NTEST P HIDDEN ITERATIONS BATCH CHAINS THREADS EPS0
#   X.f32, XTEST.f32: row-major float32; Y.f32: n float32; HIDDEN: "50,50". Run with OPENBLAS_NUM_THREADS=1 and
#   OMP_NUM_THREADS = THREADS (bench/batched.R does).
# Prints "rmse <test RMSE of the posterior mean>" and "seconds <elapsed time of initialization and sampling>".
import sys, time, math
import numpy as np
import torch

xf, yf, tf, n, nt, p, hidden, T, bs, C, threads, eps0 = sys.argv[1:13]
torch.set_num_threads(int(threads))
torch.manual_seed(1)
n, nt, p, T, bs, C, eps0 = int(n), int(nt), int(p), int(T), int(bs), int(C), float(eps0)
x = torch.from_numpy(np.fromfile(xf, dtype=np.float32).reshape(n, p).copy())
y = torch.from_numpy(np.fromfile(yf, dtype=np.float32).copy())
xt = torch.from_numpy(np.fromfile(tf, dtype=np.float32).reshape(nt, p).copy())
sizes = [p] + [int(h) for h in hidden.split(",")] + [1]
v0, v1, a, b, nu, lam, prior_var, friction = 1.0, 10.0, 1.0, 1.0, 1.0, 1.0, 1e4, 0.1
t0 = time.time()
Ws, Bs = [], []
for i, o in zip(sizes[:-1], sizes[1:]):
    bound = 1 / i ** 0.5
    Ws.append(((torch.rand(C, i, o) * 2 - 1) * bound).requires_grad_())
    Bs.append(((torch.rand(C, 1, o) * 2 - 1) * bound).requires_grad_())
params = Ws + Bs
mom = [torch.zeros_like(t) for t in params]
rho = [torch.full_like(W, 0.5) for W in Ws]
k0 = [(1 - r) / v0 for r in rho]
k1 = [r / v1 for r in rho]
delta = [torch.full((C, 1, 1), 0.5) for _ in Ws]
sigma = torch.ones(C, 1, 1)
pred_sum = torch.zeros(C, nt, 1)
saved = 0


def forward(h):
    for k, (W, B) in enumerate(zip(Ws, Bs)):
        h = torch.baddbmm(B, h, W)
        if k < len(Ws) - 1:
            h = torch.relu(h)
    return h


for k in range(1, T + 1):
    idx = torch.rand(C, n).argsort(dim=1)[:, :bs]
    xb = x.index_select(0, idx.reshape(-1)).view(C, bs, p)
    yb = y.index_select(0, idx.reshape(-1)).view(C, bs, 1)
    out = forward(xb)
    lc = 0.5 * ((out - yb) ** 2).sum((1, 2))  # per chain
    grads = torch.autograd.grad(lc.sum(), params)
    with torch.no_grad():
        scale = n / bs
        if k > 1:  # SA of the latent variables at theta^(k)
            w = min(1.0, 10 * (k + 1000) ** -0.7)
            P, Rb, J = 0.0, 0.0, 0.0
            for g, W in enumerate(Ws):
                c = (torch.log(delta[g]) - torch.log1p(-delta[g]) - 0.5 * torch.log(2 * math.pi * v1 * sigma * sigma)
                     + torch.log(2 * v0 * sigma))
                pr = torch.sigmoid(c - W * W / (2 * v1 * sigma * sigma) + W.abs() / (v0 * sigma))
                rho[g] = (1 - w) * rho[g] + w * pr
                k0[g] = (1 - w) * k0[g] + w * (1 - rho[g]) / v0
                k1[g] = (1 - w) * k1[g] + w * rho[g] / v1
                pl = W[0].numel()
                dt = (rho[g].sum((1, 2), keepdim=True) + a - 1) / (a + b + pl - 2)
                delta[g] = ((1 - w) * delta[g] + w * dt).clamp(1e-12, 1 - 1e-12)
                P += pl
                Rb = Rb + (k0[g] * W.abs()).sum((1, 2), keepdim=True)
                J = J + (k1[g] * W * W).sum((1, 2), keepdim=True)
            A = n + P + nu + 2
            Cq = 2 * scale * lc.view(C, 1, 1) + J + nu * lam
            sigma = (1 - w) * sigma + w * (Rb + torch.sqrt(Rb * Rb + 4 * A * Cq)) / (2 * A)
        eps = eps0 * k ** (-1 / 3)
        is2 = 1 / (sigma * sigma)
        for j, (t, gr, m) in enumerate(zip(params, grads, mom)):
            g = -scale * gr * is2
            if j < len(Ws):
                g = g - (1 / sigma) * k0[j] * t.sign() - is2 * k1[j] * t
            else:
                g = g - t / prior_var
            m.mul_(1 - friction).add_(eps * g)
            m.add_(torch.randn_like(m), alpha=math.sqrt(2 * friction * eps))
            t.add_(m)
        if k > T // 2:
            pred_sum += forward(xt.unsqueeze(0).expand(C, nt, p))
            saved += 1
elapsed = time.time() - t0
pm = (pred_sum / saved).mean(0).squeeze(1)
print("rmse %.4f" % float(torch.sqrt(((pm - torch.from_numpy(np.fromfile(yf + ".test", dtype=np.float32))) ** 2).mean())))
print("seconds %.3f" % elapsed)
