# nn_export() / nn_torch_code(): the exported state dict loads strictly into the generated torch.nn.Sequential
# in Python (PyTorch) and reproduces predict() for the draw; tensors are the fit's weights in PyTorch's layout.
# The fits here use standardize = FALSE, so that the exported tensors are the fit's own; the export of
# standardized fits (the transforms folded into the first and last layers) is tested in test-nn-standardize.R.

python_torch <- function() {
  py <- "/usr/bin/python3"
  file.exists(py) && identical(suppressWarnings(system2(py, c("-c", shQuote("import torch")), stdout = FALSE,
                                                        stderr = FALSE)), 0L)
}
skip_if_no_python_torch <- function() skip_if_not(python_torch(), "/usr/bin/python3 cannot import torch")

# Runs the generated code in Python, loads each state dict strictly, evaluates response(model(x)) in eval
# mode. Returns, per state dict, the predictions (examples x outputs, row-major from Python) and every tensor
# of the loaded state dict (name -> list(dtype, values row-major)).
py_eval <- function(code, x, state_dicts) {
  dir <- withr::local_tempdir(.local_envir = parent.frame())
  writeLines(code, file.path(dir, "net.py"))
  d <- dim(x)
  if (length(d) == 3L) dim(x) <- d <- c(d[1], 1L, d[2], d[3])  # n x height x width: one channel, as the engine reads it
  vals <- as.vector(aperm(x, rev(seq_along(d))))  # row-major, as Python's reshape reads it
  writeLines(c(paste(d, collapse = " "), sprintf("%.17g", vals)), file.path(dir, "x.txt"))
  script <- '
import sys, inspect, torch
code, xpath = sys.argv[1], sys.argv[2]
ns = {}
exec(open(code).read(), ns)
model = ns["model"]
with open(xpath) as f:
    shape = [int(v) for v in f.readline().split()]
    vals = [float(v) for v in f.read().split()]
dtype = next(model.parameters()).dtype
x = torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)
for sd_path in sys.argv[3:]:
    if "weights_only" in inspect.signature(torch.load).parameters:  # PyTorch >= 1.13: the safe loader (the default from 2.6)
        sd = torch.load(sd_path, weights_only=True)
        assert list(sd.keys()) == list(torch.load(sd_path).keys())
    else:
        sd = torch.load(sd_path)
    model.load_state_dict(sd)  # strict: the same keys, the same shapes
    model.eval()
    with torch.no_grad():
        p = ns["response"](model(x)).double().reshape(-1)
    with open(sd_path + ".pred", "w") as f:
        f.write(" ".join(repr(float(v)) for v in p.tolist()))
    with open(sd_path + ".tensors", "w") as f:
        for k, t in sd.items():
            f.write(k + "\\t" + str(t.dtype) + "\\t" + " ".join(repr(float(v)) for v in t.double().reshape(-1).tolist()) + "\\n")
'
  writeLines(script, file.path(dir, "run.py"))
  out <- system2("/usr/bin/python3", c(file.path(dir, "run.py"), file.path(dir, "net.py"), file.path(dir, "x.txt"),
                                       state_dicts), stdout = TRUE, stderr = TRUE)
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop("python failed:\n", paste(out, collapse = "\n"))
  lapply(state_dicts, function(p) {
    tl <- strsplit(readLines(paste0(p, ".tensors")), "\t", fixed = TRUE)
    tensors <- lapply(tl, function(r) list(dtype = r[2], values = as.numeric(strsplit(r[3], " ", fixed = TRUE)[[1]])))
    names(tensors) <- vapply(tl, `[`, "", 1L)
    list(pred = scan(paste0(p, ".pred"), quiet = TRUE), tensors = tensors)
  })
}

# The fit's predictions for kept draw t as examples x outputs, row-major (Python's order).
draw_pred <- function(fit, x, t) {
  pr <- predict(fit, x, type = "draws")
  m <- if (length(dim(pr)) == 3L) pr[t, , ] else matrix(pr[t, ], ncol = 1L)
  as.vector(t(m))
}

# The fit's weights regrouped by state-dict key: layer i (0-based) "<i>.<name>" = group "layer<i+1>_<kind>.<name>".
expected_tensors <- function(fit, params) {
  grp <- sub("\\[[0-9]+\\]$", "", colnames(as.matrix(fit)))
  idx <- as.integer(sub("^layer([0-9]+)_.*$", "\\1", grp)) - 1L
  key <- paste0(idx, ".", sub("^[^.]*\\.", "", grp))
  split(unname(params), factor(key, levels = unique(key)))
}

check_export <- function(fit, x) {
  W <- as.matrix(fit)
  dir <- withr::local_tempdir()
  draws <- c(1L, nrow(W))
  paths <- file.path(dir, c(sprintf("draw%d.pt", draws), "mean.pt"))
  for (k in seq_along(draws)) expect_identical(nn_export(fit, paths[k], draw = draws[k]), paths[k])
  # the average of the draws' weights: asked for explicitly, with a warning (not a network of the posterior)
  expect_warning(nn_export(fit, paths[3], draw = "mean"), class = "scalebayes_warning_export_mean")
  res <- py_eval(nn_torch_code(fit), x, paths)
  for (k in seq_along(draws)) {
    expect_equal(res[[k]]$pred, draw_pred(fit, x, draws[k]), tolerance = 1e-5)
    exp_t <- expected_tensors(fit, W[draws[k], ])
    expect_setequal(names(res[[k]]$tensors), names(exp_t))
    for (nm in names(exp_t)) {
      expect_equal(res[[k]]$tensors[[nm]]$values, exp_t[[nm]], tolerance = 1e-6, info = nm)  # float32 rounding
      expect_identical(res[[k]]$tensors[[nm]]$dtype, "torch.float32")
    }
  }
  # posterior mean: the parameters averaged over the kept draws; its predictions are the engine's forward at
  # those parameters (not the average of the draws' predictions)
  m <- colMeans(W)
  exp_m <- expected_tensors(fit, m)
  for (nm in names(exp_m)) expect_equal(res[[3]]$tensors[[nm]]$values, exp_m[[nm]], tolerance = 1e-6, info = nm)
  nd <- scalebayes:::nn_prepare_x(x)
  k <- if (fit$family == "multinomial") length(fit$levels) else fit$settings$n_out
  ref <- scalebayes:::cpp_nn_predict(fit$spec, matrix(m), matrix(0, 0, 0), nd$x, nd$dim, FALSE)  # k x n, column-major
  expect_equal(res[[3]]$pred, as.vector(matrix(ref, k)), tolerance = 1e-5)
  invisible(res)
}

test_that("an MLP draw and the posterior mean load into PyTorch and predict as the fit does", {
  skip_if_fast_tier()
  skip_if_no_torch()
  skip_if_no_python_torch()
  set.seed(11)
  x <- matrix(rnorm(120 * 4), 120, 4)
  y <- factor(cut(2 * x[, 1] - x[, 2]^2, 3, labels = c("a", "b", "c")))
  fit <- wbb_nn(x, y, model = nn_mlp(c(8, 4), dropout = 0.2), draws = 3, keep_draws = TRUE, seed = 3, quiet = TRUE,
                control = nn_control(epochs = 3, batch_size = 32), standardize = FALSE)
  code <- nn_torch_code(fit)
  expect_s3_class(code, "sb_nn_torch_code")
  expect_match(code, "nn.Linear(4, 8),  # 0: layer1_linear", fixed = TRUE)
  expect_match(code, "nn.Dropout(p=0.2),  # 2", fixed = TRUE)
  expect_match(code, "nn.Linear(4, 3),  # 6: layer7_linear (output layer)", fixed = TRUE)
  expect_match(code, "torch.softmax(out, dim=1)", fixed = TRUE)
  res <- check_export(fit, x[1:7, ])
  expect_equal(length(res[[1]]$pred), 7 * 3)
  # a double-precision fit exports float64 tensors and a double module: the same numbers to rounding
  fit64 <- wbb_nn(x, y, model = nn_mlp(5), draws = 2, keep_draws = TRUE, seed = 3, quiet = TRUE,
                  control = nn_control(epochs = 2, batch_size = 32, float64 = TRUE), standardize = FALSE)
  code64 <- nn_torch_code(fit64)
  expect_match(code64, "model = model.double()", fixed = TRUE)
  p <- withr::local_tempfile(fileext = ".pt")
  nn_export(fit64, p, draw = 2)
  r64 <- py_eval(code64, x[1:7, ], p)[[1]]
  expect_identical(unique(vapply(r64$tensors, `[[`, "", "dtype")), "torch.float64")
  expect_identical(r64$tensors[["0.weight"]]$values, unname(as.matrix(fit64)[2, 1:20]))
  expect_equal(r64$pred, draw_pred(fit64, x[1:7, ], 2), tolerance = 1e-12)
})

test_that("a gaussian network with pooling and reshape, and a CNN sampled by sgld_sa(), export exactly", {
  skip_if_fast_tier()
  skip_if_no_torch()
  skip_if_no_python_torch()
  set.seed(12)
  x <- array(runif(60 * 1 * 8 * 8), c(60, 1, 8, 8))
  yg <- x[, 1, 2, 3] - x[, 1, 5, 5] + rnorm(60, sd = 0.1)
  net <- nn_sequential(layer_conv2d(3, 3), layer_tanh(), layer_avgpool2d(2), layer_flatten(), layer_dense(16),
                       layer_reshape(c(1, 4, 4)), layer_conv2d(2, 3, padding = "valid"), layer_sigmoid(),
                       layer_flatten())
  fit <- wbb_nn(x, yg, model = net, draws = 2, keep_draws = TRUE, seed = 4, quiet = TRUE,
                control = nn_control(epochs = 2, batch_size = 20), standardize = FALSE)
  code <- nn_torch_code(fit)
  expect_match(code, "nn.Unflatten(1, (1, 4, 4)),  # 5", fixed = TRUE)
  expect_match(code, "nn.AvgPool2d(kernel_size=2, stride=2)", fixed = TRUE)
  expect_match(code, "    return out\n", fixed = TRUE)
  check_export(fit, x[1:5, , , , drop = FALSE])

  yc <- factor(sample(1:3, 60, TRUE))
  fit2 <- sgld_sa_engine(x[, 1, , ], yc, model = nn_cnn(channels = 2, kernel = 3, hidden = 6), sampler = "sghmc",
                  epochs = 2, batch_size = 20, seed = 18, threads = 1, quiet = TRUE, keep_draws = TRUE,
                  control = sgmcmc_control(step_size = 1e-3), standardize = FALSE)  # n x 8 x 8: one channel
  expect_match(nn_torch_code(fit2), "nn.Conv2d(1, 2, kernel_size=3, stride=1, padding=1),  # 0", fixed = TRUE)
  check_export(fit2, x[1:4, 1, , ])
})

test_that("batch normalization exports the running statistics, and needs them", {
  skip_if_fast_tier()
  skip_if_no_torch()
  set.seed(13)
  x <- matrix(rnorm(80 * 3), 80, 3)
  y <- factor(x[, 1] + x[, 3] > 0)
  fit <- wbb_nn(x, y, model = nn_mlp(c(5), batchnorm = TRUE), draws = 2, keep_draws = TRUE, seed = 5,
                quiet = TRUE, control = nn_control(epochs = 2, batch_size = 20, optimizer = "sgd", lr = 0.05), standardize = FALSE)
  path <- withr::local_tempfile(fileext = ".pt")
  fit$buffers <- NULL
  expect_error(nn_export(fit, path, draw = 1), class = "scalebayes_error_export")
  expect_false(file.exists(path))
  skip_if_no_python_torch()
  # buffers as kept draws x values, named like the groups (layer2 is the batch norm after the first linear layer)
  bnames <- c(sprintf("layer2_batchnorm1d.running_mean[%d]", 1:5), sprintf("layer2_batchnorm1d.running_var[%d]", 1:5),
              "layer2_batchnorm1d.num_batches_tracked")
  fit$buffers <- matrix(c(0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 8,
                          0.1, -0.2, 0.3, 0.4, 0.5, 1.5, 2, 0.5, 1, 3, 8), 2, byrow = TRUE, dimnames = list(NULL, bnames))
  p1 <- file.path(dirname(path), "bn1.pt")
  p2 <- file.path(dirname(path), "bn2.pt")
  pm <- file.path(dirname(path), "bnm.pt")
  nn_export(fit, p1, draw = 1)
  nn_export(fit, p2, draw = 2)
  expect_warning(nn_export(fit, pm, draw = "mean"), class = "scalebayes_warning_export_mean")
  res <- py_eval(nn_torch_code(fit), x[1:6, ], c(p1, p2, pm))
  # draw 1 has the running statistics of a fresh layer (mean 0, variance 1): the engine's prediction
  expect_equal(res[[1]]$pred, draw_pred(fit, x[1:6, ], 1), tolerance = 1e-5)
  t2 <- res[[2]]$tensors
  expect_equal(t2[["1.running_mean"]]$values, c(0.1, -0.2, 0.3, 0.4, 0.5), tolerance = 1e-7)
  expect_equal(t2[["1.running_var"]]$values, c(1.5, 2, 0.5, 1, 3), tolerance = 1e-7)
  expect_identical(t2[["1.num_batches_tracked"]], list(dtype = "torch.int64", values = 8))
  expect_equal(res[[3]]$tensors[["1.running_var"]]$values, c(1.25, 1.5, 0.75, 1, 2), tolerance = 1e-7)
  # draw 2 in Python against eval-mode batch norm computed here from draw 2's weights and buffers
  W <- as.matrix(fit)[2, ]
  g <- function(name) unname(W[startsWith(names(W), name)])
  h <- x[1:6, ] %*% t(matrix(g("layer1_linear.weight"), 5, byrow = TRUE)) + rep(g("layer1_linear.bias"), each = 6)
  h <- sweep(sweep(h, 2, c(0.1, -0.2, 0.3, 0.4, 0.5)), 2, sqrt(c(1.5, 2, 0.5, 1, 3) + 1e-5), "/")
  h <- pmax(sweep(sweep(h, 2, g("layer2_batchnorm1d.weight"), "*"), 2, g("layer2_batchnorm1d.bias"), "+"), 0)
  o <- drop(h %*% g("layer4_linear.weight")) + g("layer4_linear.bias")  # binomial: one output, P(y = 1)
  expect_equal(res[[2]]$pred, plogis(o), tolerance = 1e-5)
})

test_that("nn_torch_code() of a specification builds the network PyTorch counts the same parameters of", {
  skip_if_fast_tier()
  spec <- nn_cnn(channels = c(4, 6), kernel = 3, hidden = 10, batchnorm = TRUE, dropout = 0.5)
  code <- nn_torch_code(spec, input = c(3, 12, 12), output = 4, family = "binomial")
  expect_match(code, "nn.Conv2d(3, 4, kernel_size=3, stride=1, padding=1),  # 0", fixed = TRUE)
  expect_match(code, "nn.MaxPool2d(kernel_size=2, stride=2),  # 2", fixed = TRUE)
  expect_match(code, "nn.Dropout(p=0.5),  # 7", fixed = TRUE)
  expect_match(code, "nn.BatchNorm1d(10),  # 9", fixed = TRUE)
  expect_match(code, "torch.sigmoid(out)", fixed = TRUE)
  expect_output(print(code), "model = nn.Sequential(", fixed = TRUE)
  expect_error(nn_torch_code(spec, input = c(3, 12, 12)), class = "scalebayes_error_input")
  expect_error(nn_torch_code(list()), class = "scalebayes_error_input")
  skip_if_no_python_torch()
  f <- withr::local_tempfile(fileext = ".py")
  writeLines(c(code, "print(sum(p.numel() for p in model.parameters()))",
               "print(model(torch.zeros(2, 3, 12, 12)).shape[1])"), f)
  out <- system2("/usr/bin/python3", f, stdout = TRUE)
  tab <- scalebayes:::nn_resolve(spec, c(3L, 12L, 12L), 4L)
  expect_equal(as.numeric(out), c(sum(tab$params), 4))
})

test_that("nn_export() stops with classed errors naming the argument", {
  skip_if_no_torch()
  set.seed(14)
  x <- matrix(rnorm(40 * 2), 40, 2)
  y <- x[, 1] + rnorm(40)
  fit <- wbb_nn(x, y, model = nn_mlp(3), draws = 2, keep_draws = TRUE, seed = 1, quiet = TRUE,
                control = nn_control(epochs = 1, batch_size = 20))
  path <- withr::local_tempfile(fileext = ".pt")
  e <- expect_error(nn_export(list(), path), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "fit")
  e <- expect_error(nn_export(fit, path, draw = 3), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "between 1 and 2")
  expect_error(nn_export(fit, path, draw = 0), class = "scalebayes_error_input")
  expect_error(nn_export(fit, path, draw = 1.5), class = "scalebayes_error_input")
  expect_error(nn_export(fit, path, draw = "median"), class = "scalebayes_error_input")
  e <- expect_error(nn_export(fit, file.path(tempdir(), "no-such-folder", "a.pt")), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "path")
  expect_error(nn_export(fit, tempdir()), class = "scalebayes_error_input")
  expect_error(nn_export(fit, c("a.pt", "b.pt")), class = "scalebayes_error_input")
  nokeep <- wbb_nn(x, y, model = nn_mlp(3), draws = 2, seed = 1, quiet = TRUE, newx = x[1:3, ], newy = y[1:3], keep_draws = FALSE,
                   control = nn_control(epochs = 1, batch_size = 20))
  e <- expect_error(nn_export(nokeep, path), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "keep_draws")
  expect_false(file.exists(path))
  nn_export(fit, path, draw = 2)
  expect_gt(file.size(path), 0)
})

test_that("a network fit survives saveRDS() / readRDS(): predict() and print() are unchanged", {
  skip_if_no_torch()
  set.seed(15)
  x <- matrix(rnorm(60 * 3), 60, 3)
  y <- factor(x[, 1] - x[, 2] > 0)
  fit <- wbb_nn(x, y, model = nn_mlp(4), draws = 3, keep_draws = TRUE, seed = 2, quiet = TRUE,
                newx = x[1:5, ], newy = y[1:5], control = nn_control(epochs = 2, batch_size = 20))
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(predict(back, x[6:12, ], type = "draws"), predict(fit, x[6:12, ], type = "draws"))
  expect_identical(predict(back), predict(fit))
  expect_identical(capture.output(print(back)), capture.output(print(fit)))
  fit2 <- sgld_sa_engine(x, y, model = nn_mlp(4), epochs = 2, batch_size = 20, seed = 3, threads = 1, quiet = TRUE,
                  keep_draws = TRUE, newx = x[1:5, ], newy = y[1:5])
  saveRDS(fit2, f)
  back2 <- readRDS(f)
  expect_identical(predict(back2, x[6:12, ], type = "draws"), predict(fit2, x[6:12, ], type = "draws"))
  expect_identical(capture.output(print(back2)), capture.output(print(fit2)))
})

test_that("a VAE exports its encoder and decoder: in PyTorch encode() and decode() give vae_encode() and vae_decode()", {
  skip_if_fast_tier()
  skip_if_no_torch()
  skip_if_no_python_torch()
  set.seed(5)
  x <- matrix(runif(150 * 6), 150, 6)
  fit <- vae(x, latent = 2, encoder = nn_mlp(8, batchnorm = TRUE), decoder = nn_mlp(c(8, 5)), epochs = 3, seed = 1,
             quiet = TRUE)
  dir <- withr::local_tempdir()
  paths <- file.path(dir, c("enc.pt", "dec.pt"))
  expect_identical(unname(nn_export(fit, paths)), paths)
  code <- nn_torch_code(fit)
  expect_s3_class(code, "sb_nn_torch_code")
  expect_match(code, "nn.BatchNorm1d(8),  # 1", fixed = TRUE)
  expect_match(code, "nn.Linear(8, 4),  # 3: layer4_linear (output layer)", fixed = TRUE)
  z <- matrix(c(-1, 0.5, 0, 2, 1.5, -0.3), 3, 2, byrow = TRUE)
  writeLines(code, file.path(dir, "vae.py"))
  write_rows <- function(m, f) writeLines(c(paste(dim(m), collapse = " "), sprintf("%.17g", as.vector(t(m)))), f)
  write_rows(x[1:5, ], file.path(dir, "x.txt"))
  write_rows(z, file.path(dir, "z.txt"))
  script <- '
import sys, torch
d = sys.argv[1]
ns = {}
exec(open(d + "/vae.py").read(), ns)
def read(f):
    with open(f) as h:
        shape = [int(v) for v in h.readline().split()]
        return torch.tensor([float(v) for v in h.read().split()], dtype=torch.float64).reshape(shape).float()
ns["encoder"].load_state_dict(torch.load(d + "/enc.pt"))  # strict
ns["decoder"].load_state_dict(torch.load(d + "/dec.pt"))
ns["encoder"].eval(); ns["decoder"].eval()
with torch.no_grad():
    m, s = ns["encode"](read(d + "/x.txt"))
    p = ns["decode"](read(d + "/z.txt"))
for name, t in (("m", m), ("s", s), ("p", p)):
    with open(d + "/" + name + ".out", "w") as h:
        h.write(" ".join(repr(float(v)) for v in t.double().reshape(-1).tolist()))
'
  writeLines(script, file.path(dir, "run.py"))
  out <- system2("/usr/bin/python3", c(file.path(dir, "run.py"), dir), stdout = TRUE, stderr = TRUE)
  expect_null(attr(out, "status"), info = paste(out, collapse = "\n"))
  rd <- function(nm, nc) matrix(scan(file.path(dir, paste0(nm, ".out")), quiet = TRUE), ncol = nc, byrow = TRUE)
  e <- vae_encode(fit, x[1:5, ])
  expect_equal(rd("m", 2), e$mean, tolerance = 1e-5)
  expect_equal(rd("s", 2), e$sd, tolerance = 1e-5)
  expect_equal(rd("p", 6), vae_decode(fit, z), tolerance = 1e-5)
  # one network at a time; the errors say what a VAE's export takes
  one <- file.path(dir, "dec2.pt")
  expect_identical(unname(nn_export(fit, one, network = "decoder")), one)
  expect_identical(readBin(one, "raw", 1e6), readBin(paths[2], "raw", 1e6))
  expect_error(nn_export(fit, paths[1]), "one file per network", class = "scalebayes_error_input")
  expect_error(nn_export(fit, paths, draw = 1), class = "scalebayes_error_not_applicable")
  expect_error(nn_export(fit, one, network = "latent"), class = "scalebayes_error_input")
  nf <- wbb_nn(x, x[, 1], model = nn_mlp(3), draws = 2, epochs = 1, seed = 1, quiet = TRUE)
  expect_error(nn_export(nf, one, network = "encoder"), class = "scalebayes_error_input")
  expect_error(nn_export(list(), one), "vae", class = "scalebayes_error_input")
})

test_that("a 1d convolution network exports to nn.Conv1d exactly", {
  skip_if_fast_tier()
  skip_if_no_torch()
  skip_if_no_python_torch()
  set.seed(13)
  x <- matrix(rnorm(80 * 24), 80, 24)  # 2 channels of length 12 per row
  y <- x[, 3] - x[, 15] + rnorm(80, sd = 0.1)
  net <- nn_sequential(layer_reshape(c(2, 12)), layer_conv1d(3, 5, stride = 2), layer_tanh(),
                       layer_conv1d(2, 3, padding = "valid"), layer_flatten(), layer_dense(4), layer_relu())
  fit <- wbb_nn(x, y, model = net, draws = 2, keep_draws = TRUE, seed = 5, quiet = TRUE,
                control = nn_control(epochs = 2, batch_size = 20), standardize = FALSE)
  code <- nn_torch_code(fit)
  expect_match(code, "nn.Unflatten(1, (2, 12)),  # 0", fixed = TRUE)
  expect_match(code, "nn.Conv1d(2, 3, kernel_size=5, stride=2, padding=2),  # 1: layer2_conv1d", fixed = TRUE)
  expect_match(code, "nn.Conv1d(3, 2, kernel_size=3, stride=1, padding=0),  # 3: layer4_conv1d", fixed = TRUE)
  check_export(fit, x[1:6, ])
})
