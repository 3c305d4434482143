# Generic rules for every registered figure and table (see add_figure / add_table in common.smk).


localrules:  # cheap: on a cluster they run on the submitting node, not as jobs (figure_index: the Snakefile)
    figure,
    table,
    figure_index,


rule figure:
    input:
        lambda wc: FIGURE_SPECS[(wc.group, wc.stem)]["inputs"],
    output:
        f"{FIGURES}/{{group}}/{{stem}}.pdf",
        f"{FIGURES}/{{group}}/{{stem}}.png",
    params:
        name=lambda wc: FIGURE_SPECS[(wc.group, wc.stem)]["name"],
        stem=output_stem,
    log:
        f"{FIGURES}/{{group}}/logs/{{stem}}.figure.log",
    wildcard_constraints:
        group="[a-z][a-z0-9_]*",
        stem="[^/]+",
    shell:
        "effmarl figure {params.name} {input} --out {params.stem} > {log} 2>&1"


rule table:
    input:
        lambda wc: TABLE_SPECS[(wc.group, wc.stem)]["inputs"],
    output:
        f"{FIGURES}/{{group}}/tables/{{stem}}.csv",
        f"{FIGURES}/{{group}}/tables/{{stem}}.md",
    params:
        name=lambda wc: TABLE_SPECS[(wc.group, wc.stem)]["name"],
        stem=output_stem,
    log:
        f"{FIGURES}/{{group}}/logs/{{stem}}.table.log",
    wildcard_constraints:
        group="[a-z][a-z0-9_]*",
        stem="[^/]+",
    shell:
        "effmarl table {params.name} {input} --out {params.stem} > {log} 2>&1"
