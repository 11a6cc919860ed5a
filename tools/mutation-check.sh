#!/usr/bin/env bash
# Mutation check: do the tests catch deliberate bugs? (issue 22; documented in tests/README)
#
# Each mutant of tools/mutants/mutants.tsv is one exact find / replace in one file. For each mutant this script
#   1. copies the sources (git-tracked and untracked-not-ignored files of this checkout) to a fresh temp dir
#      (R CMD INSTALL does not track header dependencies, so every build starts from a fresh copy),
#   2. applies the mutant (its find string must occur exactly once, else an error row "does not apply"),
#   3. builds and installs it into a temp library: without LibTorch (SCALEBAYES_TORCH=no) when the mutant's
#      build column says "notorch", with it for "torch"; through ccache when ccache is installed (a temporary
#      R_MAKEVARS_USER with CXX17 = ccache <compiler>: unchanged units then compile instantly),
#   4. runs the mutant's own test files first (the tests column), one at a time, stopping at the first failure;
#      if it survives those, runs every other test file of tests/testthat (unless --targeted-only),
#   5. writes a row: killed (and by which file / test) / survived / error, the build mode and the seconds.
# A baseline (the unmutated sources, each build mode needed) runs first and must pass the mutants' test files;
# a failing baseline stops the run (a mutant "killed" by an already-failing test would mean nothing).
#
# Not run in CI (minutes per mutant). Run before a release and after changing a driver:
#   tools/mutation-check.sh                         # all mutants, results in mutation-results.md
#   tools/mutation-check.sh --only sa_alpha_halved,r_interval_tails --out /tmp/m.md
#   tools/mutation-check.sh --check                 # only check that every mutant still applies (seconds)
# Options:
#   --only A,B        run only these mutants (names from the table)
#   --jobs N          mutants built and tested at the same time (default 1; each build uses make -j2 when N = 1)
#   --out FILE        Markdown table of the results (default: mutation-results.md), rewritten after each mutant
#   --logs DIR        keep each mutant's build and test logs here (default: a temp dir, printed at the end)
#   --targeted-only   do not run the whole suite for mutants that survive their own test files
#   --no-baseline     skip the baseline run
#   --table FILE      another mutant table (default tools/mutants/mutants.tsv)
#   --check           only check that every mutant applies; --list: print the mutants
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
table="$root/tools/mutants/mutants.tsv"
only=""; jobs=1; out="mutation-results.md"; logs=""; full=1; baseline=1; mode=run
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --targeted-only) full=0; shift ;;
    --no-baseline) baseline=0; shift ;;
    --table) table=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --check) mode=check; shift ;;
    --list) mode=list; shift ;;
    -h|--help) sed -n "2,29p" "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown option $1 (see --help)"; exit 2 ;;
  esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "--jobs must be a positive whole number"; exit 2 ;; esac

# the mutant table: name, file, find, replace, build, tests, description (tab-separated, header line)
names=(); declare -A m_file m_build m_tests m_desc
while IFS=$'\t' read -r name file find replace build tests desc; do
  [ "$name" = "name" ] && continue
  [ -z "$name" ] && continue
  names+=("$name"); m_file[$name]=$file; m_build[$name]=$build; m_tests[$name]=$tests; m_desc[$name]=$desc
done < "$table"

if [ "$mode" = list ]; then
  for n in "${names[@]}"; do printf '%-28s %-8s %-45s %s\n' "$n" "${m_build[$n]}" "${m_file[$n]}" "${m_desc[$n]}"; done
  exit 0
fi
if [ "$mode" = check ]; then
  Rscript --vanilla "$root/tools/mutants/apply.R" "$table" --check "$root"
  exit $?
fi

if [ -n "$only" ]; then
  sel=(); IFS=',' read -ra want <<< "$only"
  for w in "${want[@]}"; do
    [ -n "${m_file[$w]+x}" ] || { echo "no mutant named $w (see --list)"; exit 2; }
    sel+=("$w")
  done
  names=("${sel[@]}")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$logs" ] || logs="${TMPDIR:-/tmp}/sb-mutants-logs.$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

# ccache when present: a temporary Makevars that puts it in front of R's C++17 compiler. The copies live in
# different directories, so the directory is left out of ccache's hash (the objects are the same).
makevars="$work/Makevars.ccache"
if command -v ccache >/dev/null 2>&1; then
  printf 'CXX17 = ccache %s\nCXX = ccache %s\n' "$(R CMD config CXX17)" "$(R CMD config CXX)" > "$makevars"
  export CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$work"
  echo "mutation-check: compiling through ccache ($(ccache --version | head -n 1))"
else
  : > "$makevars"
  echo "mutation-check: ccache not found; every build compiles from scratch (apt-get install ccache makes reruns fast)"
fi
make_jobs=$([ "$jobs" -eq 1 ] && echo 2 || echo 1)

# The sources are copied once at the start (git-tracked and untracked-not-ignored files of this checkout), so
# edits made while the check runs do not mix into it; every mutant then gets a fresh copy of that snapshot.
snapshot="$work/snapshot"
mkdir -p "$snapshot"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
   [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$snapshot")
rm -f "$snapshot/src/"*.o "$snapshot/src/"*.so "$snapshot/src/Makevars"
copy_tree() {  # $1 destination
  mkdir -p "$1" && cp -a "$snapshot/." "$1/"
}

# build $1 (tree) into $2 (library) in mode $3; log $4
build_tree() {
  local torch_env=()
  [ "$3" = notorch ] && torch_env=(SCALEBAYES_TORCH=no)
  # with the test hooks (src/test_hooks.h): several mutants' killing tests call one
  (cd "$1" && env "${torch_env[@]}" SCALEBAYES_TEST_HOOKS=1 R_MAKEVARS_USER="$makevars" MAKEFLAGS="-j$make_jobs" \
     R CMD INSTALL --no-test-load --no-docs --no-html --no-byte-compile --preclean -l "$2" . > "$4" 2>&1)
}

# run test file $1 (name) of tree $2 against library $3; log $4. Prints the runner's verdict line.
run_test() {
  local st
  (cd "$2/tests/testthat" && R_LIBS="$3:${R_LIBS:-}" timeout 1800 Rscript --vanilla "$2/tools/mutants/run-test.R" "$1" > "$4" 2>&1)
  st=$?
  if [ $st -eq 124 ]; then echo "FAIL (timed out after 30 min)"; return 1; fi
  local verdict; verdict=$(grep -E '^(PASS|FAIL)' "$4" | tail -n 1)
  [ -n "$verdict" ] || verdict="FAIL (R stopped, status $st: $(tail -n 1 "$4" | cut -c1-120))"
  echo "$verdict"
  [ $st -eq 0 ] && [[ "$verdict" == PASS* ]]
}

all_tests() { (cd "$snapshot/tests/testthat" && ls test-*.R); }

# one mutant: writes "$work/result.<name>" = name \t build \t result \t killed_by \t seconds
run_mutant() {
  local name=$1 t0=$SECONDS dir="$work/m.$1" lib="$work/lib.$1" log="$logs/$1"
  local build=${m_build[$name]} result="survived" by="" f verdict
  mkdir -p "$lib" "$log"
  copy_tree "$dir/src"
  if ! Rscript --vanilla "$snapshot/tools/mutants/apply.R" "$table" "$name" "$dir/src" > "$log/apply.log" 2>&1; then
    result="error"; by="does not apply: $(grep -o 'DOES NOT APPLY.*' "$log/apply.log" | head -n 1 | cut -c16-)"
  elif ! build_tree "$dir/src" "$lib" "$build" "$log/build.log"; then
    result="error"; by="build failed (see $log/build.log)"
  else
    local tried=" " files=()
    IFS=',' read -ra files <<< "${m_tests[$name]}"
    local n_targeted=${#files[@]} i=0
    if [ "$full" -eq 1 ]; then for f in $(all_tests); do files+=("$f"); done; fi
    for f in "${files[@]}"; do
      i=$((i + 1))
      f=$(echo "$f" | tr -d ' ')
      [[ "$tried" == *" $f "* ]] && continue
      tried="$tried$f "
      verdict=$(run_test "$f" "$dir/src" "$lib" "$log/$f.log") && continue
      result="killed"
      by="$f$([ $i -gt $n_targeted ] && echo ' (full suite)'): ${verdict#FAIL }"
      break
    done
  fi
  rm -rf "$dir" "$lib"
  [ -n "$by" ] || by="-"  # (an empty field would vanish: tab is a whitespace IFS character for read)
  printf '%s\t%s\t%s\t%s\t%d\n' "$name" "$build" "$result" "$by" $((SECONDS - t0)) > "$work/result.$name"
}

write_table() {
  local n r killed=0 survived=0 errors=0 pending=0
  {
    echo "| mutant | what it breaks | build | result | killed by (file: first failing test) | seconds |"
    echo "|---|---|---|---|---|---|"
    for n in "${names[@]}"; do
      if [ -f "$work/result.$n" ]; then
        IFS=$'\t' read -r _ b r by s < "$work/result.$n"
        case "$r" in killed) killed=$((killed + 1)) ;; survived) survived=$((survived + 1)) ;; *) errors=$((errors + 1)) ;; esac
        printf '| %s | %s | %s | **%s** | %s | %s |\n' "$n" "${m_desc[$n]}" "$b" "$r" "${by//|/\\|}" "$s"
      else
        pending=$((pending + 1))
        printf '| %s | %s | %s | not run | | |\n' "$n" "${m_desc[$n]}" "${m_build[$n]}"
      fi
    done
    echo
    echo "$killed killed, $survived survived, $errors errors, $pending not run; $((SECONDS - t_start)) s so far" \
         "(machine: $(nproc) cores, $(uname -n); started $(date -u -d @"$t_epoch" '+%Y-%m-%d %H:%M UTC'))."
  } > "$out"
}

t_start=$SECONDS; t_epoch=$(date +%s)
echo "mutation-check: ${#names[@]} mutants; results in $out; logs in $logs"

# every mutant must apply before anything is built
Rscript --vanilla "$root/tools/mutants/apply.R" "$table" --check "$root" > "$logs/check.log" 2>&1 || {
  echo "mutation-check: some mutants do not apply (they get error rows):"; grep "DOES NOT APPLY" "$logs/check.log"; }

if [ "$baseline" -eq 1 ]; then
  for bmode in notorch torch; do
    files=" "
    for n in "${names[@]}"; do
      [ "${m_build[$n]}" = "$bmode" ] || continue
      IFS=',' read -ra fs <<< "${m_tests[$n]}"
      for f in "${fs[@]}"; do [[ "$files" == *" $f "* ]] || files="$files$f "; done
    done
    [ "$files" = " " ] && continue
    echo "mutation-check: baseline ($bmode build):$files"
    b0=$SECONDS
    mkdir -p "$logs/baseline-$bmode" "$work/lib.baseline-$bmode"
    copy_tree "$work/baseline-$bmode"
    build_tree "$work/baseline-$bmode" "$work/lib.baseline-$bmode" "$bmode" "$logs/baseline-$bmode/build.log" || {
      echo "baseline build failed: $logs/baseline-$bmode/build.log"; exit 1; }
    for f in $files; do
      v=$(run_test "$f" "$work/baseline-$bmode" "$work/lib.baseline-$bmode" "$logs/baseline-$bmode/$f.log") || {
        echo "baseline FAILS $f ($v): fix the suite before checking mutants (log: $logs/baseline-$bmode/$f.log)"; exit 1; }
      echo "  $f: $v"
    done
    rm -rf "$work/baseline-$bmode" "$work/lib.baseline-$bmode"
    echo "mutation-check: baseline ($bmode) passed in $((SECONDS - b0)) s"
  done
fi

running=0
for n in "${names[@]}"; do
  echo "mutation-check: $(date -u +%H:%M:%S) $n (${m_build[$n]})"
  run_mutant "$n" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); write_table; fi
done
wait
write_table
echo "mutation-check: done in $((SECONDS - t_start)) s"
tail -n 1 "$out"
for n in "${names[@]}"; do
  IFS=$'\t' read -r _ b r by s < "$work/result.$n"
  printf '  %-28s %-9s %s\n' "$n" "$r" "$by"
done
