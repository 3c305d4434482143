#!/usr/bin/env bash
# Sparsity probe (issue 35): MAST, SS, SET and RigL on QMIX / SMAX 3m at 0.95 and 0.99, 2 seeds, 250 000 env steps;
# then the table against the default profile's dense runs. Win rates do not depend on what runs beside, so the
# jobs run at low priority while other work goes on; finished runs are kept if it is interrupted.
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=benchmarks/probe/sparsity_probe.yaml
nice -n 10 snakemake --cores 2 --rerun-incomplete results/probe/mast_sweep/metrics.summary.parquet \
  results/probe/mast_fig8/metrics.summary.parquet --configfile "$profile"
python benchmarks/probe/summarise_probe.py results/probe --out benchmarks/results/sparsity_probe_3m   # -> _table.md, .csv
