"""One module per figure; each exposes `CAPTION`, `REPRODUCES`, `CLAIM` (the one source of its captions:
effmarl.analysis.report writes its report caption from them) and
`make(inputs: list[str]) -> (matplotlib Figure, the run table it shows, for the footer naming its runs)`; a module
declaring `variants` (effmarl.outputs) takes `make(inputs, variant)`."""

FIGURES = {
    "skeleton_returns": "effmarl.analysis.figures.skeleton_returns",
    "mast_base_win_rate": "effmarl.analysis.figures.mast_base_win_rate",
    "mast_fig1": "effmarl.analysis.figures.mast_fig1",
    "mast_fig4": "effmarl.analysis.figures.mast_fig4",
    "mast_fig5": "effmarl.analysis.figures.mast_fig5",
    "mast_fig6": "effmarl.analysis.figures.mast_fig6",
    "mast_fig8": "effmarl.analysis.figures.mast_fig8",
    "mast_fig10": "effmarl.analysis.figures.mast_fig10",
    "mast_fig11": "effmarl.analysis.figures.mast_fig11",
    "mast_fig12": "effmarl.analysis.figures.mast_fig12",
    "mast_curves": "effmarl.analysis.figures.mast_curves",  # Figs. 13-15, one per algorithm (its variants)
    "mast_fig16": "effmarl.analysis.figures.mast_fig16",
    "paper1_phases": "effmarl.analysis.figures.paper1_phases",
    "paper1_sampling_bench": "effmarl.analysis.figures.paper1_sampling_bench",
    "paper1_counters": "effmarl.analysis.figures.paper1_counters",
    "paper1_scaling": "effmarl.analysis.figures.paper1_scaling",
    "paper1_end_to_end": "effmarl.analysis.figures.paper1_end_to_end",
    "paper1_rewards": "effmarl.analysis.figures.paper1_rewards",
    "paper1_ksweep": "effmarl.analysis.figures.paper1_ksweep",
}
