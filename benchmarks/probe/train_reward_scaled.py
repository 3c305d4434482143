"""`effmarl train` with SMAX's team reward multiplied by a constant: the multi-type probe's reward-scale variant
(benchmarks/results/qmix_multitype_maps.md). JaxMARL's own Q-learning configuration for SMAX scales the reward by 10
("to the original scale of SMAC": SMAC's returns reach 20, SMAX's 2); the run configuration had no such field then
(it has now: env.reward_scale, which also sets the target operators' factor to match), so this probe wraps the SMAX
adapter's one-copy step (effmarl.envs.smax.functions, which the jitted rollout and the Python runner both take) and
multiplies its reward. Win rates are unchanged in meaning; the logged returns are in the scaled units (divide by
SCALE).

    python benchmarks/probe/train_reward_scaled.py SCALE --config ... --out ... [--set ...]
"""

from __future__ import annotations

import functools
import sys

from effmarl.envs import smax


def scaled(scale: float):
    original = smax.functions.__wrapped__

    @functools.cache
    def functions(*args, **kwargs):
        env, spec, reset_one, step_one = original(*args, **kwargs)

        def step(key, state, done, actions):
            key, state, done, (obs, world, avail, reward, terminated, truncated, won) = step_one(key, state, done,
                                                                                                  actions)
            return key, state, done, (obs, world, avail, reward * scale, terminated, truncated, won)

        return env, spec, reset_one, step

    return functions


if __name__ == "__main__":
    factor = float(sys.argv[1])
    smax.functions = scaled(factor)
    from effmarl.cli import main

    sys.exit(main(["train", *sys.argv[2:]]))
