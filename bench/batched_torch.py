# The batched PyTorch reference of bench/batched.R: D WBB draws of one MLP trained as ONE batched network
# (weights with a leading draw dimension, torch.baddbmm, Exp(1) example weights per draw, each draw its own
# minibatch order, one Adam over all), written the way a PyTorch user would write it.
#
# usage: python3 batched_torch.py X.f32 Y.f32 N P HIDDEN EPOCHS BATCH DRAWS THREADS LR FAMILY [LAMBDA]
#   X.f32: n x p float32 row-major; Y.f32: n float32 (class indices 0.. for multinomial); HIDDEN: "50,50";
#   FAMILY: gaussian | multinomial. Run with OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = THREADS (bench/batched.R
#   does): a threaded OpenBLAS under torch's own threads oversubscribes the cores.
# Prints one line: "seconds <elapsed time of initialization and training>".
import sys, time
import numpy as np
import torch

xf, yf, n, p, hidden, epochs, bs, D, threads, lr, family = sys.argv[1:12]
lam = float(sys.argv[12]) if len(sys.argv) > 12 else 1e-4
torch.set_num_threads(int(threads))
torch.manual_seed(1)
n, p = int(n), int(p)
x = torch.from_numpy(np.fromfile(xf, dtype=np.float32).reshape(n, p).copy())
yv = np.fromfile(yf, dtype=np.float32)
D, epochs, bs = int(D), int(epochs), int(bs)
sizes = [p] + [int(h) for h in hidden.split(",")]
if family == "multinomial":
    y = torch.tensor(yv, dtype=torch.long)
    q = int(y.max()) + 1
else:
    y = torch.tensor(yv, dtype=torch.float32)
    q = 1
sizes.append(q)
t0 = time.time()
Ws, bs_ = [], []
for a, b in zip(sizes[:-1], sizes[1:]):
    bound = 1 / a ** 0.5
    Ws.append(((torch.rand(D, a, b) * 2 - 1) * bound).requires_grad_())
    bs_.append(((torch.rand(D, 1, b) * 2 - 1) * bound).requires_grad_())
w = torch.empty(D, n).exponential_()
w0 = torch.empty(D, 1).exponential_()
opt = torch.optim.Adam(Ws + bs_, lr=float(lr))


def forward(xb):
    h = xb
    for k, (W, b) in enumerate(zip(Ws, bs_)):
        h = torch.baddbmm(b, h, W)
        if k < len(Ws) - 1:
            h = torch.relu(h)
    return h


for ep in range(epochs):
    perm = torch.argsort(torch.rand(D, n), dim=1)
    for a in range(0, n, bs):
        idx = perm[:, a:a + bs]
        m = idx.shape[1]
        xb = x.index_select(0, idx.reshape(-1)).view(D, m, p)
        yb = y.index_select(0, idx.reshape(-1)).view(D, m)
        wb = w.gather(1, idx)
        out = forward(xb)
        if family == "multinomial":
            l = torch.nn.functional.cross_entropy(out.reshape(D * m, q), yb.reshape(-1), reduction="none").view(D, m)
        else:
            l = 0.5 * (out.squeeze(2) - yb) ** 2
        pen = sum((W ** 2).sum((1, 2)) for W in Ws) * w0[:, 0]
        loss = ((wb * l).mean(1) + lam / n * pen).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
print("seconds %.4f" % (time.time() - t0))
