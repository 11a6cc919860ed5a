# Every sampler of sgmcmc_density() with every default on 12 posteriors of posteriordb (issue 60, item 5),
# against posteriordb's NUTS reference posteriors (bench/posteriordb/reference_summaries.csv: the mean and sd
# of each parameter over the 10,000 reference draws; bench/posteriordb/README.md says where the files come from).
# Each Stan model is compiled once and cached (bench/out/posteriordb-cache/<model>.rds, by the code's md5); each
# finished cell is saved (bench/out/posteriordb-cells/<posterior>__<sampler>.rds), so a rerun resumes and the
# table can be printed from the saved cells alone.
#
# Per cell (posterior x sampler): the largest |mean error| / reference sd and the smallest and largest sd ratio
# over the model's parameters (on the constrained scale, posteriordb's parameter names), the largest R-hat, the
# wall time and iterations, and the classes of the warnings the call raised. A cell passes with every mean
# within 0.25 reference sd and every sd ratio in [0.75, 1.33]. A failing cell must have raised a convergence or
# divergence warning (scalebayes_warning_convergence, scalebayes_warning_untrusted,
# scalebayes_warning_diverged) or the error scalebayes_error_diverged; one that did not is "silently wrong".
#
# Run (rstan needed; compiling the 10 models takes about 2 minutes each):
#   nice -n 19 Rscript bench/posteriordb.R                        # every posterior, every sampler
#   nice -n 19 Rscript bench/posteriordb.R posteriors=sblri-blr,earnings-earn_height samplers=sgld,sghmc
#   Rscript bench/posteriordb.R table                              # only print the table of the saved cells
#   Rscript bench/posteriordb.R vignette                           # the same, and write the sgld-sa vignette's
#                                                                  # vignettes/results/posteriordb-cells.rds
#   Rscript bench/posteriordb.R compile                            # only compile (and cache) the models
suppressPackageStartupMessages(library(scalebayes))
stopifnot(requireNamespace("rstan", quietly = TRUE), requireNamespace("jsonlite", quietly = TRUE))
if (!file.exists(file.path(rstan::rstan_options("boost_lib"), "boost", "version.hpp"))) {
  rstan::rstan_options(boost_lib = "/usr/include")  # Debian's r-cran-bh is empty: the system Boost headers
}

pdb_dir <- "bench/posteriordb"
out_dir <- "bench/out"
cache_dir <- file.path(out_dir, "posteriordb-cache")
cell_dir <- file.path(out_dir, "posteriordb-cells")
dir.create(cache_dir, recursive = TRUE, showWarnings = FALSE)
dir.create(cell_dir, recursive = TRUE, showWarnings = FALSE)

posteriors <- read.csv(file.path(pdb_dir, "posteriors.csv"), stringsAsFactors = FALSE)
reference <- read.csv(file.path(pdb_dir, "reference_summaries.csv"), stringsAsFactors = FALSE)
samplers <- as.character(scalebayes:::sgmcmc_samplers()$name)
pass_mean <- 0.25
pass_sd <- c(0.75, 1.33)
flag_classes <- c("scalebayes_warning_convergence", "scalebayes_warning_untrusted", "scalebayes_warning_diverged",
                  "scalebayes_error_diverged")

args <- commandArgs(trailingOnly = TRUE)
arg_list <- function(key, default) {
  a <- grep(paste0("^", key, "="), args, value = TRUE)
  if (length(a)) strsplit(sub(paste0("^", key, "="), "", a[1]), ",")[[1]] else default
}
run_posteriors <- arg_list("posteriors", posteriors$posterior)
run_samplers <- arg_list("samplers", samplers)

# the compiled model, cached by its code's md5 on disk and in this process: a stanmodel read again from its file
# in the session that compiled it fails in stan_target() ("Failed to initialize module pointer ... NULL value
# passed for DllInfo", rstan 2.21; nes1996-nes after nes2000-nes on 2026-12-04), so each model is read once
models_loaded <- new.env()
pdb_model <- function(model) {
  if (!is.null(models_loaded[[model]])) return(models_loaded[[model]])
  models_loaded[[model]] <- pdb_model_load(model)
}
pdb_model_load <- function(model) {
  file <- file.path(pdb_dir, "models", paste0(model, ".stan"))
  code <- paste(readLines(file), collapse = "\n")
  key <- unname(tools::md5sum(file))
  rds <- file.path(cache_dir, paste0(model, ".rds"))
  if (file.exists(rds)) {
    sm <- readRDS(rds)
    if (identical(attr(sm, "sb_md5"), key)) return(sm)
  }
  t <- system.time(sm <- rstan::stan_model(model_code = code, model_name = model))[["elapsed"]]
  cat(sprintf("compiled %s in %.0f s\n", model, t))
  attr(sm, "sb_md5") <- key
  saveRDS(sm, rds)
  sm
}

pdb_data <- function(data) {
  d <- jsonlite::fromJSON(file.path(pdb_dir, "data", paste0(data, ".json")), simplifyVector = TRUE)
  d
}

# one cell: the fit with every default (seed 1), its summaries against the reference, the warnings' classes
run_cell <- function(post, sampler) {
  row <- posteriors[posteriors$posterior == post, ]
  tg <- stan_target(pdb_model(row$model), pdb_data(row$data))
  ref <- reference[reference$posterior == post, ]
  warned <- messages <- character()
  err <- NULL
  t <- system.time(fit <- withCallingHandlers(
    tryCatch(sgmcmc_density(tg, sampler = sampler, seed = 1, quiet = TRUE), error = function(e) {
      err <<- e
      NULL
    }),
    warning = function(w) {
      warned <<- c(warned, setdiff(class(w), c("scalebayes_warning", "rlang_warning", "warning", "condition")))
      messages <<- c(messages, substr(conditionMessage(w), 1, 300))
      invokeRestart("muffleWarning")
    }))[["elapsed"]]
  cell <- list(posterior = post, sampler = sampler, seconds = t, warnings = unique(warned),
               warning_messages = unique(messages),
               error = if (!is.null(err)) class(err)[1], error_message = if (!is.null(err)) conditionMessage(err))
  if (is.null(fit)) return(c(cell, list(max_mean_err = NA, min_sd_ratio = NA, max_sd_ratio = NA, max_rhat = NA)))
  d <- as.matrix(fit)
  d <- d[, ref$parameter, drop = FALSE]
  m_err <- abs(colMeans(d) - ref$mean) / ref$sd
  ratio <- apply(d, 2, stats::sd) / ref$sd
  conv <- fit$diagnostics$convergence
  c(cell, list(max_mean_err = max(m_err), worst_mean = ref$parameter[which.max(m_err)],
               min_sd_ratio = min(ratio), max_sd_ratio = max(ratio),
               worst_sd = ref$parameter[which.max(abs(log(ratio)))], max_rhat = max(conv$rhat),
               min_ess = min(conv$ess_bulk), iterations = fit$settings$iterations,
               diverged = sum(fit$diverged), chains = length(fit$diverged),
               grid_fallback = !is.null(fit$warmup$grid_fallback),
               ksd_p = if (!is.null(fit$diagnostics$ksd_test)) fit$diagnostics$ksd_test$p_value else NA,
               step = fit$settings$step, mean_err = m_err, sd_ratio = ratio))
}

cell_file <- function(post, sampler) file.path(cell_dir, sprintf("%s__%s.rds", post, sampler))

print_table <- function() {
  files <- list.files(cell_dir, pattern = "\\.rds$", full.names = TRUE)
  if (!length(files)) return(invisible(NULL))
  cells <- lapply(files, readRDS)
  cells <- cells[order(match(vapply(cells, `[[`, "", "posterior"), posteriors$posterior),
                       match(vapply(cells, `[[`, "", "sampler"), samplers))]
  num <- function(x) if (is.null(x) || is.na(x)) NA_real_ else x
  tab <- data.frame(
    posterior = vapply(cells, `[[`, "", "posterior"), sampler = vapply(cells, `[[`, "", "sampler"),
    max_mean_err = vapply(cells, function(c) num(c$max_mean_err), 0),
    min_sd_ratio = vapply(cells, function(c) num(c$min_sd_ratio), 0),
    max_sd_ratio = vapply(cells, function(c) num(c$max_sd_ratio), 0),
    max_rhat = vapply(cells, function(c) num(c$max_rhat), 0),
    seconds = vapply(cells, function(c) c$seconds, 0),
    iterations = vapply(cells, function(c) num(c$iterations), 0),
    warnings = vapply(cells, function(c) {
      w <- setdiff(c(c$warnings, c$error), c("scalebayes_warning", "rlang_warning", "scalebayes_error", "rlang_error"))
      w <- sub("^scalebayes_(warning|error)_", "", w)
      if (length(w)) paste(unique(w), collapse = ",") else "none"
    }, ""), stringsAsFactors = FALSE)
  tab$run <- format(as.Date(file.mtime(files)[order(match(vapply(lapply(files, readRDS), `[[`, "", "posterior"), posteriors$posterior),
                                                     match(vapply(lapply(files, readRDS), `[[`, "", "sampler"), samplers))]))
  tab$pass <- !is.na(tab$max_mean_err) & tab$max_mean_err <= pass_mean &
    tab$min_sd_ratio >= pass_sd[1] & tab$max_sd_ratio <= pass_sd[2]
  flagged <- vapply(cells, function(c) any(c(c$warnings, c$error) %in% flag_classes), TRUE)
  tab$verdict <- ifelse(tab$pass, "pass", ifelse(flagged, "fail, warned", "SILENTLY WRONG"))
  cat("| posterior | sampler | max mean err / sd | sd ratio min-max | max R-hat | s | iterations | warnings | verdict |\n")
  cat("|---|---|---|---|---|---|---|---|---|\n")
  for (i in seq_len(nrow(tab))) {
    with(tab[i, ], cat(sprintf("| %s | %s | %.2f | %.2f-%.2f | %.3f | %.0f | %s | %s | %s |\n", posterior, sampler,
                               max_mean_err, min_sd_ratio, max_sd_ratio, max_rhat, seconds,
                               format(iterations, big.mark = ",", scientific = FALSE), warnings, verdict)))
  }
  cat(sprintf("\n%d cells: %d pass (%.0f %%), %d fail with a convergence / divergence warning, %d silently wrong\n",
              nrow(tab), sum(tab$pass), 100 * mean(tab$pass), sum(tab$verdict == "fail, warned"),
              sum(tab$verdict == "SILENTLY WRONG")))
  for (i in which(tab$verdict != "pass")) {
    c <- cells[[i]]
    if (!is.null(c$error)) {
      cat(sprintf("  %s / %s: error %s: %s\n", c$posterior, c$sampler, c$error, substr(c$error_message, 1, 200)))
      next
    }
    cat(sprintf("  %s / %s: worst mean %s (%.2f sd), worst sd %s; min bulk ESS %.0f; %d of %d chains diverged; grid fallback %s; KSD p %s; step %s\n",
                c$posterior, c$sampler, c$worst_mean, c$max_mean_err, c$worst_sd, c$min_ess, c$diverged, c$chains,
                c$grid_fallback, if (is.na(c$ksd_p)) "-" else format(signif(c$ksd_p, 2)), format(c$step)))
  }
  invisible(tab)
}

if ("table" %in% args || "vignette" %in% args) {
  tab <- print_table()
  if ("vignette" %in% args) {
    # the sgld-sa vignette's table (vignettes/results/posteriordb-cells.rds): every saved cell, replacing the
    # table's row of the same posterior and sampler; the table's other rows (cells of earlier runs, whose
    # files this machine may not have) are kept with their run dates
    f <- "vignettes/results/posteriordb-cells.rds"
    new <- tab[, setdiff(names(tab), c("pass", "verdict"))]
    old <- if (file.exists(f)) readRDS(f) else new[0, ]
    old <- old[!paste(old$posterior, old$sampler) %in% paste(new$posterior, new$sampler), , drop = FALSE]
    out <- rbind(old[, names(new)], new)
    out <- out[order(match(out$posterior, posteriors$posterior), match(out$sampler, samplers)), ]
    rownames(out) <- NULL
    saveRDS(out, f)
    cat("wrote vignettes/results/posteriordb-cells.rds\n")
  }
} else {
  cat(sprintf("%s; load: %s\n", format(Sys.time(), tz = "UTC", usetz = TRUE), paste(readLines("/proc/loadavg"), collapse = "")))
  if ("compile" %in% args) {
    for (m in unique(posteriors$model[posteriors$posterior %in% run_posteriors])) invisible(pdb_model(m))
  } else {
    for (s in run_samplers) for (post in run_posteriors) {  # sampler by sampler: the default (SGLD) first
      f <- cell_file(post, s)
      if (file.exists(f)) next
      cell <- run_cell(post, s)
      saveRDS(cell, f)
      cat(sprintf("%s %-44s %-9s %6.0f s  mean err %.2f  sd ratio %.2f-%.2f  R-hat %.3f  warnings: %s  (load %s)\n",
                  format(Sys.time(), "%H:%M", tz = "UTC"), post, s, cell$seconds, cell$max_mean_err,
                  cell$min_sd_ratio, cell$max_sd_ratio, cell$max_rhat,
                  if (length(c(cell$warnings, cell$error))) paste(c(cell$warnings, cell$error), collapse = ",") else "none",
                  strsplit(readLines("/proc/loadavg"), " ")[[1]][1]))
    }
    print_table()
  }
}
