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
