"""Paper 1's update share and what takes the rest of the time (issue 47): per run, the share of training time of
"update all trainers" and of each other leaf phase, the update round and the rest per round; for a share the paper
reports and we do not reach, the round it would need; and the share the runs would have if their sampling phase cost
what it costs at a fuller buffer (the loop profile, effmarl.profiling.loop_profile).

For a run with update seconds U over r rounds and other leaf seconds O (environment step, action selection, replay
writes: what runs between rounds, `update_every` env steps each), its share is s = U / (U + O). On the means over
runs, u = U / r and o = O / r, a share p needs a round of u* = p / (1 − p) · o, i.e. u* / u times ours; and a sampling
phase S / r = σ per round that costs f times as much at a fuller buffer gives the share (u + (f − 1) σ) /
(u + (f − 1) σ + o)."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.metrics.phases import LEAF_PHASES, phase_seconds, round_fill, thousands
from effmarl.analysis.metrics.runs import run_columns, runs

REST_PHASES = ["env_step", "action_selection", "buffer_add"]


def breakdown(phases: pd.DataFrame) -> pd.DataFrame:
    """Per run of steady-state phase rows (wall `seconds`): each leaf phase's % of the run's training time (one
    column per phase), `share` (update_all_trainers' %), `rounds`, `steps` (env-step calls), `round_s` (update
    seconds per round), `rest_s` (seconds of REST_PHASES per round), `sampling_s` (sampling seconds per round),
    `step_ms` (environment-step milliseconds per step), with every configuration column."""
    wide = phase_seconds(phases, [*LEAF_PHASES, "update_all_trainers"])
    keys = run_columns(phases)
    calls = phases.pivot_table(index=keys, columns="phase", values="calls", aggfunc="sum", fill_value=0)
    calls = calls.reindex(columns=["update_all_trainers", "env_step"], fill_value=0)
    wide = wide.merge(calls.rename(columns={"update_all_trainers": "rounds", "env_step": "steps"}).reset_index(),
                      on=keys)
    total = wide[LEAF_PHASES].sum(axis=1)
    out = wide[[c for c in wide if c not in [*LEAF_PHASES, "update_all_trainers"]]].copy()
    for phase in LEAF_PHASES:
        out[phase] = 100 * wide[phase] / total
    out["share"] = 100 * wide["update_all_trainers"] / total
    out["round_s"] = wide["update_all_trainers"] / wide["rounds"]
    out["rest_s"] = wide[REST_PHASES].sum(axis=1) / wide["rounds"]
    out["sampling_s"] = wide["sampling"] / wide["rounds"]
    out["step_ms"] = 1e3 * wide["env_step"] / wide["steps"]
    return out


def needed_round(table: pd.DataFrame, target_pct: float) -> tuple[float, float]:
    """(u*, u* / u): the update round, in seconds, that would make the share `target_pct` % beside the mean rest per
    round of the runs of `breakdown` `table`, and its ratio to their mean round (module doc)."""
    rest, round_s = table["rest_s"].mean(), table["round_s"].mean()
    need = target_pct / (100.0 - target_pct) * rest
    return float(need), float(need / round_s)


def share_with_sampling(table: pd.DataFrame, factor: float) -> float:
    """The share (%) of the runs of `breakdown` `table`, on their means, if their sampling phase cost `factor` times
    as much (module doc)."""
    round_s = table["round_s"].mean() + (factor - 1.0) * table["sampling_s"].mean()
    return float(100 * round_s / (round_s + table["rest_s"].mean()))


def profile_parts(profile: pd.DataFrame | None, n_agents: int) -> dict:
    """From a loop-profile table (effmarl.profiling.loop_profile) at `n_agents`: `env` ({part: share of the
    environment step}, `steps` profiled) and `fill` ((fewer, more) transitions, the ratio of the sampling round's
    cost at the fuller buffer to its cost at the emptier one); each absent where the table has no such rows."""
    out: dict = {}
    if profile is None or profile.empty:
        return out
    rows = profile[profile["n_agents"] == n_agents]
    env = rows[rows["measure"] == "env_step"]
    if len(env):
        out["env"] = dict(zip(env["part"], env["value"].astype(float), strict=True))
        out["steps"] = int(env["steps"].iloc[0])
    fills = rows[rows["measure"] == "sampling_ms_per_round"].sort_values("fill")
    if len(fills) >= 2:
        low, high = fills.iloc[0], fills.iloc[-1]
        out["fill"] = (int(low["fill"]), int(high["fill"]), float(high["value"] / low["value"]))
    return out


def loop_text(runs_n: pd.DataFrame) -> str:
    """Whether the runs' update loop is the paper's where the paper is explicit (a round every 100 env steps, batch
    1024, openai/maddpg's sequential per-agent updates; docs/specification.md), in words."""
    setting = {c: runs_n[c].iloc[0] if c in runs_n else d for c, d in (
        ("cfg.offpolicy.update_every", 100), ("cfg.offpolicy.batch_size", 1024),
        ("cfg.offpolicy.learner", "sequential"), ("cfg.replay.batch_mode", "per_agent"))}
    every, batch, learner, mode = setting.values()
    if (every, batch, learner, mode) == (100, 1024, "sequential", "per_agent"):
        return ("the loop is the paper's (a round of batch 1024 every 100 env steps, agent after agent, each on its "
                "own batch)")
    return (f"the loop is not the paper's: a round of batch {batch} every {every} env steps, {learner} learner, "
            f"{mode.replace('_', '-')} batches (the paper's: 1024, 100, sequential, per-agent)")


def because(base_n: pd.DataFrame, n: int, paper: float, profile: pd.DataFrame | None) -> str:
    """Why the share at N = `n` differs from the paper's: what takes the rest of the time (`breakdown`
    of the runs `base_n`), the round the paper's share would need beside it, the environment step's parts and the
    sampling round at a fuller buffer from the loop profile (`profile_parts`), and the buffer fill."""
    table = breakdown(base_n)
    need, times = needed_round(table, paper)
    measured = profile_parts(profile, n)
    env = measured.get("env", {})
    reward = (f"; {100 * env['reward']:.0f} % of it simple_tag's reward, by a profile of {measured['steps']} steps"
              if "reward" in env else "")
    rest = {"env_step": table["env_step"].mean(), "action_selection": table["action_selection"].mean(),
            "buffer_add": table["buffer_add"].mean()}
    mostly = " mostly" if max(rest, key=rest.get) == "env_step" else ""
    every = int(base_n["cfg.offpolicy.update_every"].iloc[0]) if "cfg.offpolicy.update_every" in base_n else 100
    text = (f"the rest of the time is{mostly} the environment step: {rest['env_step']:.1f} % of training time at "
            f"N = {n} ({table['step_ms'].mean():.1f} ms per env step{reward}), action selection "
            f"{rest['action_selection']:.1f} %, replay writes {rest['buffer_add']:.1f} %, target updates "
            f"{table['target_update'].mean():.1f} %, against an update round of {table['round_s'].mean():.1f} s per "
            f"{every} env steps; ≈{paper:.0f} % would need a round of {need:.1f} s, {times:.2f}x ours; "
            f"{loop_text(base_n)}")
    held = round_fill(runs(base_n))
    if held is not None:
        text += (f"; buffers of {thousands(held[0])}-{thousands(held[1])} transitions while the rounds ran (the "
                 "paper's up to 10^6)")
        if "fill" in measured:
            low, high, factor = measured["fill"]
            text += (f": the sampling phase at {thousands(high)} stored transitions costs {factor:.2f}x its cost at "
                     f"{thousands(low)} (kernel alone, N = {n}), which would bring the share to "
                     f"{share_with_sampling(table, factor):.1f} %")
    return text
