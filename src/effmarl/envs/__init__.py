"""Environment backends behind one interface (see base.py); `make_env` picks one from the config."""

from __future__ import annotations

from effmarl.envs.base import EnvSpec, MultiAgentEnv, Step

__all__ = ["EnvSpec", "MultiAgentEnv", "Step", "make_env"]


def make_env(env_cfg: dict, num_envs: int | None = None) -> MultiAgentEnv:
    """Build the backend named by env_cfg["backend"] with `num_envs` copies (None: the config's `env.num_envs`,
    which only the mpe backends' schema has); backends are imported only when selected."""
    env_cfg = dict(env_cfg)
    copies = env_cfg.pop("num_envs", 1)
    num_envs = copies if num_envs is None else num_envs
    backend = env_cfg["backend"]
    if backend == "mpe":
        from effmarl.envs.mpe import MPEPredatorPrey

        return MPEPredatorPrey(**env_cfg, num_envs=num_envs)
    if backend == "mpe_vec":
        from effmarl.envs.mpe_vec import VectorPredatorPrey

        return VectorPredatorPrey(**env_cfg, num_envs=num_envs)
    if backend == "smax":
        from effmarl.envs.smax import SMAXEnv

        return SMAXEnv(**env_cfg, num_envs=num_envs)
    if backend == "smac":
        from effmarl.envs.smac import SMACEnv

        return SMACEnv(**env_cfg, num_envs=num_envs)
    raise ValueError(f"env.backend: {backend!r} is not a known backend")
