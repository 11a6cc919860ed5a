# Classed conditions. Every user-facing error carries class "scalebayes_error" plus a specific subclass
# "scalebayes_error_<kind>", names the argument and says what to do.

# `also`: further kinds the condition carries (e.g. a renamed class kept for one release); `class`: classes of
# other packages the condition also carries (e.g. rlang's "rlib_error_dots_nonempty" for unknown `...`).
sb_abort <- function(message, kind = "input", arg = NULL, call = rlang::caller_env(), ...,
                     .envir = parent.frame(), also = NULL, class = NULL) {
  cli::cli_abort(message,
    class = c(paste0("scalebayes_error_", c(also, kind)), class, "scalebayes_error"),
    call = call, arg = arg, ..., .envir = .envir
  )
}

sb_warn <- function(message, kind = "warning", ..., .envir = parent.frame(), also = NULL) {
  cli::cli_warn(message, class = c(paste0("scalebayes_warning_", c(also, kind)), "scalebayes_warning"), ...,
                .envir = .envir)
}

# Run a C++ entry point and turn its std::invalid_argument / std::runtime_error messages (which Rcpp
# surfaces as plain errors) into classed scalebayes errors.
sb_call_engine <- function(expr, call = rlang::caller_env()) {
  tryCatch(expr, error = function(e) {
    if (inherits(e, "scalebayes_error") || inherits(e, "interrupt")) stop(e)
    msg <- conditionMessage(e)  # passed as a value: engine text (LibTorch's has braces) is never cli markup
    # an argument error the engine decided ("[arg <name>] <what is wrong>\n<what to do>", e.g. nn::BatchRefused
    # for a batch forced on a network without a batched form): an input error naming the argument
    a <- regmatches(msg, regexec("^\\[arg ([A-Za-z_.]+)\\] ([^\n]*)(\n(.*))?$", msg))[[1L]]
    if (length(a)) {
      what <- a[3L]
      fix <- a[5L]
      sb_abort(c("{what}", i = if (nzchar(fix)) "{fix}"), arg = a[2L], call = call)
    }
    sb_abort(c("The C++ engine stopped with an error.", x = "{msg}"), kind = "engine", call = call)
  })
}
