"""Configuration: one JSON schema (workflow/schemas/config.schema.yaml) for workflow profiles and runs.

Validation fills the schema's defaults in place, so the schema is the one place defaults live, and
reports every problem as one line naming the field and what is allowed, before any compute starts.
Stricter than plain JSON Schema where plain is wrong for us: `number` is a finite number (JSON Schema's
bounds are false for NaN, so NaN would pass any bound), `integer` is an int (3.0 is not), a boolean is
neither, and a YAML mapping with a repeated key is an error (YAML would keep the last one silently).
A run's cross-field checks (one algorithm's fields against another's) run inside `validate`, so
`effmarl validate`, the workflow's profile expansion and `effmarl train` accept exactly the same runs.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import itertools
import json
import math
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml


class ConfigError(ValueError):
    """A configuration that does not satisfy the schema; `lines` holds one message per problem."""

    def __init__(self, lines: list[str], source: str = "config"):
        self.lines = lines
        self.source = source
        super().__init__("\n".join(f"{source}: {line}" for line in lines))


@cache
def schema() -> dict:
    text = resources.files("effmarl").joinpath("schemas/config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _is_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float) and math.isfinite(instance))


TYPE_CHECKER = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number})


@cache
def _validator_with_defaults():
    """A Draft 2020-12 validator that also writes each property's `default` into the instance."""
    base = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=TYPE_CHECKER)
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            # A section's default sits beside its $ref (`budget: {$ref: ..., default: {}}`): only the
            # property schemas seen here are read, so a $defs entry can be filled per algorithm (allOf/if).
            for name, prop in properties.items():
                if "default" in prop and name not in instance:
                    instance[name] = copy.deepcopy(prop["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    return jsonschema.validators.extend(base, {"properties": set_defaults})


def _field(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    kind, subschema = error.validator, error.schema
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(subschema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed), key=repr)
        where = _field(error.absolute_path)
        return f"field '{where}': unknown key(s) {', '.join(map(repr, extra))}; allowed keys: {', '.join(allowed)}"
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"field '{_field([*error.absolute_path, missing])}': required but missing"
    if kind == "enum":
        return (
            f"field '{_field(error.absolute_path)}': {error.instance!r} is not allowed; "
            f"allowed values: {', '.join(map(repr, subschema['enum']))}"
        )
    if kind == "const":
        return f"field '{_field(error.absolute_path)}': must be {subschema['const']!r}, got {error.instance!r}"
    if kind == "type":
        wanted = subschema["type"] if isinstance(subschema["type"], list) else [subschema["type"]]
        words = {"number": "a finite number", "integer": "an integer"}
        got = error.instance
        got = f"{got!r} ({type(got).__name__})" if not isinstance(got, dict | list) else type(got).__name__
        return f"field '{_field(error.absolute_path)}': must be {' or '.join(words.get(w, w) for w in wanted)}, " \
               f"got {got}"
    if kind in ("maximum", "exclusiveMaximum"):
        return f"field '{_field(error.absolute_path)}': {error.instance!r} is above the upper bound " \
               f"{subschema[kind]} ({'inclusive' if kind == 'maximum' else 'exclusive'})"
    return f"field '{_field(error.absolute_path)}': {error.message}"


def validate(instance: dict, *, part: str = "workflow", source: str = "config") -> dict:
    """Validate `instance` (filling defaults in place) against the whole schema or one of its $defs.

    part: "workflow" for a profile (configs/*.yaml), or a $defs name such as "run".
    """
    full = schema()
    target = full if part == "workflow" else {"$ref": f"#/$defs/{part}", "$defs": full["$defs"]}
    if not isinstance(instance, dict):
        raise ConfigError([f"the {part} configuration must be a mapping, got {type(instance).__name__}"], source)
    validator = _validator_with_defaults()(target)
    errors = sorted(validator.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    lines = list(dict.fromkeys(_describe(e) for e in errors))
    if lines:
        raise ConfigError(lines, source)
    if part == "run":
        cross_checks(instance, source)
    return instance


# algo -> "module:function" of its cross-field checks (imported only when such a run is validated)
CROSS_CHECKS = {
    "maddpg": "effmarl.config:offpolicy_checks",
    "masac": "effmarl.config:offpolicy_checks",
    "qmix": "effmarl.algos.qmix:check_config",
    "ow_qmix": "effmarl.algos.qmix:check_config",
    "res_qmix": "effmarl.algos.qmix:check_config",
}


def cross_checks(cfg: dict, source: str = "config") -> None:
    """The checks the schema cannot express, for a schema-valid run; ConfigError lines name the fields."""
    target = CROSS_CHECKS.get(cfg["algo"])
    if target is None:
        return
    module, func = target.split(":")
    try:
        getattr(importlib.import_module(module), func)(cfg)
    except ConfigError as exc:
        raise ConfigError(exc.lines, source) from None


def offpolicy_checks(cfg: dict) -> None:
    """Cross-field checks of paper 1's off-policy loop (MADDPG, MASAC)."""
    off, replay, lines = cfg["offpolicy"], cfg["replay"], []
    if off["batch_size"] > replay["buffer_size"]:
        lines.append(f"field 'offpolicy.batch_size': {off['batch_size']} exceeds replay.buffer_size "
                     f"{replay['buffer_size']}")
    if off["warmup"] > replay["buffer_size"]:
        lines.append(f"field 'offpolicy.warmup': {off['warmup']} exceeds replay.buffer_size "
                     f"{replay['buffer_size']}, so no update would ever run")
    if replay["sampler"] == "neighbor" and replay["neighbor_k"] > off["batch_size"]:
        lines.append(f"field 'replay.neighbor_k': {replay['neighbor_k']} exceeds offpolicy.batch_size "
                     f"{off['batch_size']}")
    if lines:
        raise ConfigError(lines, f"run {cfg['study']}")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with a repeated key. YAML merge keys (`<<: *anchor`) are allowed: the
    mapping's own keys override the merged ones, and only its own keys must be unique."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base class reports it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (YAML would keep only the last one)", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError([f"not valid YAML: {' '.join(str(exc).split())}"], source) from None


def load_yaml(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(["no such file"], str(path)) from None
    except IsADirectoryError:
        raise ConfigError(["is a directory, not a YAML file"], str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(["not a text file (not UTF-8), so not YAML"], str(path)) from None
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], str(path)) from None
    return parse_yaml(text, str(path))


def load_run_config(path: str | Path) -> dict:
    """Read and validate one run's configuration file."""
    return validate(load_yaml(path), part="run", source=str(path))


def config_hash(cfg: dict) -> str:
    """A short, stable hash of a configuration (key order does not matter)."""
    canonical = json.dumps(cfg, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def set_dotted(cfg: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = cfg
    for key in parents:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError([f"field '{dotted}': '{key}' is not a mapping"])
    node[leaf] = copy.deepcopy(value)


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
    completes each raw config before it is validated."""
    grid = study.get("grid", {})
    runs: dict[str, dict] = {}
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values, strict=True))
        cfg = copy.deepcopy(study["base"])
        cfg["study"], cfg["profile"] = name, profile
        for key, value in point.items():
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
    problems = comparison_problems(workflow_cfg, runs)
    if problems:
        raise ConfigError(problems, "profile")
    bench_run = workflow_cfg.get("bench", {}).get("sparse", {}).get("run")
    if bench_run is not None:
        study, _, rid = bench_run.partition("/")
        cfg = runs.get(study, {}).get(rid)
        if cfg is None or cfg.get("sparse", {}).get("method", "dense") in ("dense", "tiny") or \
                cfg.get("qmix", {}).get("shared_params", True):
            raise ConfigError([f"field 'bench.sparse.run': {bench_run!r} is not a sparse run with per-agent networks "
                               "of this profile (<study>/<run id>, sparse.method other than dense or tiny, "
                               "qmix.shared_params: false)"], "profile")
    return runs


LOCKSTEP_ALGOS = ("qmix", "ow_qmix", "res_qmix")


def seed_groups(cfgs: list[dict]) -> list[list[int]]:
    """Indices of `cfgs` grouped by their configuration without the seed, in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, cfg in enumerate(cfgs):
        groups.setdefault(json.dumps({**cfg, "seed": None}, sort_keys=True, default=str), []).append(i)
    return list(groups.values())


def process_groups(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> dict[str, tuple[str, list[str]]]:
    """Jobs that train several runs in one process: {job name: (study, [run ids])}. A study with
    runs_per_process = k > 1 (qmix family) puts k runs at a time in one job, in grid order, whatever they vary;
    otherwise seeds_per_process = k > 1 groups the runs that differ only in their seed, k at a time. Inside the
    process, seeds of one configuration train in lockstep (effmarl train). Every other run stays a job of its own."""
    groups = {}
    for study, spec in workflow_cfg["studies"].items():
        members = [rid for rid, cfg in runs[study].items() if cfg["algo"] in LOCKSTEP_ALGOS]
        k = spec.get("runs_per_process", 1)
        if k > 1:
            chunks = [members[start: start + k] for start in range(0, len(members), k)]
            kind = "batch"
        else:
            k, kind = spec.get("seeds_per_process", 1), "lockstep"
            by_config = [[members[i] for i in group] for group in seed_groups([runs[study][r] for r in members])]
            chunks = [ids[start: start + k] for ids in by_config for start in range(0, len(ids), k)]
        for chunk in chunks:
            if len(chunk) > 1:
                groups[f"{kind}_{study}_{len(groups)}"] = (study, chunk)
    return groups


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


# What every run that paper 2's comparisons put side by side (the sparsity selection, Table 1, Fig. 8) must share:
# the paper runs every method "with identical hyper-parameters". Checked per (algo, map) on the profile's runs
# before any job starts (`comparison_problems`) and again on the results by the analysis (metrics.require_comparable).
COMPARABLE_SETTINGS = ("budget.env_steps", "qmix.updates_per_round", "qmix.num_envs", "qmix.batch_size", "qmix.lr",
                       "qmix.epsilon_anneal_time", "qmix.scale_schedules", "qmix.eval_every", "qmix.eval_episodes",
                       "qmix.shared_params")
COMPARISON_STUDIES = ("mast_dense", "mast_sweep", "mast_fig8")  # and every study with sparsity_from: selection


def _dotted(cfg: dict, path: str):
    for part in path.split("."):
        if not isinstance(cfg, dict) or part not in cfg:
            return None
        cfg = cfg[part]
    return cfg


def comparison_problems(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> list[str]:
    """One line per COMPARABLE_SETTINGS value that differs between the studies paper 2's comparisons put side by side
    (mast_dense, mast_sweep, mast_fig8 and the sparsity_from studies), within one (algo, map)."""
    studies = [s for s in (*COMPARISON_STUDIES, *selection_studies(workflow_cfg)) if s in runs]
    seen: dict[tuple, dict[str, dict]] = {}
    for study in dict.fromkeys(studies):
        for cfg in runs[study].values():
            cell = seen.setdefault((cfg.get("algo"), _dotted(cfg, "env.map")), {})
            for path in COMPARABLE_SETTINGS:
                cell.setdefault(path, {}).setdefault(repr(_dotted(cfg, path)), []).append(study)
    lines = []
    for (algo, env_map), cell in seen.items():
        for path, values in cell.items():
            if len(values) > 1:
                text = "; ".join(f"{value} in {', '.join(dict.fromkeys(names))}" for value, names in values.items())
                lines.append(f"field '{path}': the studies paper 2 compares differ for {algo} on {env_map} ({text}); "
                             "every method of one comparison must be trained alike")
    return lines


def selection_studies(workflow_cfg: dict) -> list[str]:
    """Studies whose runs take their sparsity from the MAST sparsity selection (sparsity_from: selection)."""
    return [name for name, spec in workflow_cfg["studies"].items() if spec.get("sparsity_from") == "selection"]
