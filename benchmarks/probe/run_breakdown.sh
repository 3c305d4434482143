#!/usr/bin/env bash
# Issue 35's breakdown runs at 0.99 (breakdown_099.yaml), most informative first: 4 seeds of MAST and the baselines,
# then dense with the value-vs-return statistic, MAST without each component, MAST at the paper's Δm. Lowest
# priority (win rates do not depend on what runs beside); finished runs are kept if it is interrupted.
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=benchmarks/probe/breakdown_099.yaml
for study in mast_sweep mast_fig8 mast_dense mast_components mast_abl_dm; do
  nice -n 19 snakemake --cores 2 --rerun-incomplete "results/breakdown/$study/metrics.summary.parquet" \
    --configfile "$profile"
done
# then RigL with each of MAST's components added (rigl_plus_099.yaml)
for study in mast_table1 mast_fig8 mast_abl_buffer; do
  nice -n 19 snakemake --cores 2 --rerun-incomplete "results/rigl_plus/$study/metrics.summary.parquet" \
    --configfile benchmarks/probe/rigl_plus_099.yaml
done
