# UCI data of Table 5 (Deng et al. 2019) and the authors' splits.

test_that("the UCI data sets have their documented shape, names and ranges, with no missing value", {
  e <- new.env()
  utils::data(list = c("uci_yacht", "uci_energy", "uci_wine", "uci_concrete"), package = "scalebayes", envir = e)
  expect_equal(dim(e$uci_yacht), c(308L, 7L))
  expect_equal(dim(e$uci_energy), c(768L, 10L))
  expect_equal(dim(e$uci_wine), c(1599L, 12L))
  expect_equal(dim(e$uci_concrete), c(1030L, 9L))
  for (d in list(e$uci_yacht, e$uci_energy, e$uci_wine, e$uci_concrete)) {
    expect_false(anyNA(d))
    expect_true(all(vapply(d, is.double, TRUE)))
  }
  expect_equal(names(e$uci_yacht)[7], "resistance")
  expect_equal(names(e$uci_energy)[9:10], c("heating_load", "cooling_load"))
  expect_equal(names(e$uci_wine)[12], "quality")
  expect_equal(names(e$uci_concrete)[9], "compressive_strength")
  # values known from the UCI descriptions: wine scores 3..8, yacht resistance 0.01..62.42, energy 12 shapes
  # x 4 orientations x (1 + 3 x 5) glazing settings, concrete age 1..365 days
  expect_equal(range(e$uci_wine$quality), c(3, 8))
  expect_equal(range(e$uci_yacht$resistance), c(0.01, 62.42))
  expect_equal(sort(unique(e$uci_energy$orientation)), 2:5)
  expect_equal(nrow(unique(e$uci_energy[, 1:8])), 768L)
  expect_equal(range(e$uci_concrete$age), c(1, 365))
  # the first yacht row of the UCI file, which the authors' reader takes as a header
  expect_equal(unlist(e$uci_yacht[1, ], use.names = FALSE), c(-2.3, 0.568, 4.78, 3.99, 3.17, 0.125, 0.11))
})

test_that("uci_concrete agrees with modeldata's independent, rounded copy", {
  skip_if_not_installed("modeldata")
  e <- new.env()
  utils::data("uci_concrete", package = "scalebayes", envir = e)
  m <- as.data.frame(modeldata::concrete)
  expect_equal(dim(m), dim(e$uci_concrete))
  d <- abs(as.matrix(m) - as.matrix(e$uci_concrete))
  expect_lte(max(d[, 1:8]), 0.05 + 1e-9)  # modeldata rounds the mixture to one decimal
  expect_lte(max(d[, 9]), 0.005 + 1e-9)   # and the strength to two
  expect_gt(max(d[, 9]), 0)               # the package keeps the .xls file's full precision
})

test_that("uci_splits() reproduces numpy's RandomState(seed).permutation (scikit-learn's train_test_split)", {
  # test rows in permutation order, computed by numpy 1.x (data-raw/uci_splits.py): Boston seed 5 (all 51),
  # Concrete seed 9999 (first 20), Boston seed 777 (first 12)
  boston5 <- c(227L, 293L, 91L, 374L, 274L, 418L, 504L, 235L, 112L, 473L, 100L, 340L, 310L, 305L, 273L, 347L,
               413L, 152L, 497L, 411L, 491L, 133L, 225L, 319L, 285L, 445L, 322L, 117L, 334L, 352L, 124L, 490L,
               395L, 454L, 303L, 132L, 237L, 426L, 263L, 41L, 394L, 142L, 224L, 457L, 297L, 301L, 415L, 123L,
               151L, 141L, 108L)
  concrete9999 <- c(659L, 244L, 622L, 645L, 22L, 211L, 319L, 367L, 684L, 420L, 476L, 722L, 568L, 91L, 92L, 132L,
                    502L, 689L, 956L, 877L)
  boston777 <- c(208L, 426L, 409L, 64L, 291L, 133L, 55L, 162L, 144L, 98L, 178L, 240L)
  expect_identical(attr(uci_splits(506, seeds = 5)[[1]], "order"), boston5)
  expect_identical(attr(uci_splits(1030, seeds = 9999)[[1]], "order")[1:20], concrete9999)
  # the other sizes (yacht as the authors read it, energy, wine), numpy 1.24: RandomState(s).permutation(n)[:12] + 1
  expect_identical(attr(uci_splits(307, seeds = 55)[[1]], "order")[1:12],
                   c(292L, 243L, 27L, 100L, 240L, 168L, 132L, 185L, 71L, 267L, 92L, 239L))
  expect_identical(attr(uci_splits(768, seeds = 6666)[[1]], "order")[1:12],
                   c(72L, 206L, 559L, 555L, 670L, 320L, 317L, 622L, 429L, 151L, 22L, 238L))
  expect_identical(attr(uci_splits(1599, seeds = 88)[[1]], "order")[1:12],
                   c(107L, 842L, 1534L, 1166L, 283L, 1521L, 529L, 780L, 1103L, 544L, 1324L, 914L))
  expect_length(uci_splits(1599, seeds = 88)[[1]]$test, 160L)  # ceiling(0.1 n), as train_test_split
  s <- uci_splits(data.frame(row = seq_len(506)))  # a data frame counts its rows, like MASS::Boston
  expect_identical(attr(s$seed_777, "order")[1:12], boston777)
  expect_named(s, paste0("seed_", c(5, 55, 555, 5555, 6, 66, 666, 6666, 7, 77, 777, 7777, 8, 88, 888, 8888, 9, 99,
                                    999, 9999)))
})

test_that("uci_splits() gives disjoint 90/10 splits, is reproducible and leaves the caller's RNG alone", {
  for (n in c(307L, 768L, 1599L)) {
    s <- uci_splits(n, seeds = c(5, 123456789, 2^32 - 1))
    for (sp in s) {
      expect_length(sp$test, ceiling(0.1 * n))
      expect_length(sp$train, n - ceiling(0.1 * n))
      expect_length(intersect(sp$train, sp$test), 0L)
      expect_equal(sort(c(sp$train, sp$test)), seq_len(n))
    }
    expect_false(identical(s[[1]]$test, s[[2]]$test))
    expect_identical(uci_splits(n, seeds = c(5, 123456789, 2^32 - 1)), s)
  }
  expect_length(uci_splits(10, seeds = 1, test_fraction = 0.25)[[1]]$test, 3L)
  set.seed(42)
  kind <- RNGkind()
  before <- .Random.seed
  uci_splits(50, seeds = 1:3)
  expect_identical(.Random.seed, before)
  expect_identical(RNGkind(), kind)
  expect_identical(runif(1), {set.seed(42); runif(1)})
})

test_that("uci_prepare() standardizes with the training rows as the authors do", {
  d <- uci_prepare("energy", split = 3)
  e <- new.env()
  utils::data("uci_energy", package = "scalebayes", envir = e)
  s <- uci_splits(768)[[3]]
  expect_identical(d$test, s$test)
  expect_equal(d$y, e$uci_energy$cooling_load[s$train])
  expect_equal(d$newy, e$uci_energy$cooling_load[s$test])
  expect_equal(unname(colMeans(d$x)), rep(0, 8), tolerance = 1e-12)
  expect_equal(unname(sqrt(colMeans(d$x^2))), rep(1, 8), tolerance = 1e-12)  # population sd (numpy's std)
  raw <- as.matrix(e$uci_energy[s$test, 1:8])
  tr <- as.matrix(e$uci_energy[s$train, 1:8])
  expect_equal(unname(d$newx[, 2]), unname((raw[, 2] - mean(tr[, 2])) / sqrt(mean((tr[, 2] - mean(tr[, 2]))^2))))
  y <- uci_prepare("yacht", split = 1)
  expect_false(1L %in% c(y$train, y$test))  # the authors' reader drops the first yacht row
  expect_equal(length(y$train) + length(y$test), 307L)
  expect_identical(y$test, uci_splits(307, seeds = 5)[[1]]$test + 1L)
  expect_equal(dim(uci_prepare("wine", split = 20)$newx), c(160L, 11L))
})

test_that("uci_prepare(\"boston\") takes MASS::Boston with the authors' first split", {
  skip_if_not_installed("MASS")
  b <- uci_prepare("boston", split = 1)
  expect_identical(sort(b$test), sort(c(227L, 293L, 91L, 374L, 274L, 418L, 504L, 235L, 112L, 473L, 100L, 340L,
    310L, 305L, 273L, 347L, 413L, 152L, 497L, 411L, 491L, 133L, 225L, 319L, 285L, 445L, 322L, 117L, 334L, 352L,
    124L, 490L, 395L, 454L, 303L, 132L, 237L, 426L, 263L, 41L, 394L, 142L, 224L, 457L, 297L, 301L, 415L, 123L,
    151L, 141L, 108L)))
  expect_equal(b$newy, MASS::Boston$medv[b$test])
})

test_that("uci_splits() and uci_prepare() refuse bad input with classed errors", {
  expect_error(uci_splits(1), class = "scalebayes_error_input")
  expect_error(uci_splits(10, seeds = -1), class = "scalebayes_error_input")
  expect_error(uci_splits(10, seeds = 2^32), class = "scalebayes_error_input")
  expect_error(uci_splits(10, seeds = 1.5), class = "scalebayes_error_input")
  expect_error(uci_splits(10, seeds = "a"), class = "scalebayes_error_input")
  expect_error(uci_splits(10, test_fraction = 1), class = "scalebayes_error_input")
  expect_error(uci_splits(10, test_fraction = 0.95), class = "scalebayes_error_input")
  expect_error(uci_prepare("iris"), class = "scalebayes_error_input")
  expect_error(uci_prepare("yacht", split = 21), class = "scalebayes_error_input")
})
