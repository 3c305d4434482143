# One rule per registered figure and table (see add_figure / add_table in common.smk), generated here so that
# each declares its named inputs (role -> files, checked at DAG time) and carries its own report caption:
# workflow/report/{figures,tables}/<name>.rst says what the output shows, which paper figure or table it reproduces and the claim
# it supports (written from the module's CAPTION, REPRODUCES and CLAIM by `python -m effmarl.analysis.report`).
# `snakemake --report report.html` collects every figure (PNG) and table (CSV) with that caption.
REPORT_CAPTIONS = "../report"  # relative to this file


# Which figures and tables this profile makes, and from which files: each figure and table module declares its
# OUTPUT (group, stem, when) and the INPUTS it needs (studies, run tables, run filters); effmarl.outputs resolves
# them against the profile's studies. A module whose needed studies the profile lacks is left out.
# What it leaves out, with the reason, is listed in the figure index (LEFT_OUT, rule figure_index).
_MADE, LEFT_OUT = resolve(RUNS, config, RESULTS, FIGURES)
for _out in _MADE:
    if _out.kind == "figure":
        add_figure(_out.group, _out.stem, _out.name, _out.variant, **_out.inputs)
    else:
        add_table(_out.group, _out.stem, _out.name, **_out.inputs)


localrules:  # figure_index: the Snakefile
    figure_index,


def named_args(inputs: dict) -> str:
    """{role: [paths]} -> 'role=path role=path ...' for `effmarl figure/table` (inputs are named, not guessed)."""
    return " ".join(shlex.quote(f"{role}={path}") for role, paths in inputs.items() for path in paths)


for (_group, _stem), _spec in FIGURE_SPECS.items():

    rule:
        name:
            f"figure_{_group}_{_stem}"
        input:
            **_spec["inputs"],
        output:
            pdf=f"{FIGURES}/{_group}/{_stem}.pdf",
            png=report(f"{FIGURES}/{_group}/{_stem}.png", caption=f"{REPORT_CAPTIONS}/figures/{_spec['name']}.rst",
                       category=_group, labels={"figure": _stem}),
            provenance=f"{FIGURES}/{_group}/{_stem}.provenance.json",
        params:
            name=_spec["name"],
            variant=f"--variant {_spec['variant']} " if _spec["variant"] else "",
            args=named_args(_spec["inputs"]),
            stem=output_stem,
        log:
            f"{FIGURES}/{_group}/logs/{_stem}.figure.log",
        localrule: True  # cheap: on a cluster it runs on the submitting node
        benchmark:
            f"{FIGURES}/{_group}/benchmarks/{_stem}.figure.tsv"
        shell:
            "effmarl figure {params.name} {params.variant}{params.args} --out {params.stem} > {log} 2>&1"


for (_group, _stem), _spec in TABLE_SPECS.items():

    rule:
        name:
            f"table_{_group}_{_stem}"
        input:
            **_spec["inputs"],
        output:
            csv=report(f"{FIGURES}/{_group}/tables/{_stem}.csv", caption=f"{REPORT_CAPTIONS}/tables/{_spec['name']}.rst",
                       category=_group, labels={"table": _stem}),
            md=f"{FIGURES}/{_group}/tables/{_stem}.md",
            provenance=f"{FIGURES}/{_group}/tables/{_stem}.provenance.json",
        params:
            name=_spec["name"],
            args=named_args(_spec["inputs"]),
            stem=output_stem,
        log:
            f"{FIGURES}/{_group}/logs/{_stem}.table.log",
        localrule: True
        benchmark:
            f"{FIGURES}/{_group}/benchmarks/{_stem}.table.tsv"
        shell:
            "effmarl table {params.name} {params.args} --out {params.stem} > {log} 2>&1"
