"""Agent network and mixers: monotonicity, GRU equivalence with torch, per-agent (non-shared) layers."""

import torch
from torch import nn

from effmarl.nets.mixers import CentralFFMixer, QMixer
from effmarl.nets.rnn_agent import GRUCell, RNNAgent, StackedLinear, agent_inputs, linear_factory


def test_qmix_mixer_is_monotonic_in_every_agent_value():
    torch.manual_seed(0)
    for layers in (1, 2):
        mixer = QMixer(n_agents=5, state_dim=12, embed_dim=32, hypernet_embed=64, hypernet_layers=layers)
        qs = (torch.randn(256, 5) * 10).requires_grad_()
        states = torch.randn(256, 12) * 3
        q_tot = mixer(qs, states)
        (grad,) = torch.autograd.grad(q_tot.sum(), qs)  # each row's Q_tot depends only on its own qs
        assert q_tot.shape == (256,)
        assert (grad >= 0).all()


def test_forward_many_equals_forward():
    torch.manual_seed(1)
    mixer = QMixer(3, 7)
    qs, states = torch.randn(4, 6, 9, 3), torch.randn(4, 6, 7)
    many = mixer.forward_many(qs, states)
    one_by_one = torch.stack([mixer(qs[:, :, k], states) for k in range(9)], dim=-1)
    torch.testing.assert_close(many, one_by_one)


def test_central_mixer_shape_and_not_constrained():
    mixer = CentralFFMixer(3, 7, embed_dim=256)
    assert mixer(torch.randn(2, 5, 3), torch.randn(2, 5, 7)).shape == (2, 5)
    assert sum(isinstance(m, nn.Linear) for m in mixer.modules()) == 6  # 4 in net, 2 in V


class PlainLinear(nn.Linear):
    """Not exactly nn.Linear, so GRUCell takes its explicit-equation path (as a masked layer would)."""


def test_gru_cell_equals_torch_gru_cell():
    torch.manual_seed(2)
    ref = nn.GRUCell(10, 16)
    for linear in (nn.Linear, PlainLinear):
        ours = GRUCell(10, 16, linear)
        with torch.no_grad():
            ours.ih.weight.copy_(ref.weight_ih), ours.ih.bias.copy_(ref.bias_ih)
            ours.hh.weight.copy_(ref.weight_hh), ours.hh.bias.copy_(ref.bias_hh)
        x, h = torch.randn(7, 10), torch.randn(7, 16)
        torch.testing.assert_close(ours(x, h), ref(x, h))


def test_stacked_linear_is_one_linear_per_agent():
    torch.manual_seed(3)
    layer = StackedLinear(4, 6, 5)
    x = torch.randn(2, 3, 4, 6)
    out = layer(x)
    for i in range(4):
        torch.testing.assert_close(out[..., i, :], x[..., i, :] @ layer.weight[i].T + layer.bias[i])


def test_shared_and_per_agent_parameters():
    torch.manual_seed(4)
    shared = RNNAgent(9, 5, 8, linear_factory(3, shared_params=True))
    separate = RNNAgent(9, 5, 8, linear_factory(3, shared_params=False))
    n_shared = sum(p.numel() for p in shared.parameters())
    assert sum(p.numel() for p in separate.parameters()) == 3 * n_shared
    same_input = torch.randn(2, 1, 9).expand(2, 3, 9)
    q_shared, _ = shared(same_input, shared.init_hidden(2, 3))
    q_separate, h = separate(same_input, separate.init_hidden(2, 3))
    torch.testing.assert_close(q_shared[:, 0], q_shared[:, 1])
    assert not torch.allclose(q_separate[:, 0], q_separate[:, 1])
    assert q_separate.shape == (2, 3, 5) and h.shape == (2, 3, 8)


def test_agent_inputs_layout():
    obs = torch.zeros(2, 3, 4)
    last = torch.tensor([[-1, 0, 2], [1, 1, 1]])
    x = agent_inputs(obs, last, n_actions=3)
    assert x.shape == (2, 3, 4 + 3 + 3)
    assert x[0, 0, 4:7].sum() == 0  # no last action yet
    assert x[0, 2, 4:7].tolist() == [0, 0, 1]
    assert x[1, :, 7:].tolist() == torch.eye(3).tolist()  # agent ids


def test_unroll_equals_stepwise_forward_for_both_gru_paths():
    torch.manual_seed(5)
    for shared in (True, False):  # fused torch.gru_cell path and the explicit equations
        agent = RNNAgent(9, 5, 8, linear_factory(3, shared_params=shared))
        x = torch.randn(2, 6, 3, 9)
        h = agent.init_hidden(2, 3)
        steps = []
        for t in range(6):
            q, h = agent(x[:, t], h)
            steps.append(q)
        torch.testing.assert_close(agent.unroll(x), torch.stack(steps, dim=1))
