"""Soft Mellowmax and its comparison operators: hand-computed values, limits, masking, numerical stability."""

from __future__ import annotations

import math

import pytest
import torch

from effmarl.targets.mellowmax import OPERATORS, masked_max, mellowmax, soft_mellowmax, softmax_operator

Q = torch.tensor([1.0, 2.0], dtype=torch.float64)


def test_soft_mellowmax_hand_value():
    # alpha = omega = 1: softmax(Q) = [1, e]/(1 + e); sum_u p_u e^{Q_u} = e(1 + e^2)/(1 + e)
    expected = 1.0 + math.log(1.0 + math.e**2) - math.log(1.0 + math.e)  # = 1.813666...
    assert soft_mellowmax(Q, alpha=1.0, omega=1.0).item() == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(1.8136656, abs=1e-6)
    # alpha = 0 reduces to mellowmax: log((e + e^2)/2)
    assert soft_mellowmax(Q, alpha=0.0, omega=1.0).item() == pytest.approx(1.0 + math.log((1 + math.e) / 2))


def test_comparison_operators_hand_values():
    assert mellowmax(Q, omega=1.0).item() == pytest.approx(1.0 + math.log(1.0 + math.e) - math.log(2.0))
    assert softmax_operator(Q, beta=1.0).item() == pytest.approx((1.0 + 2.0 * math.e) / (1.0 + math.e))
    assert masked_max(Q).item() == 2.0
    assert set(OPERATORS) == {"max", "softmax", "mellowmax", "soft_mellowmax"}


def test_tends_to_max_as_omega_grows():
    q = torch.tensor([0.3, -1.0, 1.7, 1.2], dtype=torch.float64)
    gaps = [1.7 - soft_mellowmax(q, alpha=1.0, omega=w).item() for w in (1.0, 10.0, 100.0, 1000.0)]
    assert all(g >= 0 for g in gaps)  # below the max for alpha > 0 finite
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 1e-2


def test_the_operator_is_in_reward_units_scaling_returns_by_c_asks_for_alpha_and_omega_times_c():
    """sm_{cα,cω}(Q / c) = sm_{α,ω}(Q) / c: (α, ω) tuned where returns are c times larger (SMAC's episode return is
    normalised to 20, SMAX's team reward reaches ≈ 2) give the same operator here only at c·α, c·ω; with the same
    (α, ω) the gap below max, in units of the returns, is c times wider."""
    q = torch.tensor([0.3, -1.0, 1.7, 1.2], dtype=torch.float64)
    c = 10.0
    assert soft_mellowmax(q / c, alpha=c * 1.0, omega=c * 10.0).item() == pytest.approx(
        soft_mellowmax(q, alpha=1.0, omega=10.0).item() / c, abs=1e-12)
    # hand value of the wider gap: at alpha = 0 (mellowmax) and equal Q the gap is exactly log(n) / omega
    flat = torch.full((4,), 0.5, dtype=torch.float64)
    assert soft_mellowmax(flat, alpha=0.0, omega=10.0).item() == pytest.approx(0.5, abs=1e-12)
    assert mellowmax(torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64) / c, omega=10.0).item() == pytest.approx(
        math.log((3 + math.e) / 4) / 10.0, abs=1e-12)


def test_ignores_unavailable_actions():
    q = torch.tensor([[1.0, 2.0, 100.0], [5.0, -3.0, 0.5]], dtype=torch.float64)
    avail = torch.tensor([[True, True, False], [True, True, True]])
    out = soft_mellowmax(q, avail, alpha=1.0, omega=1.0)
    assert out[0].item() == pytest.approx(soft_mellowmax(Q, alpha=1.0, omega=1.0).item())
    assert out[1].item() == pytest.approx(soft_mellowmax(q[1], alpha=1.0, omega=1.0).item())
    for op in OPERATORS.values():
        assert op(q, avail)[0].item() <= 2.0 + 1e-12


def test_no_available_action_gives_zero_without_nan_gradients():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    avail = torch.tensor([[False, False], [True, False]])
    for op in OPERATORS.values():
        out = op(q, avail)
        assert out[0].item() == 0.0 and out[1].item() == pytest.approx(3.0, abs=1e-5)
        (g,) = torch.autograd.grad(out.sum(), q)
        assert torch.isfinite(g).all()


def test_finite_for_large_values_and_vectorised_over_leading_dims():
    q = 1e4 * torch.randn(4, 5, 3, 7, generator=torch.Generator().manual_seed(0))  # [B, T, n_agents, actions]
    avail = torch.rand(4, 5, 3, 7, generator=torch.Generator().manual_seed(1)) > 0.3
    out = soft_mellowmax(q, avail, alpha=5.0, omega=10.0)
    assert out.shape == (4, 5, 3) and torch.isfinite(out).all()
    top = masked_max(q, avail)
    assert ((out <= top + 1e-2) | ~avail.any(-1)).all()
    assert torch.isfinite(soft_mellowmax(torch.tensor([1e4, -1e4]), alpha=1.0, omega=1.0))
    assert soft_mellowmax(torch.tensor([1e4, 1e4 - 1.0]), alpha=1.0, omega=1.0).item() == pytest.approx(
        1e4 - 1.0 + 1.8136656 - 1.0, abs=1e-2)  # shift invariance: sm(Q + c) = sm(Q) + c


def test_rejects_bad_parameters():
    with pytest.raises(ValueError, match="omega"):
        soft_mellowmax(Q, omega=0.0)
