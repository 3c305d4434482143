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
        shell:
            "effmarl figure skeleton_returns {input} --out {FIGURES}/skeleton/random_returns"

    rule skeleton_table:
        input:
            f"{RESULTS}/skeleton/metrics.summary.parquet",
        output:
            table_files("skeleton", "random_returns"),
        shell:
            "effmarl table skeleton_returns {input} --out {FIGURES}/skeleton/tables/random_returns"
