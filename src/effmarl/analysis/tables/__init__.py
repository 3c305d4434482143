"""One module per table; each exposes `make(inputs: list[str]) -> pandas.DataFrame` and `CAPTION`, `REPRODUCES`,
`CLAIM` (the one source of its captions: effmarl.analysis.report writes its report caption from them)."""

TABLES = {
    "skeleton_returns": "effmarl.analysis.tables.skeleton_returns",
    "mast_selection": "effmarl.analysis.tables.mast_selection",
    "mast_table1": "effmarl.analysis.tables.mast_table1",
    "mast_table5": "effmarl.analysis.tables.mast_table5",
    "mast_values": "effmarl.analysis.tables.mast_values",
    "mast_table6": "effmarl.analysis.tables.mast_table6",
    "mast_table7": "effmarl.analysis.tables.mast_table7",
    "mast_table8": "effmarl.analysis.tables.mast_table8",
    "mast_table9": "effmarl.analysis.tables.mast_table9",
    "mast_table10": "effmarl.analysis.tables.mast_table10",
    "mast_components": "effmarl.analysis.tables.mast_components",
    "mast_claims": "effmarl.analysis.tables.mast_claims",
    "paper1_sampling": "effmarl.analysis.tables.paper1_sampling",
    "paper1_claims": "effmarl.analysis.tables.paper1_claims",
}
