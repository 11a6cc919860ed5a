# inst/design.md's "Layout as built" names every engine header, every glue file and every R file, so a reader
# finds each file's place there. Needs the source tree (skipped where only the installed package is present).
test_that("the design note's layout names every source file", {
  root <- test_path("..", "..")
  design <- file.path(root, "inst", "design.md")
  skip_if_not(file.exists(design) && dir.exists(file.path(root, "R")) && dir.exists(file.path(root, "src")),
              "the source tree is not available")
  lines <- readLines(design, warn = FALSE)
  # the section: from its heading to the next heading
  start <- grep("^## Layout as built", lines)
  expect_length(start, 1L)
  heads <- grep("^#", lines)
  end <- min(c(heads[heads > start], length(lines) + 1L)) - 1L
  section <- lines[(start + 1L):end]
  # its bullets (a line starting "- " or "  - " opens one; the lines after it continue it)
  bullet <- cumsum(grepl("^ *- ", section))
  bullets <- vapply(split(section, bullet), paste, "", collapse = " ")
  text <- paste(bullets, collapse = " ")

  # Engine headers: named with their directory ("sgmcmc/lbfgs.hpp"), or inside the bullet of their top
  # directory by the rest of their path (`nn/`: "vi/fit.hpp"; `sgmcmc/`: "glm.hpp"), so that two headers of
  # one name (wbb/glm.hpp, sgmcmc/glm.hpp) are each named in their own place.
  hpp <- list.files(file.path(root, "inst", "include", "scalebayes"), pattern = "[.]hpp$", recursive = TRUE)
  expect_gt(length(hpp), 40)
  named <- vapply(hpp, function(f) {
    top <- sub("/.*", "", f)
    rest <- sub("^[^/]*/", "", f)
    any(grepl(f, bullets, fixed = TRUE)) ||
      any(startsWith(trimws(bullets), paste0("- `", top, "/`")) & grepl(rest, bullets, fixed = TRUE))
  }, logical(1))
  expect_identical(hpp[!named], character(0))

  # Glue and R files: by name, in the section
  other <- c(list.files(file.path(root, "src"), pattern = "[.](cpp|h|in)$"),
             list.files(file.path(root, "R"), pattern = "[.]R$"))
  expect_gt(length(other), 50)
  missing <- other[!vapply(other, function(f) grepl(f, text, fixed = TRUE), logical(1))]
  expect_identical(missing, character(0))
})
