"""Targets on a hand-computed tiny episode batch, and the identities between them."""

import torch

from effmarl.targets.returns import discounted_returns, lambda_returns, n_step, one_step, targets

G = 0.5
# Two episodes in a batch of T = 3 transitions:
#   episode 0: 3 transitions, a time-out after the 3rd (bootstrap from V(s3));
#   episode 1: 2 transitions, terminated at the 2nd (no bootstrap), then padding.
REWARDS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 99.0]])
TERMINATED = torch.tensor([[False, False, False], [False, True, False]])
MASK = torch.tensor([[True, True, True], [True, True, False]])
VALUES = torch.tensor([[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]])  # V(s0..s3)


def test_one_step_by_hand():
    y = one_step(REWARDS, TERMINATED, VALUES, G) * MASK
    expected = torch.tensor([[1 + G * 20, 2 + G * 30, 3 + G * 40], [4 + G * 60, 5.0, 0.0]])
    torch.testing.assert_close(y, expected)


def test_n_step_by_hand():
    y = n_step(REWARDS, TERMINATED, MASK, VALUES, G, n=2)
    expected = torch.tensor([
        [1 + G * 2 + G**2 * 30, 2 + G * 3 + G**2 * 40, 3 + G * 40],   # last: cut at the time-out, bootstrap
        [4 + G * 5, 5.0, 0.0],                                      # terminal inside the window: no bootstrap
    ])
    torch.testing.assert_close(y, expected)


def test_lambda_returns_by_hand():
    lam = 0.5
    y = lambda_returns(REWARDS, TERMINATED, MASK, VALUES, G, lam)
    g2 = 3 + G * 40
    g1 = 2 + G * ((1 - lam) * 30 + lam * g2)
    g0 = 1 + G * ((1 - lam) * 20 + lam * g1)
    h1 = 5.0
    h0 = 4 + G * ((1 - lam) * 60 + lam * h1)
    torch.testing.assert_close(y, torch.tensor([[g0, g1, g2], [h0, h1, 0.0]]))


def test_discounted_returns_by_hand():
    y = discounted_returns(REWARDS, MASK, G)
    expected = torch.tensor([[1 + G * 2 + G**2 * 3, 2 + G * 3, 3.0], [4 + G * 5, 5.0, 0.0]])
    torch.testing.assert_close(y, expected)


def test_identities_on_random_batches():
    torch.manual_seed(0)
    b, t = 6, 9
    lengths = torch.randint(1, t + 1, (b,))
    mask = torch.arange(t)[None] < lengths[:, None]
    terminated = (torch.arange(t)[None] == lengths[:, None] - 1) & (torch.rand(b, 1) < 0.5)
    rewards, values = torch.randn(b, t) * mask, torch.randn(b, t + 1)
    one = one_step(rewards, terminated, values, 0.9) * mask
    torch.testing.assert_close(lambda_returns(rewards, terminated, mask, values, 0.9, 0.0), one)
    torch.testing.assert_close(n_step(rewards, terminated, mask, values, 0.9, 1), one)
    # λ = 1 and n ≥ T are both the discounted return, bootstrapped only at a time-out
    full = lambda_returns(rewards, terminated, mask, values, 0.9, 1.0)
    torch.testing.assert_close(n_step(rewards, terminated, mask, values, 0.9, t + 3), full)
    timeout = ~terminated.any(1)
    bootstrap = torch.zeros(b, t)
    for i in range(b):
        if timeout[i]:
            bootstrap[i, : lengths[i]] = 0.9 ** (lengths[i] - torch.arange(lengths[i])) * values[i, lengths[i]]
    torch.testing.assert_close(full, discounted_returns(rewards, mask, 0.9) + bootstrap)
    for kind in ("one_step", "n_step", "td_lambda"):  # padding is zero
        y = targets(kind, rewards, terminated, mask, values, 0.9, 3, 0.6)
        assert (y[~mask] == 0).all()


def test_per_agent_trailing_dimension_broadcasts():
    r = REWARDS.unsqueeze(-1).expand(2, 3, 4)
    v = VALUES.unsqueeze(-1).expand(2, 4, 4)
    y = lambda_returns(r, TERMINATED, MASK, v, G, 0.3)
    torch.testing.assert_close(y[..., 2], lambda_returns(REWARDS, TERMINATED, MASK, VALUES, G, 0.3))
