#!/usr/bin/env bash
# Issue 35's breakdown at 0.99 on SMAX 3m (Table 1's cell and budget), most informative first:
#   1. MAST without each of its components (breakdown_099.yaml: mast_components, seeds 0 and 1);
#   2. RigL with each component added (rigl_plus_099.yaml: Soft Mellowmax, hybrid TD(λ), the dual buffer);
#   3. MAST at the paper's Δm (200 updates; breakdown_099.yaml: mast_abl_dm).
# MAST's seeds 2-3 at 0.99 ran first (2026-12-05); the other methods' further seeds and dense with return_mean come
# from the default profile's Table 1 at 0.99 (3 seeds), so breakdown_099.yaml's mast_fig8 and mast_dense are not run
# here. Lowest priority (win rates do not depend on what runs beside); finished runs are kept if it is interrupted,
# and the same command resumes. Then:
#   python benchmarks/probe/summarise_breakdown.py results/default results/breakdown results/rigl_plus results/probe \
#       --sparsity 0.99 --out benchmarks/results/breakdown_099_3m
set -euo pipefail
cd "$(dirname "$0")/../.."
run() {  # results_dir profile study
  nice -n 19 snakemake --cores 2 --rerun-incomplete "$1/$3/metrics.summary.parquet" --configfile "$2"
}
run results/breakdown benchmarks/probe/breakdown_099.yaml mast_components
for study in mast_table1 mast_fig8 mast_abl_buffer; do
  run results/rigl_plus benchmarks/probe/rigl_plus_099.yaml "$study"
done
run results/breakdown benchmarks/probe/breakdown_099.yaml mast_abl_dm
