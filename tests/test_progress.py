"""One progress display for both training stacks (effmarl.harness.progress): a paper-1 run shows episodes done of
its budget, a QMIX run env steps of its seeds' budgets, on a terminal only and never when EFFMARL_NO_PROGRESS=1."""

from __future__ import annotations

import copy
import importlib

import pytest

from effmarl import harness
from effmarl.config import validate
from effmarl.train import train

qmix_run = importlib.import_module("effmarl.algos.qmix.run")  # the package's `run` names the function

RUN = {"study": "t", "algo": "maddpg", "seed": 5, "env": {"backend": "mpe", "n_agents": 3},
       "budget": {"episodes": 4},
       "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 2, "hidden": [16, 16]},
       "replay": {"buffer_size": 200, "storage": "contiguous"}}


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal, the variable unset: the bar is on."""
    monkeypatch.setattr(harness, "_interactive", lambda: True)
    monkeypatch.delenv(harness.NO_PROGRESS_VAR, raising=False)


@pytest.fixture
def bars(monkeypatch):
    """Every bar `harness.progress` makes, each with the counts its updates moved it to (`bar.seen`)."""
    made, make = [], harness.progress

    def recording(*args, **kwargs):
        bar = make(*args, **kwargs)
        bar.seen, update = [], bar.update

        def moved(k=1):
            update(k)
            bar.seen.append(bar.n)
        bar.update = moved
        made.append(bar)
        return bar

    monkeypatch.setattr(harness, "progress", recording)
    return made


@pytest.mark.parametrize("tty,variable,shown", [(True, None, True), (True, "1", False), (False, None, False),
                                                (True, "0", True)])
def test_the_bar_is_shown_on_a_terminal_unless_the_variable_silences_it(monkeypatch, tty, variable, shown):
    monkeypatch.setattr(harness, "_interactive", lambda: tty)
    if variable is None:
        monkeypatch.delenv(harness.NO_PROGRESS_VAR, raising=False)
    else:
        monkeypatch.setenv(harness.NO_PROGRESS_VAR, variable)
    bar = harness.progress(10, initial=3, desc="d", unit="episode")
    assert bar.disable is (not shown)
    if shown:
        assert (bar.total, bar.n, bar.unit) == (10, 3, "episode")
    bar.close()


def test_a_paper1_run_shows_each_episode_done_of_its_budget_on_stderr(tmp_path, capsys, terminal, bars):
    train(validate(copy.deepcopy(RUN), part="run"), str(tmp_path / "out"))
    (bar,) = bars
    assert (bar.total, bar.unit, bar.desc) == (4, "episode", "maddpg N=3 seed 5")
    assert bar.seen == [1, 2, 3, 4]  # one move per episode, at its safe point
    err = capsys.readouterr().err
    assert "maddpg N=3 seed 5" in err and "4/4" in err


def test_a_resumed_paper1_run_starts_its_bar_at_the_checkpoint(tmp_path, terminal, bars):
    train(validate(copy.deepcopy(RUN), part="run"), str(tmp_path / "out"))
    train(validate({**copy.deepcopy(RUN), "budget": {"episodes": 6}}, part="run"), str(tmp_path / "out"))
    first, resumed = bars
    assert resumed.desc == "maddpg N=3 seed 5 (resumed)" and resumed.total == 6
    assert resumed.seen == [5, 6]  # from the checkpoint at episode 4


def test_a_paper1_run_off_a_terminal_writes_no_bar(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(harness, "_interactive", lambda: False)
    train(validate(copy.deepcopy(RUN), part="run"), str(tmp_path / "out"))
    assert "4/4" not in capsys.readouterr().err  # a log or a captured stderr keeps errors to their one line


def test_a_qmix_run_shows_its_seeds_env_steps_on_the_same_display(terminal, bars):
    cfg = validate({"study": "t", "algo": "qmix", "seed": 3, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 160}}, part="run")
    bar = qmix_run._progress(320, 40, True, cfg, 2)
    assert bars == [bar] and not bar.disable
    assert (bar.total, bar.n, bar.unit, bar.desc) == (320, 40, "step", "qmix 3m 2 seeds (resumed)")
    bar.update(40)
    assert bar.seen == [80]
    bar.close()
    alone = qmix_run._progress(160, 0, False, cfg, 1)
    assert alone.desc == "qmix 3m seed 3"
    alone.close()


@pytest.mark.slow
def test_a_qmix_run_moves_its_bar_by_the_env_steps_it_collects(tmp_path, capsys, terminal, bars):
    from effmarl.runs import RunDir

    cfg = validate({"study": "t", "algo": "qmix", "seed": 3, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 160}, "sparse": {"method": "dense"},
                    "qmix": {"num_envs": 2, "eval_episodes": 2, "batch_size": 4, "buffer_size": 200,
                             "eval_every": 80, "checkpoint_every": 1000, "target_update_interval": 4}}, part="run")
    assert qmix_run.run(cfg, RunDir(tmp_path / "out", cfg))
    (bar,) = bars
    assert (bar.total, bar.desc) == (160, "qmix 3m seed 3")
    assert bar.seen == sorted(bar.seen) and bar.seen[-1] >= 160
    assert "qmix 3m seed 3" in capsys.readouterr().err
