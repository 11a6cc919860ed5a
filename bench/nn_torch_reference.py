# PyTorch reference for bench/nn.R: the same networks, loss, optimizer, batches and threads as scalebayes.
# Usage: python3 nn_torch_reference.py DIR TASK   (DIR holds x.f32, y.i32, meta.txt written by bench/nn.R)
# Prints one line: "seconds <s> loss <final minibatch loss>".
import sys, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
d, task = sys.argv[1], sys.argv[2]
meta = dict(l.split() for l in open(d + "/meta.txt"))
n, c, h, w = (int(meta[k]) for k in ("n", "c", "h", "w"))
epochs, batch, lam, draws = int(meta["epochs"]), int(meta["batch"]), float(meta["lambda"]), int(meta["draws"])
xs = np.fromfile(d + "/x.f32", dtype=np.float32)
ys = np.fromfile(d + "/y.i32", dtype=np.int32)

def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))

def cnn():  # 2-Conv-2-FC, valid convolutions (Deng et al. 2019, Appendix D.1 without padding)
    return nn.Sequential(nn.Conv2d(c, 32, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 4 * 4, 200), nn.ReLU(), nn.Linear(200, 10))

t0 = time.perf_counter()
x = torch.from_numpy(xs).reshape(n, c, h, w).clone()
y = torch.from_numpy(ys).long()
g = torch.Generator().manual_seed(1)
for draw in range(draws):
    net = mlp() if task == "mlp" else cnn()
    wts = torch.empty(n).exponential_(generator=g) if draws > 1 else torch.ones(n)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    pen = [m.weight for m in net.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
    for ep in range(epochs):
        perm = torch.randperm(n, generator=g)
        for a in range(0, n, batch):
            idx = perm[a:a + batch]
            opt.zero_grad()
            loss = (wts[idx] * F.cross_entropy(net(x[idx]), y[idx], reduction="none")).mean()
            loss = loss + lam / n * sum((p ** 2).sum() for p in pen)
            loss.backward()
            opt.step()
print("seconds", time.perf_counter() - t0, "loss", float(loss))
