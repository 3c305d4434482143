"""A profile's studies as runs and jobs: every study's grid expanded into validated run configs with readable run
ids (`expand_all`, with the profile-level checks that need all runs: the MAST selection's studies, paper 2's
comparable settings, the sparse benchmark's run), the wiring between studies (ticket sources, the sparsity a
`sparsity_from: selection` run takes from the selection table), and which runs share one training process
(`process_groups`). One run's own fields are validated by `effmarl.config`.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import Any

from effmarl.config import ConfigError, get_dotted, set_dotted, validate


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
    problems = comparison_problems(workflow_cfg, runs) + lockstep_problems(workflow_cfg, runs)
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


from effmarl.algos.variants import QMIX_VARIANTS as LOCKSTEP_ALGOS  # noqa: E402 - the qmix family, read live


def lockstep_problems(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> list[str]:
    """Seeds in lockstep only where they pay: on a CPU 8 seeds in one process cost 7.9-10.2x one seed's time
    (benchmarks/results/qmix_lockstep_cpu.md: the learner is compute-bound there, and seeds with their own
    parameters share no work), no less than 8 separate jobs, so seeds_per_process > 1 is refused for runs on the CPU
    (device cpu, or auto on a host without CUDA). On CUDA, vmap runs every seed's op as one kernel."""
    lines = []
    for study, spec in workflow_cfg["studies"].items():
        if spec.get("seeds_per_process", 1) == 1:
            continue
        devices = {cfg["device"] for cfg in runs[study].values() if cfg["algo"] in LOCKSTEP_ALGOS}
        if "auto" in devices:
            import torch

            devices = {d if d != "auto" else ("cuda" if torch.cuda.is_available() else "cpu") for d in devices}
        if "cpu" in devices:
            lines.append(f"field 'studies.{study}.seeds_per_process': seeds in lockstep would run on the cpu, where 8 "
                         "seeds cost 7.9-10.2x one seed (benchmarks/results/qmix_lockstep_cpu.md), no less than 8 "
                         "separate jobs; set 1 (one job per seed) or runs_per_process, or device: cuda")
    return lines


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
# What the paper-1 runs whose phase times one figure or claim compares across N must share: one budget and the
# same update rounds (an MPE episode has max_cycles steps at every N). Checked on the results
# (metrics.require_one_budget).
PAPER1_COMPARABLE_SETTINGS = ("budget.episodes", "env.max_cycles", "env.num_envs", "offpolicy.warmup",
                              "offpolicy.update_every", "offpolicy.batch_size", "offpolicy.lr")
COMPARISON_STUDIES = ("mast_dense", "mast_sweep", "mast_fig8")  # and every study with sparsity_from: selection


def comparison_problems(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> list[str]:
    """One line per COMPARABLE_SETTINGS value that differs between the studies paper 2's comparisons put side by side
    (mast_dense, mast_sweep, mast_fig8 and the sparsity_from studies), within one (algo, map)."""
    studies = [s for s in (*COMPARISON_STUDIES, *selection_studies(workflow_cfg)) if s in runs]
    seen: dict[tuple, dict[str, dict]] = {}
    for study in dict.fromkeys(studies):
        for cfg in runs[study].values():
            cell = seen.setdefault((cfg.get("algo"), get_dotted(cfg, "env.map")), {})
            for path in COMPARABLE_SETTINGS:
                cell.setdefault(path, {}).setdefault(repr(get_dotted(cfg, path)), []).append(study)
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
