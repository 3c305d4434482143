# Paper 2 base: QMIX / OW-QMIX / RES-QMIX on SMAX maps -> test win rate vs env steps.
if "mast_base" in RUNS:
    add_figure("mast_base", "test_win_rate", "mast_base_win_rate", metrics=[summary("mast_base")])
