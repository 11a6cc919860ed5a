#' WBB versus the Bayesian lasso: the simulation study of Newton, Polson and Xu (2021)
#'
#' Reproduces Tables 1-3 of the WBB paper (section 3.1): for each setting of the coefficients (A(i): ten
#' ones then zeros; A(ii): five ones, five tens, then zeros; B: all ones), p in `p`, and n = 50 or n = p/2,
#' `datasets` datasets are simulated (rows of X from N(0, Sigma), Sigma_ij = 0.1 * 0.8^|i-j|, noise variance
#' ||X beta||^2 / (2n), a test set of the training size) and both methods draw `draws` posterior samples.
#' Metrics: coefficient MSE of the posterior mean, out-of-sample prediction MSE, and 95% credible-interval
#' coverage (per coefficient, averaged over coefficients and datasets; `route = "paper_code"`: over all
#' p x p pairs of true coefficient and interval).
#'
#' @details
#' **WBB arm**: the lasso penalty with separate Exp(1) prior weights and Exp(1) data weights, lambda = the
#' CV-minimizing value of 10-fold cross-validation on the unweighted lasso (100 values), columns standardized
#' once (as [wbb()] does); every draw solved exactly by the package's coordinate-descent engine.
#'
#' **Bayesian-lasso arm**, two configurations (`blasso`):
#' * `"eb"`: what the paper *describes* (Park and Casella's sampler with lambda maximizing the marginal
#'   likelihood): [blasso()]'s blocked Gibbs sampler, lambda by Monte-Carlo EM, one chain, `burnin` sweeps,
#'   then `draws` consecutive sweeps; improper 1/sigma2 prior when p < n, IG(1, 0.1 var(y)) when p >= n.
#' * `"monomvn"`: what the paper's code *ran* (`monomvn::blasso` defaults, `blasso_control(preset =
#'   "monomvn")`): reversible jump over the active set with every subset equally likely, lambda^2 ~ Gamma(2,
#'   0.1), an intercept, columns centred and scaled to unit L2 norm, `min(p, n - 1)` sweeps per kept draw.
#'   Our sampler targets the same posterior with different moves (see [blasso()]).
#'
#' **Routes.** `route = "exact"` (default) is the method as described above. `route = "paper_code"` is what
#' the authors' script (`wbb_simu.R`, repository `wiscstatman/optimizetointegrate`, folder `cjs/WBB`)
#' computed, re-implemented on this package's engines: the noise variance from the training and test rows
#' together; WBB's lambda = `cv.glmnet(intercept = FALSE, nfolds = 3)$lambda.min` on the training AND test
#' rows; each WBB draw `glmnet(x, y, weights = w, penalty.factor = w0, intercept = FALSE)` on glmnet's
#' default lambda path read at `coef(s = lambda)` (clamped to the end of the path; an emulation of glmnet's
#' path rule, checked against glmnet in the tests); the Bayesian lasso as `monomvn::blasso(x, y, T = 500,
#' icept = FALSE)` with draws 301-500 kept (`blasso` must then be `"monomvn"`; `burnin` is not used), i.e.
#' `blasso_control(preset = "monomvn", intercept = FALSE)`: monomvn's `icept = FALSE` centres the columns of x
#' but not y and keeps n - 1 degrees of freedom for sigma^2;
#' predictions without intercept; and coverage as the mean of the p x p matrix of indicators
#' `lower_j <= beta_i <= upper_j` (every true coefficient against every coefficient's interval). Both
#' routes use n training rows and n test rows.
#'
#' **Parallelism and reproducibility**: each dataset is one work item keyed by `(seed, cell, dataset)` (its
#' WBB draws run through the same driver as [wbb()], keyed by a seed derived from that key), run
#' in `threads` threads; `chunks > 1` splits every cell's datasets into chunks that run through
#' `future.apply` when `future = TRUE` (on whatever [future::plan()] the user set), giving the same numbers.
#'
#' @param settings Coefficient settings, any of `"A(i)"`, `"A(ii)"`, `"B"`.
#' @param p Numbers of predictors.
#' @param n Sample-size rules: `"50"` (n = 50) and/or `"p/2"` (n = p/2; the p = 100 cell, identical to
#'   n = 50, is skipped as in the paper).
#' @param datasets Datasets per cell (the paper used 500).
#' @param draws Posterior draws per method and dataset (the paper used 200).
#' @param methods Which arms to run: `"wbb"`, `"blasso"`.
#' @param blasso Bayesian-lasso configuration: `"eb"` or `"monomvn"` (see Details).
#' @param burnin Bayesian-lasso sweeps discarded (after the EM phase for `"eb"`).
#' @param cd_tol Convergence tolerance of the coordinate-descent solves (relative to the null deviance; the
#'   paper's glmnet calls used glmnet's default `thresh = 1e-7`).
#' @param chunks Chunks per cell; `NULL` (default): one per future worker when `future = TRUE`, else one
#'   (the rule of every WBB function).
#' @param future Run chunks through `future.apply` (needs the package).
#' @param threads,seed,quiet As in [blasso()].
#' @param route `"exact"` (the method as the paper describes it) or `"paper_code"` (the computation of the
#'   paper's published code); see Details.
#' @param first_dataset Index of the first dataset: datasets `first_dataset, ..., first_dataset + datasets - 1`
#'   of every cell are run, so a long study can be run in pieces (resumed, or spread over machines) and the
#'   pieces combined with [blasso_compare_combine()]; the numbers do not depend on the split.
#' @return A data frame of class `sb_blasso_compare` with one row per cell and method: `n_rule`, `n`,
#'   `setting`, `p`, `method`, `mse_coef`, `mse_pred`, `coverage`, their Monte-Carlo standard errors
#'   (`se_*`), `lambda` (mean over datasets), `seconds` (mean CPU-seconds per dataset), `datasets`; and the
#'   per-dataset results in `attr(, "per_dataset")`. `print()` lays it out as Tables 1-3 with the paper's
#'   numbers ([wbb_paper_tables]) beside ours; `plot()` draws ours against the paper's.
#' @references Newton, M. A., Polson, N. G. and Xu, J. (2021). Weighted Bayesian bootstrap for scalable
#'   posterior distributions. Canadian Journal of Statistics 49, 421-437.
#' @export
#' @examples
#' \donttest{
#' cmp <- blasso_compare(settings = "A(i)", p = 40, n = "50", datasets = 4, draws = 100, quiet = TRUE)
#' cmp
#' }
blasso_compare <- function(settings = c("A(i)", "A(ii)", "B"), p = c(40, 60, 80, 100, 120), n = c("50", "p/2"),
                           datasets = 500L, draws = 200L, methods = c("wbb", "blasso"),
                           blasso = c("eb", "monomvn"), burnin = 200L, cd_tol = 1e-9, chunks = NULL,
                           future = FALSE, threads = NULL, seed = NULL, quiet = NULL, first_dataset = 1L,
                           route = c("exact", "paper_code")) {
  all_settings <- c("A(i)", "A(ii)", "B")
  if (!is.character(settings) || !length(settings) || !all(settings %in% all_settings)) {
    sb_abort(c("{.arg settings} must be a subset of {.val {all_settings}}.",
               x = "You supplied {.val {format(settings)}}."), arg = "settings")
  }
  if (!is.numeric(p) || !length(p) || any(!is.finite(p)) || any(p < 2) || any(p > 1e4) || any(p != round(p))) {
    sb_abort(c("{.arg p} must be whole numbers between 2 and 10000.",
               i = "The study of Newton, Polson and Xu (2021) uses p = 40 to 120."), arg = "p")
  }
  if (!is.character(n) || !length(n) || !all(n %in% c("50", "p/2"))) {
    sb_abort("{.arg n} must be a subset of {.val {c('50', 'p/2')}}.", arg = "n")
  }
  if (!is.character(methods) || !length(methods) || !all(methods %in% c("wbb", "blasso"))) {
    sb_abort("{.arg methods} must be a subset of {.val {c('wbb', 'blasso')}}.", arg = "methods")
  }
  route <- sb_match_arg(route)
  if (route == "paper_code") {
    if (!missing(blasso) && !identical(blasso, "monomvn")) {
      sb_abort(c("{.code route = \"paper_code\"} runs the Bayesian lasso as the authors did ({.code blasso = \"monomvn\"}).",
                 i = "Leave {.arg blasso} unset, or use {.code route = \"exact\"}."), arg = "blasso")
    }
    blasso <- "monomvn"
  }
  blasso <- sb_match_arg(blasso)
  datasets <- check_count(datasets)
  draws <- check_count(draws, min = 2L)
  burnin <- check_count(burnin, min = 0L)
  cd_tol <- check_number(cd_tol, lower = 0, upper = 1e-3, lower_open = TRUE)
  # the last dataset's index, first_dataset + datasets - 1, must be an R integer (else NA in the results)
  first_dataset <- check_count(first_dataset, max = .Machine$integer.max - datasets + 1,
                               fix = "The last dataset, first_dataset + datasets - 1, must be at most 2^31 - 1.")
  rs <- wbb_run_settings(datasets, threads, seed, quiet, chunks, future)
  seed <- rs$seed

  cells <- compare_cells(settings, p, n)
  if (any(cells$p < 2 | cells$n < 6)) sb_abort("Every cell needs n >= 6 (n = p/2 with p >= 12).", arg = "p")
  bctrl <- compare_blasso_ctrl(blasso, draws, burnin)
  st <- list(draws = draws, nfolds = 10L, nlambda = 100L, run_wbb = "wbb" %in% methods,
             run_blasso = "blasso" %in% methods, blasso_standardize = blasso == "monomvn", cd_tol = cd_tol,
             paper_route = route == "paper_code", paper_nfolds = 3L, blasso_burn_draws = 300L)
  res <- vector("list", nrow(cells))
  t0 <- proc.time()[["elapsed"]]
  for (k in seq_len(nrow(cells))) {
    cl <- cells[k, ]
    engine <- function(first, count) {
      cpp_blasso_compare(cl$n, cl$p, cl$setting, cl$id, bctrl, st,
                         wbb_engine_settings(rs, as.double(first) + first_dataset - 1, count))  # (double: no integer overflow)
    }
    parts <- wbb_run(rs, engine)
    m <- do.call(rbind, lapply(parts, function(m) {attr(m, "interrupted") <- NULL; m}))
    colnames(m) <- c(paste0("wbb_", c("mse_coef", "mse_pred", "coverage", "lambda", "seconds")),
                     paste0("blasso_", c("mse_coef", "mse_pred", "coverage", "lambda", "seconds")))
    res[[k]] <- data.frame(cells[rep(k, nrow(m)), c("n_rule", "n", "setting", "p")],
                           dataset = first_dataset - 1L + seq_len(nrow(m)),
                           m, row.names = NULL, check.names = FALSE)
  }
  per <- do.call(rbind, res)
  out <- summarise_compare(per, methods)
  attr(out, "per_dataset") <- per
  attr(out, "config") <- list(datasets = datasets, draws = draws, blasso = blasso, burnin = burnin, seed = seed,
                              route = route,
                              threads = rs$threads, elapsed = proc.time()[["elapsed"]] - t0)
  class(out) <- c("sb_blasso_compare", "data.frame")
  out
}

#' Combine pieces of a blasso_compare() study
#'
#' @param ... `sb_blasso_compare` objects run with the same settings and seed on disjoint datasets
#'   (`first_dataset`), or one list of them.
#' @return One `sb_blasso_compare` summarising all datasets.
#' @export
blasso_compare_combine <- function(...) {
  parts <- list(...)
  if (length(parts) == 1L && !inherits(parts[[1]], "sb_blasso_compare")) parts <- parts[[1]]
  if (!all(vapply(parts, inherits, logical(1), "sb_blasso_compare"))) {
    sb_abort("Every piece must be an {.cls sb_blasso_compare} object.")
  }
  per <- do.call(rbind, lapply(parts, attr, "per_dataset"))
  dup <- duplicated(per[, c("n_rule", "setting", "p", "dataset")])
  if (any(dup)) sb_abort("The pieces overlap: some datasets appear twice; use disjoint {.arg first_dataset} ranges.")
  methods <- unique(as.character(parts[[1]]$method))
  out <- summarise_compare(per, methods)
  cfg <- attr(parts[[1]], "config")
  cfg$datasets <- max(out$datasets)
  cfg$elapsed <- sum(vapply(parts, function(x) attr(x, "config")$elapsed, numeric(1)))
  attr(out, "per_dataset") <- per
  attr(out, "config") <- cfg
  class(out) <- c("sb_blasso_compare", "data.frame")
  out
}

compare_cells <- function(settings, p, n) {
  g <- expand.grid(p = sort(unique(as.integer(p))), setting = settings, n_rule = n, stringsAsFactors = FALSE)
  g$n <- ifelse(g$n_rule == "50", 50L, as.integer(g$p %/% 2L))
  g <- g[!(g$n_rule == "p/2" & g$p == 100L & "50" %in% n), , drop = FALSE]  # same cell as n = 50
  # the cell's key in its random streams (depends on the cell only; frozen: changing it changes the draws). The
  # engine gets the setting by name (gibbs/compare.hpp's compare_setting_names).
  setting_key <- c("A(i)" = 0L, "A(ii)" = 1L, "B" = 2L)[g$setting]
  g$id <- as.integer(setting_key * 1000000L + g$n * 1000L + g$p)
  g <- g[order(match(g$n_rule, c("50", "p/2")), setting_key, g$p), c("n_rule", "n", "setting", "p", "id")]
  rownames(g) <- NULL
  g
}

compare_blasso_ctrl <- function(blasso, draws, burnin) {
  if (blasso == "eb") {
    ctl <- blasso_control(em_burn = 100L, em_sweeps = 20L, em_max = 60L, em_tol = 2e-3)
    blasso_engine_ctrl("eb", 1, ctl, c(-1, -1), 1L, draws, burnin, 1L)
  } else {
    ctl <- blasso_control(preset = "monomvn")
    g <- ctl$gamma_prior
    blasso_engine_ctrl("gamma", sqrt(g[1] / g[2]), ctl, c(-1, -1), 1L, draws, burnin, 0L)  # thin 0: min(p, n - 1)
  }
}

summarise_compare <- function(per, methods) {
  key <- unique(per[, c("n_rule", "n", "setting", "p")])
  rows <- list()
  for (i in seq_len(nrow(key))) {
    sel <- per$n_rule == key$n_rule[i] & per$setting == key$setting[i] & per$p == key$p[i]
    d <- per[sel, , drop = FALSE]
    for (m in methods) {
      col <- function(v) d[[paste0(m, "_", v)]]
      se <- function(v) stats::sd(v) / sqrt(length(v))
      rows[[length(rows) + 1L]] <- data.frame(
        key[i, ], method = m,
        mse_coef = mean(col("mse_coef")), mse_pred = mean(col("mse_pred")), coverage = mean(col("coverage")),
        se_mse_coef = se(col("mse_coef")), se_mse_pred = se(col("mse_pred")), se_coverage = se(col("coverage")),
        lambda = mean(col("lambda")), seconds = mean(col("seconds")), datasets = nrow(d), row.names = NULL
      )
    }
  }
  do.call(rbind, rows)
}

#' @export
print.sb_blasso_compare <- function(x, digits = 2, ...) {
  cfg <- attr(x, "config")
  cat(sprintf("WBB vs Bayesian lasso (%s%s), %d datasets x %d draws per cell; paper's value in parentheses\n",
              cfg$blasso, if (identical(cfg$route, "paper_code")) ", the paper's code route" else "",
              cfg$datasets, cfg$draws))
  tabs <- compare_tables(x, digits)
  titles <- c(mse_coef = "Table 1: coefficient MSE", mse_pred = "Table 2: prediction MSE",
              coverage = "Table 3: 95% interval coverage")
  for (m in names(tabs)) {
    cat("\n", titles[[m]], "\n", sep = "")
    print(tabs[[m]], right = TRUE, row.names = FALSE)
  }
  if (!is.null(cfg$elapsed)) cat(sprintf("\nElapsed: %.1f s\n", cfg$elapsed))
  invisible(x)
}

# Wide tables: one row per (n rule, setting, method), one column per p, "ours (paper)".
compare_tables <- function(x, digits = 2) {
  paper <- scalebayes_paper_tables()
  out <- list()
  for (m in c("mse_coef", "mse_pred", "coverage")) {
    d <- as.data.frame(x)
    key <- unique(d[, c("n_rule", "setting", "method")])
    ps <- sort(unique(d$p))
    tab <- key
    tab$n_rule <- ifelse(tab$n_rule == "50", "n = 50", "n = p/2")
    for (pp in ps) {
      tab[[paste0("p=", pp)]] <- vapply(seq_len(nrow(key)), function(i) {
        v <- d[[m]][d$n_rule == key$n_rule[i] & d$setting == key$setting[i] & d$method == key$method[i] & d$p == pp]
        pv <- paper$value[paper$metric == m & paper$n_rule == key$n_rule[i] & paper$setting == key$setting[i] &
                            paper$method == key$method[i] & paper$p == pp]
        if (!length(v)) return("")
        dg <- if (m == "mse_pred" && v > 10) 1 else digits
        s <- formatC(v, digits = dg, format = "f")
        if (length(pv)) s <- paste0(s, " (", formatC(pv, digits = dg, format = "f"), ")")
        s
      }, character(1))
    }
    tab$method <- toupper(ifelse(tab$method == "blasso", "BLASSO", "WBB"))
    out[[m]] <- tab
  }
  out
}

scalebayes_paper_tables <- function() {
  e <- new.env()
  utils::data("wbb_paper_tables", package = "scalebayes", envir = e)
  e$wbb_paper_tables
}

#' @export
plot.sb_blasso_compare <- function(x, ...) {
  paper <- scalebayes_paper_tables()
  d <- as.data.frame(x)
  metrics <- c(mse_coef = "coefficient MSE", mse_pred = "prediction MSE", coverage = "95% coverage")
  op <- graphics::par(mfrow = c(1, 3), mar = c(4, 4, 2.5, 0.5), mgp = c(2, 0.6, 0))
  on.exit(graphics::par(op), add = TRUE)
  for (m in names(metrics)) {
    pv <- vapply(seq_len(nrow(d)), function(i) {
      v <- paper$value[paper$metric == m & paper$n_rule == d$n_rule[i] & paper$setting == d$setting[i] &
                         paper$method == d$method[i] & paper$p == d$p[i]]
      if (length(v)) v else NA_real_
    }, numeric(1))
    ok <- is.finite(pv)
    log_ax <- if (m == "coverage") "" else "xy"
    lim <- range(c(pv[ok], d[[m]][ok]))
    graphics::plot(pv[ok], d[[m]][ok], log = log_ax, xlim = lim, ylim = lim,
                   col = ifelse(d$method[ok] == "wbb", "#d95f02", "#1b9e77"),
                   pch = match(d$setting[ok], c("A(i)", "A(ii)", "B")) + 14,
                   xlab = "paper", ylab = "scalebayes", main = metrics[[m]])
    graphics::abline(0, 1, lty = 2)
    if (m == "mse_coef") {
      graphics::legend("topleft", c("WBB", "BLASSO", "A(i)", "A(ii)", "B"), bty = "n", cex = 0.8,
                       col = c("#d95f02", "#1b9e77", 1, 1, 1), pch = c(16, 16, 15, 16, 17))
    }
  }
  invisible(x)
}

#' Tables 1-3 of Newton, Polson and Xu (2021)
#'
#' The published numbers of the WBB paper's simulation study (section 3.1): coefficient MSE (Table 1),
#' prediction MSE (Table 2) and 95% credible-interval coverage (Table 3) of WBB and the Bayesian lasso.
#' Transcribed by `data-raw/wbb_paper_tables.R`. The n = p/2 block has no p = 100 column.
#' @format A data frame with columns `metric` (`"mse_coef"`, `"mse_pred"`, `"coverage"`), `n_rule`
#'   (`"50"` or `"p/2"`), `setting` (`"A(i)"`, `"A(ii)"`, `"B"`), `method` (`"blasso"`, `"wbb"`), `p`, `value`.
#' @source Newton, M. A., Polson, N. G. and Xu, J. (2021), Canadian Journal of Statistics 49, Tables 1-3.
"wbb_paper_tables"
