"""The vocabulary of a paper-2 claims row (`tables/mast_claims`): a row and its verdict (`claim_row`, `judged_row`),
how a cell, a ratio and a set of runs are said (`cell_text`, `ratio_text`, `runs_of`), the runs of some cells
(`pick_cells`, `runs_in`), MAST's verdict against dense there (`cells_verdict`), and how a claim spanning cells
splits into the cells on evidence and the illustrative ones (`split_cells`). The rows themselves, what each claim
reads and says, are `mast_claims`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.io import EVIDENCE
from effmarl.analysis.metrics import interval_text, judge_cells
from effmarl.analysis.style import algo_name, map_name

NOT_MEASURED = "not measured"
NOT_CLAIMED = "not claimed"
MEASURED, BY_CONSTRUCTION = "measured", "by construction"
ALGO, MAP, METHOD, SPARSITY = "cfg.algo", "cfg.env.map", "cfg.sparse.method", "cfg.sparse.sparsity"


def runs_of(*frames: pd.DataFrame | None) -> str:
    """'studies a, b; 12 runs; seeds 0/1/2; budget 600 env steps; maps 3m; profile smoke'."""
    frames = [f for f in frames if f is not None and not f.empty]
    if not frames:
        return ""
    f = pd.concat(frames, ignore_index=True)
    runs = f.drop_duplicates(["cfg.study", "run_id"])
    budget = sorted({int(b) for b in runs.get("cfg.budget.env_steps", pd.Series(dtype=float)).dropna()})
    return (f"studies {', '.join(sorted(map(str, set(runs['cfg.study']))))}; {len(runs)} runs; seeds "
            f"{'/'.join(map(str, sorted(set(runs['cfg.seed'])))) if 'cfg.seed' in runs else '?'}; budget "
            f"{'/'.join(f'{b:,}' for b in budget) or '?'} env steps (paper: 2,000,000, 8 seeds); maps "
            f"{', '.join(sorted(map(str, set(runs['cfg.env.map']))))}; profile "
            f"{'/'.join(sorted(map(str, set(runs['cfg.profile']))))}")


def claim_row(claim, paper, ours, runs="", sparsity="", caveat="", paper_value=None, our_value=None, evidence="",
              kind=""):
    """One claims row; `kind` is MEASURED, BY_CONSTRUCTION (no ratio to the paper: the value restates the sparsity)
    or "" (no value)."""
    ratio = (f"{our_value / paper_value:.2f}" if kind != BY_CONSTRUCTION and paper_value and our_value is not None
             and np.isfinite(our_value) else "")
    return {EVIDENCE: evidence, "claim": claim, "paper": paper, "ours": ours, "ratio ours/paper": ratio,
            "sparsity": sparsity, "runs": runs, "caveat": caveat, "kind": kind}


def judged_row(claim, paper, verdict, ours, runs="", sparsity="", caveat="", paper_value=None, our_value=None,
               kind=MEASURED, left=()):
    """A row with a value where `verdict` is evidence; 'not claimed: <stamp>' and no ratio where it is illustrative.
    `left`: the cells a claim spanning cells left out as illustrative (`split_cells`), named after its value with their
    stamps and in its evidence."""
    if verdict.illustrative:
        return claim_row(claim, paper, f"{NOT_CLAIMED}: {verdict.text}", runs, sparsity, caveat, evidence=verdict.text)
    if left:
        ours += (f" | {NOT_CLAIMED} in {len(left)} cell{'s' if len(left) > 1 else ''} (illustrative): "
                 + "; ".join(f"{name}: {v.text}" for name, _, v in left))
    evidence = verdict.text + ("; left out as illustrative: " + ", ".join(label for _, label, _ in left)
                               if left else "")
    return claim_row(claim, paper, ours, runs, sparsity, caveat, paper_value, our_value, evidence=evidence, kind=kind)


def cell_text(cell) -> str:
    return f"{algo_name(cell['algo'])} {map_name(cell['map'])}"


def cells_list(cells: pd.DataFrame) -> str:
    return ", ".join(sorted({cell_text(r) for _, r in cells.iterrows()}))


def why_text(reason) -> str:
    """Why a ratio has no interval (mast.versus_dense's `normalised_why`)."""
    return reason if isinstance(reason, str) and reason else "1 seed"


def ratio_text(cell, verdict: bool = True) -> str:
    """'MAST / dense 0.963 [0.895, 1.040], P = 0.33: undecided (...): ≈ 9 seeds each would decide it (...)' of a
    Table-1 cell row (method mast): the ratio, its interval, P(MAST run > dense run) and, with `verdict`, the 3 %
    verdict its interval decides (the cell's `vs_dense`, with the seeds that would decide it where undecided)."""
    if pd.isna(cell.get("normalised")):
        return "MAST / dense: no ratio (dense wins 0 %)"
    p = cell.get("p_improvement")
    why = why_text(cell.get("normalised_why"))
    said = cell.get("vs_dense") if verdict else None
    return (f"MAST / dense {cell['normalised']:.3f} "
            f"{interval_text(cell['normalised_lo'], cell['normalised_hi'], 3, why)}"
            + ("" if pd.isna(p) else f", P = {p:.2f}") + (f": {said}" if isinstance(said, str) and said else ""))


def pick_cells(frame: pd.DataFrame | None, cells: pd.DataFrame) -> pd.DataFrame | None:
    """The runs of `frame` in the (algo, map) cells of `cells`."""
    if frame is None or frame.empty:
        return frame
    keys = cells[["algo", "map"]].drop_duplicates().rename(columns={"algo": ALGO, "map": MAP})
    return frame.merge(keys, on=[ALGO, MAP])


def runs_in(runs: dict, cells: pd.DataFrame) -> str:
    """`runs_of` every role's runs (`runs`: role -> frame) in the (algo, map) cells of `cells`."""
    return runs_of(*(pick_cells(f, cells) for f in runs.values()))


def cells_verdict(cells: pd.DataFrame, mast: pd.DataFrame, runs: dict):
    """The verdict on MAST against dense in the (algo, map) cells of `mast` (rows of `cells`)."""
    keys = set(zip(mast["algo"], mast["map"], strict=True))
    in_cells = np.array([(a, m) in keys for a, m in zip(cells["algo"], cells["map"], strict=True)], dtype=bool)
    compared = cells[in_cells & cells["method"].isin(["dense", "mast"]).to_numpy()]
    dense = pick_cells(runs["dense"], mast)
    return judge_cells(compared, dense, dense, pick_cells(runs["sweep"], mast))


def split_cells(rows: pd.DataFrame, verdict_of) -> tuple[pd.DataFrame, list]:
    """A claim spanning cells is made on the (algo, map) cells its runs can decide: `rows` (with `algo`, `map`) split
    into those of cells whose own verdict (`verdict_of(group)`; metrics.evidence judges each cell by its own dense)
    is evidence, and [(cell name, label, verdict)] of the illustrative ones. Where no cell is on evidence, all
    `rows` and no list: the row is judged whole and says 'not claimed' with the stamp."""
    keep, left = [], []
    for (algo, name), group in rows.groupby(["algo", "map"], sort=True):
        verdict = verdict_of(group)
        if verdict.illustrative:
            left.append((cell_text({"algo": algo, "map": name}), f"{algo}/{name}", verdict))
        else:
            keep.append(group)
    return (pd.concat(keep), left) if keep and left else (rows, [])
