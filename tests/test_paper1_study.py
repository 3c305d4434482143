"""Paper 1 study outputs: every registered paper-1 figure and table is produced by the smoke workflow, and
the claims table never invents a value."""

from __future__ import annotations

import pandas as pd
import pytest

from effmarl.analysis.tables import paper1_claims

PAPER1_FIGURES = ["paper1/sampling_phase_vs_n", "paper1/sampling_counters", "paper1/phase_breakdown",
                  "paper1/phase_scaling", "paper1/end_to_end", "paper1/reward_curves", "paper1/ksweep"]
PAPER1_TABLES = ["paper1/tables/claims", "paper1/tables/sampling_per_round"]


@pytest.mark.slow
def test_smoke_workflow_makes_every_paper1_output(smoke_workflow):
    figures = smoke_workflow["figures"]
    for stem in PAPER1_FIGURES:
        for ext in ("pdf", "png", "provenance.json"):
            assert (figures / f"{stem}.{ext}").is_file(), f"{stem}.{ext} missing"
    for stem in PAPER1_TABLES:
        for ext in ("csv", "md"):
            assert (figures / f"{stem}.{ext}").is_file(), f"{stem}.{ext} missing"
    claims = pd.read_csv(figures / "paper1" / "tables" / "claims.csv")
    assert len(claims) == N_CLAIMS and claims["ours"].notna().all()
    counters = pd.read_parquet(smoke_workflow["results"] / "paper1_micro" / "counters.parquet")
    assert {"cachegrind", "perf", "torch_profiler", "ncu"} <= set(counters.source)
    profile = pd.read_parquet(smoke_workflow["results"] / "paper1_micro" / "loop_profile.parquet")
    parts = profile[profile["measure"] == "env_step"]
    assert set(parts["part"]) == {"reward", "physics", "observations", "rest"}
    assert parts["value"].sum() == pytest.approx(1.0)  # the step's parts are its whole
    assert profile.loc[profile["measure"] == "sampling_ms_per_round", "fill"].tolist() == [100, 300]


# sampling N = 3, 12 on each storage; end-to-end; reward N = 3, 12; update share N = 3, 48; D1 and LL misses at
# N = 3, 12; k
N_CLAIMS = 14


def test_claims_table_without_inputs_says_not_measured():
    table = paper1_claims.make([])
    assert len(table) == N_CLAIMS
    assert table["ours"].str.startswith(paper1_claims.NOT_MEASURED).all()
    assert (table["ratio ours/paper"] == "").all()


def test_bootstrap_ci_brackets_the_mean_and_shrinks_with_more_seeds():
    import numpy as np

    from effmarl.analysis.metrics import bootstrap_ci

    rng = np.random.default_rng(1)
    few, many = rng.normal(5, 1, (4, 20)), rng.normal(5, 1, (64, 20))
    for values in (few, many):
        lo, hi = bootstrap_ci(values)
        assert (lo <= values.mean(axis=0)).all() and (values.mean(axis=0) <= hi).all()
    width = [np.mean(np.subtract(*bootstrap_ci(v)[::-1])) for v in (few, many)]
    assert width[1] < 0.5 * width[0]  # ~1/sqrt(n): 4 vs 64 seeds


def _metrics(rewards: dict) -> pd.DataFrame:
    """Synthetic metrics: {(sampler, seed, storage): [return of episode 0, 1, ...]} for maddpg N=3, one team."""
    rows = []
    for (sampler, seed, storage), returns in rewards.items():
        for episode, ret in enumerate(returns):
            rows.append({"run_id": f"{sampler}-{seed}-{storage}", "cfg.study": "paper1", "cfg.algo": "maddpg",
                         "cfg.env.n_agents": 3, "cfg.seed": seed, "cfg.replay.sampler": sampler,
                         "cfg.replay.storage": storage, "episode": episode, "team": "predator", "return": ret})
    return pd.DataFrame(rows)


def test_final_rewards_average_the_last_fifth_of_episodes():
    from effmarl.analysis.metrics import final_rewards

    m = _metrics({("uniform", 0, "reference"): list(range(11))})  # episodes 0..10: the last 20 % are 8, 9, 10
    assert final_rewards(m)["reward"].tolist() == [9.0]


def test_reward_claim_pairs_runs_by_seed_and_pools_storages():
    # neighbor − uniform final reward per seed: +1, +3, −1, +1 -> mean +1, bootstrap interval contains 0
    uniform, neighbor = [10, 20, 30, 40], [11, 23, 29, 41]
    rewards = {}
    for seed, (u, n) in enumerate(zip(uniform, neighbor, strict=True)):
        for storage in ("reference", "contiguous"):
            rewards[("uniform", seed, storage)] = [0.0] * 4 + [u]
            rewards[("neighbor", seed, storage)] = [0.0] * 4 + [n]
    row = paper1_claims.reward_row(_metrics(rewards))
    assert row["ours"].startswith("+1.00 (95 % CI [")
    assert "4 pairs" in row["ours"] and "no significant difference" in row["ours"]
    # a consistent drop is called out
    for seed in range(4):
        for storage in ("reference", "contiguous"):
            rewards[("neighbor", seed, storage)] = [0.0] * 4 + [uniform[seed] - 5 - seed]
    assert "significantly lower" in paper1_claims.reward_row(_metrics(rewards))["ours"]


def test_the_n12_reward_row_reads_the_n12_reward_study_in_place_of_other_n12_runs():
    """paper1_reward (N = 3) beside paper1_reward_n12: each N's row from its own study; paper1's unlearned N = 12 runs
    (where a profile falls back to them) never pool with the N = 12 study's. Differences +2, +2, +2 at N = 12."""
    def runs(study, n, differences):
        rewards = {}
        for seed, d in enumerate(differences):
            rewards[("uniform", seed, "contiguous")] = [0.0] * 4 + [100.0]
            rewards[("neighbor", seed, "contiguous")] = [0.0] * 4 + [100.0 + d]
        return _metrics(rewards).assign(**{"cfg.study": study, "cfg.env.n_agents": n})

    n3, n12 = runs("paper1_reward", 3, [1.0, -1.0, 0.0]), runs("paper1_reward_n12", 12, [2.0, 2.0, 2.0])
    stale = runs("paper1", 12, [-50.0, -60.0, -70.0])
    metrics = paper1_claims.with_n12(pd.concat([n3, stale]), n12)
    assert set(metrics["cfg.study"]) == {"paper1_reward", "paper1_reward_n12"}
    assert paper1_claims.reward_row(metrics, None, 12)["ours"].startswith("+2.00 (95 % CI [+2.00, +2.00], 3 pairs")
    assert paper1_claims.reward_row(metrics, None, 3)["ours"].startswith("+0.00 (")
    assert paper1_claims.with_n12(n3, None) is n3 and paper1_claims.with_n12(None, n12) is n12
