# Bad and extreme inputs over every exported function (issue 12, part 1). The cases come from the table
# below: (function, argument, bad values), see helper-fuzz.R. Small data, few draws, one thread. Cases with a
# known outcome (a classed error for a value outside the domain, a finite result for a valid one) assert it;
# the others (extreme but valid inputs) are labelled robustness checks.

d <- fz_data
x <- d$x; y <- d$y; n <- nrow(x)
b_wbb <- list(x = x, y = y, lambda = 5, draws = 5, threads = 1, seed = 1, quiet = TRUE)
b_wl <- list(x = x, y = y, lambda = 5)
b_cv <- list(x = x, y = y, nfolds = 3, nlambda = 5, threads = 1, seed = 1, quiet = TRUE)
b_bl <- list(x = x, y = y, lambda = 1, chains = 2, iterations = 20, burnin = 5, threads = 1, seed = 1, quiet = TRUE,
             control = blasso_control(diagnostics = FALSE))
b_sg <- list(x = x, y = y, iterations = 200, threads = 1, seed = 1, quiet = TRUE)
b_tf <- list(y = d$tf_y, k = 1, lambda = 5)
b_tfp <- list(y = d$tf_y, k = 1, nlambda = 5)
b_tfw <- list(y = d$tf_y, k = 1, lambda = 5, draws = 5, threads = 1, seed = 1, quiet = TRUE)
b_gl <- list(y = d$gl_y, D = d$D, lambda = 1)
b_f3 <- list(x = x, y = y, draws = 20, chains = 1, burnin = 5, threads = 1, seed = 1)
b_gle <- list(lambda = 10, alpha = 0.5, weights = rep(1, n), penalty_factor = rep(1, 3), family = "gaussian", y = y)

fits <- suppressWarnings(list(
  wbb = do.call(wbb, b_wbb),
  path = do.call(wbb, modifyList(b_wbb, list(lambda = c(5, 2)))),
  blasso = do.call(blasso, b_bl),
  sgld = do.call(sgld_sa, modifyList(b_sg, list(newx = x[1:3, ]))),
  tf = do.call(trend_filter, b_tf),
  tfw = do.call(trend_filter_wbb, b_tfw),
  wl = do.call(weighted_lasso, b_wl),
  formula = wbb(y ~ f + b, data = data.frame(y = y, f = factor(rep(c("u", "v"), 10)), b = x[, 1]), lambda = 5,
                draws = 5, seed = 1, quiet = TRUE, threads = 1)
))
newx_bad <- list(na = replace(x[1:3, ], 1, NA), wrong_cols = x[1:3, 1:2], character = matrix("a", 2, 3),
                 list = list(1, 2), inf = replace(x[1:3, ], 2, Inf))
pars_bad <- list(unknown = "nope", index0 = 0, index_big = 99, na = NA, empty = character(0), fraction = 1.5)
x_some <- c("na", "one_row", "huge", "tiny", "blank_name", "const_col", "factor_df")
y_some <- c("short", "na", "character", "constant", "huge")
prob_bad <- list(zero = 0, one = 1, above = 2, na = NA, string = "0.9", vector = c(0.1, 0.9))

cases <- c(
  # wbb()
  fz_cases("wbb", "x", fz_bad_x(x), b_wbb),
  fz_cases("wbb", "y", fz_bad_y(y), b_wbb),
  fz_cases("wbb", "family", fz_bad_choice, b_wbb),
  fz_cases("wbb", "alpha", c(fz_bad_number, list(above = 2)), b_wbb),
  fz_cases("wbb", "lambda", c(fz_bad_number, list(string = "a")), b_wbb),
  fz_cases("wbb", "prior_weights", fz_bad_choice, b_wbb),
  fz_cases("wbb", "draws", c(fz_bad_count, list(string = "2", vector = c(2, 3))), b_wbb),
  fz_cases("wbb", "threads", fz_bad_count, b_wbb),
  fz_cases("wbb", "seed", fz_bad_seed, b_wbb),
  fz_cases("wbb", "quiet", fz_bad_flag[-5], b_wbb),
  fz_cases("wbb", "penalty_factor", fz_bad_weights(3), b_wbb),
  fz_cases("wbb", "control", fz_bad_control[-3], b_wbb),
  fz_cases("wbb", "x", list(huge = x * 1e300, tiny = x * 1e-300), b_wbb, expect = "error"),
  fz_cases("wbb", "draws", list(result_too_big = 1e9), b_wbb, expect = "error"),
  fz_cases("wbb", "family", list(binomial_numeric = "binomial"), b_wbb),
  # weighted_lasso() / cv_weighted_lasso()
  fz_cases("weighted_lasso", "x", fz_bad_x(x)[x_some], b_wl),
  fz_cases("weighted_lasso", "y", fz_bad_y(y)[y_some], b_wl),
  fz_cases("weighted_lasso", "weights", fz_bad_weights(n), b_wl),
  fz_cases("weighted_lasso", "weights", list(huge = rep(1e308, n), tiny = rep(1e-308, n)),
           modifyList(b_wl, list(lambda = NULL, nlambda = 5))),
  fz_cases("weighted_lasso", "penalty_factor", fz_bad_weights(3), b_wl),
  fz_cases("weighted_lasso", "lambda", fz_bad_number, b_wl),
  fz_cases("weighted_lasso", "standardize", fz_bad_flag, b_wl),
  fz_cases("weighted_lasso", "nlambda", fz_bad_count, modifyList(b_wl, list(lambda = NULL))),
  fz_cases("weighted_lasso", "lambda_min_ratio", c(fz_bad_number, list(one = 1)), modifyList(b_wl, list(lambda = NULL))),
  fz_cases("weighted_lasso", "control", fz_bad_control, b_wl),
  fz_cases("cv_weighted_lasso", "nfolds", c(fz_bad_count, list(one = 1, too_many = 50)), b_cv),
  fz_cases("cv_weighted_lasso", "foldid", list(short = 1:3, one_fold = rep(1, n), gaps = rep(c(1, 3), 10),
                                               na = c(NA, rep(1:2, length.out = n - 1))), b_cv),
  fz_cases("cv_weighted_lasso", "nlambda", fz_bad_count, b_cv),
  fz_cases("cv_weighted_lasso", "weights", fz_bad_weights(n), b_cv),
  fz_cases("cv_weighted_lasso", "family", fz_bad_choice, b_cv),
  # blasso() / blasso_control()
  fz_cases("blasso", "x", fz_bad_x(x)[x_some], b_bl),
  fz_cases("blasso", "y", fz_bad_y(y)[y_some], b_bl),
  fz_cases("blasso", "lambda", c(fz_bad_number, list(zero = 0, word = "nope")), b_bl),
  fz_cases("blasso", "chains", c(fz_bad_count, list(result_too_big = 1e8)), b_bl),
  fz_cases("blasso", "iterations", fz_bad_count, b_bl),
  fz_cases("blasso", "burnin", fz_bad_count[-1], b_bl),
  fz_cases("blasso", "thin", fz_bad_count, b_bl),
  fz_cases("blasso", "threads", fz_bad_count, b_bl),
  fz_cases("blasso", "seed", fz_bad_seed, b_bl),
  fz_cases("blasso", "control", fz_bad_control, b_bl),
  fz_cases("blasso_control", "sigma2_prior", list(one = 1, negative = c(-1, 1), na = c(NA, 1), word = "x"), list()),
  fz_cases("blasso_control", "gamma_prior", list(zero = c(0, 1), one = 1, inf = c(Inf, 1)), list()),
  fz_cases("blasso_control", "em_max", fz_bad_count, list()),
  fz_cases("blasso_control", "em_tol", fz_bad_number, list()),
  fz_cases("blasso_control", "lambda_range", list(reversed = c(2, 1), zero = c(0, 1), one = 1, na = c(NA, 1)), list()),
  fz_cases("blasso_control", "rj_moves", fz_bad_count, list()),
  fz_cases("blasso_control", "rj_prior", fz_bad_choice, list()),
  fz_cases("blasso_control", "preset", fz_bad_choice, list()),
  fz_cases("blasso_control", "fixed_tau2", list(zero = c(0, 1), na = NA, string = "a"), list()),
  fz_cases("blasso_control", "intercept", fz_bad_flag, list()),
  # sgld_sa() / sgmcmc_control()
  fz_cases("sgld_sa", "x", fz_bad_x(x)[x_some], b_sg),
  fz_cases("sgld_sa", "y", fz_bad_y(y)[y_some], b_sg),
  fz_cases("sgld_sa", "family", fz_bad_choice, b_sg),
  fz_cases("sgld_sa", "method", fz_bad_choice, b_sg),
  fz_cases("sgld_sa", "sampler", fz_bad_choice, b_sg),
  fz_cases("sgld_sa", "iterations", fz_bad_count, b_sg),
  fz_cases("sgld_sa", "batch_size", c(fz_bad_count, list(above_n = 21)), b_sg),
  fz_cases("sgld_sa", "burnin", c(fz_bad_count[-1], list(all = 200)), b_sg),
  fz_cases("sgld_sa", "thin", c(fz_bad_count, list(keeps_none = 1000)), b_sg),
  fz_cases("sgld_sa", "thin", list(keeps_none = 2), modifyList(b_sg, list(iterations = 500, burnin = 499)),
           expect = "error"),
  fz_cases("sgld_sa", "chains", c(fz_bad_count, list(result_too_big = 1e8)), b_sg),
  fz_cases("sgld_sa", "v0", fz_bad_number, b_sg),
  fz_cases("sgld_sa", "sparse", list(na = NA, short = c(TRUE, FALSE), number = 1), b_sg),
  fz_cases("sgld_sa", "keep", list(unknown = "nope", zero = 0, big = 99, na = NA), b_sg),
  fz_cases("sgld_sa", "newx", newx_bad, b_sg),
  fz_cases("sgld_sa", "control", fz_bad_control, b_sg),
  fz_cases("sgmcmc_control", "step_size", fz_bad_number, list()),
  fz_cases("sgmcmc_step", "schedule", fz_bad_choice, list()),
  fz_cases("sgmcmc_ssgl", "sa_alpha", fz_bad_number, list()),
  fz_cases("sgmcmc_step", "friction", c(fz_bad_number, list(zero = 0)), list()),
  fz_cases("sgmcmc_ssgl", "sa_start", fz_bad_count, list()),
  fz_cases("sgmcmc_lbfgs", "memory", fz_bad_count, list()),
  fz_cases("sgmcmc_control", "trace_every", fz_bad_count, list()),
  fz_cases("sgmcmc_step", "milestones", list(zero = 0, na = NA, fraction = 1.5), list()),
  fz_cases("sgmcmc_control", "ssgl", list(number = 1, string = "a", wrong_part = sgmcmc_step()), list()),
  fz_cases("sgmcmc_control", "init", list(na = NA_real_, string = "a"), list()),
  # trend filtering
  fz_cases("trend_filter", "y", list(na = replace(d$tf_y, 1, NA), character = "a", matrix = cbind(d$tf_y, 1),
                                     short = 1:2, huge = d$tf_y * 1e300, tiny = d$tf_y * 1e-300), b_tf),
  fz_cases("trend_filter", "x", list(unsorted = c(2, 1, 3:30), ties = c(1, 1, 3:30), na = c(NA, 2:30),
                                     short = 1:3, huge = (1:30) * 1e300, tiny = (1:30) * 1e-300), b_tf),
  fz_cases("trend_filter", "k", c(fz_bad_count[-1], list(too_big = 29)), b_tf),
  fz_cases("trend_filter", "lambda", fz_bad_number, b_tf),
  fz_cases("trend_filter", "weights", fz_bad_weights(30), b_tf),
  fz_cases("trend_filter", "penalty_factor", list(zero = 0, wrong_length = c(1, 2), na = NA), b_tf),
  fz_cases("trend_filter", "nlambda", fz_bad_count, b_tfp),
  fz_cases("trend_filter", "control", fz_bad_control[-3], b_tf),
  fz_cases("cv_trend_filter", "nfolds", c(fz_bad_count, list(one = 1, too_many = 40)), b_tfp),
  fz_cases("sure_trend_filter", "sigma", c(fz_bad_number, list(zero = 0)), b_tfp),
  fz_cases("tf_lambda_max", "y", list(na = c(NA, 1:29), character = "a"), list(k = 1)),
  fz_cases("tf_lambda_max", "k", fz_bad_count[-1], list(y = d$tf_y)),
  fz_cases("tf_control", "tol", fz_bad_number, list()),
  fz_cases("tf_control", "max_iter", fz_bad_count, list()),
  fz_cases("tf_control", "method", fz_bad_choice, list()),
  fz_cases("tf_control", "newton", fz_bad_choice, list()),
  fz_cases("trend_filter_wbb", "draws", fz_bad_count, b_tfw),
  fz_cases("trend_filter_wbb", "draws", list(huge = 1e12, int_overflow = 2^31, result_too_big = 1e8), b_tfw,
           expect = "error"),
  fz_cases("trend_filter_wbb", "k", fz_bad_count[-1], b_tfw),
  fz_cases("trend_filter_wbb", "lambda", fz_bad_number, b_tfw),
  fz_cases("trend_filter_wbb", "prior_weights", fz_bad_choice, b_tfw),
  fz_cases("trend_filter_wbb", "threads", fz_bad_count, b_tfw),
  fz_cases("trend_filter_wbb", "lambda_rule", fz_bad_choice, b_tfw),
  fz_cases("trend_filter_wbb", "future", fz_bad_flag, b_tfw),
  fz_cases("generalized_lasso", "D", list(huge = d$D * 1e300, zero_row = rbind(d$D, 0), na = replace(d$D, 1, NA),
                                          string = "a", one_col = d$D[, 1, drop = FALSE], wrong_cols = d$D[, -1]),
           b_gl),
  fz_cases("generalized_lasso", "y", list(na = c(NA, d$gl_y[-1]), short = 1:3, character = "a"), b_gl),
  fz_cases("generalized_lasso", "lambda", fz_bad_number, b_gl),
  fz_cases("generalized_lasso", "weights", fz_bad_weights(10), b_gl),
  fz_cases("generalized_lasso", "nlambda", fz_bad_count, list(y = d$gl_y, D = d$D)),
  # glmnet mapping, controls, normal-means helpers, figures, simulation study
  fz_cases("glmnet_lambda", "weights", list(empty = numeric(0), zero = rep(0, n), na = c(NA, rep(1, n - 1)),
                                            huge = rep(1e308, n), string = "1"),
           list(lambda = 10, penalty_factor = rep(1, 3))),
  fz_cases("glmnet_lambda", "lambda", fz_bad_number, list(weights = rep(1, n), penalty_factor = rep(1, 3))),
  fz_cases("glmnet_lambda", "penalty_factor", list(empty = numeric(0), na = NA, negative = -1),
           list(lambda = 10, weights = rep(1, n))),
  fz_cases("glmnet_equivalent", "weights", list(empty = numeric(0), zero = rep(0, n), na = c(NA, rep(1, n - 1))), b_gle),
  fz_cases("glmnet_equivalent", "alpha", fz_bad_number, b_gle),
  fz_cases("glmnet_equivalent", "y", list(null = NULL, na = replace(y, 1, NA), short = 1:3, constant = rep(1, n)),
           modifyList(b_gle, list(alpha = 0))),
  fz_cases("glmnet_equivalent", "family", fz_bad_choice, b_gle),
  fz_cases("cd_control", "tol", c(fz_bad_number, list(zero = 0)), list()),
  fz_cases("cd_control", "max_iter", fz_bad_count, list()),
  fz_cases("wbb_control", "nfolds", fz_bad_count, list()),
  fz_cases("wbb_control", "nlambda", fz_bad_count, list()),
  fz_cases("wbb_control", "lambda_rule", fz_bad_choice, list()),
  fz_cases("wbb_control", "weight_dist", fz_bad_choice, list()),
  fz_cases("wbb", "chunks", fz_bad_count, b_wbb),
  fz_cases("wbb", "future", fz_bad_flag, b_wbb),
  fz_cases("blasso", "chunks", fz_bad_count, b_bl),
  fz_cases("blasso", "future", fz_bad_flag, b_bl),
  fz_cases("laplace_posterior_mean", "y", list(na = NA, string = "a", huge = c(-1e308, 1e308), inf = Inf),
           list(lambda = 1)),
  fz_cases("laplace_posterior_mean", "lambda", c(fz_bad_number, list(zero = 0)), list(y = c(-2, 0, 2))),
  fz_cases("wbb_normal_means", "draws", c(fz_bad_count, list(result_too_big = 1e9)), list(y = c(-2, 0, 2), lambda = 1)),
  fz_cases("wbb_normal_means_mean", "y", list(na = NA, string = "a", inf = Inf), list(lambda = 1)),
  fz_cases("wbb_normal_means_mean", "lambda", fz_bad_number, list(y = c(-2, 0, 2))),
  fz_cases("wbb_figure1", "draws", fz_bad_count[-1], list(lambda = 1, y = c(-1, 1))),
  fz_cases("wbb_figure2", "draws", fz_bad_count, list()),
  fz_cases("wbb_figure2", "slab_halfwidth", fz_bad_number, list(draws = 1)),
  fz_cases("wbb_figure2", "reading", fz_bad_choice, list(draws = 1)),
  fz_cases("wbb_figure2", "kappa", list(na = NA, string = "a", negative = -1, inf = Inf, empty = numeric(0)),
           list(draws = 1)),
  fz_cases("wbb_figure2", "iterations", c(fz_bad_count, list(one = 1, below_draws = 5)),
           list(draws = 10, reading = "paper_code")),
  fz_cases("wbb_figure3", "x", fz_bad_x(x)[x_some], b_f3),
  fz_cases("wbb_figure3", "y", fz_bad_y(y)[y_some], b_f3),
  fz_cases("wbb_figure3", "draws", fz_bad_count, b_f3),
  fz_cases("wbb_figure3", "chains", fz_bad_count, b_f3),
  fz_cases("wbb_figure3", "burnin", fz_bad_count[-1], b_f3),
  fz_cases("wbb_figure3", "seed", fz_bad_seed, b_f3),
  fz_cases("blasso_compare", "settings", list(unknown = "C", na = NA, number = 1), list(p = 12, datasets = 1)),
  fz_cases("blasso_compare", "p", list(one = 1, na = NA, fraction = 2.5, string = "a", huge = 1e12), list(datasets = 1)),
  fz_cases("blasso_compare", "datasets", fz_bad_count, list(p = 12)),
  fz_cases("blasso_compare", "blasso", fz_bad_choice, list(p = 12, datasets = 1)),
  fz_cases("blasso_compare_combine", "...", list(number = 1, string = "a", df = data.frame(a = 1)), list()),
  # hardening (issue: network side): exact outcomes of the former crashes, hangs and silent NaN / Inf
  fz_cases("wbb", "y", list(huge_constant = rep(1e308, n)), b_wbb, expect = "error"),
  fz_cases("weighted_lasso", "y", list(huge_constant = rep(1e308, n)), b_wl, expect = "error"),
  fz_cases("blasso_compare", "first_dataset", list(last_overflows = 2^31 - 1), list(p = 12, datasets = 2),
           expect = "error"),
  fz_cases("blasso_compare", "first_dataset", list(last_is_max = 2^31 - 2), list(p = 12, datasets = 2, draws = 20),
           expect = "valid"),
  fz_cases("sgld_sa", "control", list(anneal_to_inf = sgmcmc_control(step = sgmcmc_step(anneal = 1.5)),
                                      anneal_to_zero = sgmcmc_control(step = sgmcmc_step(anneal = 0.5))),
           modifyList(b_sg, list(iterations = 2000)), expect = "error"),
  fz_cases("sgld_sa", "control", list(anneal_within = sgmcmc_control(step = sgmcmc_step(anneal = 1.3))),
           modifyList(b_sg, list(iterations = 2000)), expect = "valid"),
  fz_cases(fz_low_memory(wbb), "draws", list(over_memory = 1e4), b_wbb, expect = "error"),
  fz_cases(fz_low_memory(trend_filter_wbb), "draws", list(over_memory = 1e3), b_tfw, expect = "error"),
  fz_cases(fz_low_memory(blasso), "iter", list(over_memory = 1e4), b_bl, expect = "error"),
  fz_cases(fz_low_memory(sgld_sa), "iterations", list(over_memory = 1e4), modifyList(b_sg, list(thin = 1, burnin = 1)),
           expect = "error"),
  fz_cases(fz_low_memory(wbb, 1e12), "draws", list(under_memory = 5), b_wbb, expect = "valid"),
  fz_cases("read_idx", "path", list(directory = tempdir(), corrupt_gzip = fz_corrupt_gz(),
                                    nan_float = fz_write_idx(tempfile(), 14, c(2, 2), c(0.5, NaN, 1, 2), 8),
                                    inf_float4 = fz_write_idx(tempfile(), 13, 3, c(1, Inf, 2), 4)), list(),
           expect = "error"),
  fz_cases("read_idx", "path", list(gz_ok = fz_write_idx(tempfile(), 8, c(2, 2), 1:4, 1, gz = TRUE)), list(),
           expect = "valid"),
  fz_cases("fashion_mnist", "path", list(label_out_of_range = fz_fashion_dir(c(3, 200))), list(split = "test"),
           expect = "error"),
  fz_cases("mnist_digits", "path", list(na = NA, number = 1, two = c("a", "b"),
                                        nan_pixel = fz_mnist_dir(function(k) paste0("[", paste(c(if (k == 3) "NaN" else 0.5, rep(0.5, 783)), collapse = ","), "]")),
                                        not_json = fz_mnist_dir(function(k) "{ \"data\": [0.5, oops] }"),
                                        partial_image = fz_mnist_dir(function(k) "[0.5, 0.25]")),
           list(cache = FALSE), expect = "error"),
  fz_cases("mnist_digits", "path", list(bare_nested_array = fz_mnist_dir(function(k) paste0("[[", paste(rep(k / 10, 784), collapse = ","), "]]")),
                                        bare_flat_array = fz_mnist_dir(function(k) paste0("[", paste(rep(k / 10, 784), collapse = ","), "]"))),
           list(cache = FALSE), expect = "valid"),
  fz_cases("mnist_digits", "order", fz_bad_choice, list(path = tempdir(), cache = FALSE)),
  # methods of the fits
  fz_cases("summary", "probs", c(prob_bad[-(1:2)], list(empty = numeric(0))), list(object = fits$blasso)),
  fz_cases("summary", "pars", pars_bad, list(object = fits$wbb)),
  fz_cases("coef", "type", fz_bad_choice, list(object = fits$wbb)),
  fz_cases("coef", "type", fz_bad_choice, list(object = fits$sgld)),
  fz_cases("posterior_interval", "prob", prob_bad, list(object = fits$wbb)),
  fz_cases("posterior_interval", "pars", pars_bad, list(object = fits$blasso)),
  fz_cases("as_draws_df", "pars", pars_bad, list(x = fits$wbb)),
  fz_cases("as_draws_matrix", "pars", pars_bad[1:2], list(x = fits$blasso)),
  fz_cases("as.matrix", "pars", pars_bad[1:3], list(x = fits$sgld)),
  fz_cases("predict", "newx", newx_bad, list(object = fits$wbb)),
  fz_cases("predict", "level", prob_bad, list(object = fits$wbb, newx = x[1:3, ])),
  fz_cases("predict", "type", fz_bad_choice, list(object = fits$wbb, newx = x[1:3, ])),
  fz_cases("predict", "newdata", list(new_level = data.frame(f = factor("w"), b = 1), na = data.frame(f = factor("u"), b = NA),
                                      missing_var = data.frame(f = factor("u")), number = 1),
           list(object = fits$formula)),
  fz_cases("predict", "newx", newx_bad, list(object = fits$blasso)),
  fz_cases("predict", "interval", fz_bad_choice, list(object = fits$blasso, newx = x[1:3, ])),
  fz_cases("predict", "level", prob_bad, list(object = fits$blasso, newx = x[1:3, ])),
  fz_cases("predict", "newx", newx_bad, list(object = fits$sgld)),
  fz_cases("predict", "type", fz_bad_choice, list(object = fits$sgld)),
  fz_cases("predict", "newx", newx_bad, list(object = fits$wl)),
  fz_cases("predict", "newx", list(na = NA, string = "a", inf = Inf), list(object = fits$tf)),
  fz_cases("predict", "lambda", fz_bad_number, list(object = fits$tf)),
  fz_cases("predict", "newx", list(na = NA, string = "a", inf = Inf), list(object = fits$tfw)),
  fz_cases("predict", "level", prob_bad, list(object = fits$tfw)),
  fz_cases("plot", "pars", pars_bad, list(x = fits$wbb)),
  fz_cases("plot", "pars", pars_bad, list(x = fits$path)),
  fz_cases("plot", "level", prob_bad[3:6], list(x = fits$path)),
  fz_cases("plot", "type", fz_bad_choice, list(x = fits$sgld)),
  fz_cases("plot", "band", fz_bad_choice, list(x = fits$tfw))
)

# Networks (need the LibTorch backend): wbb_nn(), its specifications, controls and methods.
nn_cases <- list()
if (sb_torch_available()) {
  yf <- factor(rep(c("a", "b", "c"), length.out = n))
  b_nn <- list(x = x, y = yf, model = nn_mlp(3), draws = 2, threads = 1, seed = 1, quiet = TRUE,
               control = nn_control(epochs = 1, batch_size = 10))
  fits$nn <- do.call(wbb_nn, modifyList(b_nn, list(newx = x[1:4, ], newy = yf[1:4])))
  fit_kw <- do.call(wbb_nn, modifyList(b_nn, list(keep_draws = TRUE)))
  b_adv <- list(fit = fit_kw, x = x, y = yf, zeta = c(0, 0.1))
  fit_all_diverged <- fits$nn
  fit_all_diverged$status[] <- "diverged"
  b_bn <- b_nn
  b_bn$model <- nn_mlp(4, batchnorm = TRUE)  # (not modifyList(): it would merge the two specifications)
  x101 <- matrix(rnorm(101 * 3), 101, 3)
  y101 <- factor(rep(c("a", "b"), length.out = 101))
  img_bad <- list(na_pixel = array(replace(runif(n * 16), 3, NA), c(n, 4, 4)), five_d = array(0, c(n, 1, 1, 2, 2)),
                  empty = array(0, c(n, 0, 4)), character = array("a", c(n, 4, 4)))
  nn_cases <- c(
    fz_cases("wbb_nn", "x", c(fz_bad_x(x)[x_some], img_bad), b_nn),
    fz_cases("wbb_nn", "y", c(suppressWarnings(fz_bad_y(yf))[c("short", "na")], list(one_class = factor(rep("a", n)))), b_nn),
    fz_cases("wbb_nn", "model", list(string = "mlp", list = list(type = "mlp"), cnn_on_matrix = nn_cnn()), b_nn),
    fz_cases("wbb_nn", "family", fz_bad_choice, b_nn),
    fz_cases("wbb_nn", "family", list(gaussian_on_factor = "gaussian", binomial_three = "binomial"), b_nn),
    fz_cases("wbb_nn", "lambda", fz_bad_number, b_nn),
    fz_cases("wbb_nn", "prior_weights", fz_bad_choice, b_nn),
    fz_cases("wbb_nn", "draws", fz_bad_count, b_nn),
    fz_cases("wbb_nn", "threads", fz_bad_count, b_nn),
    fz_cases("wbb_nn", "seed", fz_bad_seed, b_nn),
    fz_cases("wbb_nn", "device", list(tpu = "tpu", na = NA, number = 1), b_nn),
    fz_cases("wbb_nn", "keep_draws", fz_bad_flag, b_nn),
    fz_cases("wbb_nn", "newx", newx_bad, b_nn),
    fz_cases("wbb_nn", "newy", list(unseen = factor(rep("z", 4)), short = yf[1:2]), modifyList(b_nn, list(newx = x[1:4, ]))),
    fz_cases("wbb_nn", "control", fz_bad_control[-3], b_nn),
    fz_cases("nn_control", "lr", fz_bad_number, list()),
    fz_cases("nn_control", "epochs", fz_bad_count, list()),
    fz_cases("nn_control", "batch_size", fz_bad_count, list()),
    fz_cases("nn_control", "optimizer", fz_bad_choice, list()),
    fz_cases("nn_control", "betas", list(one = 0.9, above = c(0.9, 1), na = c(NA, 0.9)), list()),
    fz_cases("nn_control", "eps", list(below_float = 1e-40), list(), expect = "error"),
    fz_cases("nn_control", "eps", list(below_float_f64 = 1e-40), list(float64 = TRUE), expect = "valid"),
    fz_cases("nn_control", "weight_dist", fz_bad_choice, list()),
    fz_cases("nn_mlp", "hidden", list(zero = 0, na = NA, fraction = 1.5, huge = 1e12, string = "8"), list()),
    fz_cases("nn_mlp", "activation", fz_bad_choice, list()),
    fz_cases("nn_cnn", "channels", list(empty = integer(), zero = 0, na = NA), list()),
    fz_cases("nn_cnn", "kernel", fz_bad_count, list()),
    fz_cases("nn_cnn", "padding", list(unknown = "full", negative = -1, huge = 1e12), list()),
    fz_cases("read_idx", "path", list(missing = tempfile(), na = NA_character_, two = c("a", "b"), number = 1), list()),
    fz_cases("fashion_mnist", "path", list(empty_dir = tempdir()), list(split = "test"), expect = "error"),
    fz_cases("fashion_mnist", "split", fz_bad_choice, list(path = tempdir())),
    fz_cases("mnist", "path", list(empty_dir = tempdir(), na = NA, number = 1, two = c("a", "b"),
                                   label_out_of_range = fz_fashion_dir(c(3, 10))), list(split = "test"),
             expect = "error"),
    fz_cases("mnist", "split", fz_bad_choice, list(path = tempdir())),
    fz_cases("mnist", "scale", list(na = NA, two = c(TRUE, FALSE), string = "yes"), list(path = tempdir())),
    fz_cases("mnist_digits", "path", list(empty_dir = tempdir()), list(cache = FALSE), expect = "error"),
    fz_cases("predict", "type", fz_bad_choice, list(object = fits$nn)),
    fz_cases("predict", "newx", newx_bad, list(object = fits$nn)),
    fz_cases("summary", "level", prob_bad, list(object = fits$nn)),
    # hardening (issue: network side)
    fz_cases("wbb_nn", "x", list(bn_last_batch_of_one = x101), list(y = y101, model = nn_mlp(4, batchnorm = TRUE), draws = 2,
                                                                     threads = 1, seed = 1, quiet = TRUE,
                                                                     control = nn_control(epochs = 1)), expect = "valid"),
    fz_cases("wbb_nn", "control", list(bn_batch_one = nn_control(epochs = 1, batch_size = 1)),
             b_bn, expect = "error"),
    fz_cases("wbb_nn", "control", list(batch_above_n = nn_control(epochs = 1, batch_size = n + 1)), b_nn, expect = "error"),
    fz_cases("wbb_nn", "control", list(batch_default_small_n = nn_control(epochs = 1)), b_nn, expect = "valid"),
    # inputs that overflow single precision: on the data as given a classed error; standardized (the default) in
    # double precision first, a valid fit
    fz_cases("wbb_nn", "x", list(huge_1e25 = x * 1e25, huge_1e29 = x * 1e29), modifyList(b_nn, list(standardize = FALSE)),
             expect = "error"),
    fz_cases("wbb_nn", "x", list(huge_1e25_standardized = x * 1e25, huge_1e29_standardized = x * 1e29), b_nn,
             expect = "valid"),
    fz_cases("sgld_sa", "batch_size", list(bn_batch_one = 1), list(x = x, y = yf, model = nn_mlp(4, batchnorm = TRUE),
                                                                   iterations = 20, quiet = TRUE, seed = 1, threads = 1),
             expect = "error"),
    fz_cases("sgld_sa", "control", list(sigma_init = sgmcmc_control(ssgl = sgmcmc_ssgl(sigma_init = 1e300)),
                                        sigma_init_sq = sgmcmc_control(ssgl = sgmcmc_ssgl(sigma_init = 1e30)),
                                        step_size = sgmcmc_control(step_size = 1e39),
                                        prior_var = sgmcmc_control(ssgl = sgmcmc_ssgl(prior_var = 1e39)),
                                        likelihood_sd = sgmcmc_control(ssgl = sgmcmc_ssgl(likelihood_sd = 1e300)),
                                        anneal_to_inf = sgmcmc_control(step = sgmcmc_step(anneal = 1.5))),
             list(x = x, y = yf, model = nn_mlp(4), iterations = 2000, quiet = TRUE, seed = 1, threads = 1),
             expect = "error"),
    fz_cases("sgld_sa", "v1", list(beyond_float = 1e39), list(x = x, y = yf, model = nn_mlp(4), iterations = 20,
                                                              quiet = TRUE, seed = 1, threads = 1), expect = "error"),
    fz_cases("nn_adversarial", "clip", list(beyond_float = c(-1e308, 1e308), reversed = c(1, 0)), b_adv, expect = "error"),
    fz_cases("nn_adversarial", "clip", list(null = NULL), b_adv, expect = "valid"),
    fz_cases("nn_adversarial", "zeta", list(beyond_float = c(0, 1e39), inf_images = c(0, 1e38)),
             modifyList(b_adv, list(clip = NULL)), expect = "error"),
    fz_cases("print", "input", list(negative = -5, zero = 0, na = NA), list(x = nn_mlp()), expect = "error"),
    fz_cases("summary", "object", list(all_diverged = fit_all_diverged), list(), expect = "error")
  )
  cases <- c(cases, nn_cases)
}

test_that("fuzz, known outcomes: a value outside the argument's domain is a classed error, a valid one a finite result", {
  known <- Filter(function(cs) cs$expect != "any", cases)
  expect_gte(length(known), 280L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  withr::local_options(scalebayes.threads = 1L, scalebayes.quiet = TRUE)
  for (case in known) {
    out <- fz_run(case)
    ok <- if (case$expect == "error") out == "error" else out %in% c("warning", "result")
    expect(ok, sprintf("%s: expected %s, got %s", case$label,
                       if (case$expect == "error") "a classed error" else "a finite result", out))
  }
})

test_that("fuzz, robustness only: extreme but valid inputs end in a classed error, a warning with a finite result, or a finite result", {
  skip_if_fast_tier()
  # huge or tiny scales, constant columns or responses, blank or duplicated names: no single right outcome,
  # but never a crash, an unclassed error or a NaN / Inf in the result
  robust <- Filter(function(cs) cs$expect == "any", cases)
  expect_gte(length(robust), 20L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  withr::local_options(scalebayes.threads = 1L, scalebayes.quiet = TRUE)
  for (case in robust) {
    out <- fz_run(case)
    expect(out %in% c("error", "warning", "result"), sprintf("robustness: %s: %s", case$label, out))
  }
})

test_that("options(scalebayes.threads) and argument-free functions are checked", {
  expect_s3_class(scalebayes_info(), "scalebayes_info")
  for (v in list(0, 1e12, NA, "a", 2^31)) {
    withr::with_options(list(scalebayes.threads = v),
                        expect_error(sb_default_threads(), class = "scalebayes_error"))
  }
})

test_that("weights whose sum overflows give the same fit as unit weights (exact rescaling)", {
  f1 <- weighted_lasso(x, y, lambda = 5)
  f2 <- weighted_lasso(x, y, weights = rep(2^1000, n), lambda = 5 * 2^1000)
  f3 <- weighted_lasso(x, y, weights = rep(1e307, n), lambda = 5e307)
  expect_identical(coef(f2), coef(f1))
  expect_equal(coef(f3), coef(f1), tolerance = 1e-12)
  expect_identical(f3$lambda, 5e307)
  p1 <- weighted_lasso(x, y, nlambda = 5)
  p2 <- weighted_lasso(x, y, weights = rep(2^700, n), nlambda = 5)
  expect_identical(p2$lambda, p1$lambda * 2^700)
  expect_identical(coef(p2), coef(p1))
  expect_error(weighted_lasso(x, y, weights = rep(1e308, n), nlambda = 5), class = "scalebayes_error_scaling")
  cv1 <- cv_weighted_lasso(x, y, nfolds = 3, nlambda = 5, seed = 1, threads = 1, quiet = TRUE)
  cv2 <- cv_weighted_lasso(x, y, weights = rep(2^700, n), nfolds = 3, nlambda = 5, seed = 1, threads = 1, quiet = TRUE)
  expect_identical(cv2$lambda_min, cv1$lambda_min * 2^700)
})

test_that("a blank or duplicated column name gets a unique name", {
  expect_warning(fit <- wbb(cbind(x, 1), y, lambda = 5, draws = 5, seed = 1, quiet = TRUE, threads = 1),
                 class = "scalebayes_warning")
  expect_false(anyDuplicated(colnames(fit$draws)) > 0)
  expect_true(all(nzchar(summary(fit)$parameter)))
  expect_s3_class(as_draws_df(fit), "draws_df")
})

test_that("posterior_interval() is rstantools' generic and as_draws_*() work without attaching posterior", {
  expect_identical(posterior_interval, rstantools::posterior_interval)
  expect_identical(rstantools::posterior_interval(fits$wbb, prob = 0.8), posterior_interval(fits$wbb, prob = 0.8))
  expect_s3_class(scalebayes::as_draws_df(fits$blasso), "draws_df")
  expect_s3_class(scalebayes::as_draws_matrix(fits$blasso), "draws_matrix")
  expect_s3_class(scalebayes::as_draws_array(fits$blasso), "draws_array")
})

test_that("the former segfaults end in a classed error in a child R process", {
  skip_if_fast_tier()
  skip_on_cran()
  codes <- c(
    "trend_filter_wbb(sin(1:30), k = 1, lambda = 1, draws = 1e12, quiet = TRUE)",
    "trend_filter_wbb(sin(1:30), k = 1, lambda = 1, draws = 2^31, quiet = TRUE)",
    "sgld_sa(matrix(rnorm(40), 20), rnorm(20), iterations = 1e12, quiet = TRUE)",
    "blasso(matrix(rnorm(40), 20), rnorm(20), chains = 2^31, quiet = TRUE)"
  )
  for (code in codes) {
    r <- fz_child(sprintf(paste0("r <- tryCatch(%s, error = function(e) e)\n",
                                 "cat(if (inherits(r, 'scalebayes_error')) 'CLASSED' else 'OTHER', '\\n')"), code))
    expect(r$status == 0L && any(grepl("CLASSED", r$output)),
           sprintf("%s: status %s, output %s", code, r$status, paste(utils::tail(r$output, 3), collapse = " | ")))
  }
})

test_that("check_result_memory(): the count limit, the memory available now, and defaults never refused", {
  cm <- scalebayes:::check_result_memory
  expect_error(cm(8 * 2^31, "draws"), "2\\^31 - 1", class = "scalebayes_error_memory")
  withr::with_options(list(scalebayes.available_memory = 1e9), {
    expect_error(cm(2e9, "draws"), "2 GB.*1 GB", class = "scalebayes_error_memory")
    expect_error(cm(4e8, "keep_draws", peak = 1.2e9, fix = "Set {.arg keep_draws} to FALSE."), "keep_draws",
                 class = "scalebayes_error_memory")
    expect_identical(cm(4e8, "draws", peak = 8e8), 8e8)
    e <- tryCatch(cm(2e9, "iterations"), error = function(e) e)
    expect_identical(e$arg, "iterations")
    expect_error(wbb(x, y, lambda = 5, draws = 2e7, quiet = TRUE), "draws", class = "scalebayes_error_memory")
  })
  withr::with_options(list(scalebayes.available_memory = -1), expect_error(cm(1, "draws"), class = "scalebayes_error"))
  avail <- scalebayes:::sb_available_memory()
  if (file.exists("/proc/meminfo")) expect_gt(avail, 1e7) else expect_true(is.na(avail))
  # default calls on this machine
  expect_s3_class(wbb(x, y, lambda = 5, seed = 1, quiet = TRUE, threads = 1), "sb_wbb")
  expect_s3_class(trend_filter_wbb(d$tf_y, k = 1, lambda = 5, seed = 1, quiet = TRUE, threads = 1), "sb_fit")
  expect_identical(scalebayes:::format_bytes(c(812)), "812 bytes")
  expect_identical(scalebayes:::format_bytes(3.2e6), "3.2 MB")
})

test_that("sgmcmc_control(step = sgmcmc_step(anneal = )) is validated against the run length (never capped)", {
  expect_error(sgld_sa(x, y, iterations = 2000, quiet = TRUE, control = sgmcmc_control(step = sgmcmc_step(anneal = 1.5))),
               "at most 1.41", class = "scalebayes_error_input")
  f <- sgld_sa(x, y, iterations = 2000, quiet = TRUE, seed = 1, threads = 1, control = sgmcmc_control(step = sgmcmc_step(anneal = 1.3)))
  expect_true(all(is.finite(f$trace[, "tau"])))
  expect_equal(f$trace[, "tau"], 1.3^f$trace[, "iteration"], tolerance = 1e-12)  # tau_k = 1.3^k, k = 1..2000
})
