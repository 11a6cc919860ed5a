# R passes every engine option by name; the engine's tables (scalebayes/enum_names.hpp) are the one list of
# names. These tests fail when a value is added on one side only, and check that a name the engine does not know
# is a classed R error (never a crash or a silently wrong value).

engine_names <- function() c(scalebayes:::cpp_enum_names(), scalebayes:::cpp_enum_names_torch())
choices <- function(fun, arg) eval(formals(fun)[[arg]])

test_that("R's choices equal the engine's names (torch-free options)", {
  e <- scalebayes:::cpp_enum_names()
  expect_setequal(choices(nn_control, "init"), e$nn_init)
  expect_setequal(choices(nn_control, "weight_dist"), e$wbb_dist)
  expect_setequal(choices(scalebayes:::wbb.default, "prior_weights"), e$wbb_prior)
  expect_true(all(choices(scalebayes:::wbb.default, "weight_dist") %in% e$wbb_dist))
  expect_true(all(choices(trend_filter_wbb, "prior_weights") %in% e$wbb_prior))
  expect_setequal(choices(nn_torch_code, "family"), e$nn_family)
  expect_setequal(choices(tf_control, "method"), e$tf_method)
  expect_setequal(choices(tf_control, "newton"), e$tf_newton)
  expect_setequal(choices(cv_weighted_lasso, "type_measure"), e$cv_measure)
  expect_setequal(choices(blasso_compare, "settings"), e$compare_setting)
  expect_setequal(choices(elliptic_kle_data, "link"), e$kle_link)
  # the GLM families: the elastic net's (with multinomial), the trend filter's (gaussian is not a GLM there),
  # the SG-MCMC regression's
  for (f in list(weighted_lasso, cv_weighted_lasso, scalebayes:::wbb.default)) {
    expect_setequal(choices(f, "family"), e$enet_family)
  }
  expect_setequal(setdiff(choices(trend_filter, "family"), "gaussian"), e$tf_glm_family)
  expect_setequal(choices(sgld_sa, "family"), e$glm_family)
  expect_setequal(choices(blasso_control, "rj_prior"), e$blasso_rj_prior)
  expect_setequal(choices(sgld_sa, "method"), e$sgmcmc_method)
  expect_setequal(scalebayes:::sgmcmc_step_schedules, e$sgmcmc_step_schedule)
  expect_setequal(scalebayes:::sgmcmc_rmsprop_adapts, e$sgmcmc_rmsprop_adapt)
  expect_setequal(scalebayes:::sgmcmc_sa_forms, e$sgmcmc_sa_form)
  expect_setequal(choices(sgmcmc_lbfgs, "curvature"), e$sgmcmc_curvature)
  expect_setequal(choices(sgmcmc_lbfgs, "precond_init"), e$sgmcmc_precond_init)
  # blasso(lambda = ): a number (fixed), "eb" or "gamma"
  expect_setequal(c("fixed", "eb", "gamma"), e$blasso_lambda_mode)
  expect_identical(scalebayes:::resolve_blasso_lambda(2)$mode, "fixed")
  expect_identical(scalebayes:::resolve_blasso_lambda("eb")$mode, "eb")
  expect_identical(scalebayes:::resolve_blasso_lambda("gamma")$mode, "gamma")
})

test_that("R's choices equal the engine's names (network-engine options)", {
  skip_if_not(scalebayes:::cpp_torch_info()$available, "built without LibTorch")
  e <- scalebayes:::cpp_enum_names_torch()
  expect_setequal(choices(nn_control, "optimizer"), e$optimizer)
  expect_setequal(choices(nn_control, "weight_mode"), e$weight_mode)
  expect_setequal(scalebayes:::vi_estimators, e$vi_estimator)
  # bbb() offers the priors without spike-and-slab; sparse_vi() is the spike-and-slab one
  expect_setequal(c(choices(bbb, "prior"), "spike_slab"), e$vi_prior)
})

test_that("every table has unique, non-empty names", {
  for (nm in names(engine_names())) {
    v <- engine_names()[[nm]]
    expect_true(length(v) >= 2L && !anyDuplicated(v) && all(nzchar(v)), label = nm)
  }
})

test_that("a name the engine does not know is a classed error listing the valid names", {
  bad <- utils::modifyList(scalebayes:::wbb_engine_settings(scalebayes:::run_settings(1, 1L, TRUE), 0, 2),
                           list(dist = "gamma"))
  e <- expect_error(scalebayes:::sb_call_engine(scalebayes:::cpp_wbb_weights(5L, bad)),
                    class = "scalebayes_error_engine")
  expect_match(conditionMessage(e), "weight distribution", fixed = TRUE)
  expect_match(conditionMessage(e), "\"exponential\", \"multinomial\", \"unit\"", fixed = TRUE)

  y <- as.double(1:20 + (1:20 %% 3))
  eng <- scalebayes:::tf_engine_control(tf_control())
  pw <- rep(1, 18)  # n - k - 1 penalty weights
  for (field in c("solver", "newton")) {
    bad_eng <- eng
    bad_eng[[field]] <- "bogus"
    e <- expect_error(scalebayes:::sb_call_engine(scalebayes:::cpp_tf_path(y, as.double(1:20), rep(1, 20), 1L, pw, 1,
                                                                         bad_eng, TRUE)),
                      class = "scalebayes_error_engine")
    expect_match(conditionMessage(e), "bogus", fixed = TRUE)
  }
  # an integer code (the old positional convention) is refused, not cast
  bad_eng <- eng
  bad_eng$solver <- 1L
  expect_error(scalebayes:::sb_call_engine(scalebayes:::cpp_tf_path(y, as.double(1:20), rep(1, 20), 1L, pw, 1,
                                                                   bad_eng, TRUE)),
               class = "scalebayes_error_engine")

  spec <- list(input = 3L, family = "poisson", layers = list(kind = 0L, out = 1L, kernel = 0L, stride = 1L,
                                                             padding = 0L, penalized = TRUE))
  e <- expect_error(scalebayes:::sb_call_engine(scalebayes:::cpp_nn_plan(spec)), class = "scalebayes_error_engine")
  expect_match(conditionMessage(e), "\"gaussian\", \"binomial\", \"multinomial\"", fixed = TRUE)
})

# An engine call with a bad value of one option: a classed engine error naming the valid names.
expect_engine_refuses <- function(expr, valid) {
  e <- expect_error(scalebayes:::sb_call_engine(expr), class = "scalebayes_error_engine")
  expect_match(conditionMessage(e), valid, fixed = TRUE)
}

test_that("the GLM family of every elastic-net and trend-filter entry point is a name, never a code", {
  x <- matrix(c(1, 0, 0, 1, 1, 1), 3, 2)
  y <- c(0, 1, 1)
  ctrl <- list(tol = 1e-10, max_iter = 100L, max_outer = 10L, intercept = TRUE)
  settings <- scalebayes:::wbb_engine_settings(scalebayes:::run_settings(1, 1L, TRUE), 0, 2)
  valid <- "\"gaussian\", \"binomial\", \"poisson\", \"multinomial\""
  for (fam in list("gamma", 1L)) {
    expect_engine_refuses(scalebayes:::cpp_lambda_max(x, y, fam, 1, rep(1, 3), rep(1, 2), ctrl), valid)
    expect_engine_refuses(scalebayes:::cpp_enet_path(x, y, fam, 1, rep(1, 3), rep(1, 2), 0.1, ctrl), valid)
    expect_engine_refuses(scalebayes:::cpp_enet_cv(x, y, fam, 1, rep(1, 3), rep(1, 2), c(0L, 1L, 2L), 0.1, ctrl,
                                                   list(seed = 1, threads = 1L, quiet = TRUE)), valid)
    expect_engine_refuses(scalebayes:::cpp_wbb_glm(x, y, fam, 1, rep(1, 2), 0.1, 0, c(0, 0), c(0, 0), c(1, 1),
                                                   c("a", "b"), settings, ctrl), valid)
  }
  e <- expect_error(scalebayes:::sb_call_engine(scalebayes:::cpp_lambda_max(x, y, "gamma", 1, rep(1, 3), rep(1, 2),
                                                                            ctrl)),
                    class = "scalebayes_error_engine")
  expect_match(conditionMessage(e), "unknown family \"gamma\"", fixed = TRUE)

  yc <- c(1, 0, 2, 3, 1, 0, 2, 4, 3, 1)
  n <- length(yc)
  eng <- scalebayes:::tf_glm_engine(tf_control())
  for (fam in list("gaussian", "bogus", 1L)) {
    expect_engine_refuses(scalebayes:::cpp_tf_glm_path(fam, yc, rep(1, n), as.double(1:n), rep(1, n), 1L,
                                                       rep(1, n - 2), 1, eng), "\"poisson\", \"binomial\"")
    expect_engine_refuses(scalebayes:::cpp_tf_glm_certify(fam, yc, rep(1, n), as.double(1:n), rep(1, n), 1L, 1,
                                                          rep(0, n), rep(0, n - 2)), "\"poisson\", \"binomial\"")
    expect_engine_refuses(scalebayes:::cpp_tf_glm_wbb(fam, yc, rep(1, n), as.double(1:n), 1L, 1, eng, rep(0, n),
                                                      numeric(0), paste0("f", 1:n), settings),
                          "\"poisson\", \"binomial\"")
  }
})

test_that("blasso's rj_prior and rj_cap are names, never codes", {
  ctrl <- scalebayes:::blasso_engine_ctrl("fixed", 1, blasso_control(rj = TRUE), c(0, 0), 1L, 10L, 5L, 1L)
  x <- matrix(c(1, 2, 3, 4, 5, 2, 1, 4, 3, 5), 5, 2)
  run <- list(seed = 1, threads = 1L, quiet = TRUE)
  for (bad in list("bogus", 0L, 1L)) {
    expect_engine_refuses(scalebayes:::cpp_blasso(x, as.double(1:5), utils::modifyList(ctrl, list(rj_prior = bad)),
                                                  run), "\"models\", \"size\"")
    expect_engine_refuses(scalebayes:::cpp_blasso(x, as.double(1:5), utils::modifyList(ctrl, list(rj_cap = bad)),
                                                  run), "\"n_eff\", \"n\"")
  }
  # the cap R sets (from the preset) is one of the engine's names
  e <- scalebayes:::cpp_enum_names()
  for (preset in c("none", "monomvn")) {
    ctl <- scalebayes:::blasso_engine_ctrl("fixed", 1, blasso_control(preset = preset), c(0, 0), 1L, 10L, 5L, 1L)
    expect_true(ctl$rj_cap %in% e$blasso_rj_cap, label = preset)
  }
})

test_that("the SG-MCMC regression's options are names: an unsupported family is an error, not binomial", {
  ctl <- scalebayes:::sgmcmc_engine_control(sgmcmc_control(), 3, NaN, trace_every = 1L, family = "gaussian",
                                            method = "sa", sampler = "sgld", iterations = 10L, batch_size = 5L,
                                            burnin = 0L, thin = 1L, v0 = 0.1, v1 = 10, keep = 1:4, chains = 1L)
  ctl$chain_offset <- 0
  set.seed(1)
  x <- matrix(rnorm(60), 20, 3)
  y <- as.double(rbinom(20, 1, 0.5))
  run <- list(seed = 1, threads = 1L, quiet = TRUE)
  call_engine <- function(...) {
    scalebayes:::cpp_sgld_sa(x, y, c(1L, 1L, 1L), TRUE, matrix(0, 0, 3), matrix(0, 4, 1),
                             utils::modifyList(ctl, list(...)), run)
  }
  expect_length(call_engine(family = "binomial")$chains, 1L)
  e <- scalebayes:::cpp_enum_names()
  quoted <- function(v) paste0("\"", v, "\"", collapse = ", ")
  bad <- list(family = e$glm_family, method = e$sgmcmc_method, step_schedule = e$sgmcmc_step_schedule,
              rmsprop_adapt = e$sgmcmc_rmsprop_adapt, sa_form = e$sgmcmc_sa_form, curvature = e$sgmcmc_curvature,
              precond_init = e$sgmcmc_precond_init)
  for (opt in names(bad)) {
    for (value in list("bogus", 1L)) {
      expect_engine_refuses(do.call(call_engine, stats::setNames(list(value), opt)), quoted(bad[[opt]]))
    }
  }
  # a network's family in a regression's control: refused (it ran as binomial before)
  expect_engine_refuses(call_engine(family = "multinomial"), quoted(e$glm_family))
  expect_engine_refuses(scalebayes:::cpp_sgld_sa_prepare(x, y, c(1L, 1L, 1L), TRUE, "multinomial", numeric()),
                        quoted(e$glm_family))
})
