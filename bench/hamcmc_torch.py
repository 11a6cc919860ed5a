# PyTorch reference for bench/hamcmc.R: one HAMCMC-SA epoch of the Table 2 network of Wang, Deng & Lin (2021,
# section 5.3.2), written directly in PyTorch as scalebayes runs it (sgmcmc/lbfgs.hpp: HamcmcSaStep, "transport"
# or "diagonal" form (meta.txt: sa_form), curvature pairs on the same minibatch, Powell-damped L-BFGS memory M, omega_k = A (k + Z)^-alpha; the
# Gaussian likelihood with per-example weights w_i, sum scale N/n, likelihood sd s; the prior of method = "none"
# with kappa0 = 0: N(0, sigma^2 / kappa1) on the dense weights, N(0, prior_var) on the rest). All parameters are
# one flat vector for the L-BFGS algebra (what a PyTorch user would write); one intra-op thread.
# Usage: python3 hamcmc_torch.py DIR   (DIR holds x.f32, y.f32, w.f32, meta.txt written by bench/hamcmc.R)
# Prints one line: "seconds <wall s> cpu <process cpu s> loss <last minibatch loss>".
import sys, time, math
import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(1)
d = sys.argv[1]
meta = dict(l.split() for l in open(d + "/meta.txt"))
n, G, q = (int(float(meta[k])) for k in ("n", "grid", "q"))
epochs, batch, M = (int(float(meta[k])) for k in ("epochs", "batch", "memory"))
eps, tau, lsd = float(meta["step_size"]), float(meta["temperature"]), float(meta["likelihood_sd"])
A, Z, alpha = float(meta["precond_A"]), float(meta["precond_Z"]), float(meta["precond_alpha"])
r, gmin = float(meta["damping_r"]), float(meta["gamma_min"])
kappa1, prior_var = float(meta["kappa1"]), float(meta["prior_var"])
form = meta.get("sa_form", "transport")
xs = np.fromfile(d + "/x.f32", dtype=np.float32)
ys = np.fromfile(d + "/y.f32", dtype=np.float32)
ws = np.fromfile(d + "/w.f32", dtype=np.float32)

t0 = time.perf_counter(); c0 = time.process_time()
x = torch.from_numpy(xs).reshape(n, 1, G, G).clone()
y = torch.from_numpy(ys).reshape(n, q).clone()
wt = torch.from_numpy(ws).clone()
g = torch.Generator().manual_seed(1)
torch.manual_seed(1)
net = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 32, 3, padding=1), nn.ReLU(),
                    nn.AvgPool2d(2), nn.Flatten(), nn.Linear(32 * (G // 2) ** 2, 100), nn.ReLU(),
                    nn.Unflatten(1, (1, 10, 10)), nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(64, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(3200, 800), nn.ReLU(),
                    nn.Linear(800, q))
params = list(net.parameters())
dense_w = {id(net[6].weight), id(net[14].weight), id(net[16].weight)}  # the SSGL ("sparse") layers
prec = torch.cat([torch.full((p.numel(),), kappa1 if id(p) in dense_w else 1.0 / prior_var) for p in params])
theta = nn.utils.parameters_to_vector(params).detach()

def grad_at(theta, idx):
    """log-posterior gradient at theta on minibatch idx (flat), and the minibatch loss."""
    nn.utils.vector_to_parameters(theta, params)
    net.zero_grad()
    res = net(x[idx]) - y[idx]
    loss = (wt[idx] * res.pow(2).sum(1)).sum() / (2 * lsd * lsd)
    loss.backward()
    gr = torch.cat([p.grad.reshape(-1) for p in params])
    return -(n / len(idx)) * gr - prec * theta, float(loss)

pairs = []  # (s, y) raw pairs, y from the NEGATIVE log-posterior gradient

def prepare():
    if not pairs:
        return gmin, []
    s, yv = pairs[-1]
    sy = float(s @ yv); yy = float(yv @ yv)
    gam = max(yy / sy, gmin) if sy > 0 else gmin
    prep = []
    for s, yv in pairs:
        ss = float(s @ s); sy = float(s @ yv); sBs = gam * ss
        th = (1 - r) * sBs / (sBs - sy) if r * sBs - sy > 0 else 1.0
        ybar = th * yv + (1 - th) * gam * s
        sybar = th * sy + (1 - th) * sBs
        prep.append([s, ybar, 1.0 / sybar if sybar != 0 else 0.0, sybar, None, 0.0, 0.0])
    for i, pi in enumerate(prep):
        a = gam * pi[0]
        for pl in prep[:i]:
            a = a + float(pl[1] @ pi[0]) * pl[2] * pl[1] - float(pl[4] @ pi[0]) * pl[5] * pl[4]
        sa = float(pi[0] @ a)
        pi[4] = a; pi[5] = 1.0 / sa if sa != 0 else 0.0
        pi[6] = 1.0 / (math.sqrt(pi[3]) * math.sqrt(sa)) if sa > 0 and pi[3] > 0 else 0.0
    return gam, prep

def apply_G(gam, prep, v):
    w = v.clone(); al = []
    for s, ybar, rho, *_ in reversed(prep):
        a = float(s @ w) * rho; al.append(a); w.add_(ybar, alpha=-a)
    al.reverse(); w.mul_(1.0 / gam)
    for j, (s, ybar, rho, *_) in enumerate(prep):
        w.add_(s, alpha=al[j] - float(ybar @ w) * rho)
    return w

def apply_S(gam, prep, z):
    e = z * (1.0 / math.sqrt(gam))
    for s, ybar, rho, sybar, a, inv_sa, c_a in prep:
        e.add_(s, alpha=-(float(a @ e) * c_a + float(ybar @ e) * rho))
    return e

def diag_G(gam, prep, like):
    """diag(G~) from the memory (sgmcmc/lbfgs.hpp, DampedLbfgs::diag_G): r_i = q_i - sum_{l<i} r_l (s_l'q_i)."""
    rs = []
    for s, ybar, rho, sybar, a, inv_sa, c_a in prep:
        q = c_a * a + rho * ybar
        ri = q.clone()
        for (sl, *_), rl in zip(prep, rs):
            ri.add_(rl, alpha=-float(sl @ q))
        rs.append(ri)
    out = torch.ones_like(like)
    for i, (si, *_) in enumerate(prep):
        out.add_(si * rs[i], alpha=-2.0)
        for l in range(i + 1):
            out.add_(si * prep[l][0], alpha=float(rs[i] @ rs[l]) * (1.0 if l == i else 2.0))
    return out / gam

T = epochs * math.ceil(n / batch)
u = v = gprev = zprev = None
for k in range(1, T + 1):
    idx = torch.randperm(n, generator=g)[:batch]
    with torch.enable_grad():
        gk, loss = grad_at(theta, idx)
    with torch.no_grad():
        gam, prep = prepare()
        z = torch.randn(theta.shape, generator=g)
        w = min(1.0, A * (k + Z) ** -alpha)
        if form == "diagonal":
            D = torch.ones_like(gk) if u is None else D
            D = (1 - w) * D + w * diag_G(gam, prep, gk)
            u = D * gk
            v = D.sqrt() * z
        elif u is None:
            u = (1 - w) * gk + w * apply_G(gam, prep, gk)
            v = (1 - w) * z + w * apply_S(gam, prep, z)
        else:
            u = (1 - w) * u + apply_G(gam, prep, gk - (1 - w) * gprev)
            v = (1 - w) * v + apply_S(gam, prep, z - (1 - w) * zprev)
        s = eps * u + math.sqrt(2 * eps / tau) * v
        theta = theta + s
    with torch.enable_grad():
        g2, _ = grad_at(theta, idx)  # second gradient, same minibatch
    pairs.append((s, gk - g2))
    if len(pairs) > M:
        pairs.pop(0)
    gprev, zprev = gk, z
print("seconds", time.perf_counter() - t0, "cpu", time.process_time() - c0, "loss", loss / batch)
