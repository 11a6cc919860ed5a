# sgmcmc_control() in parts: the step (sgmcmc_step()), the SSGL prior (sgmcmc_ssgl()) and the L-BFGS preconditioner
# (sgmcmc_lbfgs()); the flat names of before the split are deprecated, still accepted for one release.

flat_msg <- function(e) gsub("\\s+", " ", cli::ansi_strip(conditionMessage(e)))

test_that("the control object holds every setting of the three parts and the run, by its flat name", {
  ctl <- sgmcmc_control()
  parts <- unlist(lapply(c("step", "ssgl", "lbfgs"), function(p) unname(scalebayes:::sgmcmc_part_names(p))))
  run <- c("step_size", "trace_every", "init", "float64", "diverge_loss")
  expect_setequal(names(ctl), c(run, parts))
  expect_false(anyDuplicated(names(ctl)) > 0)
  # only the step's arguments lost a prefix
  expect_identical(unname(scalebayes:::sgmcmc_part_names("step")[c("schedule", "power", "decay", "milestones")]),
                   c("step_schedule", "step_power", "step_decay", "step_milestones"))
  # the defaults of the parts are the defaults of the control object (the values the samplers always read)
  expect_identical(ctl$sa_A, 10)
  expect_identical(ctl$step_power, 1 / 3)
  expect_identical(ctl$memory, 2L)
  expect_identical(ctl$curvature, "same_batch")
  expect_identical(ctl$precond_init, "curvature")
  expect_null(ctl$step_size)
  expect_null(ctl$b)
  expect_length(attr(ctl, "given"), 0)
})

test_that("a setting given in its part reaches the flat object, and only given settings are marked", {
  ctl <- sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant", temperature = 2),
                        ssgl = sgmcmc_ssgl(sa_A = 5, prune = TRUE), lbfgs = sgmcmc_lbfgs(memory = 4))
  expect_identical(ctl$step_schedule, "constant")
  expect_identical(ctl$temperature, 2)
  expect_identical(ctl$sa_A, 5)
  expect_true(ctl$prune)
  expect_identical(ctl$memory, 4L)
  expect_setequal(attr(ctl, "given"), c("step_size", "step_schedule", "temperature", "sa_A", "prune", "memory"))
  # a named list of a constructor's arguments is that part
  ctl2 <- sgmcmc_control(step_size = 1e-3, step = list(schedule = "constant", temperature = 2),
                         ssgl = list(sa_A = 5, prune = TRUE), lbfgs = list(memory = 4))
  expect_identical(ctl2, ctl)
  out <- capture.output(print(ctl))
  expect_true(any(grepl("ssgl = sgmcmc_ssgl(): the SSGL prior", out, fixed = TRUE)))
  expect_true(any(grepl("sa_A: 5 *", out, fixed = TRUE)))
  expect_true(any(grepl("sa_Z: 1000$", out)))
  expect_output(print(sgmcmc_lbfgs(memory = 3)), "memory: 3 *", fixed = TRUE)
})

test_that("the flat names of before the split still work, with a deprecation warning that gives the new spelling", {
  old <- expect_warning(sgmcmc_control(step_size = 1e-3, step_schedule = "constant", temperature = 2, sa_A = 5,
                                       prune = TRUE, memory = 4),
                        class = "scalebayes_warning_deprecated")
  new <- sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant", temperature = 2),
                        ssgl = sgmcmc_ssgl(sa_A = 5, prune = TRUE), lbfgs = sgmcmc_lbfgs(memory = 4))
  expect_identical(suppressWarnings(sgmcmc_control(step_size = 1e-3, step_schedule = "constant", temperature = 2,
                                                   sa_A = 5, prune = TRUE, memory = 4)), new)
  w <- tryCatch(sgmcmc_control(step_power = 0.5, sa_A = 5), warning = identity)
  expect_match(flat_msg(w), "step = sgmcmc_step(power = ...)", fixed = TRUE)
  expect_match(flat_msg(w), "ssgl = sgmcmc_ssgl(sa_A = ...)", fixed = TRUE)
  # a flat name merges with the part's other given settings; the same setting both ways is an error
  m <- suppressWarnings(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_Z = 100), sa_A = 5))
  expect_identical(c(m$sa_A, m$sa_Z), c(5, 100))
  expect_setequal(attr(m, "given"), c("sa_A", "sa_Z"))
  e <- expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = 2), sa_A = 3), class = "scalebayes_error_input")
  expect_identical(e$arg, "sa_A")
  # also when the part's value is the default (it was given)
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = 10), sa_A = 3), class = "scalebayes_error_input")
  e <- expect_error(sgmcmc_control(step = sgmcmc_step(power = 0.5), step_power = 1), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "step = sgmcmc_step(power = )", fixed = TRUE)
  # a part's error names its constructor
  e <- expect_error(sgmcmc_control(ssgl = list(sa_A = -1)), class = "scalebayes_error_input")
  expect_match(deparse(e$call)[1], "^sgmcmc_ssgl\\(")
  # a flat value is validated by its part
  e <- expect_error(suppressWarnings(sgmcmc_control(sa_alpha = 2)), class = "scalebayes_error_input")
  expect_identical(e$arg, "sa_alpha")
  expect_error(suppressWarnings(sgmcmc_control(sa_form = "transport")), class = "scalebayes_error_removed")
  # a chain run with the old spelling gives the draws of the new one
  set.seed(3)
  x <- matrix(rnorm(120), 40)
  y <- x[, 1] + rnorm(40)
  run <- function(ctl) suppress_convergence(sgld_sa(x, y, iterations = 300, chains = 1, seed = 2, threads = 1,
                                                    quiet = TRUE, control = ctl))$draws
  expect_identical(suppressWarnings(run(sgmcmc_control(step_size = 1e-3, sa_A = 5, temperature = 2))),
                   run(sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(temperature = 2),
                                      ssgl = sgmcmc_ssgl(sa_A = 5))))
})

test_that("a part of the wrong kind, an unnamed value or an unknown name is a classed error naming the fix", {
  e <- expect_error(sgmcmc_control(ssgl = sgmcmc_step()), class = "scalebayes_error_input")
  expect_identical(e$arg, "ssgl")
  expect_match(flat_msg(e), "must be created by `sgmcmc_ssgl()`", fixed = TRUE)
  expect_error(sgmcmc_control(lbfgs = list(4)), class = "scalebayes_error_input")
  e <- expect_error(sgmcmc_control(lbfgs = list(memry = 4)), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "Did you mean `memory`?", fixed = TRUE)
  e <- expect_error(sgmcmc_control(1e-3, 5), class = "scalebayes_error_input")
  e <- expect_error(sgmcmc_control(precond_AA = 1), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "Did you mean `lbfgs = sgmcmc_lbfgs(precond_A = )`?", fixed = TRUE)
})

test_that("settings the chosen sampler or target does not read are named in a classed warning", {
  set.seed(3)
  x <- matrix(rnorm(120), 40)
  y <- x[, 1] + rnorm(40)
  fit <- function(sampler, ctl) {
    suppress_convergence(sgld_sa(x, y, sampler = sampler, iterations = 200, chains = 1, seed = 1, threads = 1,
                                 quiet = TRUE, control = ctl))
  }
  lb <- sgmcmc_control(step_size = 1e-3, lbfgs = sgmcmc_lbfgs(memory = 3))
  w <- expect_warning(fit("sgld", lb), class = "scalebayes_warning_unused")
  expect_match(flat_msg(w), "does not use the setting `memory`", fixed = TRUE)
  expect_no_warning(fit("hamcmc_sa", lb), class = "scalebayes_warning_unused")
  fr <- sgmcmc_control(step_size = 1e-4, step = sgmcmc_step(friction = 0.2, noise_estimate = 0.1))
  w <- expect_warning(fit("sgld", fr), class = "scalebayes_warning_unused")
  expect_match(flat_msg(w), "`friction` and `noise_estimate`", fixed = TRUE)
  expect_no_warning(fit("sghmc", fr), class = "scalebayes_warning_unused")
  w <- expect_warning(fit("sgnht", fr), class = "scalebayes_warning_unused")
  expect_match(flat_msg(w), "the setting `noise_estimate`", fixed = TRUE)
  # defaults are never "given": no warning for any sampler
  for (s in sgmcmc_samplers()$name) {
    expect_no_warning(fit(s, sgmcmc_control(step_size = 1e-4)), class = "scalebayes_warning_unused")
  }
  # a density target has no prior
  w <- expect_warning(suppress_convergence(sgmcmc_density(
    sgmcmc_target("gaussian", mean = 0, cov = matrix(1)), iterations = 200, chains = 1, seed = 1, quiet = TRUE,
    control = sgmcmc_control(step_size = 0.1, ssgl = sgmcmc_ssgl(sa_A = 3)))), class = "scalebayes_warning_unused")
  expect_match(flat_msg(w), "A density target has no prior", fixed = TRUE)
})
