"""Settings objects: a run config resolved once into the settings its training modules read (QmixSettings for the
QMIX family, OffPolicySettings for paper 1's MADDPG / MASAC loop)."""

import re
from pathlib import Path

import pytest

from effmarl.algos.offpolicy_settings import MasacOptions, OffPolicyOptions, OffPolicySettings, ReplayOptions
from effmarl.algos.qmix import QmixOptions, QmixSettings, effective_schedule
from effmarl.components import mast_components
from effmarl.config import schema, validate

SRC = Path(__file__).resolve().parents[1] / "src" / "effmarl"
# the QMIX training modules: they read QmixSettings / QmixOptions, never the run config dict
TRAINING_MODULES = ["algos/qmix/run.py", "algos/qmix/learner.py", "algos/qmix/runner.py", "algos/qmix/smax_runner.py",
                    "algos/qmix/networks.py", "algos/qmix/operators.py", "algos/qmix/accounting.py",
                    "algos/qmix/lockstep.py", "algos/qmix/optim.py", "sparse/evolution.py"]
OFFPOLICY_MODULES = ["algos/offpolicy.py", "algos/maddpg.py", "algos/masac.py", "algos/batched.py", "algos/actors.py",
                     "algos/stacked.py", *(f"replay/{p.name}" for p in sorted((SRC / "replay").glob("*.py")))]
# (module, function) -> why it may read the config dict: the config is the run's record there
ALLOWED = {
    ("algos/qmix/run.py", "check_lockstep"): "compares the run configs of the seeds trained together (records)",
}
LOOKUP = re.compile(r"""\bcfgs?(\[\d+\])?(\[["']|\.get\()""")


def run_cfg(method="mast", **sections):
    return validate({"study": "t", "algo": "qmix", "seed": 5, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 2000}, "sparse": {"method": method, "sparsity": 0.9},
                     "qmix": {"shared_params": method == "dense"}, **sections}, part="run")


def config_lookups(modules: list[str]) -> list[str]:
    """Each line of `modules` that looks into a run config dict (cfg["…"], cfg.get(…)) outside ALLOWED."""
    offenders = []
    for module in modules:
        function = "(module)"
        for number, line in enumerate((SRC / module).read_text().splitlines(), 1):
            if match := re.match(r"\s*(?:async\s+)?def (\w+)|class (\w+)", line):
                function = match.group(1) or match.group(2)
            if LOOKUP.search(line) and (module, function) not in ALLOWED:
                offenders.append(f"{module}:{number} ({function}): {line.strip()}")
    return offenders


def test_qmix_training_modules_read_settings_not_the_config_dict():
    offenders = config_lookups(TRAINING_MODULES)
    assert not offenders, "read QmixSettings (algos/qmix/settings.py) instead of the config dict:\n" + "\n".join(
        offenders)


def test_offpolicy_training_modules_read_settings_not_the_config_dict():
    offenders = config_lookups(OFFPOLICY_MODULES)
    assert not offenders, "read OffPolicySettings (algos/offpolicy_settings.py) instead of the config dict:\n" + \
        "\n".join(offenders)


def test_offpolicy_settings_hold_the_sections():
    for algo in ("maddpg", "masac"):
        cfg = validate({"study": "x", "algo": algo, "seed": 2, "env": {"backend": "mpe"}}, part="run")
        settings = OffPolicySettings.from_config(cfg)
        assert dict(settings.offpolicy) == cfg["offpolicy"] and dict(settings.replay) == cfg["replay"]
        assert settings.budget_episodes == cfg["budget"]["episodes"] and settings.seed == 2
        assert (settings.masac is None) == (algo == "maddpg")
        assert OffPolicySettings.from_config(settings) is settings


def test_settings_hold_what_the_config_resolves_to():
    cfg = run_cfg()
    settings = QmixSettings.from_config(cfg)
    assert settings.qmix == QmixOptions.of(cfg["qmix"]) and dict(settings.qmix) == cfg["qmix"]
    assert settings.schedule == effective_schedule(cfg) and settings.components == mast_components(cfg)
    assert settings.sparse == {**cfg["sparse"], "delta_m": effective_schedule(cfg)["delta_m"]}
    assert settings.returns.td_lambda and settings.returns.burn_in_env_steps == 750
    assert settings.returns.lambda_ == cfg["mast"]["td_lambda"]["lambda"]
    assert settings.dual_buffer == cfg["mast"]["dual_buffer"] and settings.dynamic_buffer is None
    assert settings.mellowmax == {"operator": cfg["mellowmax"]["operator"], **{
        k: cfg["mellowmax"][k] * effective_schedule(cfg)["operator_scale"] for k in ("alpha", "omega", "beta")}}
    dense = QmixSettings.from_config(run_cfg("dense"))
    assert dense.mellowmax is None and not dense.returns.td_lambda and dense.dual_buffer is None
    rlx2 = QmixSettings.from_config(run_cfg("rlx2"))
    assert rlx2.returns.multi_step and rlx2.returns.multi_step_delay_env_steps == 200 and rlx2.dynamic_buffer


def test_the_target_operators_temperatures_are_in_smacs_return_units_and_applied_on_the_backends_scale():
    """SMAC normalises an episode's return to 20, SMAX's team reward reaches 2: the config's (α, ω, β) = (1, 10, 10)
    act as (10, 100, 100) on SMAX - the same operator on the same normalised returns - and unchanged on SMAC."""
    cfg = run_cfg()
    assert (cfg["mellowmax"]["alpha"], cfg["mellowmax"]["omega"], cfg["mellowmax"]["beta"]) == (1.0, 10.0, 10.0)
    smax = QmixSettings.from_config(cfg)
    assert smax.schedule["operator_scale"] == 10.0
    assert smax.mellowmax == {"operator": "soft_mellowmax", "alpha": 10.0, "omega": 100.0, "beta": 100.0}
    smac = QmixSettings.from_config(run_cfg(env={"backend": "smac", "map": "3m"}))
    assert smac.schedule["operator_scale"] == 1.0
    assert smac.mellowmax == {"operator": "soft_mellowmax", "alpha": 1.0, "omega": 10.0, "beta": 10.0}
    assert QmixSettings.from_config(run_cfg("dense")).mellowmax is None  # no operator to scale


def test_a_reward_scale_on_smax_divides_the_operators_factor_so_they_stay_in_smacs_units():
    """SMAX's reward x 10 reaches SMAC's 20: the operators then act with the configured (α, ω, β), c = 20 / (2 x 10)."""
    scaled = QmixSettings.from_config(run_cfg(env={"backend": "smax", "map": "3m", "reward_scale": 10.0}))
    assert scaled.schedule["operator_scale"] == 1.0
    assert scaled.mellowmax == {"operator": "soft_mellowmax", "alpha": 1.0, "omega": 10.0, "beta": 10.0}
    assert QmixSettings.from_config(run_cfg(env={"backend": "smax", "map": "3m", "reward_scale": 2.0})
                                    ).schedule["operator_scale"] == 5.0


def test_options_are_frozen_and_read_as_the_section():
    options = QmixOptions.of(run_cfg()["qmix"])
    with pytest.raises(AttributeError):
        options.lr = 1.0
    assert options["lr"] == options.lr and {**options}["gamma"] == options.gamma
    assert options.replace(rnn_hidden_dim=8).rnn_hidden_dim == 8 and options.rnn_hidden_dim == 64
    with pytest.raises(KeyError):
        options["return_kind"]


@pytest.mark.parametrize(("options", "section"), [(QmixOptions, "qmix"), (OffPolicyOptions, "offpolicy"),
                                                  (ReplayOptions, "replay"), (MasacOptions, "masac")])
def test_every_option_the_schema_declares_is_a_field_of_its_settings_class_and_no_other(options, section):
    """An option added to the schema but not to its settings class would be validated, then silently unread."""
    declared = set(schema()["$defs"][section]["properties"])
    assert set(options.__dataclass_fields__) == declared
