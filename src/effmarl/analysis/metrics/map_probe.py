"""The multi-type map probe (benchmarks/results/qmix_multitype_maps.md) as the paper-2 claims table quotes it: where
a profile trains no run on a map, what dense QMIX did there in the probe's runs (one seed a variant), per reward
scale, from the probe's summary CSV (benchmarks/probe/summarise_multitype.py)."""

from __future__ import annotations

import pandas as pd

from effmarl.config import ConfigError

PROBE_COLUMNS = ["variant", "map", "reward_scale", "env_steps", "learned", "plateau", "last_win_rate"]


def read_probe(paths: list[str]) -> pd.DataFrame | None:
    """The map probes' summaries (role map_probe), concatenated, or None where none is given; a file lacking a
    column, or not a CSV, is refused in one line naming it."""
    if not paths:
        return None
    frames = []
    for path in paths:
        try:
            probe = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            raise ConfigError([f"map_probe {path}: not a readable CSV ({exc})"], "effmarl table mast_claims") from None
        lacking = [c for c in PROBE_COLUMNS if c not in probe.columns]
        if lacking:
            raise ConfigError([f"map_probe {path}: lacks column(s) {', '.join(lacking)} (needs "
                               f"{', '.join(PROBE_COLUMNS)})"], "effmarl table mast_claims")
        frames.append(probe)
    return pd.concat(frames, ignore_index=True)


def probe_text(probe: pd.DataFrame | None, map_: str, shown: str) -> str:
    """What the map probe measured on `map_` where no run of the profile trains there, naming the map `shown` (the
    caller names maps: `style.map_name`, a layer above this one): per reward scale, whether dense QMIX learned it (the
    evidence rule on one seed, as the probe's summary has it) and its best last test win rate with the steps it took;
    '' where the probe has no run on that map."""
    runs = None if probe is None else probe[probe["map"] == map_]
    if runs is None or runs.empty:
        return ""
    parts = []
    for scale, group in runs.groupby("reward_scale", sort=True):
        best = group.loc[group["last_win_rate"].idxmax()]
        at = "SMAX's reward" if scale == 1 else f"SMAX's reward x {scale:g}"
        if not group["learned"].astype(bool).any():
            parts.append(f"at {at} not learned by any of {len(group)} variant(s) (last test win rate at most "
                         f"{best['last_win_rate']:.2f}, through {int(group['env_steps'].max()):,} env steps)")
        else:
            parts.append(f"at {at} learned by {int(group['learned'].astype(bool).sum())} of {len(group)} variant(s), "
                         f"best last test win rate {best['last_win_rate']:.2f} at {int(best['env_steps']):,} env steps"
                         f" ({'at its plateau' if bool(best['plateau']) else 'still learning'})")
    return (f"; measured instead: dense QMIX's probe on {shown} (one seed a variant, illustrative; "
            f"benchmarks/results/qmix_multitype_maps.md): " + "; ".join(parts))
