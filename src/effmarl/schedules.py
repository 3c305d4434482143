"""The schedules a budget implies (no torch, so the analysis can read them too): budgets below the paper's 2 M env
steps scale the ε schedule and the topology interval Δm by budget / 2 M (docs/specification.md, paper 2
Decisions); a backend's return scale scales the target operators' temperatures (`operator_scale`);
settings.effective_schedule applies them to a run."""

from __future__ import annotations

REFERENCE_ENV_STEPS = 2_000_000  # the paper's budget; shorter budgets scale the ε schedule


def schedule_scale(env_steps: int, scale_schedules: bool) -> float:
    """budget / 2 M env steps (at most 1) when the schedules scale with the budget, else 1."""
    return min(1.0, env_steps / REFERENCE_ENV_STEPS) if scale_schedules else 1.0


def scaled_delta_m(delta_m: int, scale: float) -> int:
    """The topology update interval Δm (gradient updates) a run uses: the configured one times the schedule scale,
    at least 1."""
    return max(1, round(delta_m * scale))


# The target operators' temperatures (Soft Mellowmax's α and ω, mellowmax's ω, the softmax operator's β) are in units
# of 1 / return: sm_{cα,cω}(Q / c) = sm_{α,ω}(Q) / c (tests/test_mellowmax.py). They are set in SMAC's units, the
# paper's: SMAC normalises an episode's return to at most 20 (reward_scale_rate). On a backend whose returns reach R
# the run applies c = 20 / R times them, the same operator on the same normalised returns. SMAX's team reward reaches
# 2 (enemy health lost, normalised, + 1 on a win), so c = 10 there: unscaled, (α, ω) = (1, 10) sat 0.05 below max per
# agent-step where max Q was 0.17 and MAST's value estimates fell 0.26 below the returns obtained
# (benchmarks/results/mast_diagnosis_099_3m.md).
MAX_RETURN = {"smac": 20.0, "smax": 2.0}


def operator_scale(backend: str, reward_scale: float = 1.0) -> float:
    """c = 20 / the backend's largest episode return, its reward times `reward_scale` (env.reward_scale): the factor
    on the target operators' temperatures (MAX_RETURN). SMAX's reward x 10 reaches SMAC's scale: c = 1."""
    return MAX_RETURN["smac"] / (MAX_RETURN[backend] * reward_scale)


# Paper 2's win-rate statistic (paper 2, Table 1): per run, the mean test win rate of its last LAST_K evaluations that
# fall in the final FINAL_FRACTION of training (the paper's last 20 of 200 evaluations, one every 10 000 of 2 M steps).
# Read by the analysis (analysis/metrics/mast.py) and, for the evaluation it needs, by the profile checks (studies.py).
LAST_K = 20
FINAL_FRACTION = 0.1
# Greedy episodes that statistic must rest on in an evidence run (default and paper profiles; studies.py refuses a
# profile whose QMIX-family run has fewer): with 128 the standard error of one run's win rate is at most 0.044 (0.038
# at 0.75), against a spread between seeds of 0.03-0.05 (dense) and 0.07-0.10 (MAST) on SMAX 3m at 250 000 steps
# (published/default/mast/tables/selection.md, 3 seeds), where 96 episodes (3 evaluations of 32) gave 0.077.
MIN_FINAL_EPISODES = 128


def evaluation_steps(env_steps: int, eval_every: int) -> list[int]:
    """The grid steps a run of `env_steps` evaluates at (algos/qmix/run.py): 0, every multiple of eval_every within
    the budget, and the budget itself at the end. Assumes no collection round spans more than eval_every env steps
    (one evaluation per round at most), true when eval_every >= num_envs x the map's episode limit."""
    grid = list(range(0, env_steps + 1, eval_every))
    return grid if grid[-1] == env_steps else [*grid, env_steps]


def final_evaluations(env_steps: int, eval_every: int, k: int = LAST_K, fraction: float = FINAL_FRACTION) -> int:
    """How many evaluations the statistic averages: the last min(k, available) of those at or after
    (1 - fraction) x the budget (analysis/metrics/mast.final_win_rate, on the run's last evaluation step)."""
    start = (1 - fraction) * env_steps
    return min(int(k), sum(step >= start for step in evaluation_steps(env_steps, eval_every)))


def final_eval_episodes(cfg: dict) -> int:
    """The greedy episodes behind a QMIX-family run's win-rate statistic: final_evaluations x qmix.eval_episodes."""
    q = cfg["qmix"]
    return final_evaluations(cfg["budget"]["env_steps"], q["eval_every"]) * q["eval_episodes"]
