"""The optimised learner update equals the reference computation (bench/unrolls.py's reference_unroll, the unroll
as it was before nets/gru_sequence.py): the recurrence's hand-written backward against autograd, and every loss,
statistic and parameter gradient of qmix / ow_qmix / res_qmix, dense and masked, on the same inputs.

Why float tolerances and not bitwise equality: the agent-major path adds the bias inside the product (baddbmm),
computes h' = n + z(h − n) instead of (1 − z)n + zh and sums the recurrent weight gradient over all steps in one
product instead of step by step; every one of these changes only the rounding of float32 sums and products."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import torch
from test_qmix_lockstep import random_batch, short_cfg

from effmarl.algos.qmix import Learner, SeedStack
from effmarl.bench.unrolls import every_agent, padded_unroll, reference_unroll, use_unroll
from effmarl.config import validate
from effmarl.nets.gru_sequence import gru_packed, gru_sequence
from effmarl.nets.rnn_agent import RNNAgent, linear_factory

N, OBS, A, STATE = 3, 6, 5, 7


def test_gru_sequence_gradients_match_autograd_in_double_precision():
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(*shape, generator=g, dtype=torch.float64).requires_grad_()
            for shape in ((2, 5, 4, 9), (2, 4, 3), (2, 9, 3), (2, 9))]
    assert torch.autograd.gradcheck(gru_sequence, args)


def test_agent_major_unroll_equals_the_reference_unroll():
    torch.manual_seed(1)
    agent = RNNAgent(11, 5, 16, linear_factory(N, shared_params=False))
    x, weights, h0 = torch.randn(4, 9, N, 11), torch.randn(4, 9, N, 5), torch.randn(4, N, 16)
    results = []
    for reference in (False, True):
        agent.zero_grad()
        with torch.no_grad():
            plain = agent.unroll(x, h0)
        q = reference_unroll(agent, x, h0) if reference else agent.unroll(x, h0)
        (q * weights).sum().backward()
        results.append((q.detach(), plain, {n: p.grad.clone() for n, p in agent.named_parameters()}))
    (q_fast, plain_fast, grads_fast), (q_ref, _, grads_ref) = results
    torch.testing.assert_close(q_fast, q_ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(plain_fast, q_fast, rtol=0, atol=0)  # the graph-free forward: the same values
    for name, grad in grads_ref.items():
        torch.testing.assert_close(grads_fast[name], grad, rtol=1e-5, atol=1e-6, msg=name)


def make_learner(algo, method, shared):
    cfg = validate({"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.9},
                    "qmix": {"shared_params": shared}}, part="run")  # PyMARL's widths: GRU 64, mixer 32
    torch.manual_seed(0)
    learner = Learner(algo, cfg["qmix"], N, OBS, A, STATE, seed=0, sparse={**cfg["sparse"], "delta_m": 2},
                      mellowmax={"alpha": 1.0, "omega": 10.0} if method == "mast" else None)
    return perturb_targets(learner)


def perturb_targets(learner):
    """The learner with target networks that differ from its online ones (masks kept), so that the target's own
    forward matters in a comparison of losses and gradients."""
    with torch.no_grad():
        for p in learner.target.parameters():
            p.add_(0.05 * torch.randn_like(p))
    if learner.sparse:
        learner.sparse.topology.copy_masks_to(learner.target_topology)
    return learner


def loss_and_grads(learner, batch, kind):
    learner.zero_grad()
    loss, stats = learner.loss(batch, kind)
    loss.backward()
    return loss.detach(), stats, {n: p.grad.clone() for n, p in learner.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("kind", [("one_step", 1, 0.0), ("td_lambda", 1, 0.6)], ids=["one_step", "td_lambda"])
@pytest.mark.parametrize("algo,method,shared", [("qmix", "dense", False), ("qmix", "mast", False),
                                                ("ow_qmix", "dense", False), ("ow_qmix", "rigl", False),
                                                ("res_qmix", "dense", False), ("res_qmix", "set", False),
                                                ("qmix", "dense", True)])
def test_learner_loss_and_every_gradient_equal_the_reference(algo, method, shared, kind):
    learner = make_learner(algo, method, shared)
    batch = random_batch(3, (12, 7, 3, 12))
    loss, stats, grads = loss_and_grads(learner, batch, kind)
    with use_unroll(learner, reference_unroll):
        ref_loss, ref_stats, ref_grads = loss_and_grads(learner, batch, kind)
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=1e-6)
    for key, value in ref_stats.items():
        torch.testing.assert_close(stats[key], value, rtol=1e-5, atol=1e-6, msg=key)
    assert grads.keys() == ref_grads.keys() and len(grads) > 10
    for name, grad in ref_grads.items():  # masked weights included: their dense gradient is what RigL ranks
        torch.testing.assert_close(grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)
        if shared:  # torch's fused cell on both paths: the same operations in the same order
            assert torch.equal(grads[name], grad), name


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dense", "mast"])
def test_stacked_updates_equal_the_reference(method):
    """Three seeds in lockstep (the CPU loop under functional_call), five updates each with the optimiser step:
    the optimised and the reference unroll leave the same parameters, up to float rounding."""
    def run(reference):
        cfg = validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                        "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.9},
                        "qmix": {"shared_params": False}}, part="run")
        learners = []
        for seed in range(3):
            torch.manual_seed(seed)
            learners.append(Learner("qmix", cfg["qmix"], N, OBS, A, STATE, seed=seed,
                                    sparse={**cfg["sparse"], "delta_m": 2}))
        stack = SeedStack(learners, vectorised=False)
        losses = []
        with use_unroll(stack.template, reference_unroll) if reference else torch.enable_grad():
            for t in range(1, 6):
                batches = [random_batch(10 * t + s, (9, 4, 6)) for s in range(3)]
                total, each, _ = stack.losses(batches, [("one_step", 1, 0.0)] * 3, [0, 1, 2])
                stack.step(total, [0, 1, 2], [t] * 3, [t / 10] * 3)
                losses.append(torch.stack(each))
        return torch.stack(losses), {n: p.detach().clone() for n, p in stack.params.items()}

    (fast_losses, fast), (ref_losses, ref) = run(False), run(True)
    torch.testing.assert_close(fast_losses, ref_losses, rtol=1e-4, atol=1e-6)
    for name, value in ref.items():
        torch.testing.assert_close(fast[name], value, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dense", "mast"])
def test_short_run_metrics_equal_the_reference(tmp_path, method):
    """A short fixed-seed SMAX run (per-agent networks, topology evolution every 2 updates for MAST) gives the same
    metrics with the optimised and the reference unroll, to float rounding (see the module docstring)."""
    from effmarl.algos.qmix import run
    from effmarl.runs import RunDir

    cfg = short_cfg(5, method)
    cfg["qmix"]["shared_params"] = False
    assert run(copy.deepcopy(cfg), RunDir(tmp_path / "fast", cfg))
    with every_agent(reference_unroll):
        assert run(copy.deepcopy(cfg), RunDir(tmp_path / "ref", cfg))
    fast, ref = (pd.read_parquet(tmp_path / k / "metrics.parquet").drop(columns=["wall_s"]) for k in ("fast", "ref"))
    assert fast["updates"].iloc[-1] > 0
    pd.testing.assert_frame_equal(fast, ref, rtol=1e-4)


def test_rmsprop_equals_torch_bitwise_with_subnormal_square_averages():
    """The optimiser's floor under the square root (algos/qmix/optim.py) changes no parameter and no state, also
    where square averages decay into subnormals or stay zero."""
    from effmarl.algos.qmix.optim import RMSprop

    g = torch.Generator().manual_seed(0)
    shapes = [(3, 8, 12), (3, 8), (16, 5)]
    start = [torch.randn(s, generator=g) for s in shapes]
    ours = [p.clone().requires_grad_() for p in start]
    theirs = [p.clone().requires_grad_() for p in start]
    opt_ours = RMSprop(ours, lr=5e-4, alpha=0.99, eps=1e-5)
    opt_theirs = torch.optim.RMSprop(theirs, lr=5e-4, alpha=0.99, eps=1e-5)
    for step in range(120):
        for a, b in zip(ours, theirs, strict=True):
            grad = torch.randn(a.shape, generator=g) * torch.logspace(-30, 0, a.shape[-1])
            grad[..., :2] = 0  # never any gradient
            if step > 40:
                grad[..., 2:4] = 0  # gradients that stop: the square average decays into subnormals
            a.grad, b.grad = grad.clone(), grad.clone()
        opt_ours.step()
        opt_theirs.step()
    squares = [opt_theirs.state[b]["square_avg"] for b in theirs]
    assert sum(int(((s > 0) & (s < torch.finfo(torch.float32).tiny)).sum()) for s in squares) > 0
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)
        for key in ("step", "square_avg"):
            assert torch.equal(opt_ours.state[a][key], opt_theirs.state[b][key])
    fresh = RMSprop(theirs, lr=5e-4, alpha=0.99, eps=1e-5)
    fresh.load_state_dict(opt_theirs.state_dict())  # checkpoints of either load into the other
    assert torch.equal(fresh.state[theirs[0]]["square_avg"], squares[0])


def test_packed_recurrence_gradients_match_autograd_in_double_precision():
    """Rows that end at different steps (counts 4, 4, 3, 1, 1): gradcheck of gru_packed, h0 included."""
    counts = [4, 4, 3, 1, 1]
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(*shape, generator=g, dtype=torch.float64).requires_grad_()
            for shape in ((2, sum(counts), 9), (2, 4, 3), (2, 9, 3), (2, 9))]
    assert torch.autograd.gradcheck(lambda *a: gru_packed(*a, counts), args)


def test_packed_recurrence_equals_the_padded_one_on_alive_rows():
    """Step t of the packed recurrence gives the padded recurrence's hidden states of the rows alive at t."""
    torch.manual_seed(2)
    lengths = [2, 5, 1, 5, 3]                       # rows in any order; the packed layout sorts them
    order = sorted(range(5), key=lambda b: -lengths[b])
    counts = [sum(1 for b in lengths if b > t) for t in range(5)]
    gi, h0, w, b = torch.randn(2, 5, 5, 12), torch.randn(2, 5, 4), torch.randn(2, 12, 4), torch.randn(2, 12)
    padded = gru_sequence(gi, h0, w, b)             # [g, T, M, h]
    rows = [(t, order[i]) for t, alive in enumerate(counts) for i in range(alive)]
    packed = gru_packed(torch.stack([gi[:, t, m] for t, m in rows], 1), h0[:, order], w, b, counts)
    torch.testing.assert_close(packed, torch.stack([padded[:, t, m] for t, m in rows], 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="non-increasing"):
        gru_packed(gi[:, 0], h0, w, b, [1, 2])


def test_packed_unroll_skips_padding_and_equals_the_padded_unroll():
    """Given lengths, the per-agent unroll computes only the steps inside each sequence: there its Q-values and the
    gradients of a loss on them equal the padded unroll's; past a sequence's end its Q-values are zeros."""
    torch.manual_seed(3)
    agent = RNNAgent(11, 5, 16, linear_factory(N, shared_params=False))
    lengths = torch.tensor([9, 4, 1, 6])
    x, weights = torch.randn(4, 9, N, 11), torch.randn(4, 9, N, 5)
    alive = (torch.arange(9) < lengths[:, None])[..., None, None].float()  # [B, T, 1, 1]
    results = []
    for packed in (True, False):
        agent.zero_grad()
        q = agent.unroll(x, lengths=lengths) if packed else padded_unroll(agent, x)
        (q * weights * alive).sum().backward()
        results.append((q.detach(), {n: p.grad.clone() for n, p in agent.named_parameters()}))
    (q_packed, grads_packed), (q_padded, grads_padded) = results
    torch.testing.assert_close(q_packed * alive, q_padded * alive, rtol=1e-5, atol=1e-6)
    assert torch.equal(q_packed * (1 - alive), torch.zeros_like(q_packed))
    for name, grad in grads_padded.items():
        torch.testing.assert_close(grads_packed[name], grad, rtol=1e-5, atol=1e-6, msg=name)
