"""How hard is each SMAX map against its heuristic enemy, before any learning (issue 45's multi-type probe)?

Plays N episodes per map with three ally policies against SMAX's heuristic enemy (attack_mode "closest", shooting,
see_enemy_actions and walls_cause_death as our adapter sets them, SMAC's episode limit): uniformly random available
actions, SMAX's own heuristic (the enemy's policy, mirrored: a symmetric fight) and the heuristic with attack_mode
"random". Prints win rate and mean return (SMAX's team reward: normalised enemy health lost + 1 on a win) per map and
policy. Usage: python benchmarks/probe/smax_opponent_floor.py [--episodes 256] [--maps 3m 2s3z 3s5z]"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp

from effmarl.envs.smax import SMAC_EPISODE_LIMITS, import_smax, scenario_kwargs


def play(map_name: str, policy: str, episodes: int, seed: int = 0) -> tuple[float, float, float]:
    smax = import_smax()
    limit = SMAC_EPISODE_LIMITS[map_name]
    env = smax.HeuristicEnemySMAX(max_steps=limit, see_enemy_actions=True, walls_cause_death=True,
                                  **scenario_kwargs(map_name))
    from jaxmarl.environments.smax.heuristic_enemy import create_heuristic_policy, get_heuristic_policy_initial_state
    mode = "random" if policy == "heuristic_random" else "closest"
    heuristic = create_heuristic_policy(env._env, 0, shoot=True, attack_mode=mode)
    agents = env.agents

    def episode(key):
        key, k = jax.random.split(key)
        obs, state = env.reset(k)
        pstate = get_heuristic_policy_initial_state()

        def body(carry, _):
            key, obs, state, done, ret, won, length = carry
            key, ka, ks = jax.random.split(key, 3)
            avail = env.get_avail_actions(state)
            keys = jax.random.split(ka, len(agents))
            if policy == "random":
                acts = {a: jax.random.choice(keys[i], avail[a].shape[0], p=avail[a] / avail[a].sum())
                        for i, a in enumerate(agents)}
            else:
                acts = {a: heuristic(keys[i], pstate, obs[a])[0] for i, a in enumerate(agents)}
            new_obs, new_state, rew, dones, _ = env.step_env(ks, state, acts)
            alive = new_state.state.unit_alive
            end = dones["__all__"] | (length + 1 >= limit)
            win_now = end & jnp.all(~alive[env.num_allies:]) & jnp.any(alive[:env.num_allies])
            r = jnp.where(done, 0.0, rew[agents[0]])
            won = jnp.where(done, won, win_now)
            length = jnp.where(done, length, length + 1)
            state = jax.tree.map(lambda o, n: jnp.where(done, o, n), state, new_state)
            obs = jax.tree.map(lambda o, n: jnp.where(done, o, n), obs, new_obs)
            return (key, obs, state, done | end, ret + r, won, length), None

        init = (key, obs, state, jnp.array(False), jnp.array(0.0), jnp.array(False), jnp.array(0))
        (_, _, _, _, ret, won, length), _ = jax.lax.scan(body, init, None, length=limit)
        return ret, won, length

    rets, wons, lengths = jax.jit(jax.vmap(episode))(jax.random.split(jax.random.PRNGKey(seed), episodes))
    return float(wons.mean()), float(rets.mean()), float(lengths.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--maps", nargs="+", default=["3m", "2s3z", "3s5z"])
    args = parser.parse_args()
    print("| map | ally policy | win rate | mean return | mean length |")
    print("|---|---|---|---|---|")
    for m in args.maps:
        for policy in ("random", "heuristic", "heuristic_random"):
            w, r, n = play(m, policy, args.episodes)
            print(f"| {m} | {policy} | {w:.3f} | {r:.3f} | {n:.1f} |", flush=True)


if __name__ == "__main__":
    main()
