# MAST (paper 2): sparse-training methods at one sparsity -> Table 1 (our form) and win-rate curves per method.
# sparsity.parquet holds each run's FLOPs and size from its final masks.
if "mast" in RUNS:
    add_table("mast", "methods", "mast_methods", metrics=[summary("mast")], sparsity=[summary("mast", "sparsity")])
    add_figure("mast", "test_win_rate", "mast_win_rate", metrics=[summary("mast")])
