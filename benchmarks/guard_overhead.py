"""Cost of the divergence guard (harness.guard_finite over the learner's modules) per update round, measured
beside the round itself, interleaved (round, guard, round, guard ...): MADDPG, contiguous storage, batch 1024,
one torch thread. Usage: python benchmarks/guard_overhead.py N  (N = 3, 6, 12, ...)."""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from effmarl import harness
from effmarl.algos.maddpg import MADDPG
from effmarl.algos.offpolicy import TrainState, update_round
from effmarl.algos.offpolicy_settings import OffPolicySettings
from effmarl.config import validate
from effmarl.envs import make_env
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import make_sampler, make_storage


def main(n: int, rounds: int = 6) -> None:
    torch.set_num_threads(1)
    cfg = validate({"study": "b", "algo": "maddpg", "seed": 0, "env": {"backend": "mpe", "n_agents": n},
                    "offpolicy": {"batch_size": 1024, "warmup": 2048},
                    "replay": {"buffer_size": 4096, "storage": "contiguous"}}, part="run")
    env = make_env(cfg["env"])
    spec = env.spec
    state = TrainState(learner=MADDPG(OffPolicySettings.from_config(cfg), spec, torch.device("cpu")),
                       storage=make_storage(cfg["replay"], spec.obs_dims, spec.n_actions, device="cpu"),
                       rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(2048):
        obs = [rng.standard_normal(d).astype(np.float32) for d in spec.obs_dims]
        acts = [np.eye(a, dtype=np.float32)[0] for a in spec.n_actions]
        state.storage.add(obs, acts, rng.standard_normal(n), obs, np.zeros(n, bool))
    sampler, timer, trained = make_sampler(cfg["replay"]), PhaseTimer(), list(range(n))
    round_s, guard_s = [], []
    for i in range(rounds):
        start = time.perf_counter()
        update_round(state, sampler, 1024, "per_agent", trained, timer)
        round_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        harness.guard_finite("update_all_trainers", i, state.learner.modules())
        guard_s.append(time.perf_counter() - start)
    r, g = np.median(round_s[1:]), np.median(guard_s[1:])  # the first round warms up
    print(f"N={n}: update round median {r * 1e3:.1f} ms, guard median {g * 1e3:.2f} ms, "
          f"guard/round {100 * g / r:.2f} %")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
