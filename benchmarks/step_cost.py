"""Per-step cost of training runs at paper settings: the measured table (benchmarks/results/step_cost.csv) that
src/effmarl/step_costs.py reads, and through it the cluster requests (resources.py) and the profile estimate
(analysis/envelope.py).

Each point is a short real `effmarl train` run with the paper profile's hyper-parameters (only the budget, and
for paper 1 the warm-up, shortened so that update rounds happen). From its phases.parquet:
  paper 1 (maddpg, masac): step_s = (action selection + env step + buffer add) per env step,
                           round_s = one "update all trainers" round (every update_every steps after warm-up);
  paper 2 (qmix family):   at the profiles' collection settings (8 episode copies per round, one update per
                           collected episode: PyMARL's ratio), split by the run's phase timers into
                           act_s = acting + buffer writes per env step (8 copies),
                           update_s = one learner update (sampling, forward, backward, target update, mask work),
                           episode_len = env steps per training episode (what turns steps into updates);
                           step_s = every phase but evaluation, per env step (the run's total, for reading);
                           eval_step_s = evaluation seconds per evaluated env step (episode steps, upper bound);
and the process's peak resident memory (maxrss_mb), wall time and CPU time. The machine these were measured on
is shared (2 cores, other work running), so phase wall times are scaled by the process's CPU time / wall time
(cpu_share): the cost of each phase on a core of its own. Each run is single-threaded (torch, BLAS and XLA held
to one thread), as a SLURM job with one CPU.

    python benchmarks/step_cost.py --out benchmarks/results/step_cost      # ~30 min on one free core
    python benchmarks/step_cost.py --only maddpg_48 --out benchmarks/results/step_cost   # some points, keeping the rest
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from effmarl.step_costs import QMIX_ENVS_MEASURED as QMIX_ENVS  # episode copies per round, as the profiles

ROOT = Path(__file__).resolve().parents[1]
UPDATE_PHASES = "update_all_trainers"
QMIX_STEPS = 20000   # env steps per qmix point; costs are read from after the first evaluation interval
QMIX_EVAL_EVERY = 5000   # (its JIT compilation and the random-play start left out): ~900 updates on 3m
# the qmix family's phases that are not the learner's (everything else timed is an update's work)
QMIX_ACTING = ["acting", "action_selection", "env_step", "buffer_add"]   # the jax runner times "acting" whole
QMIX_NOT_UPDATE = QMIX_ACTING + ["evaluation", "checkpoint"]


def points() -> list[dict]:
    """The measured grid: paper 1 at N = 3 and 12 for both algorithms and storages, and MADDPG on the reference
    storage at N = 24 and 48 too (effmarl.step_costs scales the others by their ratio to it); paper 2 with QMIX
    per map, then per algorithm, network layout and sparse method on 3m."""
    out = []
    for algo in ("maddpg", "masac"):
        for storage in ("reference", "contiguous"):
            for n in (3, 12):
                out.append({"algo": algo, "seed": 0,
                            "env": {"backend": "mpe", "scenario": "simple_tag", "n_agents": n, "max_cycles": 25},
                            # warm-up 1 024 steps (41 episodes), then 3 update rounds
                            "budget": {"episodes": 53}, "offpolicy": {"warmup": 1024, "checkpoint_every": 0},
                            "replay": {"storage": storage, "sampler": "uniform"}})
    qmix = {"eval_every": QMIX_EVAL_EVERY, "eval_episodes": 32, "checkpoint_every": 1000000, "num_envs": QMIX_ENVS,
            "updates_per_round": QMIX_ENVS}
    for env_map in ("3m", "3s5z", "64zg_approx", "2s3z"):
        out.append({"algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": env_map},
                    "budget": {"env_steps": QMIX_STEPS}, "qmix": qmix})
    for algo in ("ow_qmix", "res_qmix"):
        out.append({"algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": QMIX_STEPS}, "qmix": qmix})
    for method in ("dense", "mast"):
        out.append({"algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": QMIX_STEPS}, "sparse": {"method": method, "sparsity": 0.9},
                    "qmix": {**qmix, "shared_params": False}})
    # paper 1's largest teams, MADDPG on the reference storage (the other algorithm and storage scale it by their
    # measured ratio at N = 3 and 12): appended last so the rows above keep their names
    for n in (24, 48):
        out.append({**out[0], "env": {**out[0]["env"], "n_agents": n}})
    # OW-QMIX and RES-QMIX with per-agent networks (the layout sparse runs train), dense: their update against
    # QMIX's is not the shared networks' ratio (appended last, as above)
    for algo in ("ow_qmix", "res_qmix"):
        out.append({"algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": QMIX_STEPS}, "sparse": {"method": "dense", "sparsity": 0.9},
                    "qmix": {**qmix, "shared_params": False}})
    return out


def point_name(i: int, cfg: dict) -> str:
    env = cfg["env"]
    parts = (cfg["algo"], env.get("n_agents", env.get("map")), cfg.get("replay", {}).get("storage", ""),
             cfg.get("sparse", {}).get("method", ""),
             "" if cfg.get("qmix", {}).get("shared_params", True) else "peragent")
    return f"{i:02d}_" + "_".join(str(x) for x in parts if x != "")


def measure(cfg: dict, work: Path, name: str) -> dict:
    cfg = {"study": "step_cost", **cfg}
    config, out = work / f"{name}.yaml", work / name
    config.write_text(yaml.safe_dump(cfg))
    t0 = time.perf_counter()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "effmarl"), "train", "--config", str(config),
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"step_cost: run {name} failed: {proc.stderr.read().decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    share = min(cpu / wall, 1.0)
    phases = pd.read_parquet(out / "phases.parquet")
    total = phases.groupby("phase")[["seconds", "calls"]].sum()
    total["seconds"] *= share
    row = {"point": name, "algo": cfg["algo"], "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
           "cpu_share": round(share, 3), "maxrss_mb": round(usage.ru_maxrss / 1024)}
    if cfg["env"]["backend"] == "mpe":
        steps = int(total.loc["env_step", "calls"])
        rounds = int(total.loc[UPDATE_PHASES, "calls"]) if UPDATE_PHASES in total.index else 0
        acting = total.loc[["action_selection", "env_step", "buffer_add"], "seconds"].sum()
        row |= {"env": f"mpe N={cfg['env']['n_agents']}", "storage": cfg["replay"]["storage"], "method": "",
                "steps": steps, "rounds": rounds, "step_s": acting / steps,
                "round_s": total.loc[UPDATE_PHASES, "seconds"] / rounds if rounds else float("nan")}
    else:
        steps = int(phases["env_steps"].max())
        train = total.drop(index=["evaluation"], errors="ignore")["seconds"].sum()
        metrics = pd.read_parquet(out / "metrics.parquet")
        evaluated = (metrics["test_episode_length"].dropna() * cfg["qmix"]["eval_episodes"]).sum()
        updates = int(metrics["updates"].max())
        # act_s, update_s and episode_len in steady state: the rows after the first evaluation interval (the
        # phase rows are summed per interval, keyed by its last env step)
        first = sorted(phases["env_steps"].unique())[1]
        steady = phases[phases["env_steps"] > first].groupby("phase")["seconds"].sum() * share
        at_first = metrics[metrics["env_steps"] == first].iloc[0]
        steady_steps, steady_updates = steps - first, updates - int(at_first["updates"])
        steady_episodes = int(metrics["episodes"].max()) - int(at_first["episodes"])
        row |= {"env": cfg["env"]["map"], "storage": "", "method": cfg.get("sparse", {}).get("method", "dense")
                + ("" if cfg["qmix"].get("shared_params", True) else " per-agent"),
                "steps": steps, "updates": updates, "step_s": train / steps,
                "act_s": steady.reindex(QMIX_ACTING).sum() / steady_steps,
                "update_s": steady.drop(index=QMIX_NOT_UPDATE, errors="ignore").sum() / steady_updates,
                "episode_len": steady_steps / steady_episodes,
                "eval_step_s": total.loc["evaluation", "seconds"] / evaluated if evaluated else float("nan")}
    return row


def write(table: pd.DataFrame, stem: Path) -> None:
    from effmarl.provenance import record

    table.to_csv(stem.with_suffix(".csv"), index=False, float_format="%.6g")
    stem.with_suffix(".md").write_text(table.to_markdown(index=False, floatfmt=".4g") + "\n")
    stem.with_suffix(".provenance.json").write_text(json.dumps(record(extra={"points": len(table)}), indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/step_cost", help="output stem (.csv, .md, .json)")
    parser.add_argument("--only", default="",
                        help="comma-separated: measure only points whose name contains one of these, keeping the "
                             "other rows of an existing table")
    args = parser.parse_args(argv)
    stem = Path(args.out)
    stem.parent.mkdir(parents=True, exist_ok=True)
    only = [part for part in args.only.split(",") if part]
    previous = pd.read_csv(stem.with_suffix(".csv")) if only and stem.with_suffix(".csv").exists() else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, cfg in enumerate(points()):
            name = point_name(i, cfg)
            if only and not any(part in name for part in only):
                continue
            rows.append(measure(cfg, Path(tmp), name))
            print(json.dumps(rows[-1]), flush=True)
            table = pd.DataFrame(rows)
            if previous is not None:
                table = pd.concat([previous[~previous["point"].isin(table["point"])], table]).sort_values("point")
            write(table, stem)  # after every point: a long run interrupted keeps what it measured
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
