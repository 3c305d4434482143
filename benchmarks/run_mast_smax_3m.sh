#!/usr/bin/env bash
# Dense / RigL / MAST QMIX on SMAX 3m at 90 % sparsity, 100 000 env steps, seed 0, low priority, two at a time
# (the development machine has 2 shared cores); each run resumes from its checkpoint if interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-results/bench/mast_smax_3m}
train() {
  mkdir -p "$root/$1"
  nice -n 10 effmarl train --config benchmarks/mast_smax_3m.yaml --out "$root/$1" --set sparse.method="$1" \
    2> "$root/$1/train.log"
}
train dense & train rigl & wait
train mast
python benchmarks/summarise_mast.py "$root" --stem benchmarks/results/mast_smax_3m
