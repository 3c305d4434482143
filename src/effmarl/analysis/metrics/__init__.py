"""The metrics layer at the bottom of the analysis floor: run identity (`runs`), statistics, smoothing and
normalisation (`stats`), paper-2 win-rate statistics and curves (`mast`), the sparsity selection (`selection`) and
Table 1's cells (`table1`), paper-1 phase metrics
(`phases`) and episode-return metrics (`rewards`), and when a paper-2 output is evidence (`evidence`: `judge`):
whatever selects or computes data, as opposed to drawing it.
Figures and tables import from here (and from `analysis.io` for reading inputs and saving, `analysis.style` for
colours, names and drawing helpers), never from each other; nothing here imports from those."""

from effmarl.analysis.metrics.ablations import (
                                             VS_DEFAULT,
                                             ablation,
                                             components_ablation,
                                             operator_of,
                                             removed_components,
                                             used_delta_m,
)
from effmarl.analysis.metrics.counters import counter_difference, counter_spread

# Imported before `phases`: loading the submodule `metrics.evidence` binds the package attribute `evidence` to it,
# and paper 1's function of that name (phases.evidence, below) must be what `metrics.evidence` is. Import the
# paper-2 rule by its names (`from effmarl.analysis.metrics.evidence import MIN_SEEDS`), never as a module attribute.
from effmarl.analysis.metrics.evidence import (
                                             CellsEvidence,
                                             Evidence,
                                             budgets,
                                             dense_of_cells,
                                             judge,
                                             judge_cells,
                                             judge_each_cell,
                                             judge_runs_each_cell,
                                             of_cell,
                                             plateau,
                                             seeds_per_cell,
)
from effmarl.analysis.metrics.ksweep import headline as ksweep_headline
from effmarl.analysis.metrics.mast import (
                                             LAST_K,
                                             RATIO_STATISTIC,
                                             STATISTIC,
                                             curves,
                                             evaluations,
                                             final_win_rate,
                                             interval_text,
                                             require_comparable,
                                             seed_stats,
                                             seeds_text,
                                             sweep_stats,
                                             win_rate_label,
)
from effmarl.analysis.metrics.phases import (
                                             LEAF_PHASES,
                                             MIN_SEEDS,
                                             MIN_UPDATE_ROUNDS,
                                             UPDATE_PHASES,
                                             evidence,
                                             phase_seconds,
                                             require_one_budget,
                                             run_totals,
                                             sampling_per_round,
                                             shares,
                                             shortfalls,
                                             steady_state,
)
from effmarl.analysis.metrics.rewards import (
                                             FINAL_EPISODES,
                                             episode_returns,
                                             final_rewards,
                                             final_win_rates,
                                             learned_cells,
                                             random_floor,
                                             team_returns,
)
from effmarl.analysis.metrics.runs import (
                                             RUN_COLUMNS,
                                             RUN_ID,
                                             config_columns,
                                             grid_keys,
                                             label,
                                             per_run,
                                             require_alike,
                                             require_one_commit,
                                             run_columns,
                                             runs,
                                             shown_runs,
)
from effmarl.analysis.metrics.selection import (
                                             cell_sparsity,
                                             chosen_by_rule,
                                             chosen_sparsity,
                                             declared_selection,
                                             select_sparsity,
)
from effmarl.analysis.metrics.stats import (
                                             IQM_TRIM,
                                             bootstrap_ci,
                                             change_pct,
                                             iqm,
                                             mean_interval,
                                             normalise,
                                             paired,
                                             probability_of_improvement,
                                             ratio_interval,
                                             savgol,
                                             smooth,
)
from effmarl.analysis.metrics.table1 import (
                                             METHOD_ORDER,
                                             cells_of,
                                             flops_averages,
                                             learning_curve_runs,
                                             ratio_verdict,
                                             study_cells,
                                             table1_cells,
                                             table1_runs,
                                             versus_baselines,
)

__all__ = ["CellsEvidence", "Evidence", "budgets", "dense_of_cells", "judge", "judge_cells", "judge_each_cell",
           "judge_runs_each_cell", "of_cell", "plateau", "seeds_per_cell",
           "FINAL_EPISODES", "LAST_K", "METHOD_ORDER", "STATISTIC", "RATIO_STATISTIC", "win_rate_label",
           "RUN_COLUMNS", "VS_DEFAULT", "ablation", "cell_sparsity", "chosen_sparsity",
           "components_ablation", "curves", "removed_components",
           "evaluations", "final_win_rate",
           "flops_averages", "interval_text", "learning_curve_runs", "operator_of", "shown_runs",
           "learned_cells", "probability_of_improvement", "random_floor", "ratio_interval", "mean_interval", "IQM_TRIM",
           "require_comparable", "savgol", "seed_stats", "seeds_text", "sweep_stats", "select_sparsity", "table1_cells",
           "cells_of", "chosen_by_rule", "declared_selection", "ratio_verdict", "study_cells", "table1_runs",
           "versus_baselines",
           "used_delta_m",
           "LEAF_PHASES", "MIN_SEEDS", "MIN_UPDATE_ROUNDS", "RUN_ID", "evidence", "ksweep_headline", "require_alike",
           "require_one_budget", "require_one_commit", "shortfalls", "UPDATE_PHASES", "bootstrap_ci", "change_pct",
           "config_columns", "episode_returns", "final_rewards", "final_win_rates", "grid_keys", "iqm", "label",
           "normalise", "paired", "per_run", "phase_seconds", "run_columns", "run_totals", "runs",
           "sampling_per_round", "shares", "smooth", "steady_state", "team_returns",
           "counter_difference", "counter_spread"]
