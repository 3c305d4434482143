"""Which of MAST's and RLx2's parts a run switches on: one rule, read by training, the config checks, the cluster
resources and the analysis alike (plain Python: no torch, no jax).

Each part belongs to one sparse method and has one switch in the run config, `<address>.enabled`:

    on(part) = (sparse.method == OWNER[part])   if enabled is null (unset: the part follows the method)
               bool(enabled)                    otherwise (true/false switches the part alone)

MAST's parts (paper 2, section 4): Soft Mellowmax targets (`soft_mellowmax`, also the operator's name), hybrid TD(λ)
and the dual buffer; RLx2's: multi-step targets and the dynamic buffer. docs/mast.md says what each part does and
where it acts.
"""

from __future__ import annotations

# part -> (the sparse method it follows, the config section holding its `enabled` switch)
PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "soft_mellowmax": ("mast", ("mellowmax",)),  # switched in the `mellowmax:` section, beside its temperatures
    "td_lambda": ("mast", ("mast", "td_lambda")),
    "dual_buffer": ("mast", ("mast", "dual_buffer")),
    "multi_step": ("rlx2", ("rlx2", "multi_step")),
    "dynamic_buffer": ("rlx2", ("rlx2", "dynamic_buffer")),
}


def switch_field(part: str) -> str:
    """The dotted config field that switches `part` alone, e.g. "mast.dual_buffer.enabled"."""
    return ".".join((*PARTS[part][1], "enabled"))


def part_on(part: str, enabled: bool | None, method: str | None) -> bool:
    """Whether `part` is on for a run of sparse method `method` whose switch reads `enabled` (None: unset)."""
    return method == PARTS[part][0] if enabled is None else bool(enabled)


def mast_components(cfg: dict) -> dict[str, bool]:
    """Every part's state for a run config; a section or field it lacks counts as unset (so a partial config, as
    the resources model may see, reads as the validated one would: the schema's defaults are null and dense)."""
    method = cfg.get("sparse", {}).get("method", "dense")
    out = {}
    for part, (_, address) in PARTS.items():
        section = cfg
        for key in address:
            section = section.get(key) or {}
        out[part] = part_on(part, section.get("enabled"), method)
    return out
