# The 90/10 train/test splits of the authors' UCI runs (Deng, Zhang, Liang & Lin 2019, Table 5): their code calls
# sklearn's train_test_split(X, y, test_size=0.1, random_state=seed) for the seeds below. That function takes
# numpy.random.RandomState(seed).permutation(n): the first ceil(0.1 n) indices are the test set, the rest the
# training set. numpy's legacy RandomState stream is frozen across numpy versions, so this reproduces their
# splits exactly without sklearn.
# Run from the package root:  /usr/bin/python3 data-raw/uci_splits.py   -> data-raw/uci-splits.csv
# (columns: data, seed, index (1-based row of the test set, in the order of the R data sets MASS::Boston and
# modeldata::concrete, i.e. the UCI files' order)).
import math
import numpy as np

seeds = [5, 55, 555, 5555, 6, 66, 666, 6666, 7, 77, 777, 7777, 8, 88, 888, 8888, 9, 99, 999, 9999]
sizes = {"Boston": 506, "Concrete": 1030}
with open("data-raw/uci-splits.csv", "w") as f:
    f.write("data,seed,index\n")
    for name, n in sizes.items():
        n_test = math.ceil(0.1 * n)
        for s in seeds:
            perm = np.random.RandomState(s).permutation(n)
            for i in perm[:n_test]:
                f.write(f"{name},{s},{i + 1}\n")
