"""Checks across a profile's runs, before any job starts: what paper 2's comparisons must share
(`comparison_problems`, COMPARABLE_SETTINGS, and paper 1's PAPER1_COMPARABLE_SETTINGS that the analysis checks on the
results), seeds in lockstep only where they pay (`lockstep_problems`), evaluation noise below seed noise in an evidence
profile (`evaluation_problems`), and which studies take their sparsity from the selection. effmarl.studies.expand_all
runs them; each returns one line per problem, naming the field."""

from __future__ import annotations

from effmarl.config import get_dotted
from effmarl.schedules import FINAL_FRACTION, LAST_K, MIN_FINAL_EPISODES, final_eval_episodes, final_evaluations
from effmarl.variants import QMIX_VARIANTS as LOCKSTEP_ALGOS  # the qmix family, read live


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


# profiles whose results are read as evidence (smoke only runs the plumbing)
EVIDENCE_PROFILES = ("default", "extended", "paper")


def evaluation_problems(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> list[str]:
    """Evaluation noise below seed noise: in an evidence profile, every QMIX-family run's win-rate statistic (the last
    min(LAST_K, available) evaluations in the final FINAL_FRACTION of training) must rest on at least
    MIN_FINAL_EPISODES greedy episodes (schedules.final_eval_episodes, from budget.env_steps, qmix.eval_every and
    qmix.eval_episodes). One line per study, naming its first such run."""
    if workflow_cfg.get("profile") not in EVIDENCE_PROFILES:
        return []
    lines = []
    for study, by_id in runs.items():
        for rid, cfg in by_id.items():
            if cfg["algo"] not in LOCKSTEP_ALGOS or final_eval_episodes(cfg) >= MIN_FINAL_EPISODES:
                continue
            q, steps = cfg["qmix"], cfg["budget"]["env_steps"]
            lines.append(f"field 'studies.{study}.base.qmix.eval_episodes': run {rid} averages "
                         f"{final_evaluations(steps, q['eval_every'])} evaluation(s) of {q['eval_episodes']} greedy "
                         f"episodes in its final {FINAL_FRACTION:.0%} ({steps} env steps, one evaluation every "
                         f"{q['eval_every']}): {final_eval_episodes(cfg)} episodes, an evidence profile needs >= "
                         f"{MIN_FINAL_EPISODES} (evaluation noise below seed noise); raise qmix.eval_episodes or lower "
                         f"qmix.eval_every (at most {LAST_K} evaluations count)")
            break
    return lines


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
# and every study with sparsity_from: selection
COMPARISON_STUDIES = ("mast_dense", "mast_sweep", "mast_fig8", "mast_components")


def comparison_problems(workflow_cfg: dict, runs: dict[str, dict[str, dict]]) -> list[str]:
    """One line per COMPARABLE_SETTINGS value that differs between the studies paper 2's comparisons put side by side
    (mast_dense, mast_sweep, mast_fig8, mast_components and the sparsity_from studies), within one (algo, map)."""
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
