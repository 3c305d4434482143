"""The schedules a budget implies (no torch, so the analysis can read them too): budgets below the paper's 2 M env
steps scale the ε schedule and the topology interval Δm by budget / 2 M (docs/specification.md, paper 2
Decisions); settings.effective_schedule applies them to a run."""

from __future__ import annotations

REFERENCE_ENV_STEPS = 2_000_000  # the paper's budget; shorter budgets scale the ε schedule


def schedule_scale(env_steps: int, scale_schedules: bool) -> float:
    """budget / 2 M env steps (at most 1) when the schedules scale with the budget, else 1."""
    return min(1.0, env_steps / REFERENCE_ENV_STEPS) if scale_schedules else 1.0


def scaled_delta_m(delta_m: int, scale: float) -> int:
    """The topology update interval Δm (gradient updates) a run uses: the configured one times the schedule scale,
    at least 1."""
    return max(1, round(delta_m * scale))


# Paper 2's win-rate statistic (paper 2, Table 1): per run, the mean test win rate of its last LAST_K evaluations that
# fall in the final FINAL_FRACTION of training (the paper's last 20 of 200 evaluations, one every 10 000 of 2 M steps).
# Read by the analysis (analysis/metrics/mast.py) and, for the evaluation it needs, by the profile checks (studies.py).
LAST_K = 20
FINAL_FRACTION = 0.1
