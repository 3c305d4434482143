"""The metrics layer at the bottom of the analysis floor: run identity (`runs`), statistics, smoothing and
normalisation (`stats`), paper-1 phase metrics (`phases`) and episode-return metrics (`rewards`). Figures and
tables import from here (and from `analysis.common` for reading inputs and saving), never from each other."""

from effmarl.analysis.metrics.phases import (
                                             LEAF_PHASES,
                                             UPDATE_PHASES,
                                             phase_seconds,
                                             run_totals,
                                             sampling_per_round,
                                             shares,
                                             steady_state,
)
from effmarl.analysis.metrics.rewards import (
                                             FINAL_FRACTION,
                                             episode_returns,
                                             final_rewards,
                                             final_win_rates,
                                             team_returns,
)
from effmarl.analysis.metrics.runs import RUN_ID, config_columns, grid_keys, label, per_run, run_columns, runs
from effmarl.analysis.metrics.stats import bootstrap_ci, change_pct, iqm, normalise, paired, smooth

__all__ = ["FINAL_FRACTION", "LEAF_PHASES", "RUN_ID", "UPDATE_PHASES", "bootstrap_ci", "change_pct",
           "config_columns", "episode_returns", "final_rewards", "final_win_rates", "grid_keys", "iqm", "label",
           "normalise", "paired", "per_run", "phase_seconds", "run_columns", "run_totals", "runs",
           "sampling_per_round", "shares", "smooth", "steady_state", "team_returns"]
