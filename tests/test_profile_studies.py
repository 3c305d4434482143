"""Studies declared once (configs/studies.yaml), profiles as scale (configs/<profile>.yaml): how a profile's
selection resolves into full studies, and that every profile still expands to exactly the runs it expanded to when
the record was made: the same studies, run ids and run configurations (sha256 of each validated run config), so
moving or restating studies cannot change what a profile trains without a test naming the runs that changed.

The record is tests/data/profile_runs.json; regenerate it when a profile changes on purpose (a study added, a
budget or a grid changed), from the repository root: `python tests/data/make_profile_runs.py`.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import PROFILES, ROOT

from effmarl.config import ConfigError, load_yaml
from effmarl.studies import expand_all, load_catalogue, resolve_profile, resolve_studies, timing_studies

DATA = Path(__file__).resolve().parent / "data"


def _maker():
    spec = importlib.util.spec_from_file_location("make_profile_runs", DATA / "make_profile_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _differences(recorded: list[list[str]], now: list[list[str]]) -> list[str]:
    old = {(study, rid): digest for study, rid, digest in recorded}
    new = {(study, rid): digest for study, rid, digest in now}
    lines = [f"missing {s}/{r}" for s, r in old.keys() - new.keys()]
    lines += [f"new {s}/{r}" for s, r in new.keys() - old.keys()]
    lines += [f"changed config {s}/{r}" for s, r in old.keys() & new.keys() if old[(s, r)] != new[(s, r)]]
    return sorted(lines)


def test_every_profile_expands_to_the_recorded_runs():
    recorded = json.loads((DATA / "profile_runs.json").read_text())
    now = _maker().all_profiles()
    assert sorted(now) == sorted(recorded), "the profiles are not the recorded ones"
    for name in recorded:
        differences = _differences(recorded[name], now[name])
        assert not differences, f"{name}: {len(differences)} runs differ: {differences[:10]}"
        assert now[name] == recorded[name]


CATALOGUE = {
    "demo": {
        "doc": "a tiny study",
        "base": {"algo": "random", "env": {"backend": "mpe", "n_agents": 3, "max_cycles": 25},
                 "budget": {"episodes": 50}},
        "grid": {"env.n_agents": None, "env.max_cycles": [25, 50], "seed": [0, 1]},
    },
    "other": {"doc": "another", "base": {"algo": "random", "env": {"backend": "mpe"}}, "ticket_source": "demo"},
}


def test_a_profile_scale_deep_merges_into_the_base_and_replaces_only_the_axes_it_names():
    studies = resolve_studies({"demo": {"base": {"env": {"max_cycles": 10}, "budget": {"episodes": 3}},
                                        "grid": {"seed": [7]}, "runs_per_process": 2}}, CATALOGUE)
    assert studies == {"demo": {"base": {"algo": "random", "env": {"backend": "mpe", "n_agents": 3, "max_cycles": 10},
                                         "budget": {"episodes": 3}},
                                "grid": {"env.max_cycles": [25, 50], "seed": [7]}, "runs_per_process": 2}}
    assert CATALOGUE["demo"]["base"]["budget"] == {"episodes": 50}  # the catalogue itself is untouched


def test_a_study_taken_as_declared_drops_its_doc_and_its_held_axes_and_keeps_its_wiring():
    assert resolve_studies({"other": {}, "demo": None}, CATALOGUE) == {
        "other": {"base": {"algo": "random", "env": {"backend": "mpe"}}, "grid": {}, "ticket_source": "demo"},
        "demo": {"base": CATALOGUE["demo"]["base"], "grid": {"env.max_cycles": [25, 50], "seed": [0, 1]}}}


def test_a_varied_held_axis_takes_the_catalogues_place_in_the_run_ids_whatever_the_profiles_order():
    profile = {"profile": "smoke", "results_dir": "R", "figures_dir": "F",
               "studies": {"demo": {"grid": {"seed": [0], "env.max_cycles": [25], "env.n_agents": [3, 6]}}}}
    runs = expand_all(resolve_profile(profile, CATALOGUE))
    assert list(runs["demo"]) == ["n_agents-3_max_cycles-25_seed-0", "n_agents-6_max_cycles-25_seed-0"]
    held = resolve_studies({"demo": {"grid": {"env.max_cycles": None}}}, CATALOGUE)["demo"]
    assert held["grid"] == {"seed": [0, 1]} and held["base"]["env"]["max_cycles"] == 25


def test_a_profile_grid_given_as_a_list_is_the_union_of_its_parts_each_a_product_and_a_run_named_twice_is_one():
    """More seeds where a claim is decided, fewer elsewhere: the union of (max_cycles 25 x seeds 0-2) and (50 x seed
    0), in the order of the parts, with seed 0 at 25 named twice and kept once."""
    profile = {"profile": "smoke", "results_dir": "R", "figures_dir": "F",
               "studies": {"demo": {"grid": [{"env.max_cycles": [25], "seed": [0, 1, 2]},
                                             {"env.max_cycles": [50, 25], "seed": [0]}]}}}
    runs = expand_all(resolve_profile(profile, CATALOGUE))
    assert list(runs["demo"]) == ["max_cycles-25_seed-0", "max_cycles-25_seed-1", "max_cycles-25_seed-2",
                                  "max_cycles-50_seed-0"]
    assert runs["demo"]["max_cycles-50_seed-0"]["env"]["max_cycles"] == 50
    with pytest.raises(ConfigError, match=r"field 'studies.demo.grid\[1\].env.scenario': demo does not vary"):
        resolve_studies({"demo": {"grid": [{"seed": [0]}, {"env.scenario": ["x"]}]}}, CATALOGUE)


@pytest.mark.parametrize(("selected", "expected"), [
    ({"demp": {}}, "profile: field 'studies.demp': no such study in configs/studies.yaml; declared: demo, other"),
    ({"demo": {"grid": {"env.scenario": ["simple_tag"]}}},
     "profile: field 'studies.demo.grid.env.scenario': demo does not vary 'env.scenario'; its axes: env.n_agents, "
     "env.max_cycles, seed (a new axis is declared in configs/studies.yaml)"),
    ({"demo": {"ticket_source": "other"}},
     "profile: field 'studies.demo.ticket_source': a profile sets a study's scale only (base, grid, runs_per_process, "
     "seeds_per_process, sparsity_from); what the study is and varies is declared in configs/studies.yaml"),
    ({"demo": {"grid": {"seed": 3}}},
     "profile: field 'studies.demo.grid.seed': must be a list of values, or null to hold it at the base's value, "
     "got 3"),
    ({"demo": [1]}, "profile: field 'studies.demo': must be a mapping of the study's scale (base, grid, "
                    "runs_per_process, seeds_per_process, sparsity_from) or {}, got list"),
    ({"demo": {"sparsity_from": "sweep"}}, "profile: field 'studies.demo.sparsity_from': selection (the MAST "
                                           "selection's sparsity) or null (the declared one), got 'sweep'"),
])
def test_a_bad_selection_is_one_line_naming_the_field_and_what_is_allowed(selected, expected):
    with pytest.raises(ConfigError) as info:
        resolve_studies(selected, CATALOGUE)
    assert [str(info.value)] == [expected]


def test_every_problem_of_a_selection_is_reported_not_just_the_first():
    with pytest.raises(ConfigError) as info:
        resolve_studies({"nope": {}, "demo": {"grid": {"x": [1]}}}, CATALOGUE)
    assert [line.split(":")[0] for line in info.value.lines] == ["field 'studies.nope'", "field 'studies.demo.grid.x'"]


def test_a_malformed_catalogue_entry_is_one_line_each(tmp_path):
    path = tmp_path / "studies.yaml"
    path.write_text("a: {base: {}, grid: {seed: 0}}\nb: {doc: x, base: {}, runs_per_process: 2}\n")
    with pytest.raises(ConfigError) as info:
        load_catalogue(path)
    assert info.value.lines == [
        "field 'a.doc': required: one line saying what the study is for and what it feeds",
        "field 'a.grid.seed': must be a list of values, a mapping of named settings, or null (an axis a profile may "
        "vary, held at the base's value)",
        "field 'b.runs_per_process': unknown key; a study declares doc, base, grid, sparsity_from, ticket_source, "
        "timing, interleave (runs_per_process and seeds_per_process are a profile's)"]


def test_a_study_is_a_timing_study_only_where_the_catalogue_declares_it_and_a_profile_cannot_change_that():
    """Whether a study's runs are timed alone (workflow/rules/common.smk) is what the study is, not its scale."""
    catalogue = {**CATALOGUE, "timed": {**CATALOGUE["demo"], "timing": True}}
    profile = {"profile": "smoke", "results_dir": "R", "figures_dir": "F", "studies": {"demo": {}, "timed": {}}}
    assert timing_studies(resolve_profile(profile, catalogue)) == ["timed"]
    with pytest.raises(ConfigError) as info:
        resolve_studies({"demo": {"timing": True}}, catalogue)
    assert "field 'studies.demo.timing': a profile sets a study's scale only" in str(info.value)
    grouped = {**profile, "studies": {"timed": {"runs_per_process": 2}}}
    with pytest.raises(ConfigError) as info:
        timing_studies(resolve_profile(grouped, catalogue))
    assert info.value.lines == ["field 'studies.timed.runs_per_process': timed is a timing study (each run timed "
                                "alone, configs/studies.yaml); it trains one run per process, got runs_per_process 2"]


def test_every_declared_study_runs_in_some_profile():
    selected = {name for profile in PROFILES for name in load_yaml(ROOT / "configs" / profile)["studies"]}
    assert set(load_catalogue()) - selected == set()


def test_a_profile_may_take_a_studys_sparsity_from_the_selection_or_hold_it_at_the_declared_one():
    """Table 1's baselines: declared at 90 % (the default profile), from the MAST selection in the paper profile."""
    catalogue = {**CATALOGUE, "t1": {"doc": "baselines", "base": {"algo": "random"}, "sparsity_from": "selection"}}
    assert resolve_studies({"demo": {"sparsity_from": "selection"}}, catalogue)["demo"]["sparsity_from"] == "selection"
    assert "sparsity_from" not in resolve_studies({"t1": {"sparsity_from": None}}, catalogue)["t1"]
    assert resolve_studies({"t1": {}}, catalogue)["t1"]["sparsity_from"] == "selection"


NAMED = {"abl": {"doc": "one switch off per run", "base": {"algo": "random", "env": {"backend": "mpe"}},
                 "grid": {"without": {"long-episodes": {"env.max_cycles": 50}, "more": {"env.n_agents": 6,
                                                                                        "budget.episodes": 2}},
                          "seed": [0, 1]}}}


def test_a_named_settings_axis_writes_each_names_fields_and_names_the_runs():
    profile = {"profile": "smoke", "results_dir": "R", "figures_dir": "F", "studies": {"abl": {}}}
    runs = expand_all(resolve_profile(profile, NAMED))["abl"]
    assert list(runs) == ["without-long-episodes_seed-0", "without-long-episodes_seed-1", "without-more_seed-0",
                          "without-more_seed-1"]
    assert runs["without-long-episodes_seed-0"]["env"]["max_cycles"] == 50
    more = runs["without-more_seed-1"]
    assert (more["env"]["n_agents"], more["budget"]["episodes"], more["env"]["max_cycles"]) == (6, 2, 25)
    assert more["seed"] == 1
    assert "without" not in more  # the axis is no run field
    # a profile selects names (in the catalogue's order), or holds the axis (no variant)
    picked = resolve_studies({"abl": {"grid": {"without": ["more"]}}}, NAMED)["abl"]["grid"]
    assert picked["without"] == {"more": {"env.n_agents": 6, "budget.episodes": 2}}
    assert "without" not in resolve_studies({"abl": {"grid": {"without": None}}}, NAMED)["abl"]["grid"]
    with pytest.raises(ConfigError, match="a list of the declared names .long-episodes, more., or null; got"):
        resolve_studies({"abl": {"grid": {"without": ["fewer"]}}}, NAMED)


def test_a_malformed_named_settings_axis_is_one_line_each(tmp_path):
    path = tmp_path / "studies.yaml"
    path.write_text("a: {doc: x, base: {}, grid: {without: {'no_underscore': {env.max_cycles: 5}, ok: 3}}}\n")
    with pytest.raises(ConfigError) as info:
        load_catalogue(path)
    assert info.value.lines == [
        "field 'a.grid.without.no_underscore': a named setting's name must be letters, digits, '.', '+' or '-' (it is "
        "part of the run ids)",
        "field 'a.grid.without.ok': must be a non-empty mapping of dotted run fields to values"]


# ---- evaluation noise below seed noise ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["default.yaml", "paper.yaml"])
def test_every_paper2_run_of_an_evidence_profile_rests_on_at_least_128_greedy_episodes(name):
    """The win-rate statistic (the last min(20, available) evaluations in the final 10 %) of every QMIX-family run of
    the default and paper profiles averages >= 128 greedy episodes, from each run's resolved budget, eval_every and
    eval_episodes (the default: 20 evaluations of 32 every 800 of 160 000 steps; the paper: 20 of 32 every 10 000
    of 2 M)."""
    from effmarl.schedules import MIN_FINAL_EPISODES, final_eval_episodes
    from effmarl.studies import load_profile
    from effmarl.variants import QMIX_VARIANTS

    runs = expand_all(load_profile(ROOT / "configs" / name))
    episodes = {f"{study}/{rid}": final_eval_episodes(cfg) for study, by_id in runs.items()
                for rid, cfg in by_id.items() if cfg["algo"] in QMIX_VARIANTS}
    assert episodes and min(episodes.values()) >= MIN_FINAL_EPISODES == 128, \
        {k: v for k, v in episodes.items() if v < 128}


def test_the_final_evaluations_are_counted_on_the_runs_grid():
    from effmarl.schedules import evaluation_steps, final_evaluations

    assert final_evaluations(250_000, 10_000) == 3          # 230 000 ... 250 000: the published default's 96 episodes
    assert final_evaluations(2_000_000, 10_000) == 20       # 1.8 M ... 2 M: 21 evaluations, the last 20 count
    assert final_evaluations(160_000, 800) == 20
    assert evaluation_steps(1_000, 300) == [0, 300, 600, 900, 1_000]  # the budget itself is evaluated at the end
    assert final_evaluations(1_000, 300) == 2               # 900 and 1 000 are at or after 900


def test_an_evidence_profile_with_too_few_final_episodes_is_refused_naming_the_field_and_smoke_is_not():
    catalogue = {"q": {"doc": "a qmix study", "grid": {"seed": [0, 1]},
                       "base": {"algo": "qmix", "env": {"backend": "smax", "map": "3m"},
                                "budget": {"env_steps": 250000}, "qmix": {"eval_every": 10000, "eval_episodes": 32}}}}
    profile = {"profile": "default", "results_dir": "R", "figures_dir": "F", "studies": {"q": {}}}
    with pytest.raises(ConfigError) as info:
        expand_all(resolve_profile(profile, catalogue))
    assert info.value.lines == [
        "field 'studies.q.base.qmix.eval_episodes': run seed-0 averages 3 evaluation(s) of 32 greedy episodes in its "
        "final 10% (250000 env steps, one evaluation every 10000): 96 episodes, an evidence profile needs >= 128 "
        "(evaluation noise below seed noise); raise qmix.eval_episodes or lower qmix.eval_every (at most 20 "
        "evaluations count)"]
    expand_all(resolve_profile({**profile, "profile": "smoke"}, catalogue))  # smoke runs the plumbing only
    expand_all(resolve_profile({**profile, "studies": {"q": {"base": {"qmix": {"eval_episodes": 48}}}}}, catalogue))
