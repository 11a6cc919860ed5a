#!/usr/bin/env bash
# The main job: set up (idempotent), then run the diabetes WBB study. Output in ./out/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
Rscript inst/scripts/diabetes-study.R out
