# Draws made before the engine seams were opened (tools/make-fingerprints.R on that build wrote
# fingerprints.rds): every configuration of helper-fingerprints.R must give the same draws today. Float64
# engines are compared to 1e-10 relative, float32 networks to 1e-5: far below the O(1) change any difference in
# the order of random numbers or of the updates makes, above last-bit differences between CPUs' kernels.
test_that("draws of every engine are those of the build before the engine seams (stored fingerprints)", {
  skip_on_cran()
  ref <- readRDS(test_path("fingerprints.rds"))
  runs <- fingerprint_runs()
  have_torch <- isTRUE(scalebayes_info()$libtorch)
  for (nm in names(ref)) {
    if (!nm %in% names(runs)) {
      expect_false(have_torch, info = paste(nm, "is a network fingerprint: a LibTorch build must run it"))
      next
    }
    got <- runs[[nm]]()
    tol <- if (grepl("nn", nm)) 1e-5 else 1e-10
    expect_identical(names(got), names(ref[[nm]]), info = nm)
    for (part in names(ref[[nm]])) {
      expect_equal(got[[part]], ref[[nm]][[part]], tolerance = tol, info = paste(nm, part))
    }
  }
  # the reference covers every engine: WBB (lasso, trend filter), Gibbs, SG-MCMC regression and, with LibTorch,
  # WBB and SG-MCMC networks
  expect_true(all(c("wbb_sep", "trend_filter_wbb", "blasso", "sgld_sa", "sghmc_sa") %in% names(ref)))
  if (isTRUE(attr(ref, "made")$libtorch)) expect_true(any(grepl("^wbb_nn", names(ref))))
})
