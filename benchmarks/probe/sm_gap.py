"""gap(α, ω) = sm_{α,ω}(Q) − max_u Q_u over each agent's available actions, on the Q values of trained agents.

sm_{α,ω}(Q) = (1/ω)·log Σ_u softmax(αQ)_u·exp(ωQ_u) (effmarl.targets.mellowmax.soft_mellowmax), max: masked_max.
For each run directory (config.yaml + model.pt, the online networks at the end of training): the run's own QMIX
learner is built from its config (run.build_learner), model.pt loaded into it (masks.pt too when sparse), and
`--episodes` SMAX episodes played with ε-greedy actions by the project's SMAX runner (SMAXRunner.collect: obs + last
action + agent id, GRU carried over time). Their Q values are recomputed with Learner.unroll exactly as the loss
does, and over every filled agent-step (states 0..L−1; dead agents have one available action, gap 0) we report
mean max_u Q, mean (max − mean over available actions), mean number of available actions and the gap's mean and
5/50/95th percentiles per (α, ω); "live" columns keep the agent-steps with ≥ 2 available actions.
Caveat: training bootstraps from the *target* agent's Q (copied every target_update_interval episodes); only the
online network at the end of training is stored, so these are that network's values.
Usage: python benchmarks/probe/sm_gap.py RUN_DIR [RUN_DIR ...] --episodes 32 --out benchmarks/results/sm_gap_3m
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
from pathlib import Path

import numpy as np
import torch

from effmarl.algos.qmix.learner import Learner
from effmarl.algos.qmix.run import build_learner
from effmarl.algos.qmix.settings import QmixSettings
from effmarl.algos.qmix.smax_runner import SMAXRunner
from effmarl.config import load_run_config
from effmarl.nets.rnn_agent import agent_inputs
from effmarl.safeload import load_torch
from effmarl.targets.mellowmax import masked_max, soft_mellowmax

COLUMNS = ("run", "method", "sparsity", "trained_op", "alpha", "omega", "episodes", "win_rate", "agent_steps",
           "live_frac", "mean_avail", "mean_max_q", "mean_max_minus_mean", "gap_mean", "gap_p5", "gap_p50",
           "gap_p95", "gap_mean_live", "gap_p50_live")


def load(run: Path, episodes: int) -> tuple[QmixSettings, Learner, SMAXRunner]:
    cfg = load_run_config(run / "config.yaml", checks=False)
    cfg["device"] = "cpu"
    settings = QmixSettings.from_config(cfg)
    runner = SMAXRunner(settings.env, episodes, episodes, 1, "cpu")
    learner = build_learner(settings, runner.spec, dict(settings.schedule), "cpu")
    if learner.sparse and (run / "masks.pt").is_file():
        learner.load_sparse_state(load_torch(run / "masks.pt", map_location="cpu"))
    with torch.no_grad():
        learner.networks().load_state_dict(load_torch(run / "model.pt", map_location="cpu"))
    return settings, learner, runner


@torch.no_grad()
def rollout_q(learner: Learner, runner: SMAXRunner, seed: int, epsilon: float):
    """Q [N, A], avail [N, A] of every filled agent-step of one batch of episodes, and the episodes' win rate."""
    batch, out = runner.collect([learner.agent], [seed], [epsilon])[0]
    actions, filled = batch["actions"], batch["filled"]
    last = torch.cat([torch.full_like(actions[:, :1], -1), actions[:, :-1]], dim=1)
    q = Learner.unroll(learner.agent, agent_inputs(batch["obs"], last, learner.n_actions), filled)[:, :-1]
    avail = batch["avail"][:, :-1].bool()
    rows = filled.unsqueeze(-1).expand(avail.shape[:-1])
    return q[rows].double(), avail[rows], float(np.mean(out["won"]))


def rows_of(run: Path, settings, q, avail, win: float, pairs, episodes: int) -> list[dict]:
    top = masked_max(q, avail)
    n = avail.sum(-1)
    mean = q.masked_fill(~avail, 0.0).sum(-1) / n
    live = n >= 2
    mm = settings.mellowmax  # the temperatures this code would apply; the run applied its own schedule's scale
    applied = json.loads((run / "schedule.json").read_text()).get("operator_scale", 1.0) / settings.schedule.get(
        "operator_scale", 1.0)
    trained = (f"{mm['operator']}({applied * mm['alpha']:g},{applied * mm['omega']:g})" if mm
               else settings.algo + " max")
    out = []
    for alpha, omega in pairs:
        gap = (soft_mellowmax(q, avail, alpha, omega) - top).numpy()
        p5, p50, p95 = np.percentile(gap, [5, 50, 95])
        out.append({"run": label(run), "method": settings.method, "sparsity": settings.sparsity, "trained_op": trained,
                    "alpha": alpha, "omega": omega, "episodes": episodes, "win_rate": win,
                    "agent_steps": len(gap), "live_frac": float(live.double().mean()),
                    "mean_avail": float(n.double().mean()), "mean_max_q": float(top.mean()),
                    "mean_max_minus_mean": float((top - mean).mean()), "gap_mean": float(gap.mean()),
                    "gap_p5": p5, "gap_p50": p50, "gap_p95": p95, "gap_mean_live": float(gap[live.numpy()].mean()),
                    "gap_p50_live": float(np.median(gap[live.numpy()]))})
    return out


def label(run: Path) -> str:
    """'<study>/<run id> @ <commit>' of a run directory (its provenance.json's git commit)."""
    prov = run / "provenance.json"
    commit = json.loads(prov.read_text()).get("git", {}).get("commit", "?") if prov.is_file() else "?"
    return f"{run.parent.name}/{run.name} @ {str(commit)[:7]}"


def fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="finished run directories (config.yaml, model.pt)")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--epsilon", type=float, default=0.05, help="ε of the ε-greedy rollouts (0: greedy)")
    parser.add_argument("--seed", type=int, default=987_654, help="env reset seed of the first episode")
    parser.add_argument("--pairs", default="1,10 10,100", help="(α, ω) settings, 'a,w a,w ...'")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.csv")
    args = parser.parse_args()
    torch.set_num_threads(1)
    pairs = [tuple(float(x) for x in p.split(",")) for p in args.pairs.split()]
    rows = []
    for run in args.runs:
        if not (run / "model.pt").is_file():
            print(f"skipped {run}: no model.pt (not a finished run)", file=sys.stderr)
            continue
        settings, learner, runner = load(run, args.episodes)
        q, avail, win = rollout_q(learner, runner, args.seed, args.epsilon)
        rows += rows_of(run, settings, q, avail, win, pairs, args.episodes)
        print(f"{run}: {len(q)} agent-steps, win rate {win:.3f}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{args.out}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    lines = ["# Soft Mellowmax gap below max on trained agents' Q values", "", f"Command: `{command}`", "",
             f"gap(α, ω) = sm_(α,ω)(Q) − max_u Q_u per agent-step over available actions; Q from the online agent "
             f"network of each run's model.pt (end of training; training bootstraps from the target network's Q) "
             f"on {args.episodes} SMAX episodes per run, ε = {args.epsilon}, reset seed {args.seed}. 'live': "
             f"agent-steps with ≥ 2 available actions (dead agents have only no-op, gap 0).", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in COLUMNS) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    Path(f"{args.out}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
