# The test hooks (src/test_hooks.h): C++ entry points that only the tests (and a few bench/ scripts) call, to
# check one engine piece against a reference written independently. They are not Rcpp exports: they are
# compiled in only when the package was installed with SCALEBAYES_TEST_HOOKS=1 (tools/setup.sh and
# tools/run-tests.sh do; R CMD INSTALL of the tarball and R CMD check do not). One R function per hook below,
# with the arguments of its C++ signature (positional, converted as Rcpp's exports convert them). Without the
# hooks, a test that calls one skips, with a message saying how to build them; outside testthat (bench/
# scripts: source("tests/testthat/helper-test-hooks.R")) the call stops with that message.

sb_test_hook_cache <- new.env(parent = emptyenv())

# The hook's native symbol, or NULL when the installed package was built without the hooks.
sb_test_hook_symbol <- function(name) {
  sym <- sb_test_hook_cache[[name]]
  if (is.null(sym)) {
    sym <- tryCatch(getNativeSymbolInfo(paste0("sbtest_", name), "scalebayes"), error = function(e) NULL)
    if (!is.null(sym)) assign(name, sym, envir = sb_test_hook_cache)
  }
  sym
}

sb_test_hooks_available <- function() !is.null(sb_test_hook_symbol("cpp_test_rng"))

sb_test_hook <- function(name, ...) {
  sym <- sb_test_hook_symbol(name)
  if (is.null(sym)) {
    msg <- sprintf(paste("scalebayes was installed without its test hooks (%s is one): reinstall with",
                         "SCALEBAYES_TEST_HOOKS=1 (tools/setup.sh and tools/run-tests.sh do)"), name)
    if (requireNamespace("testthat", quietly = TRUE) && testthat::is_testing()) testthat::skip(msg)
    stop(msg, call. = FALSE)
  }
  .External(sym, ...)
}

cpp_compare_data <- function(n, p, setting, cell_id, seed, b, paper_route) sb_test_hook("cpp_compare_data", n, p, setting, cell_id, seed, b, paper_route)
cpp_coverage_all_pairs <- function(lo, hi, beta) sb_test_hook("cpp_coverage_all_pairs", lo, hi, beta)
cpp_glmnet_cv_lambda_min <- function(x, y, foldid, tol) sb_test_hook("cpp_glmnet_cv_lambda_min", x, y, foldid, tol)
cpp_glmnet_path_coef <- function(x, y, w, pf, s, user_lambda, tol) sb_test_hook("cpp_glmnet_path_coef", x, y, w, pf, s, user_lambda, tol)
cpp_kle_basis <- function(nx, ny, l1, l2, variance, terms, nystrom) sb_test_hook("cpp_kle_basis", nx, ny, l1, l2, variance, terms, nystrom)
cpp_nn_batched_test <- function(spec, params, x, xdim, dout, shared, grouped) sb_test_hook("cpp_nn_batched_test", spec, params, x, xdim, dout, shared, grouped)
cpp_nn_forward <- function(spec, params, x, xdim, train, seed, stream, float64) sb_test_hook("cpp_nn_forward", spec, params, x, xdim, train, seed, stream, float64)
cpp_nn_train_check <- function(x, y, params0, offset0, lambda, control, seed) sb_test_hook("cpp_nn_train_check", x, y, params0, offset0, lambda, control, seed)
cpp_rinvgauss <- function(n, mu, shape, seed) sb_test_hook("cpp_rinvgauss", n, mu, shape, seed)
cpp_sgmcmc_normals <- function(n, seed) sb_test_hook("cpp_sgmcmc_normals", n, seed)
cpp_test_driver <- function(n, threads, stop_after, throw_at) sb_test_hook("cpp_test_driver", n, threads, stop_after, throw_at)
cpp_test_lbfgs_masked <- function(S, Y, keep, v, z, memory, r, gamma_min) sb_test_hook("cpp_test_lbfgs_masked", S, Y, keep, v, z, memory, r, gamma_min)
cpp_test_lbfgs_ops <- function(S, Y, v, z, memory, r, gamma_min, split) sb_test_hook("cpp_test_lbfgs_ops", S, Y, v, z, memory, r, gamma_min, split)
cpp_test_net_regradient <- function(spec, x, xdim, y, idx, weights, seed) sb_test_hook("cpp_test_net_regradient", spec, x, xdim, y, idx, weights, seed)
cpp_test_rng <- function(kind, n, a, b, seed, stream) sb_test_hook("cpp_test_rng", kind, n, a, b, seed, stream)
cpp_test_storage_ops <- function(a, b, c, alpha, sigma, delta) sb_test_hook("cpp_test_storage_ops", a, b, c, alpha, sigma, delta)
cpp_tf_difference <- function(x, k) sb_test_hook("cpp_tf_difference", x, k)
cpp_vi_test <- function(spec, x, xdim, y, params, rho, logit, vi, what, reps, seed) sb_test_hook("cpp_vi_test", spec, x, xdim, y, params, rho, logit, vi, what, reps, seed)
cpp_wbb_driver_check <- function(y, lambda, solver, n_prior, settings) sb_test_hook("cpp_wbb_driver_check", y, lambda, solver, n_prior, settings)
cpp_wbb_driver_groups_check <- function(n, n_prior, group_size, settings, stop_group) sb_test_hook("cpp_wbb_driver_groups_check", n, n_prior, group_size, settings, stop_group)
