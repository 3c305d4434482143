# MAST (paper 2): sparse-training methods at one sparsity -> Table 1 (our form) and win-rate curves per method.
if "mast" in RUNS:
    STUDY_TARGETS["mast"] = table_files("mast", "methods") + figure_files("mast", "test_win_rate")

    rule mast_sparsity_summary:
        """The runs' sparsity.parquet (FLOPs and size from the final masks); train declares only metrics and
        phases, so the run tables are reached through each run's provenance.json (written last)."""
        input:
            run_files("mast", "provenance.json"),
        output:
            f"{RESULTS}/mast/sparsity.summary.parquet",
        log:
            f"{RESULTS}/mast/sparsity.summary.log",
        shell:
            "effmarl aggregate $(for p in {input}; do echo $(dirname $p)/sparsity.parquet; done) "
            "--out {output} > {log} 2>&1"

    rule mast_methods_table:
        input:
            f"{RESULTS}/mast/metrics.summary.parquet",
            f"{RESULTS}/mast/sparsity.summary.parquet",
        output:
            table_files("mast", "methods"),
        params:
            stem=output_stem,
        log:
            f"{FIGURES}/mast/logs/methods.table.log",
        shell:
            "effmarl table mast_methods {input} --out {params.stem} > {log} 2>&1"

    rule mast_win_rate_figure:
        input:
            f"{RESULTS}/mast/metrics.summary.parquet",
        output:
            figure_files("mast", "test_win_rate"),
        params:
            stem=output_stem,
        log:
            f"{FIGURES}/mast/logs/test_win_rate.figure.log",
        shell:
            "effmarl figure mast_win_rate {input} --out {params.stem} > {log} 2>&1"
