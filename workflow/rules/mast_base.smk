# Paper 2 base: QMIX / OW-QMIX / RES-QMIX on SMAX maps -> test win rate vs env steps.
if "mast_base" in RUNS:
    STUDY_TARGETS["mast_base"] = figure_files("mast_base", "test_win_rate")

    rule mast_base_win_rate_figure:
        input:
            f"{RESULTS}/mast_base/metrics.summary.parquet",
        output:
            figure_files("mast_base", "test_win_rate"),
        shell:
            "effmarl figure mast_base_win_rate {input} --out {FIGURES}/mast_base/test_win_rate"
