#!/usr/bin/env bash
# One variant of the multi-type map probe (benchmarks/results/qmix_multitype_maps.md): dense QMIX on SMAX 2s3z from
# benchmarks/probe/multitype_dense_2s3z.yaml with the given overrides, at low priority (win rates do not depend on
# what runs beside; times do, so the CPU seconds and peak memory come from /usr/bin/time into time.txt).
#   benchmarks/probe/run_multitype.sh NAME SEED BUDGET [--set KEY=VALUE ...]
# REWARD_SCALE=10 in the environment trains through benchmarks/probe/train_reward_scaled.py (SMAX's reward x 10).
# A finished or interrupted run resumes from its checkpoint at a larger BUDGET (the probe's schedules are fixed).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$1 seed=$2 budget=$3
shift 3
out=results/multitype/$name/seed-$seed
mkdir -p "$out"
if [ -n "${REWARD_SCALE:-}" ]; then train=(python benchmarks/probe/train_reward_scaled.py "$REWARD_SCALE")
else train=(effmarl train); fi
EFFMARL_NO_PROGRESS=1 /usr/bin/time -v -a -o "$out/time.txt" nice -n 5 "${train[@]}" \
  --config benchmarks/probe/multitype_dense_2s3z.yaml --out "$out" \
  --set seed="$seed" --set budget.env_steps="$budget" "$@" >> "$out/log.txt" 2>&1
