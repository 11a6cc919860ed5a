library(testthat)
library(scalebayes)

test_check("scalebayes")
