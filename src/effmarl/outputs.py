"""Which figures and tables a profile makes, and from which files: read from what each figure and table module
declares (its `OUTPUT` and `INPUTS`), never from study names written into the workflow. The workflow registers
one rule per output this returns (workflow/rules/outputs.smk); `effmarl figure|table NAME role=path ...` checks the
same `INPUTS`.

A module under effmarl/analysis/{figures,tables} declares, as Python literals beside its CAPTION:

    OUTPUT = {"group": "mast", "stem": "table6_burn_in"}
    INPUTS = {"metrics": {"study": "mast_abl_t0", "doc": "the burn-in ablation's runs"}}

OUTPUT: where the output is written, <figures_dir>/<group>/<stem>.{pdf,png} (figures) or
<figures_dir>/<group>/tables/<stem>.{csv,md} (tables), and when:
    group, stem   "{study}" in either stands for the study of `for_each` (no stem with `variants`)
    for_each      a study-name pattern (fnmatch): one output per study of the profile matching it
    variants      {variant: stem}: one output per variant of one module (Figs. 13-15: one per algorithm of a
                  study), written at its stem; "{variant}" in an INPUTS `where` value stands for it, and the
                  command gets `--variant NAME` (the module's `make(inputs, variant)`)
    when          a pattern or a list of patterns: made only when each matches a study of the profile
    one_of        roles of which at least one must be given files
INPUTS: one entry per role the module reads (`role=path` arguments), each a dict of
    doc           what the role is (for error messages)
    study         a study name or a list of names; the profile's studies among them, in the order listed
    table         the run table summarised (default "metrics"): <results_dir>/<study>/<table>.summary.parquet
    take          "all" (default): every listed study the profile has; "first": the first of them
    where         {dotted run field: value or [values]}: a study counts only when its runs take every listed value
                  of each field; with run_file, the runs whose field is one of the values
    where_some    {dotted run field: [values]}: a study counts only when some of its runs takes one of the values
                  of each field (Fig. 12: a map with several unit types)
    run_file      each selected run's file of that name (masks.pt) instead of the study table
    source_of     a study whose `ticket_source` names the study to read (paper 2 Fig. 10's tickets)
    result        a file under results_dir made by a rule of its own (paper1_micro/counters.parquet)
    output        a file under figures_dir made by another output (mast/tables/selection.csv): given only when
                  the profile makes that output
    repo_file     a file the repository keeps, relative to its root (a measured probe's summary under
                  benchmarks/results/): given when the checkout has it
    optional      True: the module runs without it. A role that is not optional and finds no file means the
                  profile cannot make the output, which is then left out.

Literals only: the workflow reads them with `ast` without importing the module (importing every figure module
would load matplotlib and pandas each time Snakemake parses the workflow, once per cluster job).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from effmarl.analysis.figures import FIGURES
from effmarl.analysis.tables import TABLES

KINDS = {"figure": FIGURES, "table": TABLES}
OUTPUT_KEYS = {"group", "stem", "for_each", "variants", "when", "one_of"}
INPUT_KEYS = {"doc", "study", "table", "take", "where", "where_some", "run_file", "source_of", "result", "output",
              "repo_file", "optional"}


@dataclass(frozen=True)
class LeftOut:
    """A figure or table the profile does not make, and why (listed in the figure index)."""
    kind: str
    name: str
    stem: str
    reason: str


@dataclass(frozen=True)
class Output:
    """One figure or table a profile makes: `effmarl <kind> <name> role=path ...` -> <group>/<stem>."""
    kind: str
    name: str
    group: str
    stem: str
    inputs: dict[str, list[str]] = field(hash=False)
    variant: str | None = None

    def files(self, figures: str) -> list[str]:
        if self.kind == "figure":
            return [f"{figures}/{self.group}/{self.stem}.{ext}" for ext in ("pdf", "png")]
        return [f"{figures}/{self.group}/tables/{self.stem}.{ext}" for ext in ("csv", "md")]


@cache
def declaration(kind: str, name: str) -> tuple[dict, dict]:
    """(OUTPUT, INPUTS) of registered module `name` of `kind`, read from its source without importing it."""
    spec = importlib.util.find_spec(KINDS[kind][name])
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in ("OUTPUT", "INPUTS"):
                found[node.targets[0].id] = ast.literal_eval(node.value)
    return found.get("OUTPUT", {}), found.get("INPUTS", {})


def declarations() -> list[tuple[str, str, dict, dict]]:
    """[(kind, name, OUTPUT, INPUTS)] of every registered figure and table module, figures first."""
    return [(kind, name, *declaration(kind, name)) for kind, registry in KINDS.items() for name in registry]


def problems() -> list[str]:
    """What is wrong with the modules' declarations: unknown keys, a role without `doc` or without a source, a role
    reading an output that no module writes first."""
    out = []
    made_here = {path.split("/", 1)[1] for kind, name, output, inputs in declarations()
                 if output and not any("output" in spec for spec in inputs.values() if isinstance(spec, dict))
                 for stem in _stems(output)
                 for path in Output(kind, name, output["group"], stem, {}).files("")}
    for kind, name, output, inputs in declarations():
        where = f"{kind} {name}"
        if output and not ("group" in output and {"stem", "variants"} & set(output)):
            out.append(f"{where}: OUTPUT needs group and stem (or variants)")
        out += [f"{where}: OUTPUT key {k!r} unknown (allowed: {', '.join(sorted(OUTPUT_KEYS))})"
                for k in set(output) - OUTPUT_KEYS]
        variants = output.get("variants")
        if variants is not None and ({"for_each", "stem"} & set(output) or not isinstance(variants, dict)):
            out.append(f"{where}: OUTPUT variants is a {{variant: stem}} dict, without stem or for_each")
        uses_variant = any("{variant}" in _listed(v) for spec in inputs.values() if isinstance(spec, dict)
                           for v in spec.get("where", {}).values())
        if uses_variant and "variants" not in output:
            out.append(f"{where}: INPUTS use \"{{variant}}\" but OUTPUT declares no variants")
        for role, spec in inputs.items():
            if not isinstance(spec, dict):
                out.append(f"{where}: INPUTS[{role!r}] must be a dict with doc and a source")
                continue
            out += [f"{where}: INPUTS[{role!r}] key {k!r} unknown (allowed: {', '.join(sorted(INPUT_KEYS))})"
                    for k in set(spec) - INPUT_KEYS]
            if "doc" not in spec:
                out.append(f"{where}: INPUTS[{role!r}] has no doc")
            if output and not {"study", "source_of", "result", "output", "repo_file"} & set(spec):
                out.append(f"{where}: INPUTS[{role!r}] says neither study, source_of, result, output nor repo_file")
            if "output" in spec and spec["output"] not in made_here:
                out.append(f"{where}: INPUTS[{role!r}] reads {spec['output']!r}, which no module without an "
                           "`output` role of its own writes")
    return out


def needed_studies() -> dict[str, list[str]]:
    """{study name: [modules needing it]} for every study named in a declaration (for_each patterns aside)."""
    out: dict[str, list[str]] = {}
    for kind, name, output, inputs in declarations():
        for spec in inputs.values():
            studies = spec.get("study", []) if isinstance(spec, dict) else []
            for study in [studies] if isinstance(studies, str) else studies:
                if "{study}" not in study:
                    out.setdefault(study, []).append(f"{kind} {name}")
            if isinstance(spec, dict) and "source_of" in spec:
                out.setdefault(spec["source_of"], []).append(f"{kind} {name}")
        for pattern in _listed(output.get("when")):
            if not any(c in pattern for c in "*?["):
                out.setdefault(pattern, []).append(f"{kind} {name}")
    return out


def _listed(value) -> list:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _dotted(cfg: dict, key: str) -> Any:
    for part in key.split("."):
        cfg = cfg.get(part) if isinstance(cfg, dict) else None
    return cfg


def _stems(output: dict) -> list[str]:
    return list(output["variants"].values()) if "variants" in output else [output["stem"]]


def _takes_some(runs: dict[str, dict], where_some: dict) -> bool:
    """Whether some run of a study takes one of the listed values of each `where_some` field."""
    return any(all(_dotted(c, key) in _listed(values) for key, values in where_some.items()) for c in runs.values())


def _takes_all(runs: dict[str, dict], where: dict) -> bool:
    """Whether a study's runs take every listed value of each `where` field."""
    return all({_dotted(c, key) for c in runs.values()} >= set(_listed(values)) for key, values in where.items())


def _where(spec: dict, variant: str | None) -> dict[str, list]:
    """A role's `where` with "{variant}" replaced by the output's variant."""
    return {k: [variant if v == "{variant}" else v for v in _listed(vs)] for k, vs in spec.get("where", {}).items()}


def _role_files(spec: dict, study: str | None, runs: dict, config: dict, results: str, figures: str,
                variant: str | None = None) -> list[str]:
    if "result" in spec:
        return [f"{results}/{spec['result']}"]
    if "output" in spec:
        return [f"{figures}/{spec['output']}"]
    if "repo_file" in spec:
        return [spec["repo_file"]] if Path(spec["repo_file"]).is_file() else []
    if "source_of" in spec:
        source = config["studies"].get(spec["source_of"], {}).get("ticket_source")
        names = [source] if source else []
    else:
        names = [s.replace("{study}", study or "") for s in _listed(spec["study"])]
    where = _where(spec, variant)
    some = spec.get("where_some", {})
    names = [s for s in names if s in runs and (spec.get("run_file") or _takes_all(runs[s], where))
             and _takes_some(runs[s], some)]
    if spec.get("take", "all") == "first":
        names = names[:1]
    if "run_file" in spec:
        return [f"{results}/{s}/{rid}/{spec['run_file']}" for s in names for rid, cfg in runs[s].items()
                if all(_dotted(cfg, k) in _listed(v) for k, v in where.items())]
    return [f"{results}/{s}/{spec.get('table', 'metrics')}.summary.parquet" for s in names]


def _matches(pattern: str, runs: dict) -> list[str]:
    return [s for s in runs if fnmatch.fnmatchcase(s, pattern)]


def _why(spec: dict, variant: str | None = None) -> str:
    """Why a role found no file: what it reads and, with `where` or `where_some`, which runs count."""
    fields = {**_where(spec, variant), **spec.get("where_some", {})}
    some = "; ".join(f"{k} in {', '.join(map(str, _listed(v)))}" for k, v in fields.items())
    return f"no {spec['doc']}" + (f" (counted only from runs with {some})" if some else "")


def resolve(runs: dict[str, dict], config: dict, results: str, figures: str) -> tuple[list[Output], list[LeftOut]]:
    """(profile_outputs, left_out) in one pass: what the profile makes and what it leaves out, with the reason."""
    made: list[Output] = []
    left: list[LeftOut] = []
    # outputs reading another output's file come second, once the outputs they read are decided
    for second in (False, True):
        made_files = {f for out in made for f in out.files(figures)}
        for kind, name, output, inputs in declarations():
            if any("output" in spec for spec in inputs.values()) != second or not output:
                continue
            stem = output["stem"] if "variants" not in output else "/".join(output["variants"].values())
            missing = [p for p in _listed(output.get("when")) if not _matches(p, runs)]
            if missing:
                left.append(LeftOut(kind, name, stem, "needs a study matching " + ", ".join(missing)))
                continue
            if "for_each" in output:
                jobs = [(study, None, None) for study in _matches(output["for_each"], runs)]
                if not jobs:
                    left.append(LeftOut(kind, name, stem, f"no study matching {output['for_each']}"))
            else:
                jobs = [(None, v, s) for v, s in output["variants"].items()] if "variants" in output else [(None,) * 3]
            for study, variant, variant_stem in jobs:
                files = {role: [f for f in _role_files(spec, study, runs, config, results, figures, variant)
                                if "output" not in spec or f in made_files] for role, spec in inputs.items()}
                fill = {"study": study or ""}
                out_stem = variant_stem or output["stem"].format(**fill)
                lacking = [_why(inputs[role], variant) for role, paths in files.items()
                           if not paths and not inputs[role].get("optional")]
                if "one_of" in output and not any(files[role] for role in output["one_of"]):
                    lacking.append("none of " + " / ".join(_why(inputs[r], variant) for r in output["one_of"]))
                if lacking:
                    left.append(LeftOut(kind, name, out_stem, "; ".join(lacking)))
                    continue
                made.append(Output(kind, name, output["group"].format(**fill), out_stem,
                                   {role: paths for role, paths in files.items() if paths}, variant))
    order = {(kind, name): i for i, (kind, name, _, _) in enumerate(declarations())}
    return sorted(made, key=lambda o: order[(o.kind, o.name)]), sorted(left, key=lambda o: order[(o.kind, o.name)])


def profile_outputs(runs: dict[str, dict], config: dict, results: str, figures: str) -> list[Output]:
    """Every figure and table the profile (`runs`: {study: {run id: config}}, `config`: the resolved profile) can
    make, in registry order, each with its {role: [files]}. An output is left out when a role it needs finds no
    file, when a `when` pattern matches no study, or when none of its `one_of` roles has a file. A role reading
    another output's file (`output`) finds it only when the profile makes that output; such modules are resolved
    after all others, so an `output` role must name the output of a module that has none itself."""
    return resolve(runs, config, results, figures)[0]


def left_out(runs: dict[str, dict], config: dict, results: str, figures: str) -> list[LeftOut]:
    """The declared outputs `profile_outputs` leaves out of this profile, each with the reason (the figure index
    lists them)."""
    return resolve(runs, config, results, figures)[1]
