# The UCI regression splits of Table 5 of Deng, Zhang, Liang & Lin (2019): their code calls scikit-learn's
# train_test_split(X, y, test_size = 0.1, random_state = seed), whose test set is the first ceiling(0.1 n)
# entries of numpy's RandomState(seed).permutation(n). numpy's legacy stream is frozen: MT19937 seeded by
# init_genrand(seed), and the permutation is a Fisher-Yates shuffle drawing j in [0, i] by masked rejection
# on 32-bit outputs. R's Mersenne-Twister is the same generator, so we set its state to init_genrand(seed)
# (restoring the caller's RNG state afterwards) and read the 32-bit outputs back from runif() (exactly
# u * 2^32: R's MT returns y * 2^-32).

#' The authors' 20 split seeds of Table 5 (Deng et al. 2019)
#' @noRd
uci_default_seeds <- c(5, 55, 555, 5555, 6, 66, 666, 6666, 7, 77, 777, 7777, 8, 88, 888, 8888, 9, 99, 999, 9999)

# numpy.random.RandomState(seed).permutation(n), 0-based.
np_legacy_permutation <- function(n, seed) {
  mt <- numeric(624L)
  mt[1L] <- seed
  a_hi <- 1812433253 %/% 65536
  a_lo <- 1812433253 %% 65536
  for (i in 2:624) {  # init_genrand: mt[i] = 1812433253 * (mt[i-1] ^ (mt[i-1] >> 30)) + i  (mod 2^32)
    x <- mt[i - 1L]
    v <- (x %/% 65536) * 65536 + bitwXor(as.integer(x %% 65536), as.integer(x %/% 2^30))
    v_hi <- v %/% 65536
    v_lo <- v %% 65536
    mt[i] <- (a_lo * v_lo + ((a_hi * v_lo + a_lo * v_hi) %% 65536) * 65536 + (i - 1)) %% 2^32
  }
  old_kind <- RNGkind()
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (had) old_seed <- get(".Random.seed", envir = globalenv())
  on.exit({
    RNGkind(old_kind[1L], old_kind[2L], old_kind[3L])
    if (had) assign(".Random.seed", old_seed, envir = globalenv())
    else if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) rm(".Random.seed", envir = globalenv())
  }, add = TRUE)
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  assign(".Random.seed", c(10403L, 624L, as.integer(ifelse(mt >= 2^31, mt - 2^32, mt))), envir = globalenv())
  next_u32 <- function() {
    u <- stats::runif(1L) * 2^32
    if (u != floor(u)) 0 else u  # R maps an output of 0 to half a step (its fixup)
  }
  arr <- seq_len(n) - 1L
  if (n < 2L) return(arr)
  for (i in seq.int(n - 1L, 1L)) {
    mask <- i
    for (s in c(1L, 2L, 4L, 8L, 16L)) mask <- bitwOr(mask, bitwShiftR(mask, s))
    repeat {
      j <- bitwAnd(as.integer(next_u32() %% 2^31), mask)  # mask < 2^31: the top bit never survives the mask
      if (j <= i) break
    }
    tmp <- arr[i + 1L]
    arr[i + 1L] <- arr[j + 1L]
    arr[j + 1L] <- tmp
  }
  arr
}

#' Random train/test splits of the UCI regression benchmarks, as Deng et al. (2019) drew them
#'
#' The 90/10 splits of Table 5 of Deng, Zhang, Liang and Lin (2019). Their code calls scikit-learn's
#' `train_test_split(X, y, test_size = 0.1, random_state = seed)` for the 20 seeds 5, 55, 555, 5555, 6, ...,
#' 9999, whose test set is the first `ceiling(test_fraction * n)` entries of numpy's
#' `RandomState(seed).permutation(n)`. numpy's legacy generator is frozen across versions, and `uci_splits()`
#' computes the same permutation in R (the Mersenne-Twister state is set to numpy's seeding and the
#' caller's random-number state is restored afterwards), so the splits are the authors' exactly, with no
#' Python. For `uci_yacht` their reader takes the file's first line as a header: their splits permute rows 2
#' to 308, which `uci_prepare("yacht")` reproduces.
#'
#' `uci_prepare()` returns one split of one of the five data sets the way the authors' code prepares it: the
#' features standardized with the training rows' mean and population standard deviation (numpy's `std`), the
#' response on its raw scale (Energy: the cooling load).
#'
#' @param x The number of rows, or a data frame or matrix whose rows are split.
#' @param seeds Split seeds, whole numbers in \[0, 2^32 - 1\]; one split per seed. Default: the authors' 20.
#' @param test_fraction Fraction of rows in the test set, in (0, 1).
#' @return `uci_splits()`: a list with one element per seed, each a list of `train` and `test` (sorted
#'   1-based row indices; `test` in the permutation's order is attribute `"order"`), named `"seed_<seed>"`.
#'   `uci_prepare()`: a list with `x`, `y` (training rows), `newx`, `newy` (test rows), `train`, `test` (row
#'   numbers of the data set) and `seed`.
#' @references Deng, W., Zhang, X., Liang, F. and Lin, G. (2019). An adaptive empirical Bayesian method for
#'   sparse deep learning. *NeurIPS 2019*.
#' @seealso [uci_yacht], [uci_energy], [uci_wine], [uci_concrete]; `MASS::Boston`.
#' @examples
#' s <- uci_splits(506)                     # Boston's 20 splits
#' lengths(s[[1]])                          # 455 training and 51 test rows
#' d <- uci_prepare("yacht", split = 1)
#' dim(d$x); length(d$newy)
#' @export
uci_splits <- function(x, seeds = uci_default_seeds, test_fraction = 0.1) {
  n <- if (is.data.frame(x) || is.matrix(x)) nrow(x) else check_count(x, arg = "x", min = 2L)
  if (n < 2L) {
    sb_abort(c("{.arg x} must have at least two rows.", x = "It has {n}."), arg = "x")
  }
  if (!is.numeric(seeds) || !length(seeds) || anyNA(seeds) || any(!is.finite(seeds)) ||
      any(seeds != round(seeds)) || any(seeds < 0) || any(seeds > 2^32 - 1)) {
    sb_abort(c("{.arg seeds} must be whole numbers in [0, 2^32 - 1] (numpy's seed range).",
               x = "You supplied {.obj_type_friendly {seeds}}{if (is.numeric(seeds)) paste0(': ', paste(format(utils::head(seeds, 5)), collapse = ', ')) else ''}."),
             arg = "seeds")
  }
  test_fraction <- check_number(test_fraction, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  n_test <- ceiling(test_fraction * n)
  if (n_test >= n) {
    sb_abort(c("{.arg test_fraction} leaves no training rows.", x = "{n_test} of {n} rows would be test rows.",
               i = "Use a smaller {.arg test_fraction}."), arg = "test_fraction")
  }
  out <- lapply(seeds, function(s) {
    p <- np_legacy_permutation(n, s) + 1L
    te <- p[seq_len(n_test)]
    structure(list(train = sort(p[-seq_len(n_test)]), test = sort(te)), order = te)
  })
  names(out) <- paste0("seed_", format(seeds, scientific = FALSE, trim = TRUE))
  out
}

#' @rdname uci_splits
#' @param name One of `"boston"` (`MASS::Boston`), `"yacht"`, `"energy"`, `"wine"`, `"concrete"`.
#' @param split Which seed of `seeds` (an index).
#' @export
uci_prepare <- function(name = c("boston", "yacht", "energy", "wine", "concrete"), split = 1L,
                        seeds = uci_default_seeds) {
  name <- sb_match_arg(name)
  split <- check_count(split, max = length(seeds), fix = "{.arg split} indexes {.arg seeds}.")
  e <- new.env()
  d <- switch(name,
    boston = {
      if (!requireNamespace("MASS", quietly = TRUE)) {
        sb_abort(c("{.code uci_prepare(\"boston\")} needs the package MASS.", i = "Install it."), arg = "name")
      }
      MASS::Boston
    },
    { utils::data(list = paste0("uci_", name), package = "scalebayes", envir = e); e[[paste0("uci_", name)]] })
  resp <- switch(name, boston = "medv", yacht = "resistance", energy = "cooling_load", wine = "quality",
                 concrete = "compressive_strength")
  drop <- if (name == "energy") c("heating_load", "cooling_load") else resp
  rows <- if (name == "yacht") 2:nrow(d) else seq_len(nrow(d))  # the authors' reader eats yacht's first row
  s <- uci_splits(length(rows), seeds = seeds[split])[[1L]]
  tr <- rows[s$train]
  te <- rows[s$test]
  X <- as.matrix(d[, setdiff(names(d), drop)])
  mu <- colMeans(X[tr, , drop = FALSE])
  sdev <- sqrt(colMeans(sweep(X[tr, , drop = FALSE], 2L, mu)^2))
  xs <- scale(X, mu, sdev)
  attr(xs, "scaled:center") <- attr(xs, "scaled:scale") <- NULL
  list(x = xs[tr, , drop = FALSE], y = d[[resp]][tr], newx = xs[te, , drop = FALSE], newy = d[[resp]][te],
       train = tr, test = te, seed = seeds[split])
}
