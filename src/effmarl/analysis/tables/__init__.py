"""One module per table; each exposes `make(inputs: list[str]) -> pandas.DataFrame` and `CAPTION`."""

TABLES = {
    "skeleton_returns": "effmarl.analysis.tables.skeleton_returns",
    "paper1_sampling": "effmarl.analysis.tables.paper1_sampling",
}
