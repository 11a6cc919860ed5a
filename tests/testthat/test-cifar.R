# The CIFAR-10 binary reader, on files the test writes.

write_cifar <- function(path, labels, pixels) {
  # pixels: list of 3 x 32 x 32 integer arrays [channel, row, column]
  con <- file(path, "wb")
  on.exit(close(con))
  for (i in seq_along(labels)) {
    writeBin(as.raw(labels[i]), con)
    writeBin(as.raw(aperm(pixels[[i]], c(3, 2, 1))), con)  # column fastest, then row, then channel
  }
}

test_that("records are decoded as label byte + red, green, blue planes, rows first", {
  set.seed(1)
  imgs <- lapply(1:3, function(i) array(sample(0:255, 3 * 32 * 32, replace = TRUE), c(3, 32, 32)))
  f <- tempfile(fileext = ".bin")
  write_cifar(f, c(0, 9, 3), imgs)
  d <- read_cifar10(f, scale = FALSE)
  expect_equal(dim(d$x), c(3L, 3L, 32L, 32L))
  for (i in 1:3) expect_equal(d$x[i, , , ], imgs[[i]])
  expect_equal(as.character(d$y), c("airplane", "truck", "cat"))
  expect_equal(levels(d$y), scalebayes:::cifar10_classes)
  expect_equal(read_cifar10(f)$x, d$x / 255)
  # a hand-checked pixel: image 2, green channel, row 5, column 7
  expect_equal(d$x[2, 2, 5, 7], imgs[[2]][2, 5, 7])
})

test_that("a directory gives the train / test splits; bad files are classed errors", {
  dir <- tempfile()
  dir.create(dir)
  img <- list(array(7L, c(3, 32, 32)))
  for (k in 1:5) write_cifar(file.path(dir, sprintf("data_batch_%d.bin", k)), k, img)
  expect_error(read_cifar10(dir), class = "scalebayes_error_data")  # no test_batch.bin
  tr <- read_cifar10(dir, split = "train")
  expect_equal(dim(tr$x)[1], 5L)
  expect_equal(as.integer(tr$y) - 1L, 1:5)
  write_cifar(file.path(dir, "test_batch.bin"), 2, img)
  both <- read_cifar10(dir)
  expect_named(both, c("train", "test"))
  expect_equal(dim(both$test$x), c(1L, 3L, 32L, 32L))
  bad <- tempfile()
  writeBin(as.raw(1:10), bad)
  expect_error(read_cifar10(bad), class = "scalebayes_error_data")
  lab <- tempfile()
  write_cifar(lab, 12, img)
  expect_error(read_cifar10(lab), "label")
  expect_error(read_cifar10(tempfile()), class = "scalebayes_error_data")
  expect_error(read_cifar10(1), class = "scalebayes_error_input")
  expect_error(read_cifar10(dir, split = "dev"), class = "scalebayes_error_input")
})
