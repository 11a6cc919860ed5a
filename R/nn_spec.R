# Network specifications: nn_sequential() and its layer constructors (R/nn_layers.R), the shortcuts nn_mlp()
# and nn_cnn(), their layer tables, and the flat layer list the engine builds a LibTorch module from
# (inst/include/scalebayes/nn/spec.hpp). Shapes and parameter counts come from the engine's torch-free
# planner (nn/layers_spec.hpp via cpp_nn_plan(), src/nn_spec.cpp): one definition per layer kind, the same
# with or without the LibTorch backend.

# The engine's layer kinds (nn/layers_spec.hpp via cpp_nn_layer_kinds()): code, name and the properties every
# method decides by -- weighted (a weight the penalty / prior applies to), sparse (may carry sgld_sa()'s SSGL
# prior), variational (q under bbb() / sparse_vi()), convolution (inputs standardized by one mean and sd;
# zero padding), batched (G networks of it train as one: batch = ) and the input it takes. Read once per session;
# nothing here lists kinds again.
nn_layer_kinds <- function() {
  if (is.null(sb_tables$layer_kinds)) sb_tables$layer_kinds <- cpp_nn_layer_kinds()
  sb_tables$layer_kinds
}
sb_tables <- new.env(parent = emptyenv())

# The engine code of each kind name.
nn_layer_code <- function(kind) nn_layer_kinds()$code[match(kind, nn_layer_kinds()$name)]

# Whether each kind (by name) has a property of nn_layer_kinds(): "weighted", "sparse", "variational",
# "convolution". Unknown names (none reach here: kinds come from the engine's plan) have none.
nn_kind_is <- function(kind, property) {
  k <- nn_layer_kinds()
  stopifnot(is.character(property), length(property) == 1L, property %in% names(k))
  v <- k[[property]][match(kind, k$name)]
  !is.na(v) & v
}
nn_activations <- c("relu", "tanh", "sigmoid")

#' Network specifications for the neural-network samplers
#'
#' `nn_mlp()` describes a fully connected network (multilayer perceptron), `nn_cnn()` a small convolutional
#' network: convolution blocks (convolution, activation, max pooling) followed by fully connected layers.
#' Both are shortcuts for [nn_sequential()] with the layers listed below (`$layers` holds them); any other
#' stack of layers is written with [nn_sequential()] directly.
#' The input size and the output layer are filled in from the data when the network is fitted (one output
#' for `"gaussian"` and `"binomial"`, one per class for `"multinomial"`). Printing a specification with
#' `input` shows the layer table and the parameter count, like a model summary in a deep-learning library.
#'
#' Defaults reproduce the papers' networks: `nn_mlp(c(128, 64))` is the WBB paper's MNIST network (Newton,
#' Polson and Xu 2021, section 3.4); `nn_cnn()` is the 2-Conv-2-FC network of Deng et al. (2019, Appendix
#' D.1): 5 x 5 convolutions with 32 and 64 feature maps, each followed by ReLU and 2 x 2 max pooling, a
#' 200-unit hidden layer and the output layer. With `padding = "same"` it has 681,506 parameters on 28 x 28
#' inputs and 10 classes (the paper reports "670K"); with `"valid"` 259,106 (both counts agree with the same
#' networks built in PyTorch). The paper's second network, 2-Conv-BN-3-FC, is
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
#' @return An object of class `c("sb_nn_mlp", "sb_nn_sequential", "sb_nn_spec")` or
#'   `c("sb_nn_cnn", "sb_nn_sequential", "sb_nn_spec")`: the arguments and `layers`, the body as
#'   [nn_sequential()] layers (the output layer is added from the data).
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
  spec <- list(type = "mlp", hidden = hidden, activation = activation, batchnorm = check_flag(batchnorm),
               dropout = dropout)
  spec$layers <- nn_shortcut_layers(spec)
  structure(spec, class = c("sb_nn_mlp", "sb_nn_sequential", "sb_nn_spec"))
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
  spec <- list(type = "cnn", channels = channels, kernel = kernel, pool = pool, hidden = hidden,
               padding = padding, activation = activation, batchnorm = check_flag(batchnorm), dropout = dropout)
  spec$layers <- nn_shortcut_layers(spec)
  structure(spec, class = c("sb_nn_cnn", "sb_nn_sequential", "sb_nn_spec"))
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

# The body of nn_mlp() / nn_cnn() as nn_sequential() layers: exactly the layer list (and so the parameters,
# in the same order) these shortcuts have always had. nn_mlp() flattens image input first (a flatten that
# is left out on flat input).
nn_shortcut_layers <- function(spec) {
  act <- function() nn_layer(spec$activation)
  drop_rate <- spec$dropout %||% 0  # specifications made before dropout existed have none
  drop <- function() if (drop_rate > 0) list(layer_dropout(drop_rate))
  L <- list()
  if (spec$type == "cnn") {
    for (ch in spec$channels) {
      L <- c(L, list(layer_conv2d(ch, spec$kernel, padding = spec$padding), act()))
      if (spec$pool > 1L) L <- c(L, list(layer_maxpool2d(spec$pool)))
    }
    L <- c(L, list(layer_flatten()), drop())
    for (k in seq_along(spec$hidden)) {
      L <- c(L, list(layer_dense(spec$hidden[k])))
      if (spec$batchnorm && k == 1L) L <- c(L, list(nn_layer("batchnorm1d")))
      L <- c(L, list(act()))
    }
  } else {
    L <- list(nn_layer("flatten", if_needed = TRUE))
    for (h in spec$hidden) {
      L <- c(L, list(layer_dense(h)))
      if (spec$batchnorm) L <- c(L, list(nn_layer("batchnorm1d")))
      L <- c(L, list(act()), drop())
    }
  }
  L
}

# The body layers of a specification (specifications saved before nn_sequential() existed have none stored).
nn_body <- function(spec) {
  if (!is.null(spec$layers)) return(spec$layers)
  nn_shortcut_layers(spec)
}

# The engine's layer list (columns) for a list of layer objects.
nn_layer_columns <- function(layers) {
  col <- function(name, fun) vapply(layers, function(l) fun(l[[name]]), fun(layers[[1]][[name]]))
  targets <- lapply(layers, function(l) l$target)
  out <- list(kind = nn_layer_code(vapply(layers, `[[`, "", "kind")), out = col("out", as.integer),
              kernel = col("kernel", as.integer), stride = col("stride", as.integer),
              padding = col("padding", as.integer), penalized = col("penalized", as.logical),
              rate = col("rate", as.double))
  if (any(!vapply(targets, is.null, TRUE))) out$target <- lapply(targets, function(t) if (is.null(t)) integer() else as.integer(t))
  out
}

# The engine's plan (shapes, parameter counts, resolved kinds) of a layer list, as a classed error when a
# layer does not fit its input.
nn_plan <- function(layers, input, family = "multinomial", call = rlang::caller_env()) {
  es <- list(input = as.integer(input), family = family,
             layers = nn_layer_columns(layers))
  tryCatch(cpp_nn_plan(es), error = function(e) {
    sb_abort(c("The network does not fit its input (one example: {paste(input, collapse = ' x ')}).",
               x = "{conditionMessage(e)}",
               i = "{.code print(model, input = , output = )} shows the layer table; layers are numbered from the first, the output layer last."),
             arg = "model", call = call)
  })
}

# The full layer list for given input shape and number of outputs: the specification's body, then the
# output layer (a dense layer with one unit per output, penalized), as a data frame with the engine's codes,
# output shapes and parameter counts (computed by the engine: cpp_nn_plan()).
nn_resolve <- function(spec, input, output, call = rlang::caller_env()) {
  input <- as.integer(input)
  layers <- c(nn_body(spec), list(layer_dense(output)))
  plan <- nn_plan(layers, input, call = call)
  # flatten layers marked if_needed are left out on flat input; batchnorm becomes 1d / 2d
  in_rank <- c(length(input), lengths(plan$shape))[seq_along(layers)]
  keep <- !(vapply(layers, function(l) isTRUE(l$if_needed), TRUE) & in_rank == 1L)
  cols <- nn_layer_columns(layers[keep])  # (a no-op flatten changes no shape: the plan of the rest is the same)
  tab <- data.frame(kind = plan$name[keep], out = cols$out, kernel = cols$kernel, stride = cols$stride,
                    padding = cols$padding, penalized = cols$penalized,
                    shape = vapply(plan$shape[keep], paste, "", collapse = " x "), params = plan$params[keep],
                    rate = cols$rate, stringsAsFactors = FALSE)
  if (!is.null(cols$target)) tab$target <- cols$target
  tab$code <- plan$kind[keep]
  tab$needs_two <- plan$needs_two[keep]  # batch norm that sees one value per channel (the engine's rule)
  tab
}

# The list the engine reads (src/nn_glue.h: nn_spec_from()).
nn_engine_spec <- function(tab, input, family) {
  layers <- list(kind = tab$code, out = tab$out, kernel = tab$kernel, stride = tab$stride,
                 padding = tab$padding, penalized = tab$penalized,
                 rate = if (is.null(tab$rate)) numeric(nrow(tab)) else as.double(tab$rate))
  if (!is.null(tab$target)) layers$target <- lapply(tab$target, as.integer)  # only with reshape layers
  list(input = as.integer(input), family = family,
       layers = layers)
}

#' @rdname nn_mlp
#' @export
print.sb_nn_spec <- function(x, input = NULL, output = NULL, ...) {
  tab <- NULL
  if (!is.null(input)) input <- check_sizes(input, "input", allow_empty = FALSE)  # also without output
  if (!is.null(output)) output <- check_count(output, arg = "output", max = 1e6)
  if (!is.null(input) && !is.null(output)) {  # (a network that does not fit its input stops before printing)
    input <- check_sizes(input, "input", allow_empty = FALSE)
    tab <- nn_resolve(x, input, check_count(output, arg = "output"))
  }
  if (identical(x$type, "mlp")) {
    cat(sprintf("<sb_nn_spec> MLP, hidden layers %s, %s activation%s%s\n",
                if (length(x$hidden)) paste(x$hidden, collapse = "-") else "none", x$activation,
                if (x$batchnorm) ", batch norm" else "",
                if ((x$dropout %||% 0) > 0) sprintf(", dropout %g after each hidden layer", x$dropout) else ""))
  } else if (identical(x$type, "cnn")) {
    cat(sprintf("<sb_nn_spec> CNN, %d conv layer%s (%s maps, %d x %d kernels, padding %d, %d x %d max pool), hidden %s, %s%s%s\n",
                length(x$channels), if (length(x$channels) > 1) "s" else "", paste(x$channels, collapse = "/"),
                x$kernel, x$kernel, x$padding, x$pool, x$pool,
                if (length(x$hidden)) paste(x$hidden, collapse = "-") else "none", x$activation,
                if (x$batchnorm) ", batch norm after FC1" else "",
                if ((x$dropout %||% 0) > 0) sprintf(", dropout %g before FC1", x$dropout) else ""))
  } else {
    body <- nn_body(x)
    cat(sprintf("<sb_nn_spec> sequential network, %d layer%s: %s; then the output layer\n", length(body),
                if (length(body) == 1L) "" else "s",
                if (length(body)) paste(vapply(body, format, ""), collapse = ", ") else "none"))
  }
  if (is.null(tab)) {
    cat("Input and output sizes come from the data; print(spec, input = , output = ) shows the layer table.\n")
    return(invisible(x))
  }
  layer <- ifelse(tab$kind == "dropout", sprintf("dropout(%g)", tab$rate), tab$kind)
  show <- data.frame(layer = layer, output_shape = tab$shape, parameters = format(tab$params, big.mark = ","),
                     penalized = ifelse(tab$penalized & tab$params > 0, "weights", ""))
  print(show, row.names = FALSE, right = FALSE)
  cat(sprintf("Total parameters: %s (input %s)\n", format(sum(tab$params), big.mark = ","),
              paste(input, collapse = " x ")))
  invisible(x)
}
