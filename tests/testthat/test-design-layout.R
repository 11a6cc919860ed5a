# inst/design.md's "Layout as built" names every engine header, every glue file and every R file, so a reader
# finds each file's place there. Needs the source tree (skipped where only the installed package is present).
test_that("the design note names every source file", {
  root <- test_path("..", "..")
  design <- file.path(root, "inst", "design.md")
  skip_if_not(file.exists(design) && dir.exists(file.path(root, "R")) && dir.exists(file.path(root, "src")),
              "the source tree is not available")
  text <- paste(readLines(design, warn = FALSE), collapse = "\n")
  files <- c(list.files(file.path(root, "inst", "include", "scalebayes"), pattern = "[.]hpp$", recursive = TRUE),
             list.files(file.path(root, "R"), pattern = "[.]R$"),
             list.files(file.path(root, "src"), pattern = "[.](cpp|h)$"))
  files <- unique(basename(files))
  expect_gt(length(files), 50)
  missing <- files[!vapply(files, function(f) grepl(f, text, fixed = TRUE), logical(1))]
  expect_identical(missing, character(0))
})
