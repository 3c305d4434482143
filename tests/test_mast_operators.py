"""`mellowmax.operator` (the paper's Fig. 16): the per-agent operator of the target is chosen once, equals the
targets/mellowmax.py function over available actions, and `max` is the plain QMIX target without double Q."""

from __future__ import annotations

import math

import pytest
import torch
from test_qmix_learner import OBS, STATE, A, N, random_batch  # noqa: E402  (the same small batches)

from effmarl.algos.qmix import Learner
from effmarl.algos.qmix.operators import agent_value
from effmarl.config import validate
from effmarl.nets.rnn_agent import agent_inputs
from effmarl.targets.mellowmax import masked_max, mellowmax, soft_mellowmax, softmax_operator

SETTINGS = {"alpha": 2.0, "omega": 5.0, "beta": 3.0}
FUNCTIONS = {"soft_mellowmax": lambda q, avail: soft_mellowmax(q, avail, 2.0, 5.0),
             "mellowmax": lambda q, avail: mellowmax(q, avail, 5.0),
             "softmax": lambda q, avail: softmax_operator(q, avail, 3.0),
             "max": masked_max}


def hand_q():
    """Q [2, n=2, A=3]: the third action unavailable (and huge) for agent 0, the first for agent 1."""
    q = torch.tensor([[[1.0, 2.0, 100.0], [50.0, 0.5, -1.0]], [[0.0, 0.0, 9.0], [7.0, 3.0, 3.0]]])
    avail = torch.tensor([[True, True, False], [False, True, True]]).expand(2, 2, 3)
    return q, avail


def test_default_operator_is_soft_mellowmax_with_softmax_temperature_10():
    cfg = validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 10}}, part="run")
    assert cfg["mellowmax"]["operator"] == "soft_mellowmax" and cfg["mellowmax"]["beta"] == 10.0


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_each_operator_is_its_function_over_available_actions(name):
    q, avail = hand_q()
    value = agent_value({"operator": name, **SETTINGS})(q, avail)
    torch.testing.assert_close(value, FUNCTIONS[name](q, avail))
    known = {"max": 2.0, "softmax": (math.exp(3) * 1 + math.exp(6) * 2) / (math.exp(3) + math.exp(6)),
             "mellowmax": math.log((math.exp(5) + math.exp(10)) / 2) / 5,
             "soft_mellowmax": math.log((math.exp(2) * math.exp(5) + math.exp(4) * math.exp(10))
                                        / (math.exp(2) + math.exp(4))) / 5}[name]
    assert value[0, 0].item() == pytest.approx(known, rel=1e-5)  # agent 0 of the first row, action 3 excluded
    q_big = q.masked_fill(~avail, 1e6)  # unavailable actions never count
    torch.testing.assert_close(agent_value({"operator": name, **SETTINGS})(q_big, avail), value)


def learner(mellowmax, algo="qmix", double_q=True):
    cfg = validate({"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "qmix": {"double_q": double_q}}, part="run")
    torch.manual_seed(0)
    return Learner(algo, cfg["qmix"], N, OBS, A, STATE, mellowmax=mellowmax, seed=0)


def inputs_of(batch):
    last = torch.cat([torch.full_like(batch["actions"][:, :1], -1), batch["actions"][:, :-1]], dim=1)
    return agent_inputs(batch["obs"], last, A)


@pytest.mark.parametrize("algo", ["qmix", "ow_qmix", "res_qmix"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_the_target_is_the_mixer_over_each_agents_operator(algo, name):
    lr = learner({"operator": name, **SETTINGS}, algo)
    batch = random_batch()
    inputs = inputs_of(batch)
    q_online = lr.unroll(lr.agent, inputs).detach()
    q_target = torch.randn_like(q_online)  # hand-made target Q, unavailable actions included
    values = lr.operator(lr, inputs, q_online, q_target, batch["avail"], batch["state"])
    if algo == "ow_qmix":  # Q*: the central target agent's values through the central target mixer
        central = lr.unroll(lr.target["central_agent"], inputs)
        expected = lr.target["central_mixer"](FUNCTIONS[name](central, batch["avail"]), batch["state"])
    else:
        expected = lr.target["mixer"](FUNCTIONS[name](q_target, batch["avail"]), batch["state"])
    torch.testing.assert_close(values, expected)


def test_max_is_the_plain_qmix_target_without_double_q():
    batch = random_batch()
    plain, with_max = learner(None, double_q=False), learner({"operator": "max", **SETTINGS})
    inputs = inputs_of(batch)
    q_online = plain.unroll(plain.agent, inputs).detach()
    torch.testing.assert_close(with_max.td_targets(batch, inputs, q_online),
                               plain.td_targets(batch, inputs, q_online))
