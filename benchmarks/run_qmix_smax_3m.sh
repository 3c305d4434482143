#!/usr/bin/env bash
# QMIX on SMAX 3m, 200 000 env steps, one seed, low priority; resumes from its checkpoint if interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/bench/qmix_smax_3m}
mkdir -p "$out"
nice -n 10 effmarl train --config benchmarks/qmix_smax_3m.yaml --out "$out" 2> "$out/train.log"
python benchmarks/summarise_qmix.py "$out" --stem benchmarks/results/qmix_smax_3m
