"""One module per figure; each exposes `CAPTION` and
`make(inputs: list[str]) -> (matplotlib Figure, the run table it shows, for the footer naming its runs)`."""

FIGURES = {
    "skeleton_returns": "effmarl.analysis.figures.skeleton_returns",
    "mast_base_win_rate": "effmarl.analysis.figures.mast_base_win_rate",
    "mast_win_rate": "effmarl.analysis.figures.mast_win_rate",
    "paper1_phases": "effmarl.analysis.figures.paper1_phases",
    "paper1_sampling_bench": "effmarl.analysis.figures.paper1_sampling_bench",
    "paper1_counters": "effmarl.analysis.figures.paper1_counters",
    "paper1_scaling": "effmarl.analysis.figures.paper1_scaling",
    "paper1_end_to_end": "effmarl.analysis.figures.paper1_end_to_end",
    "paper1_rewards": "effmarl.analysis.figures.paper1_rewards",
    "paper1_ksweep": "effmarl.analysis.figures.paper1_ksweep",
}
