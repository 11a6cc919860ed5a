# Export of a network fit to PyTorch: nn_export() writes one draw (or the posterior mean) as a state dict file
# (engine: cpp_nn_export() in src/torch_nn.cpp, LibTorch's pickler), nn_torch_code() the Python source of the
# matching torch.nn.Sequential. The key of a tensor is the 0-based position of its layer in the engine's layer
# list (the fit's `layers` table, output layer last) and the torch name: "0.weight", "3.running_mean".

#' Export a network fit to PyTorch
#'
#' `nn_export()` writes the parameters of one network of a network fit as a PyTorch *state dict* file: one kept
#' draw of a sampling fit ([wbb_nn()], [sgld_sa()] / [hamcmc_sa()] with a `model`), by default the first, or the
#' mean network of q of a variational fit ([bbb()], [sparse_vi()]). `nn_torch_code()` returns the Python source of
#' the matching `torch.nn.Sequential`, so that in Python
#' ```
#' exec(open("net.py").read())          # defines `model` and `response()`
#' model.load_state_dict(torch.load("draw.pt"))   # strict: every key matches
#' model.eval()
#' prob = response(model(x))
#' ```
#' gives the fit's predictions for that draw (`predict(fit, x, draws = TRUE)[draw, , ]`) up to
#' single-precision rounding.
#'
#' **Which network.** A network is one point of the posterior: the exported file predicts as one draw does, not
#' as `predict(fit)` (the posterior predictive mean, an average of the draws' predictions) does. The draws of
#' [wbb_nn()] are independently trained networks and the chains of [sgld_sa()] settle in different modes; the
#' hidden units of two such networks are not matched (any permutation of them is the same function), so the
#' average of their weights is not a network that predicts their average, nor anything the posterior supports
#' (10 [wbb_nn()] draws of `nn_mlp(16)`, 20 epochs, on Boston rows 1-400: the averaged network predicts 23.8,
#' 24.2, 24.2 for rows 401-403 where `predict(fit)` gives 12.7, 16.2, 17.1; the default `sgld_sa()` chains of the
#' same network 20.4, 20.4, 20.9 against 7.7, 12.1, 13.1; `bench/nn_export_mean.R`). For those fits `draw = "mean"` is therefore
#' a classed warning (`scalebayes_warning_export_mean`), and the default is the first kept draw; export several
#' draws (one file each) to average their predictions in Python. For [bbb()] and [sparse_vi()] fits the mean of
#' q (`fit$weights_mean`, \eqn{\phi\mu}) is one network, the variational posterior's centre, and the default.
#'
#' **The network.** One `torch.nn` module per row of the fit's layer table (`fit$layers`, the table that
#' `print(model, input = , output = )` shows), in order, the output layer (a linear layer with one unit per
#' output, appended from the family) last: `nn.Linear`, `nn.Conv2d` (square kernel, stride, zero padding),
#' `nn.MaxPool2d` / `nn.AvgPool2d` (kernel, stride, no padding), `nn.BatchNorm1d` / `nn.BatchNorm2d` (PyTorch's
#' defaults `eps = 1e-5`, `momentum = 0.1`, as the engine's LibTorch modules), `nn.Flatten()`, `nn.ReLU()`,
#' `nn.Tanh()`, `nn.Sigmoid()`, `nn.Dropout(p)`; a reshape layer becomes `nn.Unflatten(1, shape)` after flat
#' input, `nn.Flatten()` to a flat shape, and otherwise `nn.Sequential(nn.Flatten(), nn.Unflatten(1, shape))`
#' (one position, no parameters). The module returns the network's raw outputs (`[n, outputs]`, logits for
#' classification); `response()` maps them to the response scale as [predict()] does: the identity for
#' `"gaussian"`, `torch.sigmoid` for `"binomial"` (P(y = 1)), `torch.softmax(out, 1)` for `"multinomial"`
#' (class probabilities in the order of the fit's `levels`). Inputs are `[n, features]` for a matrix `x` and
#' `[n, channels, height, width]` for an image array, with `x[i, c, h, w]` in Python equal to `x[i, c, h, w]`
#' in R (an `n x height x width` array has one channel: `x[i, 0, h, w]`). Call `model.eval()` before
#' predicting (dropout off, batch normalization on its running statistics), as [predict()] does.
#'
#' **The state dict.** A dictionary from names to tensors, as `model.state_dict()` of the module above:
#' `"<i>.weight"` and `"<i>.bias"` for the linear, convolution and batch-normalization layer at position `i`
#' (0-based: the row `i + 1` of `fit$layers`; positions count every layer, activations, pooling, flatten and
#' dropout included, so a first linear layer after a flatten is `"1.weight"`), with PyTorch's shapes
#' (`[out, in]` for a linear weight, `[out, in, k, k]` for a kernel); a batch-normalization layer adds
#' `"<i>.running_mean"`, `"<i>.running_var"` and `"<i>.num_batches_tracked"` (int64, 0 when the fit does not
#' store it). The engine's parameter names (`colnames(as.matrix(fit))`, e.g. `"layer2_linear.weight[5]"`) are
#' the same tensors, `"layer<i + 1>_<kind>.<name>"`, flattened row-major. Tensors are float32, or float64
#' for fits trained in double precision (`float64 = TRUE` in [nn_control()] / [sgmcmc_control()]). The file is
#' the zip container of Python's `torch.save()` holding a plain dict of tensors, written by LibTorch's pickler
#' (as `torch::pickle_save()`, without its type tag), so `torch.load(path)` reads it (PyTorch 1.6 or later),
#' also with `weights_only = True` (the default from PyTorch 2.6).
#'
#' **Standardized fits.** A fit trained on standardized data (`standardize = TRUE`, the default of the network
#' front ends) has parameters on that scale. The export folds the transforms into the network, so that the
#' exported module takes raw inputs and returns outputs on the user's scale, as [predict()] does: the first
#' linear or convolution layer absorbs the input standardization (\eqn{W' = W / s}, \eqn{b' = b - W' m}, per
#' input column, or with one mean m and sd s for images) and the output layer the response's (\eqn{W' = s_y W},
#' \eqn{b' = m_y + s_y b}, gaussian only). The tensors of those two layers are then not the columns of
#' `as.matrix(fit)`, every other tensor is. Folding needs the first layer with parameters to be a linear or a
#' convolution layer with only flatten, reshape, dropout (and for images pooling) before it (otherwise an
#' error of class `scalebayes_error_export`). A convolution with zero padding of standardized images pads the
#' raw images with their mean: `nn_torch_code()` writes that first layer as `MeanPadConv2d`, an `nn.Conv2d`
#' (the same state-dict keys) that pads with the training mean (`MeanPadConv1d` for a [layer_conv1d()]).
#'
#' **Variational autoencoders.** For a [vae()] fit, `nn_export()` writes the encoder and the decoder, one state dict
#' each (`path`: two files, encoder first; or `network = "encoder"` or `"decoder"` with one file), and
#' `nn_torch_code()` returns the two modules, `encoder` and `decoder`, with `encode(x)` (the means and sds of
#' \eqn{q(z \mid x)}, as [vae_encode()]) and `decode(z)` (the probabilities, as [vae_decode()]). The encoder
#' returns \eqn{2 \times} `latent` columns: the means, then the log-variances. A VAE's weights are a point
#' estimate: `draw` must be `"mean"` (the fitted weights).
#'
#' @param fit A network fit (class `sb_nn_fit`: [wbb_nn()], or [sgld_sa()] with a `model`; or a [vae()] fit) that kept its
#'   draws (`keep_draws = TRUE`, the default; the posterior mean of an [sgld_sa()] fit needs none). A network with batch
#'   normalization also needs its running statistics (`fit$buffers`).
#' @param path File to write (overwritten; its folder must exist). By convention `.pt`.
#' @param draw A whole number, the index of a kept draw (a row of `as.matrix(fit)`, the draws of
#'   `predict(fit, newx, draws = TRUE)`), or `"mean"`: the mean of q for [bbb()] / [sparse_vi()] fits, and for
#'   sampling fits the average of the kept draws' parameters (and batch-norm running statistics), with a classed
#'   warning (see "Which network"). `NULL` (default): `"mean"` for [bbb()], [sparse_vi()] and [vae()] fits, draw 1
#'   otherwise.
#' @param network For a [vae()] fit: the networks to write, `"encoder"`, `"decoder"` or both (`NULL`, the default:
#'   `c("encoder", "decoder")`), one file of `path` each. Other fits have one network (`NULL`).
#' @return `nn_export()`: `path`, invisibly (for a VAE named by the networks). `nn_torch_code()`: the Python source, a character string of class
#'   `sb_nn_torch_code` (printed as code; `writeLines()` writes it to a file).
#' @seealso [wbb_nn()], [sgld_sa()], [nn_sequential()].
#' @export
#' @examples
#' # the Python module of a specification
#' nn_torch_code(nn_cnn(channels = 8, hidden = 32), input = c(1, 28, 28), output = 10)
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(200), 100, 2)
#'   y <- factor(ifelse(x[, 1] > 0, "a", "b"))
#'   fit <- wbb_nn(x, y, model = nn_mlp(4), draws = 3, epochs = 2, seed = 1, quiet = TRUE)
#'   nn_export(fit, file.path(tempdir(), "draw1.pt"))             # the first kept draw
#'   nn_export(fit, file.path(tempdir(), "draw3.pt"), draw = 3)   # the third
#'   nn_torch_code(fit)                                           # the matching torch.nn module
#' }
nn_export <- function(fit, path, draw = NULL, network = NULL) {
  call <- rlang::current_env()
  if (inherits(fit, "sb_vae")) return(vae_export(fit, path, draw %||% "mean", network, call))
  if (!is.null(network)) {
    sb_abort(c("{.arg network} applies to a {.fn vae} fit (its {.val encoder} or {.val decoder}).",
               i = "A network fit has one network: leave {.arg network} out."), arg = "network", call = call)
  }
  nn_check_fit(fit, call)
  check_backend("cpu", call)
  path <- nn_check_out_path(path, call)
  draw <- nn_check_draw(draw %||% if (inherits(fit, "sb_vi_nn")) "mean" else 1L, fit, call)
  if (identical(draw, "mean")) nn_warn_mean_network(fit)
  params <- nn_fit_params(fit, draw, call)
  # a standardized fit: the transforms folded into the first and the output layer (raw inputs, raw outputs)
  g <- .subset2(fit, "param_groups")
  params <- drop(nn_fold_params(params, fit$layers, g$group, g$size, fit$settings$input, fit$scaling, call = call))
  bn <- fit$layers$kind %in% c("batchnorm1d", "batchnorm2d")
  buffers <- if (any(bn)) nn_fit_buffers(fit, draw, call) else list()
  float64 <- isTRUE(fit$settings$float64) || isTRUE(fit$settings$control$float64)
  sb_call_engine(cpp_nn_export(fit$spec, params, buffers, float64, path), call = call)
  invisible(path)
}

#' @rdname nn_export
#' @param x A network fit (a [vae()] fit included), or a specification ([nn_sequential()], [nn_mlp()], [nn_cnn()]).
#' @param input For a specification: the shape of one example (`p` features, or `c(channels, height, width)`).
#'   Taken from the fit for a fit.
#' @param output For a specification: the number of outputs (units of the output layer). Taken from the fit.
#' @param family For a specification: the family that `response()` follows (`"multinomial"`, `"binomial"` or
#'   `"gaussian"`). Taken from the fit.
#' @param ... Unused.
#' @export
nn_torch_code <- function(x, input = NULL, output = NULL, family = c("multinomial", "binomial", "gaussian")) {
  call <- rlang::current_env()
  if (inherits(x, "sb_vae")) return(vae_torch_code(x, call))
  if (inherits(x, "sb_nn_fit")) {
    tab <- x$layers
    input <- as.integer(x$settings$input)
    family <- x$family
    float64 <- isTRUE(x$settings$float64) || isTRUE(x$settings$control$float64)
    what <- sprintf("%s fit (%s parameters)", nn_fit_function(x), format(x$n_parameters, big.mark = ","))
  } else if (inherits(x, "sb_nn_spec")) {
    if (is.null(input) || is.null(output)) {
      sb_abort(c("For a network specification, {.arg input} and {.arg output} are needed.",
                 i = "E.g. {.code nn_torch_code(nn_mlp(), input = 784, output = 10)}; a fit knows both."),
               arg = if (is.null(input)) "input" else "output", call = call)
    }
    input <- check_sizes(input, "input", allow_empty = FALSE, call = call)
    output <- check_count(output, arg = "output", call = call)
    family <- sb_match_arg(family)
    tab <- nn_resolve(x, input, output, call = call)
    float64 <- FALSE
    what <- "specification"
  } else {
    sb_abort(c("{.arg x} must be a network fit ({.fn wbb_nn}, {.fn sgld_sa} with a {.arg model}, {.fn vae}) or a specification ({.fn nn_sequential}, {.fn nn_mlp}, {.fn nn_cnn}).",
               x = "You supplied {.obj_type_friendly {x}}."), arg = "x", call = call)
  }
  sc <- if (inherits(x, "sb_nn_fit")) x$scaling
  net <- nn_torch_modules(tab, input, sc, call)
  shapes <- net$shapes
  pad_first <- net$pad_first
  lines <- net$lines
  resp <- switch(family, gaussian = "    return out",
                 binomial = "    return torch.sigmoid(out)",
                 multinomial = "    return torch.softmax(out, dim=1)")
  code <- c(
    sprintf("# PyTorch module of a scalebayes network (%s); generated by scalebayes::nn_torch_code().", what),
    sprintf("# Input: [n, %s] (examples first, as in R). Output: the raw network outputs [n, %d];",
            paste(input, collapse = ", "), shapes[[length(shapes)]][1]),
    sprintf("# response() maps them to the response scale (%s), as predict() does.", family),
    "# Load a state dict written by scalebayes::nn_export(): model.load_state_dict(torch.load(path)); model.eval()",
    if (!is.null(sc)) c(
      "# The fit was trained on standardized data (standardize = TRUE); nn_export() folds the transforms into the first",
      "# linear or convolution layer and the output layer: the module takes raw inputs, and returns outputs on the original scale."),
    "import torch",
    "from torch import nn",
    "",
    if (pad_first > 0L) nn_mean_pad_class(tab$kind[pad_first]),
    "model = nn.Sequential(",
    lines,
    ")",
    if (float64) "model = model.double()  # the fit was trained in double precision",
    "",
    "",
    "def response(out):",
    resp,
    "")
  structure(paste(code, collapse = "\n"), class = "sb_nn_torch_code")
}

# The front end that made a network fit, as nn_torch_code() names it.
nn_fit_function <- function(fit) {
  if (inherits(fit, "sb_wbb_nn")) return("wbb_nn()")
  if (inherits(fit, "sb_vi_nn")) return(if (identical(fit$method, "Sparse VI")) "sparse_vi()" else "bbb()")
  if (inherits(fit, "sb_sgld_sa_nn")) {
    return(if (grepl("^hamcmc", fit$settings$sampler %||% "")) "hamcmc_sa()" else "sgld_sa()")
  }
  paste0(class(fit)[1], " fit")
}

# The Python class of a first convolution (conv1d or conv2d) that pads with the training mean: its nn.ConvNd with
# the same state-dict keys.
nn_mean_pad_class <- function(kind) {
  d <- if (kind == "conv1d") 1L else 2L
  c("",
    sprintf("class MeanPadConv%dd(nn.Conv%dd):", d, d),
    sprintf("    \"\"\"nn.Conv%dd that pads with pad_value instead of zeros: the network was trained on standardized %s, whose", d,
            if (d == 1L) "sequences" else "images"),
    sprintf("    zero padding is padding with the training mean of the raw %s.\"\"\"", if (d == 1L) "values" else "pixels"),
    "",
    "    def __init__(self, *args, pad_value=0.0, **kwargs):",
    "        super().__init__(*args, **kwargs)",
    "        self.pad_value = pad_value",
    "",
    "    def forward(self, x):",
    if (d == 1L) c("        (p,) = self.padding",
                   "        x = nn.functional.pad(x, (p, p), value=self.pad_value)")
    else c("        ph, pw = self.padding",
           "        x = nn.functional.pad(x, (pw, pw, ph, ph), value=self.pad_value)"),
    sprintf("        return nn.functional.conv%dd(x, self.weight, self.bias, self.stride)", d),
    "",
    "")
}

# The torch.nn modules of a layer table, one line per row ("    nn.Linear(4, 8),  # 0: layer1_linear, output 8"), with
# the output shapes and the position of a first convolution that pads with the training mean (0: none).
nn_torch_modules <- function(tab, input, sc, call) {
  pad_first <- 0L  # a standardized fit whose first convolution pads: pad raw inputs with the training mean
  if (nn_fold_pads(tab, sc)) pad_first <- nn_fold_first_layer(tab, sc)
  shapes <- lapply(strsplit(tab$shape, " x ", fixed = TRUE), as.integer)
  ins <- c(list(input), shapes)[seq_len(nrow(tab))]
  tup <- function(v) paste0("(", paste(v, collapse = ", "), if (length(v) == 1L) "," else "", ")")
  mods <- vapply(seq_len(nrow(tab)), function(i) {
    r <- tab[i, ]
    inp <- ins[[i]]
    switch(r$kind,
      linear = sprintf("nn.Linear(%d, %d)", inp[1], r$out),
      conv1d = ,
      conv2d = {
        d <- if (r$kind == "conv1d") 1L else 2L
        if (i == pad_first) {
          sprintf("MeanPadConv%dd(%d, %d, kernel_size=%d, stride=%d, padding=%d, pad_value=%s)", d, inp[1], r$out, r$kernel,
                  r$stride, r$padding, format(sc$x_center, digits = 17))
        } else {
          sprintf("nn.Conv%dd(%d, %d, kernel_size=%d, stride=%d, padding=%d)", d, inp[1], r$out, r$kernel, r$stride, r$padding)
        }
      },
      maxpool2d = sprintf("nn.MaxPool2d(kernel_size=%d, stride=%d)", r$kernel, r$stride),
      avgpool2d = sprintf("nn.AvgPool2d(kernel_size=%d, stride=%d)", r$kernel, r$stride),
      batchnorm1d = sprintf("nn.BatchNorm1d(%d)", inp[1]),
      batchnorm2d = sprintf("nn.BatchNorm2d(%d)", inp[1]),
      flatten = "nn.Flatten()",
      relu = "nn.ReLU()", tanh = "nn.Tanh()", sigmoid = "nn.Sigmoid()",
      dropout = sprintf("nn.Dropout(p=%s)", format(r$rate, digits = 15)),
      reshape = {
        target <- shapes[[i]]
        if (length(target) == 1L) "nn.Flatten()"
        else if (length(inp) == 1L) sprintf("nn.Unflatten(1, %s)", tup(target))
        else sprintf("nn.Sequential(nn.Flatten(), nn.Unflatten(1, %s))", tup(target))
      },
      sb_abort("Layer {i} has kind {.val {r$kind}}, which has no PyTorch counterpart here.", kind = "engine",
               arg = "x", call = call))
  }, "")
  engine_name <- sprintf("layer%d_%s", seq_len(nrow(tab)), tab$kind)
  note <- ifelse(seq_len(nrow(tab)) == nrow(tab), paste(engine_name, "(output layer)"), engine_name)
  lines <- sprintf("    %s,  # %d: %s, output %s", mods, seq_len(nrow(tab)) - 1L, note, tab$shape)
  list(lines = lines, shapes = shapes, pad_first = pad_first)
}

#' @rdname nn_export
#' @export
print.sb_nn_torch_code <- function(x, ...) {
  cat(unclass(x))
  invisible(x)
}

# The parameter vector of kept draw `draw` (an index into as.matrix(fit)) or of the posterior mean
# (draw = "mean"), in the engine's order (cpp_nn_describe(fit$spec): groups, row-major within a tensor). The
# one place that reads a fit's parameters for the export.
nn_fit_params <- function(fit, draw, call = rlang::caller_env()) {
  P <- fit$n_parameters
  if (identical(draw, "mean")) {
    m <- if (inherits(fit, "sb_vi_nn")) fit$weights_mean  # the mean of q, exactly (not the draws' average)
    if (length(m) == P) return(as.double(m))
    cf <- tryCatch(stats::coef(fit), scalebayes_error_state = function(e) NULL)  # no kept draws: below
    if (!is.null(cf) && length(cf) == P) return(as.double(cf))
    return(colMeans(nn_fit_weights(fit, call)))
  }
  as.double(nn_fit_weights(fit, call)[draw, ])
}

# The kept draws x parameters matrix of a fit (classed error when the fit did not keep its weights).
nn_fit_weights <- function(fit, call = rlang::caller_env()) {
  W <- tryCatch(as.matrix(fit), error = function(e) NULL)
  if (is.null(W) || ncol(W) != fit$n_parameters) {
    sb_abort(c("{.arg fit} did not keep the weights of its draws.",
               i = "Refit with {.code keep_draws = TRUE} (the default)."),
             arg = "fit", call = call)
  }
  W
}

# The batch-norm running statistics of draw `draw` (or their mean) as a list named by the engine's buffer names
# ("layer3_batchnorm1d.running_mean", ...), from fit$buffers (kept draws x buffer values, or one row per draw of
# the fit with the not-done draws among them; columns named like the groups: "<group>[j]", or "<group>" for a
# single value).
nn_fit_buffers <- function(fit, draw, call = rlang::caller_env()) {
  B <- fit$buffers
  if (is.null(B)) {
    sb_abort(c("This network has batch normalization, but {.arg fit} does not store its running statistics (running mean and variance).",
               i = "Without them the exported network would not predict as the fit does; refit with a version of scalebayes that keeps them ({.code fit$buffers})."),
             kind = "export", arg = "fit", call = call)
  }
  B <- as.matrix(B)
  if (nrow(B) == length(fit$status) && nrow(B) != nrow(nn_fit_weights(fit, call))) {
    B <- B[fit$status == "done", , drop = FALSE]
  }
  row <- if (identical(draw, "mean")) colMeans(B) else B[draw, ]
  group <- sub("\\[[0-9]+\\]$", "", colnames(B))
  out <- split(unname(as.double(row)), factor(group, levels = unique(group)))
  nbt <- grepl("\\.num_batches_tracked$", names(out))
  out[nbt] <- lapply(out[nbt], round)
  out
}

# draw = "mean" of a sampling fit (independently trained networks, chains in different modes): the average of
# their weights is not a network of the posterior (?nn_export, "Which network").
nn_warn_mean_network <- function(fit) {
  if (inherits(fit, "sb_vi_nn")) return(invisible(FALSE))
  what <- if (inherits(fit, "sb_wbb_nn")) "independently trained networks (the bootstrap draws)" else "draws of chains that settle in different modes"
  sb_warn(c("{.code draw = \"mean\"} averages the weights of {what}: the averaged network does not predict what {.code predict(fit)} does, and can be far from every draw.",
            i = "Export single draws ({.code draw = 1}, the default; one file per draw) and average their predictions."),
          kind = "export_mean", also = "export")
  invisible(TRUE)
}

nn_check_fit <- function(fit, call) {
  if (!inherits(fit, "sb_nn_fit")) {
    sb_abort(c("{.arg fit} must be a network fit ({.fn wbb_nn}, {.fn sgld_sa} with a {.arg model}, or {.fn vae}).",
               x = "You supplied {.obj_type_friendly {fit}}."), arg = "fit", call = call)
  }
}

nn_check_out_path <- function(path, call) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    sb_abort(c("{.arg path} must be one file name.", x = "You supplied {.obj_type_friendly {path}}."),
             arg = "path", call = call)
  }
  path <- path.expand(path)
  dir <- dirname(path)
  if (dir.exists(path)) {
    sb_abort(c("{.arg path} is a folder: {.path {path}}.", i = "Give a file name, e.g. {.path {file.path(path, 'net.pt')}}."),
             arg = "path", call = call)
  }
  if (!dir.exists(dir) || file.access(dir, 2L) != 0L || (file.exists(path) && file.access(path, 2L) != 0L) ||
      !nn_can_write(path)) {
    sb_abort(c("{.arg path} cannot be written: {.path {path}}.",
               i = if (!dir.exists(dir)) "Its folder {.path {dir}} does not exist: create it first." else "Choose a file in a folder you can write to."),
             arg = "path", call = call)
  }
  path
}

# Whether path can be opened for writing, tried (file.access() says yes to root everywhere, and a read-only file
# system or /proc refuses anyway): an existing file is opened for appending (nothing written), a new one created
# and removed.
nn_can_write <- function(path) {
  if (file.exists(path)) {
    con <- tryCatch(suppressWarnings(file(path, open = "ab")), error = function(e) NULL)
    if (is.null(con)) return(FALSE)
    close(con)
    return(TRUE)
  }
  ok <- suppressWarnings(file.create(path, showWarnings = FALSE))
  if (ok) unlink(path)
  isTRUE(ok)
}

nn_check_draw <- function(draw, fit, call) {
  if (identical(draw, "mean")) return(draw)
  if (!is.numeric(draw) || length(draw) != 1L || is.na(draw) || draw != round(draw)) {
    sb_abort(c("{.arg draw} must be {.val mean} or the index of a kept draw.",
               x = "You supplied {.obj_type_friendly {draw}}."), arg = "draw", call = call)
  }
  T <- nrow(nn_fit_weights(fit, call))
  if (draw < 1 || draw > T) {
    sb_abort(c("{.arg draw} must be between 1 and {T}, the number of kept draws of {.arg fit}.",
               x = "You supplied {draw}."), arg = "draw", call = call)
  }
  as.integer(draw)
}
