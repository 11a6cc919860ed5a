# Peak memory of the WBB front ends (issue 12, section 2: goal peak <= 2 x result + data).
#
# Each case runs in a fresh child R process: it loads scalebayes, builds the data, runs gc() and reads its
# resident set (VmRSS, /proc/self/status), makes the call, then reads the high-water mark (VmHWM). The peak
# of the call is VmHWM - VmRSS before it; the result size is object.size() of the draws matrix (the bulk of
# the fit) and of the whole fit. Linux only.
#
#   Rscript bench/memory.R            # the scalebayes found on .libPaths()
#   R_LIBS=/path/to/lib Rscript bench/memory.R
cases <- list(
  wbb = quote({
    set.seed(1)
    n <- 200; p <- 150
    x <- matrix(rnorm(n * p), n)
    y <- drop(x[, 1:5] %*% rep(1, 5)) + rnorm(n)
    data_mb <- (object.size(x) + object.size(y)) / 2^20
    call <- function() wbb(x, y, lambda = 40, draws = 25000, seed = 1, threads = 2, quiet = TRUE)
  }),
  trend_filter_wbb = quote({
    set.seed(1)
    n <- 2000
    y <- sin(seq(0, 8, length.out = n)) + rnorm(n, sd = 0.3)
    data_mb <- object.size(y) / 2^20
    call <- function() trend_filter_wbb(y, k = 0, lambda = 5, draws = 1900, seed = 1, threads = 2, quiet = TRUE)
  })
)

child <- function(expr) {
  code <- c(
    "suppressMessages(library(scalebayes))",
    "kb <- function(f) as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', grep(paste0('^', f), readLines('/proc/self/status'), value = TRUE)))",
    paste(deparse(expr), collapse = "\n"),
    "invisible(gc()); before <- kb('VmRSS')",
    "t0 <- proc.time()[['elapsed']]; fit <- call(); secs <- proc.time()[['elapsed']] - t0",
    "hwm <- kb('VmHWM')",
    "cat(sprintf('%.1f %.1f %.1f %.1f %.1f %.1f\\n', object.size(fit$draws) / 2^20, object.size(fit) / 2^20, as.numeric(data_mb), before / 1024, (hwm - before) / 1024, secs))"
  )
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  out <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE)
  as.numeric(strsplit(utils::tail(out, 1), " ")[[1]])
}

cat(sprintf("scalebayes %s at %s\n", utils::packageVersion("scalebayes"), find.package("scalebayes")))
cat(sprintf("%-17s %10s %10s %8s %12s %12s %10s %8s\n", "function", "draws_MB", "fit_MB", "data_MB", "base_RSS_MB",
            "peak_MB", "peak/fit", "secs"))
for (nm in names(cases)) {
  r <- child(cases[[nm]])
  cat(sprintf("%-17s %10.1f %10.1f %8.2f %12.1f %12.1f %10.2f %8.1f\n", nm, r[1], r[2], r[3], r[4], r[5],
              r[5] / r[2], r[6]))
}
