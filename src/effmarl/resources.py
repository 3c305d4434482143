"""Cluster resources of one training run, derived from its configuration: memory, runtime and GPUs.

The workflow's train rule asks `for_run(cfg)` for its `resources:` (mem_mb, runtime in minutes, gpu), so a
SLURM job requests what that run needs, not one size for all.

- memory: the measured footprint of a run process (imports, networks, environment) plus its replay storage at
  the size it reaches. Paper 1 stores min(buffer_size, episodes x max_cycles) joint transitions of N agents;
  the reference storage (a Python tuple per agent-transition, as openai/maddpg) costs a measured overhead per
  agent-transition, the contiguous one 4 bytes per float. A checkpoint of the reference storage pickles the
  list into memory twice over (torch.save builds the pickle in a BytesIO, then copies it out), so it peaks at
  three times the storage; tensors are written straight out. Paper 2's episode buffers are allocated whole
  (capacity x padded episode), MAST's dual buffer adds B2 = buffer_size / size_ratio.
- runtime: paper 1: env steps x the cost of a step, plus its update rounds (every update_every steps once
  warm-up is stored) x the cost of a round. Paper 2: env steps x the acting cost per step, plus its updates (env
  steps / the episode length x updates_per_round / num_envs) x the cost of one update, plus its evaluations. Times
  a safety factor.
- gpu: 1 when the run's config selects CUDA (`device: cuda`); `auto` asks for none (it uses one if present).

The costs are the measured table's (effmarl.step_costs: benchmarks/results/step_cost.csv, re-measured by
`python benchmarks/step_cost.py`, on one core of a 2-core AMD EPYC virtual machine), the same prices the profile
estimate (`effmarl costs --estimate`, analysis/envelope.py) uses.

    python -m effmarl.resources configs/paper.yaml     # the resource table of a profile
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict

from effmarl import step_costs
from effmarl.components import mast_components
from effmarl.groups import seed_groups
from effmarl.methods import method
from effmarl.scenarios import scenario
from effmarl.step_costs import interpolate

MIB = 2**20
SAFETY = 1.5            # runtime requested = estimate x SAFETY (+ START_MIN); a late job is lost work
START_MIN = 5           # process start, imports, JIT compilation, writing outputs
MIN_RUNTIME_MIN = 10
HEADROOM = 1.25         # memory requested = estimate x HEADROOM, rounded up to 100 MB
MIN_MEM_MB = 1000

# What a run costs before its replay storage grows, at least: paper 1 takes the larger of this and the measured
# peak of a short run at its N (step_costs: maxrss in step_cost.csv; 1 188 MB at N = 48), paper 2 this.
BASE_MB = {"mpe": 500, "smax": 1500}
# Bytes per agent-transition of the reference storage beyond its float data (tuple, numpy array and float
# objects); measured with tracemalloc and the RSS of a filled run (tests/test_slurm_resources.py).
REFERENCE_OVERHEAD_B = 1200

# SMAX maps as the adapter builds them: agents, observation size, actions, state size, episode limit.
SMAX_MAPS = {"3m": (3, 75, 8, 72, 60), "2s3z": (5, 127, 10, 120, 120), "3s5z": (8, 205, 13, 192, 150),
             "5m_vs_6m": (5, 140, 11, 132, 70), "64zg_approx": (2, 921, 69, 858, 400)}
# Paper 2's per-map costs (effmarl.step_costs) were measured between 5 000 and 20 000 env steps; a map not measured
# is interpolated over agents x observation size (log-log) between the measured maps. Any sparse method is priced
# as MAST (the dearest: dual buffer, TD(lambda)).
# Greedy evaluation on the jitted runner (measured 2026-12-03 on a dense 3m run): the first evaluation compiles
# (14.9 s), then a greedy episode costs 1.2 ms on 3m (32 episodes 0.02-0.04 s, 128 episodes 0.11-0.20 s), scaled by
# the map's episode limit. step_cost.csv's eval_step_s (seconds per evaluated env step with the compilation spread
# over a short run's few evaluations) priced a 250 000-step run's 314 evaluations at 1 030 s, more than the whole
# run costs (447-570 s per run, published/default/mast/prices.csv; test_slurm_resources.py compares the two).
QMIX_EVAL_COMPILE_S = 15.0
QMIX_EVAL_EPISODE_S = 0.0012  # per greedy episode on 3m (60-step limit), compiled

def mpe_obs_dim(env: dict) -> int:
    """The largest observation of an MPE run's agents (its scenario's observation model, effmarl/scenarios.py)."""
    return max(scenario(env.get("scenario", "simple_tag")).obs_dims(env["n_agents"], env.get("num_obstacles", 2)))


# ---- memory -------------------------------------------------------------------------------------------------

def offpolicy_replay_bytes(cfg: dict) -> float:
    """Paper 1's replay storage at its largest, counting the checkpoint's peak for the reference storage."""
    env, replay = cfg["env"], cfg.get("replay", {})
    n, obs, actions = env["n_agents"], mpe_obs_dim(env), scenario(env.get("scenario", "simple_tag")).n_actions
    stored = min(replay.get("buffer_size", 1_000_000), cfg["budget"]["episodes"] * env.get("max_cycles", 25))
    if replay.get("storage", "reference") == "contiguous":
        return stored * n * 4 * (2 * obs + actions + 2)
    live = stored * n * (REFERENCE_OVERHEAD_B + 4 * (obs + actions))
    return live * (3 if cfg.get("offpolicy", {}).get("checkpoint_every", 0) else 1)


def episode_bytes(env_map: str) -> int:
    """One padded episode of the episode buffer (replay/episode.py's scheme)."""
    n, obs, actions, state, limit = SMAX_MAPS[env_map]
    steps = limit + 1
    return steps * (n * obs * 4 + state * 4 + n * actions + n * 8) + limit * (4 + 1 + 1)


def qmix_replay_bytes(cfg: dict) -> float:
    q = cfg.get("qmix", {})
    capacity = q.get("buffer_size", 5000)
    if mast_components(cfg)["dual_buffer"]:
        capacity += capacity // cfg.get("mast", {}).get("dual_buffer", {}).get("size_ratio", 50)
    return capacity * episode_bytes(cfg["env"]["map"])


def memory_mb(cfg: dict) -> int:
    backend = cfg["env"]["backend"]
    base = BASE_MB["smax" if backend in ("smax", "smac") else "mpe"]
    if backend == "mpe":
        base = max(base, interpolate(step_costs.measured().mpe_peak_mb, cfg["env"]["n_agents"]))
    if cfg["algo"] in ("maddpg", "masac"):
        replay = offpolicy_replay_bytes(cfg)
    elif cfg["algo"] == "random":
        replay = 0.0
    else:
        replay = qmix_replay_bytes(cfg)
    estimate = (base + replay / MIB) * HEADROOM
    return max(MIN_MEM_MB, int(math.ceil(estimate / 100) * 100))


# ---- runtime ------------------------------------------------------------------------------------------------

def offpolicy_seconds(cfg: dict) -> float:
    """Paper 1: env steps x the cost of a step + update rounds x the cost of a round at the run's batch
    (step_costs.offpolicy_costs); a random-policy run: its steps, priced as step_costs.RANDOM_AS's."""
    env, off = cfg["env"], cfg.get("offpolicy", {})
    steps = cfg["budget"]["episodes"] * env.get("max_cycles", 25)
    if cfg["algo"] == "random":
        return steps * step_costs.offpolicy_costs(*step_costs.RANDOM_AS, env["n_agents"])[0]
    step_s, round_s = step_costs.offpolicy_costs(cfg["algo"], cfg.get("replay", {}).get("storage", "reference"),
                                                 env["n_agents"], off.get("batch_size", step_costs.ROUND_BATCH))
    warmup = max(off.get("warmup", 25_600), off.get("batch_size", 1024))
    rounds = max(0, steps - warmup) // off.get("update_every", 100)
    return steps * step_s + rounds * round_s


def per_map(table: dict[str, float], env_map: str) -> float:
    """A measured per-map cost, or for a map not measured the log-log interpolation over agents x observation
    size between the measured maps."""
    if env_map in table:
        return table[env_map]
    size = {m: SMAX_MAPS[m][0] * SMAX_MAPS[m][1] for m in table}
    return interpolate({size[m]: v for m, v in table.items()}, SMAX_MAPS[env_map][0] * SMAX_MAPS[env_map][1])


def qmix_updates(cfg: dict) -> float:
    """Learner updates of a qmix-family run: one collection round of num_envs episodes per num_envs x episode
    length env steps, updates_per_round updates after each."""
    q, steps = cfg.get("qmix", {}), cfg["budget"]["env_steps"]
    rounds = steps / (q.get("num_envs", 1) * per_map(step_costs.measured().episode_len, cfg["env"]["map"]))
    return rounds * q.get("updates_per_round", 1)


def qmix_seconds(cfg: dict) -> float:
    env_map, q, steps = cfg["env"]["map"], cfg.get("qmix", {}), cfg["budget"]["env_steps"]
    costs = step_costs.measured()
    factor = step_costs.qmix_factor(cfg["algo"], costs, shared=q.get("shared_params", True))
    if method(cfg.get("sparse", {}).get("method", "dense")).cost != "dense":  # its cost kind (effmarl/methods.py)
        factor *= costs.sparse_factor
    # acting was measured with 8 copies per round; fewer copies share the per-call cost among fewer steps, so
    # 8 / num_envs x the measured cost bounds it (more copies: no discount taken)
    acting = steps * per_map(costs.act_s, env_map) * max(1.0, step_costs.QMIX_ENVS_MEASURED / q.get("num_envs", 1))
    learning = qmix_updates(cfg) * per_map(costs.update_s, env_map) * factor
    return acting + learning + (QMIX_EVAL_COMPILE_S + qmix_eval_seconds(cfg) if q.get("eval_episodes", 32) else 0.0)


def qmix_eval_seconds(cfg: dict) -> float:
    """A QMIX-family run's greedy evaluations once compiled: evaluations x episodes x the per-episode cost, scaled
    from 3m's 60-step limit to the map's."""
    from effmarl.schedules import evaluation_steps

    q = cfg.get("qmix", {})
    evaluations = len(evaluation_steps(cfg["budget"]["env_steps"], q.get("eval_every", 10_000)))
    return evaluations * q.get("eval_episodes", 32) * QMIX_EVAL_EPISODE_S * SMAX_MAPS[cfg["env"]["map"]][4] / 60


def runtime_min(cfg: dict) -> int:
    seconds = offpolicy_seconds(cfg) if cfg["env"]["backend"] == "mpe" else qmix_seconds(cfg)
    return max(MIN_RUNTIME_MIN, int(math.ceil(seconds * SAFETY / 60)) + START_MIN)


def for_run(cfg: dict) -> dict[str, int]:
    """The resources of one run's training job: mem_mb, runtime (minutes), gpu (count)."""
    return {"mem_mb": memory_mb(cfg), "runtime": runtime_min(cfg), "gpu": int(cfg.get("device") == "cuda")}


def for_process(cfgs: list[dict], interleaved: bool = False) -> dict[str, int]:
    """The resources of one job that trains several runs in one process (`effmarl train` with several runs):
    the seeds of one configuration train in lockstep, stacked, so their memory adds up; those lockstep groups
    train one after another, so the job needs the largest group's memory, and every run's runtime. An interleaved
    pair (`interleaved`, `effmarl train --interleave`) holds both runs at once: their memory adds up too."""
    need = [for_run(cfg) for cfg in cfgs]
    groups = [list(range(len(cfgs)))] if interleaved else seed_groups(cfgs)
    return {"mem_mb": max(sum(need[i]["mem_mb"] for i in group) for group in groups),
            "runtime": sum(n["runtime"] for n in need), "gpu": max(n["gpu"] for n in need)}


# ---- a profile's table --------------------------------------------------------------------------------------

def profile_table(expanded: dict[str, dict[str, dict]]) -> list[dict]:
    """Per study and distinct resource need of a profile's runs ({study: {run_id: config}}, as expand_all
    returns): runs, mem_mb, runtime and the CPU-hours they request."""
    groups: dict[tuple, int] = defaultdict(int)
    for study, runs in expanded.items():
        for cfg in runs.values():
            need = for_run(cfg)
            size = cfg["env"].get("n_agents") or cfg["env"].get("map")
            variant = cfg.get("replay", {}).get("storage") if cfg["algo"] in ("maddpg", "masac") else \
                cfg.get("sparse", {}).get("method", "dense") if cfg["env"]["backend"] != "mpe" else ""
            groups[(study, cfg["algo"], str(size), variant, need["mem_mb"], need["runtime"], need["gpu"])] += 1
    return [{"study": s, "algo": a, "N or map": size, "storage or method": v, "runs": k, "mem_mb": m,
             "runtime_min": r, "gpu": g, "cpu_hours": round(k * r / 60, 1)}
            for (s, a, size, v, m, r, g), k in sorted(groups.items())]


def main(argv: list[str] | None = None) -> int:
    from effmarl.config import ConfigError
    from effmarl.studies import expand_all, load_profile

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m effmarl.resources PROFILE.yaml", file=sys.stderr)
        return 2
    try:
        rows = profile_table(expand_all(load_profile(args[0])))
    except (ConfigError, OSError) as error:
        print(f"{args[0]}: {error}", file=sys.stderr)
        return 1
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")
    total = sum(r["cpu_hours"] for r in rows)
    print(f"\n{sum(r['runs'] for r in rows)} runs, {total:.0f} CPU-hours requested (x{SAFETY} safety included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
