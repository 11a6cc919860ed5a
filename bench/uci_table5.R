# Prints Table 5 of Deng et al. (2019) beside the stored reproduction (vignettes/results/sgld-sa-networks-results.rds,
# made by vignettes/precompute-sgld-networks.R): per data set and method, the paper's mean +- se, the paper-code
# route's last-sample RMSE mean +- se (sd / sqrt(n)) over the splits run, z = difference / combined se, and the
# exact route's posterior-mean RMSE where run. Run from the package root: Rscript bench/uci_table5.R [md]
# (md: a markdown table, as pasted into bench/RESULTS.md)
r <- readRDS(Sys.getenv("SB_UCI_OUT", "vignettes/results/sgld-sa-networks-results.rds"))$per_split
labs <- c("SGHMC", "A-SGHMC", "SGHMC-EM", "A-SGHMC-EM", "SGHMC-SA", "A-SGHMC-SA")
paper <- data.frame(data = rep(c("Boston", "Yacht", "Energy", "Wine", "Concrete"), each = 6), label = rep(labs, 5),
  paper = c(2.783, 2.848, 2.813, 2.767, 2.779, 2.692, 0.886, 0.808, 0.823, 0.815, 0.789, 0.782,
            1.983, 1.419, 2.077, 1.435, 1.948, 1.388, 0.731, 0.671, 0.729, 0.627, 0.654, 0.620,
            6.319, 5.978, 6.275, 5.762, 6.029, 5.687),
  paper_se = c(0.109, 0.126, 0.140, 0.154, 0.133, 0.120, 0.046, 0.048, 0.053, 0.052, 0.050, 0.052,
               0.092, 0.067, 0.108, 0.069, 0.081, 0.052, 0.015, 0.019, 0.018, 0.008, 0.010, 0.008,
               0.179, 0.166, 0.169, 0.156, 0.131, 0.142))
summ <- function(route, v) {
  d <- r[r$route == route, ]
  if (!nrow(d)) return(NULL)
  a <- do.call(rbind, lapply(split(d, list(d$data, d$label), drop = TRUE), function(g) {
    x <- g[[v]]
    data.frame(data = g$data[1], label = g$label[1], n = length(x), diverged = sum(!is.finite(x)),
               m = mean(x[is.finite(x)]), se = stats::sd(x[is.finite(x)]) / sqrt(sum(is.finite(x))),
               sec = mean(g$seconds))
  }))
  a
}
pc <- summ("paper_code", "rmse_last")
ex <- summ("exact", "rmse_mean")
tab <- merge(paper, pc, by = c("data", "label"))
tab$z <- (tab$m - tab$paper) / sqrt(tab$se^2 + tab$paper_se^2)
if (!is.null(ex)) {
  names(ex)[names(ex) %in% c("n", "diverged", "m", "se", "sec")] <- paste0("ex_", c("n", "diverged", "m", "se", "sec"))
  tab <- merge(tab, ex, by = c("data", "label"), all.x = TRUE)
}
tab <- tab[order(match(tab$data, unique(paper$data)), match(tab$label, labs)), ]
out <- data.frame(data = tab$data, method = tab$label, paper = sprintf("%.3f ± %.3f", tab$paper, tab$paper_se),
                  paper_code = sprintf("%.3f ± %.3f", tab$m, tab$se), n = tab$n, diverged = tab$diverged,
                  z = sprintf("%+.1f", tab$z), s_per_fit = sprintf("%.1f", tab$sec))
if (!is.null(tab$ex_m)) out$exact_pm_sd <- ifelse(is.na(tab$ex_m), "", sprintf("%.3f (n %d)", tab$ex_m, tab$ex_n))
if (identical(commandArgs(TRUE), "md")) {
  cat(knitr::kable(out, format = "pipe", align = "l"), sep = "\n")
} else {
  print(out, row.names = FALSE, right = FALSE)
}
cat(sprintf("\nwithin 2 se: %d of %d\n", sum(abs(tab$z) <= 2), nrow(tab)))
