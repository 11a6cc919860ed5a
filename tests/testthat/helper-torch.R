# Network tests need LibTorch (a build with SCALEBAYES_TORCH=no has none).
skip_if_no_torch <- function() skip_if_not(sb_torch_available(), "scalebayes was built without LibTorch")
