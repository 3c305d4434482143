"""Environment backends behind one interface (see base.py); `make_env` picks one from the config."""

from __future__ import annotations

from effmarl.envs.base import EnvSpec, MultiAgentEnv, Step

__all__ = ["EnvSpec", "MultiAgentEnv", "Step", "make_env"]


def make_env(env_cfg: dict, num_envs: int = 1) -> MultiAgentEnv:
    """Build the backend named by env_cfg["backend"]; backends are imported only when selected."""
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
