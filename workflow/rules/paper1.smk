# Paper 1 (MADDPG / MASAC, replay storage × sampler): the phase-breakdown figure and the sampling table.
# Each study named paper1* gets these two outputs.
for _study in [s for s in RUNS if s.startswith("paper1")]:
    add_figure(_study, "phase_breakdown", "paper1_phases", [summary(_study, "phases")])
    add_table(_study, "sampling_per_round", "paper1_sampling", [summary(_study, "phases")])
