# Builds the UCI regression data of Table 5 of Deng, Zhang, Liang & Lin (2019), "An adaptive empirical Bayesian
# method for sparse deep learning", as package data: data/uci_yacht.rda, data/uci_energy.rda,
# data/uci_wine.rda, data/uci_concrete.rda (Boston is MASS::Boston, identical to the authors' file: checked
# below). Source files (data-raw/uci/, checksums in data-raw/uci/SHA256SUMS): the copies the authors keep in
# their public repository WayneDW/Bayesian-Sparse-Deep-Learning (folder data/uci/, commit 8ff837a of
# 2019-10-25), which are the UCI Machine Learning Repository files (CC BY 4.0):
#   yacht_hydrodynamics.data  https://archive.ics.uci.edu/dataset/243/yacht+hydrodynamics
#   ENB2012_data.xlsx         https://archive.ics.uci.edu/dataset/242/energy+efficiency
#   winequality-red.csv       https://archive.ics.uci.edu/dataset/186/wine+quality
#   Concrete_Data.xls         https://archive.ics.uci.edu/dataset/165/concrete+compressive+strength
# Reading the .xls / .xlsx files needs the CRAN package readxl (only here, not by the package).
# Run from the package root:  Rscript data-raw/uci.R
stopifnot(requireNamespace("readxl", quietly = TRUE))
dir <- "data-raw/uci"
sums <- utils::read.table(file.path(dir, "SHA256SUMS"), col.names = c("sha256", "file"))
for (i in seq_len(nrow(sums))) {
  got <- system2("sha256sum", file.path(dir, sums$file[i]), stdout = TRUE)
  stopifnot(identical(strsplit(got, " ")[[1]][1], sums$sha256[i]))
}
as_plain <- function(d, names) {
  d <- as.data.frame(lapply(as.data.frame(d), as.double))
  names(d) <- names
  stopifnot(!anyNA(d))
  d
}

# Yacht: 308 rows, whitespace-separated, no header (the authors' pandas reader takes the first row as a header,
# so their splits permute rows 2..308: see ?uci_splits).
uci_yacht <- as_plain(utils::read.table(file.path(dir, "yacht_hydrodynamics.data")),
                      c("lcb", "prismatic", "length_displacement", "beam_draught", "length_beam", "froude",
                        "resistance"))
stopifnot(dim(uci_yacht) == c(308, 7))

# Energy efficiency: 768 rows, eight features X1..X8 and the two responses Y1 (heating load) and Y2 (cooling
# load); the authors' Table 5 code predicts Y2.
e <- readxl::read_excel(file.path(dir, "ENB2012_data.xlsx"))
stopifnot(identical(names(e), c(paste0("X", 1:8), "Y1", "Y2")))
uci_energy <- as_plain(e, c("relative_compactness", "surface_area", "wall_area", "roof_area", "overall_height",
                            "orientation", "glazing_area", "glazing_distribution", "heating_load", "cooling_load"))
stopifnot(dim(uci_energy) == c(768, 10))

# Wine quality, red: 1599 rows, 11 physicochemical features and the quality score.
w <- utils::read.csv(file.path(dir, "winequality-red.csv"), sep = ";")
uci_wine <- as_plain(w, c(gsub(".", "_", names(w)[1:11], fixed = TRUE), "quality"))
names(uci_wine) <- sub("^pH$", "ph", names(uci_wine))
stopifnot(dim(uci_wine) == c(1599, 12))

# Concrete compressive strength: 1030 rows, 8 mixture features, strength in MPa (full precision of the .xls;
# modeldata::concrete rounds to two decimals, up to 0.05 apart).
cc <- readxl::read_excel(file.path(dir, "Concrete_Data.xls"))
uci_concrete <- as_plain(cc, c("cement", "blast_furnace_slag", "fly_ash", "water", "superplasticizer",
                               "coarse_aggregate", "fine_aggregate", "age", "compressive_strength"))
stopifnot(dim(uci_concrete) == c(1030, 9))

# Boston: the authors' file is MASS::Boston.
b <- as.matrix(utils::read.table(file.path(dir, "boston_housing.txt")))
stopifnot(max(abs(b - as.matrix(MASS::Boston))) == 0)

save(uci_yacht, file = "data/uci_yacht.rda", compress = "xz")
save(uci_energy, file = "data/uci_energy.rda", compress = "xz")
save(uci_wine, file = "data/uci_wine.rda", compress = "xz")
save(uci_concrete, file = "data/uci_concrete.rda", compress = "xz")
