"""The compiled update (algos/qmix/compiled.py: loss and gradient as one jitted JAX program) equals the eager one:
the loss, every statistic and every parameter gradient on the same inputs, for every algorithm, sparse method,
return kind and target operator (each value of each, and each algorithm with each operator family), and whole
stacked updates with the optimiser step, topology evolution included.

Why tolerances and not bitwise equality: XLA and torch sum and multiply in different orders (and the compiled
batch is padded to a length bucket, whose extra steps are masked out), which changes float32 rounding only."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch
from test_learner_fast import perturb_targets
from test_qmix_lockstep import OBS, STATE, A, N, random_batch

from effmarl.algos.qmix import Learner, SeedStack
from effmarl.algos.qmix.compiled import CompiledLoss, bucket
from effmarl.algos.qmix.lockstep import compiled_update
from effmarl.config import validate
from effmarl.replay.episode import pad_time

SOFT = {"operator": "soft_mellowmax", "alpha": 1.0, "omega": 10.0, "beta": 10.0}


def make_learner(algo, method, mellowmax=None, seed=0):
    cfg = validate({"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.8},
                    "qmix": {"shared_params": method == "dense" and algo == "qmix", "rnn_hidden_dim": 16,
                             "mixing_embed_dim": 8, "hypernet_embed": 16, "central_mixing_embed_dim": 16}},
                   part="run")
    torch.manual_seed(seed)
    return perturb_targets(Learner(algo, cfg["qmix"], N, OBS, A, STATE, seed=seed, mellowmax=mellowmax,
                                   sparse={**cfg["sparse"], "delta_m": 2, "zeta0": 0.5}))


CASES = [  # (algo, method, return kind, target operator: None = the algorithm's own)
    ("qmix", "dense", ("one_step", 1, 0.0), None),
    ("qmix", "mast", ("td_lambda", 1, 0.6), SOFT),
    ("qmix", "rigl", ("n_step", 3, 0.0), None),
    ("qmix", "set", ("one_step", 1, 0.0), {**SOFT, "operator": "mellowmax"}),
    ("qmix", "static", ("one_step", 1, 0.0), {**SOFT, "operator": "softmax"}),
    ("qmix", "rlx2", ("n_step", 3, 0.0), {**SOFT, "operator": "max"}),
    ("ow_qmix", "dense", ("one_step", 1, 0.0), None),
    ("ow_qmix", "rigl", ("n_step", 3, 0.0), None),
    ("ow_qmix", "mast", ("td_lambda", 1, 0.6), SOFT),
    ("res_qmix", "dense", ("one_step", 1, 0.0), None),
    ("res_qmix", "set", ("td_lambda", 1, 0.6), None),
    ("res_qmix", "mast", ("n_step", 3, 0.0), SOFT),
]


@pytest.mark.parametrize("algo,method,kind,operator", CASES,
                         ids=[f"{a}-{m}-{k[0]}-{o['operator'] if o else 'own'}" for a, m, k, o in CASES])
def test_one_compiled_update_equals_the_eager_one(algo, method, kind, operator):
    learner = make_learner(algo, method, operator)
    batch = random_batch(3, (12, 7, 3, 12, 1))  # 12 transitions: padded to the bucket of 12; a one-step episode
    learner.zero_grad()
    loss, stats = learner.loss(batch, kind)
    loss.backward()
    grads = {n: p.grad for n, p in learner.named_parameters() if p.grad is not None}
    compiled_grads, compiled_loss, compiled_stats = CompiledLoss(learner)(dict(learner.named_parameters()), batch,
                                                                        kind)
    torch.testing.assert_close(compiled_loss, loss.detach(), rtol=1e-5, atol=1e-6)
    assert compiled_stats.keys() == stats.keys()
    for key, value in stats.items():
        torch.testing.assert_close(compiled_stats[key], value, rtol=1e-5, atol=1e-6, msg=key)
    assert compiled_grads.keys() == grads.keys() and len(grads) > 10
    for name, grad in grads.items():  # masked weights included: their dense gradient is what RigL ranks
        torch.testing.assert_close(compiled_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.slow
def test_a_longer_padding_changes_nothing():
    """A batch padded to its bucket, or further, gives the same loss and gradients: padding is masked out."""
    learner = make_learner("qmix", "mast", SOFT)
    compiled, params, kind = CompiledLoss(learner), dict(learner.named_parameters()), ("td_lambda", 1, 0.6)
    batch = random_batch(5, (5, 2, 5))
    short, long = compiled(params, batch, kind), compiled(params, pad_time(batch, 20), kind)
    torch.testing.assert_close(short[1], long[1], rtol=1e-6, atol=1e-7)
    for name, grad in short[0].items():
        torch.testing.assert_close(long[0][name], grad, rtol=1e-5, atol=1e-7, msg=name)
    assert {key[0] for key in compiled.programs} == {8, 24} and compiled.compile_seconds > 0


@pytest.mark.parametrize("steps,padded", [(1, 8), (8, 8), (9, 12), (12, 12), (13, 16), (17, 24), (25, 32),
                                          (33, 48), (60, 64), (65, 96), (120, 128), (150, 192)])
def test_batches_are_padded_to_a_few_length_buckets(steps, padded):
    assert bucket(steps) == padded


@pytest.mark.slow
def test_stacked_updates_with_the_compiled_loss_equal_the_eager_ones():
    """Three seeds of MAST (Soft Mellowmax, RigL evolution every 2 updates, hybrid returns), five updates with the
    optimiser step: the compiled and the eager update leave the same parameters and pick the same connections."""
    def train(compiled):
        learners = [make_learner("qmix", "mast", SOFT, seed=s) for s in range(3)]
        with compiled_update() if compiled else nullcontext():
            stack = SeedStack(learners)
        assert (stack.compiled_loss is not None) == compiled
        kinds = [("one_step", 1, 0.0), ("td_lambda", 1, 0.6), ("one_step", 1, 0.0)]
        for t in range(1, 6):
            batches = [random_batch(10 * t + s, lengths) for s, lengths in enumerate([(4, 7), (3, 2), (6, 6)])]
            total, losses, _ = stack.losses(batches, kinds, [0, 1, 2])
            assert (total is None) == compiled
            norms = stack.step(total, [0, 1, 2], [t] * 3, [t / 10] * 3)
        return stack, torch.stack(losses), norms

    (eager, eager_losses, eager_norms), (fast, fast_losses, fast_norms) = train(False), train(True)
    torch.testing.assert_close(fast_losses, eager_losses, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(fast_norms, eager_norms, rtol=1e-4, atol=1e-6)
    for a, b in zip(eager.learners, fast.learners, strict=True):
        assert len(a.sparse.history) == 2
        for name, mask in a.sparse.topology.masks.items():
            assert torch.equal(b.sparse.topology.masks[name], mask), name
        for key, value in a.state_dict().items():
            torch.testing.assert_close(b.state_dict()[key], value, rtol=1e-4, atol=1e-5, msg=key)
