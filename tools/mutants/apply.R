# Apply one mutant of tools/mutants/mutants.tsv to a copy of the sources (used by tools/mutation-check.sh).
#   Rscript tools/mutants/apply.R <mutants.tsv> <name> <tree>      apply it in <tree>
#   Rscript tools/mutants/apply.R <mutants.tsv> --check <tree>     check that every mutant applies (no change)
# A mutant is an exact find / replace in one file; its find string must occur exactly once there, else the
# mutant "does not apply" (exit status 3; the script reports an error row, never skips it silently).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3L) stop("usage: apply.R <mutants.tsv> <name|--check> <tree>")
tab <- utils::read.delim(args[1], quote = "", comment.char = "", colClasses = "character", na.strings = character())
need <- c("name", "file", "find", "replace", "build", "tests", "description")
if (!all(need %in% names(tab))) stop("mutants table needs the columns ", paste(need, collapse = ", "))
if (anyDuplicated(tab$name)) stop("duplicated mutant names: ", paste(tab$name[duplicated(tab$name)], collapse = ", "))
bad_build <- !tab$build %in% c("notorch", "torch")
if (any(bad_build)) stop("build must be notorch or torch: ", paste(tab$name[bad_build], collapse = ", "))

count_in <- function(text, s) {
  m <- gregexpr(s, text, fixed = TRUE)[[1]]
  if (m[1] == -1L) 0L else length(m)
}
read_text <- function(path) {
  if (!file.exists(path)) return(NULL)
  paste(readLines(path, warn = FALSE), collapse = "\n")
}

check_one <- function(row, tree) {
  path <- file.path(tree, row$file)
  text <- read_text(path)
  if (is.null(text)) return(sprintf("file %s not found", row$file))
  if (identical(row$find, row$replace)) return("find and replace are identical")
  k <- count_in(text, row$find)
  if (k != 1L) return(sprintf("find string occurs %d times in %s (must be exactly once)", k, row$file))
  tests <- strsplit(row$tests, ",", fixed = TRUE)[[1]]
  miss <- tests[!file.exists(file.path(tree, "tests", "testthat", trimws(tests)))]
  if (length(miss)) return(sprintf("test file(s) not found: %s", paste(miss, collapse = ", ")))
  ""
}

tree <- args[3]
if (identical(args[2], "--check")) {
  msg <- vapply(seq_len(nrow(tab)), function(i) check_one(tab[i, ], tree), "")
  for (i in seq_len(nrow(tab))) cat(sprintf("%-28s %s\n", tab$name[i], if (nzchar(msg[i])) paste("DOES NOT APPLY:", msg[i]) else "ok"))
  quit(status = if (any(nzchar(msg))) 3L else 0L)
}
row <- tab[tab$name == args[2], , drop = FALSE]
if (nrow(row) != 1L) { cat("no mutant named", args[2], "\n"); quit(status = 2L) }
msg <- check_one(row, tree)
if (nzchar(msg)) { cat("DOES NOT APPLY:", msg, "\n"); quit(status = 3L) }
path <- file.path(tree, row$file)
lines <- readLines(path, warn = FALSE)
text <- paste(lines, collapse = "\n")
pos <- regexpr(row$find, text, fixed = TRUE)
text <- paste0(substr(text, 1L, pos - 1L), row$replace, substr(text, pos + nchar(row$find), nchar(text)))
writeLines(text, path)
cat(sprintf("applied %s to %s\n", row$name, row$file))
