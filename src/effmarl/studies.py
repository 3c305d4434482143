"""A profile's studies as runs and jobs. Every study is declared once, in the study catalogue (configs/studies.yaml);
a profile selects studies and sets their scale, and `load_profile` resolves the two into full studies
(`resolve_studies`). Then every study's grid is expanded into validated run configs with readable run ids
(`expand_all`, with the profile-level checks that need all runs: the MAST selection's studies, paper 2's
comparable settings, the sparse benchmark's run), and the wiring between studies (ticket sources, the sparsity a
`sparsity_from: selection` run takes from the selection table). Which runs share one training process is
`effmarl.groups`. One run's own fields are validated by `effmarl.config`.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import re
from pathlib import Path
from typing import Any

from effmarl.config import ConfigError, load_yaml, set_dotted, validate
from effmarl.methods import METHODS
from effmarl.profile_checks import comparison_problems, evaluation_problems, lockstep_problems, selection_studies

# The study catalogue, configs/studies.yaml, reached through the package (src/effmarl/studies.yaml links to it, as
# schemas/ does to the schema) so that it is found from any working directory and in an installed copy.
CATALOGUE = "configs/studies.yaml"
# what a study is: declared once
CATALOGUE_KEYS = ("doc", "base", "grid", "sparsity_from", "ticket_source", "timing", "interleave")
# What a profile may set per study: its scale, and where its sparsity comes from (a study declared at a sparsity, as
# the default profile's Table 1 at 99 %, may take it from the MAST selection instead: the paper profile's Table 1).
SCALE_KEYS = ("base", "grid", "runs_per_process", "seeds_per_process", "sparsity_from")


def catalogue_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("effmarl").joinpath("studies.yaml")))


def load_catalogue(path: str | Path | None = None) -> dict[str, dict]:
    """The study catalogue {name: {doc, base, grid, ...}}, its structure checked (one line per problem); a study's
    run fields are checked when a profile that selects it is validated."""
    source = CATALOGUE if path is None else str(path)
    cat = load_yaml(catalogue_path() if path is None else path)
    if not isinstance(cat, dict):
        raise ConfigError([f"the study catalogue must be a mapping of study names, got {type(cat).__name__}"], source)
    lines = []
    for name, study in cat.items():
        if not isinstance(study, dict):
            lines.append(f"field '{name}': a study must be a mapping ({', '.join(CATALOGUE_KEYS)}), "
                         f"got {type(study).__name__}")
            continue
        lines += [f"field '{name}.{key}': unknown key; a study declares {', '.join(CATALOGUE_KEYS)} (runs_per_process "
                  "and seeds_per_process are a profile's)" for key in study if key not in CATALOGUE_KEYS]
        if not isinstance(study.get("doc"), str) or not study["doc"].strip():
            lines.append(f"field '{name}.doc': required: one line saying what the study is for and what it feeds")
        if not isinstance(study.get("grid", {}), dict):
            lines.append(f"field '{name}.grid': must be a mapping of dotted fields to lists of values")
            continue
        for axis, values in study.get("grid", {}).items():
            if isinstance(values, dict):
                lines += named_axis_problems(f"{name}.grid.{axis}", values)
            elif values is not None and not isinstance(values, list):
                lines.append(f"field '{name}.grid.{axis}': must be a list of values, a mapping of named settings, or "
                             "null (an axis a profile may vary, held at the base's value)")
    if lines:
        raise ConfigError(lines, source)
    return cat


NAME = re.compile(r"[A-Za-z0-9.+-]+")  # a named setting's name, as it appears in run ids


def named_axis_problems(where: str, values: dict) -> list[str]:
    """A named-settings axis ({name: {dotted field: value, ...}}, e.g. MAST without one component per run): names
    safe in a run id, each a non-empty mapping of dotted fields. One line per problem."""
    lines = [f"field '{where}.{key}': a named setting's name must be letters, digits, '.', '+' or '-' (it is part of "
             "the run ids)" for key in values if not NAME.fullmatch(str(key))]
    lines += [f"field '{where}.{key}': must be a non-empty mapping of dotted run fields to values" for key, settings
              in values.items() if not isinstance(settings, dict) or not settings]
    return lines


def axis_points(axis: str, values: list | dict) -> list[tuple[Any, dict[str, Any]]]:
    """An axis's values as (its part of the run id, the run fields it sets): a list axis sets its own dotted field
    to each value; a named-settings axis ({name: {field: value}}) sets each name's fields, named by the name."""
    if isinstance(values, dict):
        return [(name, dict(settings)) for name, settings in values.items()]
    return [(value, {axis: value}) for value in values]


def _merged(base: Any, over: Any) -> Any:
    """`over` deep-merged into `base`: mappings merge key by key, anything else (lists included) is replaced."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return copy.deepcopy(over)
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if key in out else copy.deepcopy(value)
    return out


def resolve_studies(selected: Any, catalogue: dict[str, dict] | None = None, source: str = "profile") -> Any:
    """A profile's `studies` ({name: scale}) as full studies ({name: {base, grid, ...}}, what `expand_all` reads),
    in the profile's order. Each named study is the catalogue's, with the profile's scale applied: its `base`
    deep-merged into the study's base, its `grid` values replacing the declared axes' values (null holds an axis
    at the base's value: no axis, no part of the run ids), its runs_per_process / seeds_per_process set, its
    sparsity_from set (null: the declared sparsity) or kept; `{}` (or nothing) takes the study as declared. An axis
    keeps the catalogue's place in the grid whatever the profile's order, so the run ids do not depend on it. An
    unknown study, key or axis is one line each. Anything but a mapping is returned as is, for the schema to
    report."""
    if not isinstance(selected, dict):
        return selected
    cat = load_catalogue() if catalogue is None else catalogue
    studies, lines = {}, []
    for name, scale in selected.items():
        where = f"studies.{name}"
        if name not in cat:
            lines.append(f"field '{where}': no such study in {CATALOGUE}; declared: {', '.join(cat)}")
            continue
        scale = {} if scale is None else scale
        if not isinstance(scale, dict):
            lines.append(f"field '{where}': must be a mapping of the study's scale ({', '.join(SCALE_KEYS)}) or {{}}, "
                         f"got {type(scale).__name__}")
            continue
        unknown = [key for key in scale if key not in SCALE_KEYS]
        lines += [f"field '{where}.{key}': a profile sets a study's scale only ({', '.join(SCALE_KEYS)}); what the "
                  f"study is and varies is declared in {CATALOGUE}" for key in unknown]
        if scale.get("sparsity_from", "selection") not in ("selection", None):
            lines.append(f"field '{where}.sparsity_from': selection (the MAST selection's sparsity) or null (the "
                         f"declared one), got {scale['sparsity_from']!r}")
        declared = cat[name]
        study = {key: copy.deepcopy(value) for key, value in declared.items() if key not in ("doc", "grid")}
        if "base" in scale:
            if not isinstance(scale["base"], dict):
                lines.append(f"field '{where}.base': must be a mapping of run fields, "
                             f"got {type(scale['base']).__name__}")
                continue
            study["base"] = _merged(declared.get("base", {}), scale["base"])
        over = scale.get("grid") or {}
        if isinstance(over, list) and over and all(isinstance(part, dict) for part in over):
            # a union of grids: each part a product of its own, e.g. more seeds for the methods a claim compares
            study["grid"] = [_scaled_grid(name, declared, part, f"{where}.grid[{i}]", lines)
                             for i, part in enumerate(over)]
        elif isinstance(over, dict):
            study["grid"] = _scaled_grid(name, declared, over, f"{where}.grid", lines)
        else:
            lines.append(f"field '{where}.grid': must be a mapping of declared axes to lists of values, or a list of "
                         "such mappings (their runs together)")
            continue
        study.update({key: scale[key] for key in ("runs_per_process", "seeds_per_process") if key in scale})
        if "sparsity_from" in scale:
            study.pop("sparsity_from", None)
            if scale["sparsity_from"] is not None:
                study["sparsity_from"] = scale["sparsity_from"]
        studies[name] = study
    if lines:
        raise ConfigError(lines, source)
    return studies


def _scaled_grid(name: str, declared: dict, over: dict, where: str, lines: list[str]) -> dict:
    """The catalogue's grid of study `name` with a profile's values `over` ({axis: values}) in place of the declared
    ones (resolve_studies), appending one line per bad axis to `lines`; null holds an axis at the base's value."""
    grid = dict(declared.get("grid") or {})
    for axis, values in over.items():
        if axis not in grid:
            lines.append(f"field '{where}.{axis}': {name} does not vary {axis!r}; its axes: "
                         f"{', '.join(grid) or 'none'} (a new axis is declared in {CATALOGUE})")
        elif isinstance(grid[axis], dict) and values is not None:
            unknown = [v for v in values if v not in grid[axis]] if isinstance(values, list) else [values]
            if unknown or not values:
                lines.append(f"field '{where}.{axis}': a list of the declared names "
                             f"({', '.join(grid[axis])}), or null; got {values!r}")
            else:  # the named settings selected, in the catalogue's order
                grid[axis] = {n: settings for n, settings in grid[axis].items() if n in values}
        elif values is not None and not isinstance(values, list):
            lines.append(f"field '{where}.{axis}': must be a list of values, or null to hold it at the base's "
                         f"value, got {values!r}")
        else:
            grid[axis] = values
    return {axis: copy.deepcopy(values) for axis, values in grid.items() if values is not None}


# The workflow rules whose outputs are times besides the timing studies' runs: the interleaved sampling benchmark, the
# loop profile (paper 1's update-share verdict) and `effmarl bench paper1`. With timing_studies, the one list of what
# runs alone (workflow/rules/common.smk schedules it so; analysis/envelope.py prices it so).
TIMING_RULES = ("paper1_sampling_bench", "paper1_loop_profile", "bench_paper1")


def timing_studies(workflow_cfg: dict) -> list[str]:
    """The profile's studies declared `timing: true` in the catalogue: their runs' phase timers feed a time, a share
    of time or a timing ranking, so each run is a job with the machine to itself (workflow/rules/common.smk). Such a
    study trains one run per process, or one interleaved pair (`interleave: true`): several runs of one job one after
    another would time each other, or be timed under different loads (one line per refusal)."""
    timing = [name for name, study in workflow_cfg["studies"].items() if study.get("timing", False)]
    lines = [f"field 'studies.{name}.{key}': {name} is a timing study (each run timed alone, {CATALOGUE}); it "
             f"trains one run per process, got {key} {workflow_cfg['studies'][name][key]}"
             for name in timing for key in ("runs_per_process", "seeds_per_process")
             if workflow_cfg["studies"][name].get(key, 1) > 1]
    if lines:
        raise ConfigError(lines, "profile")
    return timing


def headline_k(workflow_cfg: dict | None = None) -> int:
    """The neighbor window k of paper 1's headline runs: `replay.neighbor_k` of the `paper1` study as the resolved
    profile `workflow_cfg` runs it, or as the catalogue declares it (no profile, or one without paper1). The sampling
    benchmark marks that window (`--headline-k`) for the readers that quote it beside uniform."""
    studies = (workflow_cfg or {}).get("studies") or {}
    study = studies.get("paper1") or resolve_studies({"paper1": {}})["paper1"]
    return int(study["base"]["replay"]["neighbor_k"])


def resolve_profile(profile: Any, catalogue: dict[str, dict] | None = None, source: str = "profile") -> Any:
    """`profile` with its studies resolved against the catalogue (`resolve_studies`), not yet validated."""
    if not isinstance(profile, dict) or "studies" not in profile:
        return profile
    return {**profile, "studies": resolve_studies(profile["studies"], catalogue, source)}


def load_profile(path: str | Path) -> dict:
    """A profile file read (a repeated key refused), its studies resolved against the catalogue and validated (the
    schema's defaults filled in): what the Snakefile, `effmarl validate` and the resource table read."""
    return validate(resolve_profile(load_yaml(path), source=str(path)), source=str(path))


def _short_hash(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:6]


def _id_value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "x".join(_id_value(v) for v in value) or "empty"
    if isinstance(value, dict):
        return "h" + _short_hash(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z0-9.+-]+", text):
        return text
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-") + "-h" + _short_hash(value)


def run_id(point: dict[str, Any]) -> str:
    """A readable run id from grid values, e.g. {"env.n_agents": 3, "seed": 0} -> "n_agents-3_seed-0".

    Lists join with x ([64, 64] -> 64x64); any other character that is not safe in a file name or a
    Snakemake wildcard becomes '-' plus a short hash of the value, so ids stay distinct.
    """
    if not point:
        return "run"
    return "_".join(f"{key.split('.')[-1]}-{_id_value(value)}" for key, value in point.items())


def expand_study(name: str, study: dict, profile: str, prepare=None) -> dict[str, dict]:
    """All runs of one study as {run_id: validated run config}, in grid order; `prepare(cfg, run_id)`, if given,
    completes each raw config before it is validated. A named-settings axis ({name: {field: value}}) contributes
    its names to the run ids (without-td-lambda_seed-0) and their fields to the runs. A list of grids (a profile's
    union) gives the runs of each in turn, a run two of them name once."""
    grids = study.get("grid", {})
    runs: dict[str, dict] = {}
    points = ((grid, values) for grid in (grids if isinstance(grids, list) else [grids])
              for values in itertools.product(*(axis_points(axis, v) for axis, v in grid.items())))
    for grid, values in points:
        point = {axis: ident for axis, (ident, _) in zip(grid, values, strict=True)}
        cfg = copy.deepcopy(study["base"])
        cfg["study"], cfg["profile"] = name, profile
        for _, fields in values:
            for key, value in fields.items():
                set_dotted(cfg, key, value)
        rid = run_id(point)
        if prepare is not None:
            prepare(cfg, rid)
        runs[rid] = validate(cfg, part="run", source=f"studies.{name} run {rid}")
    return runs


def expand_all(workflow_cfg: dict) -> dict[str, dict[str, dict]]:
    """Every study's runs, validated: {study: {run_id: run config}}."""
    studies = workflow_cfg["studies"]
    # a study whose tickets come from another study is expanded after it (its runs name the source's run dirs)
    order = sorted(studies, key=lambda name: studies[name].get("ticket_source") is not None)
    runs: dict[str, dict[str, dict]] = {}
    for name in order:
        runs[name] = expand_study(name, studies[name], workflow_cfg["profile"],
                                  prepare=ticket_source_hook(workflow_cfg, name, runs))
    runs = {name: runs[name] for name in studies}
    if selection_studies(workflow_cfg) and not {"mast_dense", "mast_sweep"} <= runs.keys():
        raise ConfigError([f"field 'studies.{selection_studies(workflow_cfg)[0]}.sparsity_from': the selection "
                           "needs studies mast_dense and mast_sweep in the profile"], "profile")
    problems = (comparison_problems(workflow_cfg, runs) + lockstep_problems(workflow_cfg, runs)
                + evaluation_problems(workflow_cfg, runs))
    if problems:
        raise ConfigError(problems, "profile")
    bench_run = workflow_cfg.get("bench", {}).get("sparse", {}).get("run")
    if bench_run is not None:
        study, _, rid = bench_run.partition("/")
        cfg = runs.get(study, {}).get(rid)
        if cfg is None or not METHODS[cfg.get("sparse", {}).get("method", "dense")].masks or \
                cfg.get("qmix", {}).get("shared_params", True):
            raise ConfigError([f"field 'bench.sparse.run': {bench_run!r} is not a sparse run with per-agent networks "
                               "of this profile (<study>/<run id>, a sparse.method with masks, "
                               "qmix.shared_params: false)"], "profile")
    return runs


def ticket_source_hook(workflow_cfg: dict, study: str, runs: dict[str, dict[str, dict]]):
    """For a study with ticket_source: a function that sets a (raw) run config's sparse.ticket.source to the
    source study's run directory with the same seed, for winning and cheating tickets. The source must be another
    study, expanded already, with exactly one run per seed. None for other studies."""
    source = workflow_cfg["studies"][study].get("ticket_source")
    if source is None:
        return None
    where = f"studies.{study}.ticket_source"
    if source not in workflow_cfg["studies"] or source == study:
        raise ConfigError([f"field '{where}': {source!r} is not another study of this profile"], "profile")
    by_seed: dict[int, list[str]] = {}
    for rid, cfg in runs[source].items():
        by_seed.setdefault(cfg["seed"], []).append(rid)

    def hook(cfg: dict, rid: str) -> None:
        ticket = cfg.setdefault("sparse", {}).setdefault("ticket", {})
        if ticket.get("kind") not in ("winning", "cheating"):
            return
        match = by_seed.get(cfg.get("seed"), [])
        if len(match) != 1:
            raise ConfigError([f"field '{where}': study {source!r} has {len(match)} runs with seed "
                               f"{cfg.get('seed')} (run {rid} needs exactly one)"], "profile")
        ticket["source"] = f"{workflow_cfg['results_dir']}/{source}/{match[0]}"

    return hook


def selected_config(cfg: dict, selection_csv: str | Path) -> dict:
    """`cfg` with sparse.sparsity set to the sparsity the MAST selection table (columns algo, map, sparsity,
    chosen) chose for the run's (algo, map); a table without exactly one chosen row for it is refused."""
    import csv

    with open(selection_csv, newline="") as handle:
        rows = [row for row in csv.DictReader(handle)
                if row.get("algo") == cfg["algo"] and row.get("map") == cfg["env"]["map"]
                and row.get("chosen", "").strip().lower() == "true"]
    if len(rows) != 1:
        raise ConfigError([f"{len(rows)} chosen sparsities for algo {cfg['algo']!r} map {cfg['env']['map']!r} "
                           "(expected exactly one; the profile's mast_sweep and mast_dense must cover them)"],
                          str(selection_csv))
    out = copy.deepcopy(cfg)
    out["sparse"]["sparsity"] = float(rows[0]["sparsity"])
    return out
