#!/usr/bin/env bash
# Build scalebayes WITHOUT LibTorch (SCALEBAYES_TORCH=no) into a temporary library and check that every
# non-neural function still works and that the neural functions stop with the classed backend error.
# Run by .ci/run after the test suite; about a minute.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lib=$(mktemp -d)
src=$(mktemp -d)
trap 'rm -rf "$lib" "$src"' EXIT
# a copy of the sources, so the checkout's src/Makevars and objects are untouched
git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$src" 2>/dev/null || cp -r . "$src"
(cd "$src" && SCALEBAYES_TORCH=no MAKEFLAGS=-j2 R CMD INSTALL --no-test-load --preclean -l "$lib" . >"$lib/install.log" 2>&1) || {
  tail -n 40 "$lib/install.log"; exit 1; }
grep -q "LibTorch backend OFF" "$lib/install.log" || { echo "configure did not switch LibTorch off"; exit 1; }
R_LIBS="$lib" Rscript --vanilla -e '
  suppressPackageStartupMessages(library(scalebayes))
  stopifnot(!sb_torch_available(), !scalebayes_info()$torch$available)
  data(diabetes)
  fit <- wbb(diabetes$x, diabetes$y, draws = 20, seed = 1, quiet = TRUE)
  stopifnot(all(is.finite(fit$draws)))
  tf <- trend_filter(sin(1:200 / 20) + rnorm(200, sd = 0.1), k = 1, lambda = 1)
  stopifnot(all(is.finite(coef(tf))))
  e <- tryCatch(wbb_nn(matrix(rnorm(20), 10), factor(rep(1:2, 5))), error = identity)
  stopifnot(inherits(e, "scalebayes_error_backend"))
  stopifnot(grepl("libtorch-dev", conditionMessage(e)))
  e2 <- tryCatch(sgld_sa(matrix(rnorm(20), 10), rnorm(10), model = nn_mlp(4)), error = identity)
  stopifnot(inherits(e2, "scalebayes_error_backend"))
  fit2 <- sgld_sa(matrix(rnorm(200), 50), rnorm(50), iterations = 200, seed = 1, quiet = TRUE)  # regression needs no torch
  stopifnot(all(is.finite(coef(fit2))))
  print(nn_mlp(c(128, 64)), input = 784, output = 10)   # specifications work without the backend
  net <- nn_sequential(layer_conv2d(8, 3), layer_relu(), layer_avgpool2d(2), layer_flatten(), layer_dense(100),
                       layer_reshape(c(1, 10, 10)), layer_flatten())
  stopifnot(sum(scalebayes:::nn_resolve(net, c(1L, 28L, 28L), 10L)$params) == 80 + 156900 + 1010)  # engine planner
  e3 <- tryCatch(print(nn_sequential(layer_reshape(c(3, 3))), input = 10, output = 2), error = identity)
  stopifnot(inherits(e3, "scalebayes_error_input"))
  e4 <- tryCatch(nn_export(structure(list(), class = c("sb_wbb_nn", "sb_nn_fit")), tempfile()), error = identity)
  stopifnot(inherits(e4, "scalebayes_error_backend"))  # the export needs LibTorch (torch::pickle_save)
  stopifnot(grepl("nn.Linear(100, 10)", nn_torch_code(net, input = c(1, 28, 28), output = 10), fixed = TRUE))
  cat("no-LibTorch build: all 12 checks OK\n")
'
