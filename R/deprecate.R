# Deprecated argument names (one name per thing across the package; inst/design.md, "One name per thing").
#
# An old name keeps working for one release: the caller's value is used and a classed warning
# ("scalebayes_warning_deprecated") names the new argument. Giving both the old and the new name is an error.

# `old_value` / `new_value`: the values of the two arguments (`missing_new`: whether the new one was left at its
# default). Returns the value to use.
sb_renamed_arg <- function(old_value, new_value, old, new, missing_new, fn, call = rlang::caller_env(),
                           old_missing = FALSE) {
  if (old_missing) return(new_value)
  if (!missing_new) {
    sb_abort(c("Give {.arg {new}} only: {.arg {old}} is its deprecated name.",
               i = "Remove {.arg {old}} from the call to {.fn {fn}}."), arg = old, call = call)
  }
  sb_deprecated(old, new, fn)
  old_value
}

sb_deprecated <- function(old, new, fn, what = "argument") {
  sb_warn(c("{.fn {fn}}: the {what} {.arg {old}} is deprecated; use {.arg {new}}.",
            i = "{.arg {old}} will be removed in the next release."), kind = "deprecated")
}
