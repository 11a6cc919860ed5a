# Network specifications: nn_mlp(), nn_cnn(), their layer tables, and the flat layer list the engine builds
# a LibTorch module from (inst/include/scalebayes/nn/spec.hpp). Shapes and parameter counts are computed
# here in R, so a specification prints the same with or without the LibTorch backend.

nn_layer_codes <- c(linear = 0L, conv2d = 1L, maxpool2d = 2L, batchnorm2d = 3L, batchnorm1d = 4L,
                    flatten = 5L, relu = 6L, tanh = 7L, sigmoid = 8L, dropout = 9L)
nn_activations <- c("relu", "tanh", "sigmoid")

#' Network specifications for the neural-network samplers
#'
#' `nn_mlp()` describes a fully connected network (multilayer perceptron), `nn_cnn()` a small convolutional
#' network: convolution blocks (convolution, activation, max pooling) followed by fully connected layers.
#' The input size and the output layer are filled in from the data when the network is fitted (one output
#' for `"gaussian"` and `"binomial"`, one per class for `"multinomial"`). Printing a specification with
#' `input` shows the layer table and the parameter count, like a model summary in a deep-learning library.
#'
#' Defaults reproduce the papers' networks: `nn_mlp(c(128, 64))` is the WBB paper's MNIST network (Newton,
#' Polson and Xu 2021, section 3.4); `nn_cnn()` is the 2-Conv-2-FC network of Deng et al. (2019, Appendix
#' D.1): 5 x 5 convolutions with 32 and 64 feature maps, each followed by ReLU and 2 x 2 max pooling, a
#' 200-unit hidden layer and the output layer. With `padding = "same"` it has 669,706 parameters on 28 x 28
#' inputs (the paper's "670K"); with `"valid"` 257,666. The paper's second network, 2-Conv-BN-3-FC, is
#' `nn_cnn(channels = c(64, 64), kernel = 4, hidden = c(256, 64), batchnorm = TRUE)` (batch normalization
#' after the first fully connected layer).
#'
#' `dropout = p` adds dropout layers (Srivastava et al. 2014): in training, every unit is kept with
#' probability `1 - p` and rescaled by `1 / (1 - p)` (so its mean is unchanged); in prediction the layer is
#' the identity. `nn_mlp()` puts one after every hidden activation, `nn_cnn()` one on the flattened feature
#' maps before the first fully connected layer (the "Dropout" network of Deng et al. 2019, Table 2:
#' `nn_cnn(dropout = 0.5)`). Dropout has no parameters: layer table and parameter count are unchanged. The
#' masks come from a generator owned by each network and seeded from the draw's (or chain's) random stream,
#' so the same seed gives the same draws for any number of threads; without dropout nothing more is drawn.
#'
#' Penalties (the WBB prior term, spike-and-slab priors of the SG-MCMC samplers) apply to the weight
#' matrices and convolution kernels only; biases and batch-normalization parameters are never penalized.
#'
#' @param hidden Sizes of the hidden fully connected layers (may be empty for a linear / logistic model).
#' @param activation `"relu"`, `"tanh"` or `"sigmoid"`.
#' @param batchnorm For `nn_mlp()`: batch normalization after every hidden layer; for `nn_cnn()`: after the
#'   first fully connected layer.
#' @param channels Feature maps of the convolution layers.
#' @param kernel Convolution kernel size (square).
#' @param pool Max-pooling window (square, stride = window) after each convolution; 1 for none.
#' @param dropout Dropout rate in `[0, 1)`; 0 (the default) for none.
#' @param padding `"same"` (zero padding `(kernel - 1) %/% 2`, so odd kernels keep the size) or `"valid"`
#'   (no padding), or a whole number.
#' @param x A specification.
#' @param input For printing: the shape of one example (`p` features, or `c(channels, height, width)`).
#' @param output For printing: the number of outputs.
#' @param ... Unused.
#' @return An object of class `c("sb_nn_mlp", "sb_nn_spec")` or `c("sb_nn_cnn", "sb_nn_spec")`.
#' @export
#' @examples
#' nn_mlp(c(128, 64))
#' print(nn_mlp(c(128, 64)), input = 784, output = 10)
#' print(nn_cnn(), input = c(1, 28, 28), output = 10)
nn_mlp <- function(hidden = c(128, 64), activation = c("relu", "tanh", "sigmoid"), batchnorm = FALSE,
                   dropout = 0) {
  hidden <- check_sizes(hidden, "hidden", allow_empty = TRUE)
  activation <- sb_match_arg(activation)
  dropout <- check_number(dropout, lower = 0, upper = 1, upper_open = TRUE, what = "a dropout rate in [0, 1)")
  structure(list(type = "mlp", hidden = hidden, activation = activation, batchnorm = check_flag(batchnorm),
                 dropout = dropout),
            class = c("sb_nn_mlp", "sb_nn_spec"))
}

#' @rdname nn_mlp
#' @export
nn_cnn <- function(channels = c(32, 64), kernel = 5, pool = 2, hidden = 200, padding = c("same", "valid"),
                   activation = c("relu", "tanh", "sigmoid"), batchnorm = FALSE, dropout = 0) {
  channels <- check_sizes(channels, "channels", allow_empty = FALSE)
  kernel <- check_count(kernel, arg = "kernel", max = 64L)
  pool <- check_count(pool, arg = "pool", max = 64L)
  hidden <- check_sizes(hidden, "hidden", allow_empty = TRUE)
  if (is.numeric(padding)) {
    padding <- check_count(padding, arg = "padding", min = 0L, max = 64L)
  } else {
    padding <- sb_match_arg(padding)
    padding <- if (padding == "same") (kernel - 1L) %/% 2L else 0L
  }
  activation <- sb_match_arg(activation)
  dropout <- check_number(dropout, lower = 0, upper = 1, upper_open = TRUE, what = "a dropout rate in [0, 1)")
  structure(list(type = "cnn", channels = channels, kernel = kernel, pool = pool, hidden = hidden,
                 padding = padding, activation = activation, batchnorm = check_flag(batchnorm), dropout = dropout),
            class = c("sb_nn_cnn", "sb_nn_spec"))
}

check_sizes <- function(v, arg, allow_empty, call = rlang::caller_env()) {
  if (is.null(v) && allow_empty) return(integer())
  if (!is.numeric(v) || anyNA(v) || any(!is.finite(v)) || any(v != round(v)) || any(v < 1) || any(v > 1e6) ||
      (!allow_empty && !length(v))) {
    sb_abort(c("{.arg {arg}} must be {if (allow_empty) 'empty or '}whole numbers between 1 and 1e6.",
               x = "You supplied {.val {format(utils::head(v, 5))}}."), arg = arg, call = call)
  }
  as.integer(v)
}

# The full layer list for given input shape and number of outputs: a data frame with the engine's codes,
# output shapes and parameter counts.
nn_resolve <- function(spec, input, output) {
  rows <- list()
  add <- function(kind, out = 0L, kernel = 0L, stride = 1L, padding = 0L, penalized = FALSE, shape, params = 0,
                  rate = 0) {
    rows[[length(rows) + 1L]] <<- data.frame(
      kind = kind, out = as.integer(out), kernel = as.integer(kernel), stride = as.integer(stride),
      padding = as.integer(padding), penalized = penalized, shape = paste(shape, collapse = " x "),
      params = params, rate = rate, stringsAsFactors = FALSE)
  }
  drop_rate <- spec$dropout %||% 0  # specifications made before dropout existed have none
  drop <- function() if (drop_rate > 0) add("dropout", shape = shape, rate = drop_rate)
  shape <- as.integer(input)
  act <- spec$activation
  dense <- function(units, last = FALSE) {
    p <- shape[1]
    add("linear", out = units, penalized = TRUE, shape = units, params = p * units + units)
    shape <<- units
  }
  if (spec$type == "cnn") {
    if (length(shape) != 3L) {
      sb_abort(c("A convolutional network needs image input: an array n x channels x height x width.",
                 x = "The data have example shape {paste(shape, collapse = ' x ')}."), arg = "x")
    }
    for (ch in spec$channels) {
      h <- (shape[2] + 2L * spec$padding - spec$kernel) + 1L
      w <- (shape[3] + 2L * spec$padding - spec$kernel) + 1L
      if (h < 1L || w < 1L) {
        sb_abort(c("The {spec$kernel} x {spec$kernel} convolution is larger than its {shape[2]} x {shape[3]} input.",
                   i = "Use a smaller {.arg kernel}, fewer convolution layers or {.code padding = \"same\"}."),
                 arg = "model")
      }
      add("conv2d", out = ch, kernel = spec$kernel, padding = spec$padding, penalized = TRUE,
          shape = c(ch, h, w), params = shape[1] * ch * spec$kernel^2 + ch)
      shape <- c(ch, h, w)
      add(act, shape = shape)
      if (spec$pool > 1L) {
        h <- (shape[2] - spec$pool) %/% spec$pool + 1L
        w <- (shape[3] - spec$pool) %/% spec$pool + 1L
        if (h < 1L || w < 1L) {
          sb_abort(c("The {spec$pool} x {spec$pool} pooling window is larger than its {shape[2]} x {shape[3]} input.",
                     i = "Use a smaller {.arg pool} or fewer convolution layers."), arg = "model")
        }
        shape <- c(ch, h, w)
        add("maxpool2d", kernel = spec$pool, stride = spec$pool, shape = shape)
      }
    }
    add("flatten", shape = prod(shape))
    shape <- prod(shape)
    drop()
    for (k in seq_along(spec$hidden)) {
      dense(spec$hidden[k])
      if (spec$batchnorm && k == 1L) add("batchnorm1d", shape = shape, params = 2 * shape)
      add(act, shape = shape)
    }
  } else {
    if (length(shape) != 1L) {
      add("flatten", shape = prod(shape))
      shape <- prod(shape)
    }
    for (h in spec$hidden) {
      dense(h)
      if (spec$batchnorm) add("batchnorm1d", shape = shape, params = 2 * shape)
      add(act, shape = shape)
      drop()
    }
  }
  dense(output)
  tab <- do.call(rbind, rows)
  tab$code <- unname(nn_layer_codes[tab$kind])
  tab
}

# The list the engine reads (src/torch_nn.cpp: spec_from()).
nn_engine_spec <- function(tab, input, family) {
  list(input = as.integer(input), family = match(family, c("gaussian", "binomial", "multinomial")) - 1L,
       layers = list(kind = tab$code, out = tab$out, kernel = tab$kernel, stride = tab$stride,
                     padding = tab$padding, penalized = tab$penalized,
                     rate = if (is.null(tab$rate)) numeric(nrow(tab)) else as.double(tab$rate)))
}

#' @rdname nn_mlp
#' @export
print.sb_nn_spec <- function(x, input = NULL, output = NULL, ...) {
  if (x$type == "mlp") {
    cat(sprintf("<sb_nn_spec> MLP, hidden layers %s, %s activation%s%s\n",
                if (length(x$hidden)) paste(x$hidden, collapse = "-") else "none", x$activation,
                if (x$batchnorm) ", batch norm" else "",
                if ((x$dropout %||% 0) > 0) sprintf(", dropout %g after each hidden layer", x$dropout) else ""))
  } else {
    cat(sprintf("<sb_nn_spec> CNN, %d conv layer%s (%s maps, %d x %d kernels, padding %d, %d x %d max pool), hidden %s, %s%s%s\n",
                length(x$channels), if (length(x$channels) > 1) "s" else "", paste(x$channels, collapse = "/"),
                x$kernel, x$kernel, x$padding, x$pool, x$pool,
                if (length(x$hidden)) paste(x$hidden, collapse = "-") else "none", x$activation,
                if (x$batchnorm) ", batch norm after FC1" else "",
                if ((x$dropout %||% 0) > 0) sprintf(", dropout %g before FC1", x$dropout) else ""))
  }
  if (is.null(input) || is.null(output)) {
    cat("Input and output sizes come from the data; print(spec, input = , output = ) shows the layer table.\n")
    return(invisible(x))
  }
  tab <- nn_resolve(x, input, check_count(output, arg = "output"))
  show <- data.frame(layer = ifelse(tab$kind == "dropout", sprintf("dropout(%g)", tab$rate), tab$kind), output_shape = tab$shape, parameters = format(tab$params, big.mark = ","),
                     penalized = ifelse(tab$penalized, "weights", ""))
  print(show, row.names = FALSE, right = FALSE)
  cat(sprintf("Total parameters: %s (input %s)\n", format(sum(tab$params), big.mark = ","),
              paste(input, collapse = " x ")))
  invisible(x)
}
