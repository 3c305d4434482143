# Paper 1 (MADDPG / MASAC, replay storage × sampler): the phase-breakdown figure and the sampling table.
# The full set of paper-1 figures is a later issue; each study named paper1* gets these two outputs.
for _study in [s for s in RUNS if s.startswith("paper1")]:
    STUDY_TARGETS[_study] = figure_files(_study, "phase_breakdown") + table_files(_study, "sampling_per_round")


rule paper1_phase_figure:
    input:
        f"{RESULTS}/{{study}}/phases.summary.parquet",
    output:
        figure_files("{study}", "phase_breakdown"),
    wildcard_constraints:
        study="paper1[a-z0-9_]*",
    shell:
        "effmarl figure paper1_phases {input} --out {FIGURES}/{wildcards.study}/phase_breakdown"


rule paper1_sampling_table:
    input:
        f"{RESULTS}/{{study}}/phases.summary.parquet",
    output:
        table_files("{study}", "sampling_per_round"),
    wildcard_constraints:
        study="paper1[a-z0-9_]*",
    shell:
        "effmarl table paper1_sampling {input} --out {FIGURES}/{wildcards.study}/tables/sampling_per_round"
