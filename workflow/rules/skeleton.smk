# Walking skeleton: random-policy rollouts of predator-prey -> one figure and one table.
if "skeleton" in RUNS:
    STUDY_TARGETS["skeleton"] = figure_files("skeleton", "random_returns") + table_files(
        "skeleton", "random_returns"
    )

    rule skeleton_figure:
        input:
            f"{RESULTS}/skeleton/metrics.summary.parquet",
        output:
            figure_files("skeleton", "random_returns"),
        params:
            stem=output_stem,
        log:
            f"{FIGURES}/skeleton/logs/random_returns.figure.log",
        shell:
            "effmarl figure skeleton_returns {input} --out {params.stem} > {log} 2>&1"

    rule skeleton_table:
        input:
            f"{RESULTS}/skeleton/metrics.summary.parquet",
        output:
            table_files("skeleton", "random_returns"),
        params:
            stem=output_stem,
        log:
            f"{FIGURES}/skeleton/logs/random_returns.table.log",
        shell:
            "effmarl table skeleton_returns {input} --out {params.stem} > {log} 2>&1"
