"""One module per table; each exposes `make(inputs: list[str]) -> pandas.DataFrame` and `CAPTION`."""

TABLES = {
    "skeleton_returns": "effmarl.analysis.tables.skeleton_returns",
    "mast_methods": "effmarl.analysis.tables.mast_methods",
    "paper1_sampling": "effmarl.analysis.tables.paper1_sampling",
    "paper1_claims": "effmarl.analysis.tables.paper1_claims",
}
