#!/usr/bin/env bash
# Developer helper: regenerate RcppExports, install into a library, then regenerate NAMESPACE and man/
# with roxygen2 from the installed package (pkgbuild is not needed).
# Usage: SB_LIB=/tmp/mylib bash tools/document.sh   (SB_LIB defaults to the first .libPaths() entry)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lib="${SB_LIB:-$(Rscript -e 'cat(.libPaths()[1])')}"
mkdir -p "$lib"
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
Rscript -e 'Rcpp::compileAttributes()' >/dev/null
MAKEFLAGS="${MAKEFLAGS:--j2}" R CMD INSTALL --preclean --no-test-load -l "$lib" . >/tmp/sb-document-install.log 2>&1 || { tail -n 40 /tmp/sb-document-install.log; exit 1; }
Rscript -e 'roxygen2::roxygenise(load_code = "installed")'
R CMD INSTALL --no-test-load -l "$lib" . >>/tmp/sb-document-install.log 2>&1 || { tail -n 40 /tmp/sb-document-install.log; exit 1; }
echo "installed into $lib"
