"""Episode buffer: layout, ring overwrite, uniform sampling, cutting to the longest episode, state round trip."""

import torch

from effmarl.envs.base import EnvSpec
from effmarl.replay.episode import EpisodeBuffer, empty_batch, episode_scheme

SPEC = EnvSpec(agents=["a", "b"], teams=["ally"] * 2, obs_dims=[3, 3], n_actions=[4, 4], state_dim=5,
               episode_limit=6)


def episodes(ids, lengths):
    """A batch whose episode k carries its id in reward and obs, with lengths[k] filled steps."""
    scheme = episode_scheme(SPEC)
    batch = empty_batch(scheme, len(ids))
    for k, (i, n) in enumerate(zip(ids, lengths, strict=True)):
        batch["filled"][k, :n] = True
        batch["reward"][k, :n] = float(i)
        batch["obs"][k, : n + 1] = float(i)
    return batch


def test_layout_is_contiguous_and_padded():
    buf = EpisodeBuffer(episode_scheme(SPEC), capacity=4)
    assert buf.data["obs"].shape == (4, 7, 2, 3) and buf.data["obs"].is_contiguous()
    assert buf.data["avail"].dtype == torch.bool and buf.data["reward"].shape == (4, 6)


def test_ring_overwrites_oldest():
    buf = EpisodeBuffer(episode_scheme(SPEC), capacity=4)
    buf.add(episodes([1, 2, 3], [2, 2, 2]))
    buf.add(episodes([4, 5], [2, 2]))
    assert len(buf) == 4
    assert sorted(buf.data["reward"][:, 0].tolist()) == [2.0, 3.0, 4.0, 5.0]


def test_sampling_is_uniform_without_replacement_and_cut():
    buf = EpisodeBuffer(episode_scheme(SPEC), capacity=10)
    buf.add(episodes(list(range(10)), [1, 2, 3, 1, 2, 3, 1, 2, 3, 4]))
    g = torch.Generator().manual_seed(0)
    counts = torch.zeros(10)
    draws = 3000
    for _ in range(draws):
        batch = buf.sample(4, g)
        ids = batch["reward"][:, 0].long()
        assert len(set(ids.tolist())) == 4
        longest = int(batch["filled"].sum(1).max())
        assert batch["filled"].shape[1] == longest and batch["obs"].shape[1] == longest + 1
        counts[ids] += 1
    expected = draws * 4 / 10
    chi2 = ((counts - expected) ** 2 / expected).sum().item()
    assert chi2 < 27.9  # chi-square, 9 degrees of freedom, p = 0.001


def test_state_dict_round_trip():
    buf = EpisodeBuffer(episode_scheme(SPEC), capacity=5)
    buf.add(episodes([1, 2, 3], [2, 3, 4]))
    other = EpisodeBuffer(episode_scheme(SPEC), capacity=5)
    other.load_state_dict(buf.state_dict())
    assert other.size == 3 and other.next_index == 3
    for key in buf.data:
        assert torch.equal(buf.data[key], other.data[key])
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    a, b = buf.sample(2, g1), other.sample(2, g2)
    assert all(torch.equal(a[k], b[k]) for k in a)
