#!/usr/bin/env bash
# R CMD build + R CMD check --as-cran --no-manual on a copy of this checkout, so that a broken NAMESPACE, Rd
# file, example, vignette or compiler warning fails CI. The check installs into its own temporary library
# (never the shared one). The vignettes build from their precomputed results (vignettes/results/*.rds), and the
# testthat suite runs as on CRAN (NOT_CRAN unset: the extended tier and skip_on_cran() tests skip;
# tools/run-tests.sh runs them all), on
# the package as users install it: without the test hooks (SCALEBAYES_TEST_HOOKS unset; the tests that need
# one skip).
# Fails on any ERROR or WARNING; NOTEs are printed (a first submission always has one).
# Measured on the 2-core VM: see bench/RESULTS.md ("CI: R CMD check").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/scalebayes-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export MAKEFLAGS="${MAKEFLAGS:--j2}"
# optional suggests (monomvn, bayesplot, ...) may be absent; no network here (CRAN incoming, time server)
export _R_CHECK_FORCE_SUGGESTS_=false
export _R_CHECK_CRAN_INCOMING_=false
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_FUTURE_FILE_TIMESTAMPS_=false
export _R_CHECK_SYSTEM_CLOCK_=false
unset NOT_CRAN SCALEBAYES_TEST_HOOKS SCALEBAYES_TESTS
# ccache in front of R's C++ compilers, as in tools/setup.sh: the build (for the vignettes) and the check's
# install compile the same sources that setup compiled just before, from temporary copies under $work (left out
# of ccache's hash), so both come from the cache; without ccache both compile from scratch
if command -v ccache >/dev/null 2>&1; then
  printf 'CXX17 = ccache %s\nCXX = ccache %s\n' "$(R CMD config CXX17)" "$(R CMD config CXX)" > "$work/Makevars.ccache"
  export R_MAKEVARS_USER="$work/Makevars.ccache" CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$work"
fi
cd "$work"
start=$(date +%s)
R CMD build --no-manual "$root" > build.log 2>&1 || { cat build.log; exit 1; }
tarball=$(ls scalebayes_*.tar.gz)
built=$(date +%s)
status=0
R CMD check --as-cran --no-manual "$tarball" > check.log 2>&1 || status=$?
end=$(date +%s)
cat check.log
echo "R CMD build: $((built - start)) s, R CMD check: $((end - built)) s"
log=scalebayes.Rcheck/00check.log
if [ "$status" -ne 0 ] || grep -Eq '^Status: .*(ERROR|WARNING)' "$log"; then
  for f in scalebayes.Rcheck/00install.out scalebayes.Rcheck/tests/*.Rout.fail; do
    [ -f "$f" ] && { echo "==> $f"; tail -n 60 "$f"; }
  done
  echo "R CMD check failed (status $status)"
  exit 1
fi
