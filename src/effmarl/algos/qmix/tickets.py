"""Tickets (the paper's Fig. 10): a static-mask run whose mask, and for a cheating ticket its weights, come from a
finished sparse run (`sparse.ticket: {kind, source}`).

  random    the static random mask with a fresh initialisation: exactly sparse.method static (SS)
  winning   the source run's final masks (masks.pt) over this run's initialisation. The networks' initialisation
            depends on the seed and the architecture alone (the topology draws from its own generator), so with
            the source's seed this is the source's own initialisation: the lottery ticket
  cheating  the source run's final masks and final trained weights (model.pt), trained on with the mask fixed

The cross-field checks (no files) are effmarl/qmix_checks.py's `ticket_problems`; `load_ticket` reads and checks the
source run before anything is trained. Every problem with the source is one line naming sparse.ticket.source.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from effmarl.config import ConfigError
from effmarl.methods import METHODS
from effmarl.qmix_checks import FIELD
from effmarl.safeload import UnreadableFile, load_torch

ARCHITECTURE = ("rnn_hidden_dim", "mixing_embed_dim", "hypernet_embed", "hypernet_layers",
                "central_mixing_embed_dim", "shared_params")


def _refuse(cfg: dict, problem: str) -> ConfigError:
    return ConfigError([f"{FIELD}: {cfg['sparse']['ticket']['source']}: {problem}"],
                       f"run {cfg.get('study', '?')} seed {cfg.get('seed', '?')}")


def _load(cfg: dict, path: Path):
    try:
        return load_torch(path, map_location="cpu")  # data only (effmarl.safeload)
    except UnreadableFile as exc:
        raise _refuse(cfg, f"{path.name} cannot be read ({exc.reason})") from None


def _expected_shapes(cfg: dict, spec) -> dict[str, tuple[int, ...]]:
    """Parameter shapes of this run's online networks, built on the meta device (nothing allocated)."""
    from effmarl.algos.qmix.networks import build_networks
    from effmarl.sparse.masks import named_parameters

    with torch.device("meta"):
        nets = build_networks(cfg["algo"], cfg["qmix"], spec.n_agents, spec.obs_dims[0], max(spec.n_actions),
                              spec.state_dim)
    return {name: tuple(p.shape) for name, p in named_parameters(nets).items()}


def load_ticket(cfg: dict, spec=None) -> dict | None:
    """{"kind", "masks": name -> bool mask, "weights": the source's online state dict (cheating) or None} for a
    winning or cheating ticket, else None. The source must be a finished run of the same algo, env and
    architecture, trained with a sparse method at the same sparsity; its masks (and weights) must have this run's
    shapes (`spec`: this run's EnvSpec; built from cfg["env"] when not given). Raises a one-line ConfigError."""
    ticket = cfg["sparse"]["ticket"]
    if ticket["kind"] not in ("winning", "cheating"):
        return None
    source = Path(ticket["source"])
    if not source.is_dir():
        raise _refuse(cfg, "not a directory")
    try:
        recorded = json.loads((source / "provenance.json").read_text())["config"]
    except (OSError, ValueError, KeyError, TypeError):
        raise _refuse(cfg, "no provenance.json with a config: not a finished run") from None
    method = recorded.get("sparse", {}).get("method")
    if method not in METHODS or not METHODS[method].masks:
        raise _refuse(cfg, f"trained with sparse.method {method!r}, which has no masks; tickets need one of "
                           f"{', '.join(name for name, m in METHODS.items() if m.masks)}")
    for field, ours, theirs in [("algo", cfg["algo"], recorded.get("algo")), ("env", cfg["env"], recorded.get("env")),
                                ("sparse.sparsity", cfg["sparse"]["sparsity"], recorded["sparse"].get("sparsity")),
                                *[(f"qmix.{k}", cfg["qmix"].get(k), recorded.get("qmix", {}).get(k))
                                  for k in ARCHITECTURE]]:
        if ours != theirs:
            raise _refuse(cfg, f"its {field} {theirs!r} differs from this run's {ours!r}")
    for name in ("masks.pt",) + (("model.pt",) if ticket["kind"] == "cheating" else ()):
        if not (source / name).is_file():
            raise _refuse(cfg, f"{name} is missing")
    try:
        masks = {n: m.bool() for n, m in _load(cfg, source / "masks.pt")["online"]["topology"]["masks"].items()}
    except (KeyError, TypeError, AttributeError):
        raise _refuse(cfg, "masks.pt holds no online topology masks") from None
    weights = _load(cfg, source / "model.pt") if ticket["kind"] == "cheating" else None
    if spec is None:
        from effmarl.envs import make_env

        env = make_env(cfg["env"], 1)
        spec = env.spec
        env.close()
    shapes = _expected_shapes(cfg, spec)
    for label, tensors in (("masks.pt", masks), ("model.pt", weights or {})):
        for name, tensor in tensors.items():
            if name not in shapes:
                raise _refuse(cfg, f"{label} names {name!r}, which this run's networks do not have")
            if tuple(tensor.shape) != shapes[name]:
                raise _refuse(cfg, f"{label}: {name} has shape {tuple(tensor.shape)}, this run's is {shapes[name]}")
    if weights is not None and set(weights) != set(shapes):
        raise _refuse(cfg, f"model.pt lacks {sorted(set(shapes) - set(weights))[:3]}")
    return {"kind": ticket["kind"], "masks": masks, "weights": weights}


def install_weights(learner, weights: dict[str, torch.Tensor]) -> None:
    """A cheating ticket: the source's trained online weights into the learner (masks re-applied), targets synced."""
    with torch.no_grad():
        learner.networks().load_state_dict(weights)
    learner.sparse.topology.apply_masks()
    learner.update_targets()
