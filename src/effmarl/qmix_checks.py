"""A QMIX-family run's cross-field checks, the ones the schema cannot express: `check_config`, which
config.validate runs once per run (through the variant table's `checks`, effmarl/variants.py), before any compute.
Torch-free and outside algos/qmix (whose package imports the learner), so that validating a profile - `effmarl
validate`, and Snakemake parsing the workflow - imports no torch; a ticket's source run is read and checked when the
run starts (algos/qmix/tickets.py)."""

from __future__ import annotations

from effmarl.components import mast_components
from effmarl.config import ConfigError
from effmarl.methods import METHODS, REFERENCE

FIELD = "field 'sparse.ticket.source'"


def check_config(cfg: dict) -> None:
    """Cross-field checks the schema cannot express; raises ConfigError before any compute (config.validate runs
    them, once per run)."""
    q, lines = cfg["qmix"], []
    on, method = mast_components(cfg), cfg["sparse"]["method"]
    if method != REFERENCE and q["shared_params"]:
        lines.append(f"field 'qmix.shared_params': sparse.method {method!r} needs per-agent networks; "
                     "set qmix.shared_params: false")
    if on["td_lambda"] and on["multi_step"]:
        lines.append("field 'mast.td_lambda.enabled': hybrid TD(lambda) and rlx2.multi_step cannot both be on")
    if on["dual_buffer"] and on["dynamic_buffer"]:
        lines.append("field 'mast.dual_buffer.enabled': the dual buffer and rlx2.dynamic_buffer cannot both be on")
    if on["dual_buffer"]:
        d = cfg["mast"]["dual_buffer"]
        small, n_small = q["buffer_size"] // d["size_ratio"], q["batch_size"] - round(
            q["batch_size"] * d["batch_ratio"] / (d["batch_ratio"] + 1))
        if small < max(n_small, q["num_envs"]):
            lines.append(f"field 'mast.dual_buffer.size_ratio': B2 = qmix.buffer_size // {d['size_ratio']} = "
                         f"{small} episodes cannot hold its {n_small} per batch or the {q['num_envs']} per round")
    if on["dynamic_buffer"] and cfg["rlx2"]["dynamic_buffer"]["initial_episodes"] < q["batch_size"]:
        lines.append("field 'rlx2.dynamic_buffer.initial_episodes': smaller than qmix.batch_size")
    if cfg["budget"].get("env_steps") is None:
        lines.append(f"field 'budget.env_steps': required for algo {cfg['algo']!r} (its budget is env steps)")
    if q["batch_size"] > q["buffer_size"]:
        lines.append(f"field 'qmix.batch_size': {q['batch_size']} exceeds qmix.buffer_size {q['buffer_size']}")
    if q["num_envs"] > q["buffer_size"]:
        lines.append(f"field 'qmix.num_envs': {q['num_envs']} exceeds qmix.buffer_size {q['buffer_size']}")
    lines += ticket_problems(cfg) + allocation_problems(cfg)
    if lines:
        raise ConfigError(lines, f"run {cfg.get('study', '?')}")


def allocation_problems(cfg: dict) -> list[str]:
    """sparse.allocation / type_density against the method and the ticket (the unit types are checked where the
    env is known: run.preflight)."""
    s, lines = cfg["sparse"], []
    if s["allocation"] != "learned" and not METHODS[s["method"]].masks:
        lines.append(f"field 'sparse.allocation': {s['allocation']!r} splits masks between agents; sparse.method "
                     f"{s['method']!r} has none")
    if s["allocation"] != "learned" and s["ticket"]["kind"] in ("winning", "cheating"):
        lines.append(f"field 'sparse.allocation': a {s['ticket']['kind']!r} ticket keeps its source's masks as they "
                     "are; leave allocation learned")
    if s["allocation"] == "by_type" and not s["type_density"]:
        lines.append("field 'sparse.type_density': allocation by_type needs a weight per unit type, e.g. "
                     "{stalker: 1, zealot: 2}")
    return lines


def ticket_problems(cfg: dict) -> list[str]:
    """Cross-field problems of sparse.ticket, one line each."""
    ticket, method = cfg["sparse"]["ticket"], cfg["sparse"]["method"]
    lines = []
    if ticket["kind"] != "none" and method != "static":
        lines.append(f"field 'sparse.ticket.kind': a {ticket['kind']!r} ticket needs sparse.method 'static' (the "
                     f"mask stays fixed), got {method!r}")
    if ticket["kind"] in ("winning", "cheating") and not ticket["source"]:
        lines.append(f"{FIELD}: a {ticket['kind']!r} ticket needs the directory of a finished sparse run")
    if ticket["kind"] in ("none", "random") and ticket["source"]:
        lines.append(f"{FIELD}: only winning and cheating tickets read a source run (kind is {ticket['kind']!r})")
    return lines
