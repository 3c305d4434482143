"""SMAX (jaxmarl's JAX re-implementation of SMAC) behind the effmarl interface.

`num_envs` copies of `HeuristicEnemySMAX` are stepped together by one `jax.jit(jax.vmap(...))` call. The
adapter does not use jaxmarl's auto-reset (which would overwrite the terminal observation): a copy whose
episode has ended is frozen — further steps leave it unchanged, with zero reward and `done` still set —
until the next `reset()`. That is PyMARL's parallel runner: every copy plays one episode per round.

PyMARL view of the outputs:
- `terminated`: the battle was decided (every enemy or every ally dead); a bootstrapping terminal.
- `truncated`: the step limit was hit with the battle undecided (a time-out; NOT a terminal for
  bootstrapping, PyMARL's `episode_limit`).
- `info["battle_won"]`: every enemy dead and at least one ally alive at the step the episode ended
  (jaxmarl's own rule for its win bonus; SMAX's `info` dict is empty, so it is derived here from the state).
- rewards: SMAX's team reward (normalised enemy health lost + 1 on a win), the same for every ally.

Memory: JAX is told not to preallocate accelerator memory (XLA_PYTHON_CLIENT_PREALLOCATE=false, set before
jax is first imported, unless the user set it), so that a GPU stays available to torch.

Arrays reach numpy through DLPack/the buffer protocol without copies on the CPU (`np.from_dlpack`); on a GPU
use `to_torch` to hand a JAX array to torch without leaving the device.

The "64zg" map of the paper (2 colossi vs 64 zerglings) has no SMAX counterpart: SMAX has no colossus. The
map `64zg_approx` adds a seventh unit type "colossus" through SMAX's unit parameters (`COLOSSUS`). SMAX has
no splash damage and no cliffs, the two things the real map is about, so this is an approximation in name
and unit counts only; it is labelled as such wherever it appears.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import types

import numpy as np

from effmarl.envs.base import EnvSpec, Step

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# SMAX's default unit parameters (jaxmarl 0.2.0 SMAX.__init__), in SMAX's unit-type order.
SMAX_UNITS = {
    #              velocity attack range sight radius health cooldown
    "marine":     (3.15,    9.0,   5.0,  9.0,  0.375,  45.0,  0.61),
    "marauder":   (2.25,    10.0,  6.0,  10.0, 0.5625, 125.0, 1.07),
    "stalker":    (4.13,    13.0,  6.0,  10.0, 0.625,  160.0, 1.87),
    "zealot":     (3.15,    8.0,   2.0,  9.0,  0.5,    150.0, 0.86),
    "zergling":   (4.13,    5.0,   2.0,  8.0,  0.375,  35.0,  0.5),
    "hydralisk":  (3.15,    12.0,  5.0,  9.0,  0.625,  80.0,  0.59),
}
SHORTHANDS = ["m", "M", "s", "Z", "z", "h"]
# Colossus for `64zg_approx`, from StarCraft II (LotV) values: speed 3.15, 200 health + 150 shields,
# 2 x (10 + 5 vs light) damage per 1.07 s attack, range 7, sight 10, radius 1.0. Without splash damage a
# colossus kills one zergling per shot at best: attack 30 is the per-shot damage against light units.
COLOSSUS = ("colossus", "c", (3.15, 30.0, 7.0, 10.0, 1.0, 350.0, 1.07))

MAPS = ["3m", "2s3z", "3s5z", "5m_vs_6m", "64zg_approx"]
# SMAC's episode limits for these maps (2c_vs_64zg for 64zg_approx); SMAX's own default is 100 for all.
SMAC_EPISODE_LIMITS = {"3m": 60, "2s3z": 120, "3s5z": 150, "5m_vs_6m": 70, "64zg_approx": 400}


_SMAX_MODULE = None


def import_smax():
    """jaxmarl's SMAX module, imported without the rest of jaxmarl.

    `import jaxmarl` builds every jaxmarl environment at import time (about 15 s on a busy 2-core machine;
    SMAX alone is about 1.5 s). When jaxmarl is not imported yet, its two parent packages are stood in by
    empty packages while SMAX imports; afterwards every jaxmarl module is taken out of sys.modules again
    (the returned module keeps working), so a later `import jaxmarl` runs from scratch, as if this never
    happened. EFFMARL_JAXMARL_FULL_IMPORT=1 turns this off.
    """
    global _SMAX_MODULE
    if _SMAX_MODULE is not None:
        return _SMAX_MODULE
    if "jaxmarl" in sys.modules or os.environ.get("EFFMARL_JAXMARL_FULL_IMPORT") == "1":
        return importlib.import_module("jaxmarl.environments.smax")
    spec = importlib.util.find_spec("jaxmarl")
    if spec is None:
        raise ImportError("env.backend 'smax' needs jaxmarl: pip install jaxmarl==0.2.0")
    before = set(sys.modules)
    root = os.path.dirname(spec.origin)
    stubs = {"jaxmarl": root, "jaxmarl.environments": os.path.join(root, "environments")}
    for name, path in stubs.items():
        stub = types.ModuleType(name)
        stub.__path__ = [path]
        sys.modules[name] = stub
    try:
        _SMAX_MODULE = importlib.import_module("jaxmarl.environments.smax")
        return _SMAX_MODULE
    finally:
        for name in set(sys.modules) - before:
            if name == "jaxmarl" or name.startswith("jaxmarl."):
                del sys.modules[name]


def _unit_kwargs(extra_types: list[tuple[str, str, tuple]] = ()) -> dict:
    import jax.numpy as jnp

    names = list(SMAX_UNITS) + [name for name, _, _ in extra_types]
    params = list(SMAX_UNITS.values()) + [p for _, _, p in extra_types]
    cols = list(zip(*params, strict=True))
    keys = ["unit_type_velocities", "unit_type_attacks", "unit_type_attack_ranges", "unit_type_sight_ranges",
            "unit_type_radiuses", "unit_type_health", "unit_type_weapon_cooldowns"]
    kwargs = {key: jnp.array(col, dtype=jnp.float32) for key, col in zip(keys, cols, strict=True)}
    kwargs["unit_type_names"] = names
    kwargs["unit_type_shorthands"] = SHORTHANDS + [s for _, s, _ in extra_types]
    return kwargs


def scenario_kwargs(map_name: str) -> dict:
    """jaxmarl constructor arguments (scenario and unit parameters) for one of MAPS."""
    import jax.numpy as jnp
    smax = import_smax()
    Scenario, map_name_to_scenario = smax.Scenario, smax.map_name_to_scenario

    if map_name == "64zg_approx":
        colossus = len(SMAX_UNITS)
        zergling = list(SMAX_UNITS).index("zergling")
        types = jnp.array([colossus] * 2 + [zergling] * 64, dtype=jnp.uint8)
        return {"scenario": Scenario(types, 2, 64, False, False), **_unit_kwargs([COLOSSUS])}
    if map_name not in MAPS:
        raise ValueError(f"env.map: {map_name!r} is not supported; allowed: {', '.join(map(repr, MAPS))}")
    return {"scenario": map_name_to_scenario(map_name), **_unit_kwargs()}


def enable_compilation_cache() -> None:
    """Keep compiled SMAX steps on disk (tens of seconds per map otherwise), unless the user chose a cache.

    The directory is $JAX_COMPILATION_CACHE_DIR if set, else $EFFMARL_JAX_CACHE, else ~/.cache/effmarl/jax.
    """
    import jax

    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    path = os.environ.get("EFFMARL_JAX_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "effmarl", "jax"))
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)


def to_torch(array, device=None):
    """A JAX (or numpy) array as a torch tensor, through DLPack (no copy when the devices match)."""
    import torch

    tensor = torch.from_dlpack(array) if hasattr(array, "__dlpack__") else torch.as_tensor(array)
    return tensor if device is None else tensor.to(device)


def _to_numpy(array) -> np.ndarray:
    try:
        return np.from_dlpack(array)  # zero-copy view of a CPU JAX buffer
    except (TypeError, RuntimeError, BufferError):
        return np.asarray(array)


@functools.cache
def compiled(map: str, episode_limit: int, see_enemy_actions: bool, walls_cause_death: bool,
             normalise_state: bool, reward_scale: float = 1.0):
    """(jaxmarl env, spec, jit(vmap(reset)), jit(vmap(step))) for one configuration, built once per process, so
    every SMAXEnv of that configuration (training and evaluation copies, repeated runs) shares the traced and
    compiled functions; jit compiles once per batch size, and the persistent cache keeps that across runs."""
    import jax

    env, spec, reset_one, step_one = functions(map, episode_limit, see_enemy_actions, walls_cause_death,
                                               normalise_state, reward_scale)
    return env, spec, jax.jit(jax.vmap(reset_one)), jax.jit(jax.vmap(step_one))


@functools.cache
def functions(map: str, episode_limit: int, see_enemy_actions: bool, walls_cause_death: bool,
              normalise_state: bool, reward_scale: float = 1.0):
    """(jaxmarl env, spec, reset_one, step_one): one copy's reset(key) and step(key, state, done, actions), pure JAX
    functions to vmap and jit (here by `compiled`; inside a whole-episode rollout by algos/qmix/smax_runner.py).
    The team reward is SMAX's times `reward_scale` (config env.reward_scale).
    reset_one(key) -> (key, state, done, (obs [n, d], world state, avail [n, A])); step_one(...) -> (key, state,
    done, (obs, world state, avail, reward, terminated, truncated, won)); see the module docstring."""
    import jax
    import jax.numpy as jnp

    HeuristicEnemySMAX = import_smax().HeuristicEnemySMAX
    enable_compilation_cache()
    env = HeuristicEnemySMAX(max_steps=episode_limit, see_enemy_actions=see_enemy_actions,
                             walls_cause_death=walls_cause_death, **scenario_kwargs(map))
    allies = list(env.agents)
    n_actions = env.num_ally_actions
    spec = EnvSpec(
        agents=allies,
        teams=["ally"] * len(allies),
        obs_dims=[int(env.observation_spaces[a].shape[0]) for a in allies],
        n_actions=[n_actions] * len(allies),
        state_dim=int(env.state_size),
        episode_limit=episode_limit,
        unit_types=tuple(env.unit_type_names[int(t)] for t in np.asarray(env.scenario)[: len(allies)]),
    )
    n_allies = env.num_allies

    n_units = env.num_allies + env.num_enemies  # the wrapper's num_agents counts allies only
    n_features, n_types = len(env.own_features), len(env.unit_type_names)

    def world_state(state):
        """SMAX's world state; normalised: positions / map size, cooldown / the unit's cooldown (clipped
        to [0, 1]), unit type index / (types - 1). Raw SMAX positions reach 32 and make QMIX's
        hypernetworks start far from zero; SMAC's state is normalised likewise."""
        ws = env.get_world_state(state).astype(jnp.float32)
        if not normalise_state:
            return ws
        units = ws[: n_units * n_features].reshape(n_units, n_features)
        units = units.at[:, 1].divide(env.map_width).at[:, 2].divide(env.map_height)
        cooldown = units[:, 3] / env.unit_type_weapon_cooldowns[state.state.unit_types]
        units = units.at[:, 3].set(jnp.clip(cooldown, 0.0, 1.0))
        teams = ws[n_units * n_features: n_units * (n_features + 1)]
        types = ws[n_units * (n_features + 1):] / max(1, n_types - 1)
        return jnp.concatenate([units.reshape(-1), teams, types])

    def observe(state):
        obs = env.get_obs(state)
        stacked = jnp.stack([obs[a] for a in allies]).astype(jnp.float32)
        avail = env.get_avail_actions(state)
        avail = jnp.stack([avail[a] for a in allies]).astype(jnp.bool_)
        return stacked, world_state(state), avail

    def strong(tree):  # no weak types, so reset and step produce one state type (one compilation)
        return jax.tree.map(lambda x: x.astype(x.dtype), tree)

    def reset_one(key):
        key, reset_key = jax.random.split(key)
        _, state = env.reset(reset_key)
        state = strong(state)
        obs, world, avail = observe(state)
        return key, state, jnp.array(False), (obs, world, avail)

    def step_one(key, state, done, actions):
        key, step_key = jax.random.split(key)
        _, new_state, rewards, _, _ = env.step_env(
            step_key, state, {a: actions[i] for i, a in enumerate(allies)})
        # a finished copy is frozen until reset
        new_state = strong(jax.tree.map(lambda new, old: jnp.where(done, old, new), new_state, state))
        inner = new_state.state
        allies_dead = ~jnp.any(inner.unit_alive[:n_allies])
        enemies_dead = ~jnp.any(inner.unit_alive[n_allies:])
        decided = allies_dead | enemies_dead
        # the time-out is counted here: jaxmarl tests its step limit before incrementing the step counter, so
        # its own `done` comes one step late (episode_limit + 1 steps)
        ended = (decided | (inner.step >= episode_limit)) & ~done
        won = ended & enemies_dead & ~allies_dead
        terminated = ended & decided
        truncated = ended & ~decided
        reward = jnp.where(done, 0.0, reward_scale * rewards[allies[0]]).astype(jnp.float32)
        obs, world, avail = observe(new_state)
        return key, new_state, done | ended, (obs, world, avail, reward, terminated, truncated, won)

    return env, spec, reset_one, step_one


class SMAXEnv:
    def __init__(self, map: str = "3m", episode_limit: int | None = None, num_envs: int = 1, backend: str = "smax",
                 see_enemy_actions: bool = True, walls_cause_death: bool = True, normalise_state: bool = True,
                 reward_scale: float = 1.0):
        import jax
        import jax.numpy as jnp

        if map not in MAPS:
            raise ValueError(f"env.map: {map!r} is not supported; allowed: {', '.join(repr(m) for m in MAPS)}")
        self.map_name = map
        self.num_envs = num_envs
        args = (map, episode_limit or SMAC_EPISODE_LIMITS[map], see_enemy_actions, walls_cause_death, normalise_state,
                float(reward_scale))
        self._env, self.spec, self._reset, self._step = compiled(*args)
        self.functions = functions(*args)  # the un-jitted one-copy functions, for whole-episode JAX programs
        self._keys = self._state = self._done = None
        self._jnp = jnp
        self._jax = jax

    def _keys_for(self, seed: int | None):
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        return self._jnp.stack([self._jax.random.PRNGKey((seed + j) % 2**32) for j in range(self.num_envs)])

    def _make_step(self, obs, world, avail, reward, terminated, truncated, won) -> Step:
        obs = _to_numpy(obs)
        n = self.spec.n_agents
        return Step(obs=[obs[:, i] for i in range(n)], state=_to_numpy(world), avail_actions=_to_numpy(avail),
                    rewards=np.repeat(_to_numpy(reward)[:, None], n, axis=1), terminated=_to_numpy(terminated),
                    truncated=_to_numpy(truncated), info={"battle_won": _to_numpy(won)})

    def reset(self, seed: int | None = None) -> Step:
        keys, self._state, self._done, (obs, world, avail) = self._reset(self._keys_for(seed))
        self._keys = keys
        false = np.zeros(self.num_envs, bool)
        return self._make_step(obs, world, avail, np.zeros(self.num_envs, np.float32), false, false, false)

    def step(self, actions: np.ndarray) -> Step:
        actions = self._jnp.asarray(np.asarray(actions, dtype=np.int32))
        self._keys, self._state, self._done, out = self._step(self._keys, self._state, self._done, actions)
        return self._make_step(*out)

    def unit_alive(self) -> np.ndarray:
        """[num_envs, allies + enemies] bool: which units are alive (for tests and diagnostics)."""
        return _to_numpy(self._state.state.unit_alive)

    def close(self) -> None:
        self._state = None
