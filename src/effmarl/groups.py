"""Which runs share one training process: seeds of one configuration in lockstep (`seed_groups`), paper 1's
neighbor/uniform pairs trained interleaved (`sampler_pairs`), and a profile's jobs of several runs
(`process_groups`, read by the workflow, the cost estimate and `effmarl train`; `workflow_groups`, the workflow's jobs
with the runs a profile copies)."""

from __future__ import annotations

import json

from effmarl.config import ConfigError
from effmarl.pairs import PAIR_FIELDS
from effmarl.reuse import trained
from effmarl.variants import QMIX_VARIANTS as LOCKSTEP_ALGOS  # the qmix family, read live


def seed_groups(cfgs: list[dict]) -> list[list[int]]:
    """Indices of `cfgs` grouped by their configuration without the seed, in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, cfg in enumerate(cfgs):
        groups.setdefault(json.dumps({**cfg, "seed": None}, sort_keys=True, default=str), []).append(i)
    return list(groups.values())


def sampler_pairs(cfgs: list[dict], source: str = "effmarl train --interleave") -> list[list[int]]:
    """Indices of `cfgs` grouped by their configuration without `replay.sampler` and `replay.neighbor_k` (which only
    the neighbor sampler reads), in order of first appearance, each group [uniform, neighbor]: paper 1's interleaved
    pairs. A run without its counterpart, two runs of one sampler in a group, or a run with no replay section (not
    maddpg/masac) is refused with one line per group."""
    groups: dict[str, list[int]] = {}
    for i, cfg in enumerate(cfgs):
        if "replay" not in cfg:
            raise ConfigError([f"field 'algo': {cfg['algo']!r} has no replay sampler to pair (run {i + 1}); "
                               "interleaved pairs are maddpg/masac runs"], source)
        key = {**cfg, "replay": {k: v for k, v in cfg["replay"].items() if k not in PAIR_FIELDS}}
        groups.setdefault(json.dumps(key, sort_keys=True, default=str), []).append(i)
    lines, pairs = [], []
    for members in groups.values():
        samplers = sorted(cfgs[i]["replay"]["sampler"] for i in members)
        if samplers != ["neighbor", "uniform"]:
            lines.append(f"field 'replay.sampler': runs {', '.join(str(i + 1) for i in members)} (seed "
                         f"{cfgs[members[0]]['seed']}) have samplers {samplers}; an interleaved pair is one uniform "
                         "and one neighbor run equal in every other field")
            continue
        pairs.append(sorted(members, key=lambda i: cfgs[i]["replay"]["sampler"] != "uniform"))
    if lines:
        raise ConfigError(lines, source)
    return pairs


def process_groups(workflow_cfg: dict, runs: dict[str, dict[str, dict]],
                   groups: dict[str, tuple[str, list[str]]] | None = None) -> dict[str, tuple[str, list[str]]]:
    """Jobs that train several runs in one process: {job name: (study, [run ids])}. A study declared
    `interleave: true` puts each neighbor/uniform pair (`sampler_pairs`) in one job (`effmarl train --interleave`,
    job `pairs_…`). A study with runs_per_process = k > 1 (qmix family) puts k runs at a time in one job, in grid
    order, whatever they vary; otherwise seeds_per_process = k > 1 groups the runs that differ only in their seed, k
    at a time. Inside the process, seeds of one configuration train in lockstep (effmarl train). Every other run
    stays a job of its own. With `groups` (jobs already made), the new jobs are added to them, numbered after them."""
    groups = {} if groups is None else dict(groups)
    for study, spec in workflow_cfg["studies"].items():
        if spec.get("interleave", False):  # paper 1's neighbor/uniform pairs, each trained interleaved in one job
            ids = list(runs[study])
            for pair in sampler_pairs([runs[study][rid] for rid in ids], f"profile: study {study} (interleave)"):
                groups[f"pairs_{study}_{len(groups)}"] = (study, [ids[i] for i in pair])
            continue
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


def workflow_groups(workflow_cfg: dict, runs: dict[str, dict[str, dict]], copied: dict[tuple[str, str], str],
                    planned: dict[tuple[str, str], str]) -> dict[str, tuple[str, list[str]]]:
    """The workflow's jobs of several runs: `process_groups` of the runs the profile trains (`runs` less `planned`,
    the copies it makes once its reused profile has run: effmarl.reuse.planned), then, numbered after them, of the
    runs it trains only because the run they would copy is not there yet (in `planned`, not in `copied`). Snakemake
    removes a job's outputs before it runs it, so a job is retrained whole when one of its runs is missing: were those
    stand-ins grouped with the profile's own runs, its jobs would change once the reused profile has run, and finished
    runs would train again."""
    own = process_groups(workflow_cfg, trained(runs, planned))
    waiting = set(planned) - set(copied)
    stand_ins = {study: {rid: cfg for rid, cfg in by_id.items() if (study, rid) in waiting}
                 for study, by_id in runs.items()}
    return process_groups(workflow_cfg, stand_ins, own)
