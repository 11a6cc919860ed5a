# nn_sequential() and its layer constructors. A layer is a small list (class sb_nn_layer) with the engine's
# fields (inst/include/scalebayes/nn/spec.hpp: LayerSpec); shapes and parameter counts are the engine's
# (nn/layers_spec.hpp, through cpp_nn_plan()), never recomputed here.

# One layer with the engine's defaults for the fields it does not use.
nn_layer <- function(kind, out = 0L, kernel = 0L, stride = 1L, padding = 0L, penalized = FALSE, rate = 0,
                     target = NULL, if_needed = NULL) {
  l <- list(kind = kind, out = as.integer(out), kernel = as.integer(kernel), stride = as.integer(stride),
            padding = as.integer(padding), penalized = penalized, rate = as.double(rate))
  if (!is.null(target)) l$target <- as.integer(target)
  if (!is.null(if_needed)) l$if_needed <- if_needed
  structure(l, class = "sb_nn_layer")
}

#' A network as a stack of layers
#'
#' `nn_sequential()` describes a network as its layers, applied in order, like `nn.Sequential` in PyTorch
#' or a Keras sequential model. The output layer is not part of it: when the network is fitted
#' ([wbb_nn()], [wbb()] or [sgld_sa()] with `model =`), a dense layer with one unit per output (one for
#' `"gaussian"` and `"binomial"` with a vector `y`, `q` for a matrix `y` with `q` columns, one per class for
#' `"multinomial"`) is appended, exactly as for [nn_mlp()] and [nn_cnn()] (which are shortcuts for
#' `nn_sequential()`). The body must therefore end in a flat shape (use `layer_flatten()` after
#' convolutions). The input shape comes from the data: `p` features for a matrix `x`, `c(channels, height,
#' width)` for an image array.
#'
#' Shapes and parameter counts are computed by the engine (`print(model, input = , output = )`), which
#' also stops with a classed error naming the layer when a layer does not fit its input (a convolution or
#' pooling window larger than its input, a dense layer on image input, a reshape that changes the number of
#' values).
#'
#' Layers:
#' * `layer_dense(units)`: fully connected; `penalized = FALSE` exempts its weight matrix from the penalty /
#'   prior (biases are never penalized). For [sgld_sa()], `sparse_layers` decides which weight layers get the
#'   spike-and-slab prior instead.
#' * `layer_conv2d(filters, kernel, stride, padding)`: square kernels; `padding = "same"` pads
#'   `(kernel - 1) %/% 2` zeros (odd kernels keep the size at stride 1), `"valid"` none, or a number.
#' * `layer_conv1d(filters, kernel, stride, padding)`: a convolution over sequences, input
#'   `c(channels, length)`. Data are a matrix with one sequence per row: start the network with
#'   `layer_reshape(c(1, p))` (one channel), or `layer_reshape(c(channels, length))` for rows that hold the
#'   channels one after another (the first `length` values are channel 1). Its weights are treated as a dense
#'   or 2d-convolution layer's everywhere: penalized under [wbb_nn()], a sparse layer of [sgld_sa()], variational
#'   under [bbb()] and [sparse_vi()]; `standardize = TRUE` scales its inputs by one mean and sd, as for images.
#' * `layer_maxpool2d(kernel, stride = kernel)`, `layer_avgpool2d(kernel, stride = kernel)`: maximum / mean
#'   over square windows, no padding.
#' * `layer_batchnorm()`: batch normalization, over channels on image input (2d) and over features on flat
#'   input or channels of sequences (1d), chosen from the layer's input shape; its scale and shift are never
#'   penalized.
#' * `layer_flatten()`: image to vector. `layer_reshape(shape)`: to `shape` per example (the number of values
#'   must stay the same), e.g. from a dense layer back to `c(channels, height, width)`.
#' * `layer_relu()`, `layer_tanh()`, `layer_sigmoid()`: activations. `layer_dropout(rate)`: dropout in
#'   training (see [nn_mlp()]), the identity in prediction.
#'
#' @param ... Layers made by the `layer_*()` functions (or lists of them).
#' @param units Number of units of a dense layer.
#' @param penalized Whether the weight matrix (or kernel) is penalized.
#' @param filters Number of feature maps of a convolution.
#' @param kernel Window size (square for the 2d layers; a length for `layer_conv1d()`).
#' @param stride Step between windows.
#' @param padding `"same"`, `"valid"` or a whole number of zeros on each side.
#' @param shape For `layer_reshape()`: the shape of one example after the layer.
#' @param rate Dropout rate in `[0, 1)`.
#' @param x A layer.
#' @return `nn_sequential()`: a network specification, class `c("sb_nn_sequential", "sb_nn_spec")`, accepted
#'   wherever [nn_mlp()] is; the `layer_*()` functions: a layer, class `sb_nn_layer`.
#' @seealso [nn_mlp()], [nn_cnn()] (shortcuts), [wbb_nn()].
#' @export
#' @examples
#' net <- nn_sequential(layer_conv2d(8, 3), layer_relu(), layer_avgpool2d(2), layer_flatten(),
#'                      layer_dense(100), layer_reshape(c(1, 10, 10)), layer_conv2d(4, 3),
#'                      layer_relu(), layer_flatten(), layer_dense(32), layer_relu())
#' print(net, input = c(1, 28, 28), output = 10)
nn_sequential <- function(...) {
  layers <- list(...)
  layers <- unlist(lapply(layers, function(l) if (inherits(l, "sb_nn_layer")) list(l) else l), recursive = FALSE)
  bad <- which(!vapply(layers, inherits, TRUE, "sb_nn_layer"))
  if (length(bad)) {
    sb_abort(c("Every argument of {.fn nn_sequential} must be a layer made by a {.code layer_*()} function.",
               x = "Argument{?s} {bad} {?is/are} not."), arg = "...")
  }
  structure(list(type = "sequential", layers = unname(layers)), class = c("sb_nn_sequential", "sb_nn_spec"))
}

#' @rdname nn_sequential
#' @export
layer_dense <- function(units, penalized = TRUE) {
  nn_layer("linear", out = check_count(units, arg = "units", max = 1e6), penalized = check_flag(penalized))
}

#' @rdname nn_sequential
#' @export
layer_conv2d <- function(filters, kernel, stride = 1, padding = "same") {
  kernel <- check_count(kernel, arg = "kernel", max = 64L)
  nn_layer("conv2d", out = check_count(filters, arg = "filters", max = 1e6), kernel = kernel,
           stride = check_count(stride, arg = "stride", max = 64L), padding = nn_padding(padding, kernel),
           penalized = TRUE)
}

#' @rdname nn_sequential
#' @export
layer_conv1d <- function(filters, kernel, stride = 1, padding = "same") {
  kernel <- check_count(kernel, arg = "kernel", max = 4096L)
  nn_layer("conv1d", out = check_count(filters, arg = "filters", max = 1e6), kernel = kernel,
           stride = check_count(stride, arg = "stride", max = 4096L), padding = nn_padding(padding, kernel, max = 4096L),
           penalized = TRUE)
}

nn_padding <- function(padding, kernel, max = 64L, call = rlang::caller_env()) {
  if (is.numeric(padding)) return(check_count(padding, arg = "padding", min = 0L, max = max, call = call))
  if (!is.character(padding) || length(padding) != 1L || !padding %in% c("same", "valid")) {
    sb_abort(c("{.arg padding} must be {.val same}, {.val valid} or a whole number.",
               x = "You supplied {.val {format(padding)}}."), arg = "padding", call = call)
  }
  if (padding == "same") (kernel - 1L) %/% 2L else 0L
}

#' @rdname nn_sequential
#' @export
layer_maxpool2d <- function(kernel, stride = kernel) {
  nn_layer("maxpool2d", kernel = check_count(kernel, arg = "kernel", max = 64L),
           stride = check_count(stride, arg = "stride", max = 64L))
}

#' @rdname nn_sequential
#' @export
layer_avgpool2d <- function(kernel, stride = kernel) {
  nn_layer("avgpool2d", kernel = check_count(kernel, arg = "kernel", max = 64L),
           stride = check_count(stride, arg = "stride", max = 64L))
}

#' @rdname nn_sequential
#' @export
layer_batchnorm <- function() nn_layer("batchnorm")

#' @rdname nn_sequential
#' @export
layer_flatten <- function() nn_layer("flatten")

#' @rdname nn_sequential
#' @export
layer_reshape <- function(shape) {
  shape <- check_sizes(shape, "shape", allow_empty = FALSE)
  nn_layer("reshape", target = shape)
}

#' @rdname nn_sequential
#' @export
layer_relu <- function() nn_layer("relu")

#' @rdname nn_sequential
#' @export
layer_tanh <- function() nn_layer("tanh")

#' @rdname nn_sequential
#' @export
layer_sigmoid <- function() nn_layer("sigmoid")

#' @rdname nn_sequential
#' @export
layer_dropout <- function(rate) {
  nn_layer("dropout", rate = check_number(rate, lower = 0, upper = 1, upper_open = TRUE,
                                          what = "a dropout rate in [0, 1)"))
}

#' @rdname nn_sequential
#' @export
format.sb_nn_layer <- function(x, ...) {
  switch(x$kind,
         linear = sprintf("dense(%d%s)", x$out, if (isTRUE(x$penalized)) "" else ", unpenalized"),
         conv2d = sprintf("conv2d(%d, %dx%d%s, padding %d)", x$out, x$kernel, x$kernel,
                          if (x$stride != 1L) sprintf(", stride %d", x$stride) else "", x$padding),
         conv1d = sprintf("conv1d(%d, %d%s, padding %d)", x$out, x$kernel,
                          if (x$stride != 1L) sprintf(", stride %d", x$stride) else "", x$padding),
         maxpool2d = , avgpool2d = sprintf("%s(%d%s)", x$kind, x$kernel,
                                           if (x$stride != x$kernel) sprintf(", stride %d", x$stride) else ""),
         reshape = sprintf("reshape(%s)", paste(x$target, collapse = " x ")),
         dropout = sprintf("dropout(%g)", x$rate),
         x$kind)
}

#' @rdname nn_sequential
#' @export
print.sb_nn_layer <- function(x, ...) {
  cat("<sb_nn_layer>", format(x), "\n")
  invisible(x)
}
