# Issue 61, item 1: what nn_export() writes, evaluated in PyTorch (Debian's python3-torch at /usr/bin/python3).
# The average of the weights of independently trained networks (wbb_nn() draws) or of chains in different modes
# (sgld_sa()) against predict(fit) (the posterior predictive mean) and against one draw, on Boston rows 401-403.
# Run: R_LIBS=<lib> Rscript bench/nn_export_mean.R
library(scalebayes)
b <- MASS::Boston
nd <- b[401:403, ]
xnd <- model.matrix(medv ~ ., nd)[, -1, drop = FALSE]
py <- function(fit, pt) {
  dir <- tempfile(); dir.create(dir)
  writeLines(nn_torch_code(fit), file.path(dir, "net.py"))
  writeLines(c(paste(dim(xnd), collapse = " "), sprintf("%.17g", as.vector(t(xnd)))), file.path(dir, "x.txt"))
  writeLines(c("import sys, torch", "ns = {}", "exec(open(sys.argv[1]).read(), ns)", "model = ns['model']",
               "f = open(sys.argv[2]); shape = [int(v) for v in f.readline().split()]",
               "x = torch.tensor([float(v) for v in f.read().split()], dtype=torch.float64).reshape(shape).float()",
               "model.load_state_dict(torch.load(sys.argv[3])); model.eval()",
               "with torch.no_grad(): p = ns['response'](model(x)).double().reshape(-1)",
               "print(' '.join(repr(float(v)) for v in p.tolist()))"), file.path(dir, "run.py"))
  out <- system2("/usr/bin/python3", c(file.path(dir, "run.py"), file.path(dir, "net.py"), file.path(dir, "x.txt"), pt),
                 stdout = TRUE, stderr = TRUE)
  as.numeric(strsplit(utils::tail(out, 1), " ")[[1]])
}
report <- function(label, fit) {
  pm <- tempfile(fileext = ".pt"); p1 <- tempfile(fileext = ".pt")
  w <- tryCatch(nn_export(fit, pm, draw = "mean"), warning = function(w) { nn_export(fit, pm, draw = "mean") |> suppressWarnings(); class(w)[1] })
  nn_export(fit, p1)  # the default: draw 1
  cat(sprintf("%s\n  predict(fit)$fit:           %s\n  PyTorch, draw = \"mean\":    %s  (warning: %s)\n  PyTorch, default (draw 1): %s\n  predict(fit, draws = TRUE)[1, ]: %s\n",
              label, paste(sprintf("%.2f", predict(fit, nd)$fit), collapse = ", "), paste(sprintf("%.2f", py(fit, pm)), collapse = ", "),
              w, paste(sprintf("%.4f", py(fit, p1)), collapse = ", "),
              paste(sprintf("%.4f", predict(fit, nd, draws = TRUE)[1, ]), collapse = ", ")))
}
f <- wbb_nn(medv ~ ., data = b[1:400, ], model = nn_mlp(16), draws = 10, epochs = 20, seed = 1, quiet = TRUE)
report("wbb_nn(medv ~ ., Boston[1:400, ], nn_mlp(16), draws = 10, epochs = 20, seed = 1)", f)
s <- suppressWarnings(sgld_sa(medv ~ ., data = b[1:400, ], model = nn_mlp(16), seed = 1, quiet = TRUE))
report("sgld_sa(medv ~ ., Boston[1:400, ], model = nn_mlp(16), seed = 1)", s)
v <- bbb(medv ~ ., data = b[1:400, ], model = nn_mlp(16), epochs = 20, seed = 1, quiet = TRUE)
pv <- tempfile(fileext = ".pt"); nn_export(v, pv)
cat(sprintf("bbb(medv ~ ., Boston[1:400, ], nn_mlp(16), epochs = 20, seed = 1)\n  predict(fit)$fit: %s\n  PyTorch, default (the mean of q): %s\n",
            paste(sprintf("%.2f", predict(v, nd)$fit), collapse = ", "), paste(sprintf("%.2f", py(v, pv)), collapse = ", ")))
