# The scale the network front ends train on (`standardize = TRUE`, the default of wbb_nn(), sgld_sa() /
# hamcmc_sa() with a `model`, bbb() and sparse_vi()), and the ways back to the user's scale.
#
# Inputs: x_s = (x - m) / s. For a matrix x whose network starts with a linear layer, m and s are per column
# (the column's mean and standard deviation, divisor n, as numpy's std and sgmcmc_scaling()); for images (an
# array x, or a network whose first layer with parameters is a convolution) one mean and one sd over every
# value of x (all pixels and channels), so that an image stays an image (the same affine map on every pixel:
# convolution, pooling and padding keep their meaning). A constant column (or constant images) keeps scale 1.
# Responses of a gaussian network: y_s = (y - m_y) / s_y per output column. Classification responses are
# left alone.
#
# The engine sees x_s and y_s; the front end maps what it returns back: predictions f = m_y + s_y f_s (per
# output), the noise sd sigma = s_y sigma_s, and predict() applies the stored transform to new raw inputs.
# The network's parameters, the priors and penalties on them, step sizes and learning rates, and the training
# losses / objectives are those of the standardized problem. nn_export() folds the two affine maps into the
# first and the last layer (nn_fold_params()), so that the exported network takes raw inputs and returns
# raw-scale outputs.

# The transform of a fit, or NULL (standardize = FALSE). xd / yd: nn_prepare_x() / nn_prepare_y(); tab: the
# layer table (nn_resolve()); weights: per-example likelihood weights (sgld_sa(weights = ), checked), which make
# the means and sds weighted (an example of weight 0 does not enter).
nn_scaling <- function(xd, yd, family, tab, standardize, weights = NULL) {
  if (!standardize) return(NULL)
  if (!is.null(weights)) return(nn_scaling_weighted(xd, yd, family, tab, weights))
  global <- nn_scaling_global(xd, tab)
  x <- xd$x
  if (global) {
    m <- mean(x)
    s <- sqrt(nn_sum_sq_dev(x, m) / length(x))
  } else {
    x <- matrix(x, xd$n)
    m <- colMeans(x)
    s <- sqrt(colMeans(sweep(x, 2L, m)^2))
  }
  nn_scaling_object(m, s, global, yd, family, colMeans)
}

# The transform from the inputs' centre m and scale s (a scale of 0 becomes 1) and, for a gaussian network, the
# responses' per-column mean and sd under the (weighted) column mean `cmean`.
nn_scaling_object <- function(m, s, global, yd, family, cmean) {
  s[!(s > 0) | !is.finite(s)] <- 1
  out <- list(x_center = unname(m), x_scale = unname(s), x_global = global, y_center = NULL, y_scale = NULL)
  if (family == "gaussian") {
    y <- as.matrix(yd$y)
    my <- cmean(y)
    sy <- sqrt(cmean(sweep(y, 2L, my)^2))
    if (any(!is.finite(sy)) && all(is.finite(y))) {  # the training would diverge and blame `lr` (issue 61)
      big <- max(abs(y))
      sb_abort(c("{.arg y} is too large: its squares overflow double precision (values as large as {format(big, digits = 3)}).",
                 i = "Rescale {.arg y} (e.g. divide by {format(2^round(log2(big)), digits = 3)}); predictions scale back by the same factor."),
               arg = "y", kind = "scaling")
    }
    sy[!(sy > 0) | !is.finite(sy)] <- 1
    out$y_center <- unname(my)
    out$y_scale <- unname(sy)
  }
  structure(out, class = "sb_nn_scaling")
}

nn_scaling_weighted <- function(xd, yd, family, tab, w) {
  global <- nn_scaling_global(xd, tab)
  w <- w / sum(w)
  x <- matrix(xd$x, xd$n)
  wmean <- function(v) colSums(w * v)  # v: n x k
  if (global) {
    m <- sum(w * rowMeans(x))
    s <- sqrt(sum(w * rowMeans((x - m)^2)))
  } else {
    m <- wmean(x)
    s <- sqrt(wmean(sweep(x, 2L, m)^2))
  }
  nn_scaling_object(m, s, global, yd, family, wmean)
}

# sum((x - m)^2) in chunks of 2^22 values (no second copy of a large image array).
nn_sum_sq_dev <- function(x, m, chunk = 4194304) {
  n <- length(x)
  if (n <= chunk) return(sum((x - m)^2))
  tot <- 0
  for (a in seq(1, n, by = chunk)) tot <- tot + sum((x[a:min(n, a + chunk - 1)] - m)^2)
  tot
}

# One mean and sd over all values: image arrays, or a network whose first layer with parameters is a
# convolution (a matrix reshaped into images by a reshape layer).
nn_scaling_global <- function(xd, tab) {
  if (length(xd$dim) > 2L) return(TRUE)
  k <- tab$kind[tab$params > 0]
  length(k) > 0L && nn_kind_is(k[1], "convolution")
}

# The inputs (an nn_prepare_x() list) on the training scale.
nn_scale_x <- function(xd, sc) {
  if (is.null(sc) || is.null(xd)) return(xd)
  d <- dim(xd$x)
  if (sc$x_global) {
    xd$x <- (xd$x - sc$x_center) / sc$x_scale
  } else {
    xd$x <- sweep(sweep(matrix(xd$x, xd$n), 2L, sc$x_center), 2L, sc$x_scale, "/")
  }
  dim(xd$x) <- d
  xd
}

# The responses (an nn_prepare_y() list) on the training scale: gaussian only.
nn_scale_y <- function(yd, sc) {
  if (is.null(sc) || is.null(sc$y_scale)) return(yd)
  if (is.matrix(yd$y)) {
    yd$y <- sweep(sweep(yd$y, 2L, sc$y_center), 2L, sc$y_scale, "/")
  } else {
    yd$y <- (yd$y - sc$y_center) / sc$y_scale
  }
  yd
}

# Response-scale predictions back on the user's scale: a vector (one output), examples x q, draws x examples
# or draws x examples x q (q > 1: the outputs are the last dimension). Classification: unchanged.
nn_unscale_pred <- function(p, sc) {
  if (is.null(p) || is.null(sc) || is.null(sc$y_scale)) return(p)
  q <- length(sc$y_scale)
  if (q == 1L) return(sc$y_center + sc$y_scale * p)
  k <- length(dim(p))
  sweep(sweep(p, k, sc$y_scale, "*"), k, sc$y_center, "+")
}

# A noise sd (one per chain / fit) on the user's scale: s_y sigma for one output. With q > 1 outputs the
# common sd of the standardized outputs is returned as it is (output j's sd on the user's scale is
# sigma * fit$scaling$y_scale[j]).
nn_unscale_sigma <- function(sigma, sc) {
  if (is.null(sc) || is.null(sc$y_scale) || length(sc$y_scale) != 1L) return(sigma)
  sigma * sc$y_scale
}

# A fixed noise sd given on the user's scale (sgmcmc_ssgl(likelihood_sd = ), vi_control(noise_sd = )) on
# the training scale.
nn_scale_sigma_arg <- function(value, sc, what, call) {
  if (is.null(value) || is.null(sc) || is.null(sc$y_scale)) return(value)
  if (length(sc$y_scale) > 1L && diff(range(sc$y_scale)) > 0) {
    sb_abort(c("{.code {what}} fixes one noise sd for {length(sc$y_scale)} outputs, whose standardized scales differ.",
               i = "Standardize the responses yourself and give {.code standardize = FALSE}, or leave the noise sd to be estimated."),
             arg = "standardize", call = call)
  }
  value / sc$y_scale[1]
}

#' @export
print.sb_nn_scaling <- function(x, ...) {
  cat(nn_scaling_line(x), "\n", sep = "")
  invisible(x)
}

nn_scaling_line <- function(sc) {
  if (is.null(sc)) return("no standardization (standardize = FALSE)")
  xs <- if (sc$x_global) sprintf("inputs by one mean %.4g and sd %.4g", sc$x_center, sc$x_scale)
        else sprintf("inputs per column (%d columns)", length(sc$x_center))
  ys <- if (is.null(sc$y_scale)) "" else if (length(sc$y_scale) == 1L)
    sprintf(", response by mean %.4g and sd %.4g", sc$y_center, sc$y_scale)
    else sprintf(", %d responses per column", length(sc$y_scale))
  paste0("trained on standardized ", xs, ys, "; results on the original scale")
}

# ---- folding the transforms into the parameters ------------------------------------------------------------

# Can the input transform be folded into the first layer with parameters? Only layers that commute with the
# affine map may come before it: flatten, reshape and dropout (the identity in prediction), and with one
# global scale pooling. Returns the index of that layer in tab, or an error message.
nn_fold_first_layer <- function(tab, sc) {
  ok_before <- c("flatten", "reshape", "dropout", if (sc$x_global) c("maxpool2d", "avgpool2d"))
  for (i in seq_len(nrow(tab))) {
    k <- tab$kind[i]
    if (nn_kind_is(k, "weighted")) return(i)
    if (!k %in% ok_before) {
      return(sprintf("layer %d (%s) comes before the first linear or convolution layer", i, k))
    }
  }
  "the network has no linear or convolution layer"
}

# The offsets of a group's parameters in the engine's vector (cpp_nn_describe(): groups in order).
nn_group_index <- function(groups, sizes, name) {
  j <- match(name, groups)
  if (is.na(j)) stop("no parameter group ", name)
  sum(sizes[seq_len(j - 1L)]) + seq_len(sizes[j])
}

# Parameters (P x draws, the engine's layout) of the network on the training scale rewritten so that the
# network maps raw inputs to user-scale outputs: the first linear / convolution layer absorbs x_s = (x - m) / s,
# the output layer (the last, always linear) y = m_y + s_y y_s. Exact, except that the zero padding of a
# convolution pads standardized inputs with 0, i.e. raw inputs with m: the exported PyTorch module pads with
# m (nn_torch_code()). groups / sizes: the parameter groups; input: the example shape.
nn_fold_params <- function(params, tab, groups, sizes, input, sc, call = rlang::caller_env()) {
  if (is.null(sc)) return(params)
  params <- as.matrix(params)
  first <- nn_fold_first_layer(tab, sc)
  if (is.character(first)) {
    sb_abort(c("The standardization of the inputs cannot be folded into this network: {first}.",
               i = "Refit with {.code standardize = FALSE} (standardize the inputs yourself), or start the network with a linear or convolution layer."),
             kind = "export", arg = "fit", call = call)
  }
  lname <- sprintf("layer%d_%s", first, tab$kind[first])
  wi <- nn_group_index(groups, sizes, paste0(lname, ".weight"))
  bi <- nn_group_index(groups, sizes, paste0(lname, ".bias"))
  out_units <- length(bi)
  per_unit <- length(wi) / out_units  # inputs (x k x k) per unit
  m <- sc$x_center
  s <- sc$x_scale
  if (!sc$x_global && length(m) != per_unit) {
    stop("per-column scaling of ", length(m), " inputs, first layer with ", per_unit)
  }
  for (t in seq_len(ncol(params))) {
    W <- matrix(params[wi, t], out_units, per_unit, byrow = TRUE)  # row-major [out, in (, k, k)]
    b <- params[bi, t]
    if (sc$x_global) {
      W <- W / s
      b <- b - (m * rowSums(W))
    } else {
      W <- sweep(W, 2L, s, "/")
      b <- b - drop(W %*% m)
    }
    params[wi, t] <- as.vector(t(W))
    params[bi, t] <- b
  }
  if (!is.null(sc$y_scale)) {
    L <- nrow(tab)
    lname <- sprintf("layer%d_%s", L, tab$kind[L])
    wi <- nn_group_index(groups, sizes, paste0(lname, ".weight"))
    bi <- nn_group_index(groups, sizes, paste0(lname, ".bias"))
    q <- length(bi)
    for (t in seq_len(ncol(params))) {
      W <- matrix(params[wi, t], q, length(wi) / q, byrow = TRUE)
      params[wi, t] <- as.vector(t(W * sc$y_scale))
      params[bi, t] <- sc$y_center + sc$y_scale * params[bi, t]
    }
  }
  params
}

# The inverse transform as a scaling: folding it into a raw-scale network gives the network on the training
# scale of `sc` (x = m + s x_s is x_s's standardization with centre -m / s and scale 1 / s).
nn_scaling_inverse <- function(sc) {
  if (is.null(sc)) return(NULL)
  out <- sc
  out$x_center <- -sc$x_center / sc$x_scale
  out$x_scale <- 1 / sc$x_scale
  if (!is.null(sc$y_scale)) {
    out$y_center <- -sc$y_center / sc$y_scale
    out$y_scale <- 1 / sc$y_scale
  }
  out
}

# Does the first linear / convolution layer pad? (Folding the input transform into it is then exact only in
# the exported module, which pads raw inputs with the mean.)
nn_fold_pads <- function(tab, sc) {
  if (is.null(sc)) return(FALSE)
  first <- nn_fold_first_layer(tab, sc)
  is.numeric(first) && nn_kind_is(tab$kind[first], "convolution") && tab$padding[first] > 0L
}

# Parameters (P x chains) of a network fit with scaling `from` re-expressed for a network trained with scaling
# `to` (sgmcmc_control(init = fit) on data standardized differently): the same function of the raw inputs.
nn_convert_params <- function(params, tab, groups, sizes, input, from, to, call = rlang::caller_env()) {
  if (identical(unclass(from), unclass(to))) return(params)
  pads <- nn_fold_pads(tab, from) || nn_fold_pads(tab, to)
  first_from <- if (!is.null(from)) nn_fold_first_layer(tab, from) else 1L
  first_to <- if (!is.null(to)) nn_fold_first_layer(tab, to) else 1L
  if (is.character(first_from) || is.character(first_to) || pads) {
    sb_warn(c("The starting network ({.code sgmcmc_control(init = )}) was trained on another scale, and its parameters cannot be mapped exactly to this fit's standardized scale; they are used as they are.",
              i = "Fit both with the same {.arg standardize} on the same data, or give {.code standardize = FALSE} to both."),
            kind = "scaling")
    return(params)
  }
  raw <- nn_fold_params(params, tab, groups, sizes, input, from, call = call)
  nn_fold_params(raw, tab, groups, sizes, input, nn_scaling_inverse(to), call = call)
}

# The check of a front end's `standardize` argument.
check_standardize <- function(standardize, call = rlang::caller_env()) check_flag(standardize, arg = "standardize", call = call)
