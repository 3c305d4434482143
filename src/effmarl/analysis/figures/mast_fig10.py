"""Paper 2, Figure 10: lottery tickets - static sparse training (SS) with a random mask, a winning ticket (MAST's final
mask, weights re-initialised) and a cheating ticket (MAST's final mask and weights) (study `mast_tickets`:
cfg.sparse.ticket.kind). Left: smoothed win-rate curves; right: the final win-rate statistic per ticket, MAST's own
run as a dashed reference line when the `mast` role is given."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import (
    LAST_K,
    STATISTIC,
    curves,
    final_win_rate,
    judge,
    seed_stats,
    seeds_text,
    win_rate_label,
)
from effmarl.analysis.style import TICKET_NAMES, bars, draw_curve, method_color, note

TICKET = "cfg.sparse.ticket.kind"
ORDER = ["random", "winning", "cheating"]
COLORS = {"random": "tab:gray", "winning": "tab:green", "cheating": "tab:purple"}
CAPTION = ("Paper 2, Figure 10 on SMAX: static sparse training from a random ticket, a winning ticket (MAST's mask) "
           "and a cheating ticket (MAST's mask and weights), with MAST itself as reference (dashed). Left: test win "
           "rate, each seed Savitzky-Golay smoothed (window 21, order 2, ≤ 1/3 of its length), mean over seeds "
           "with a 95 % bootstrap band; right: " + STATISTIC + "; n = seeds.")
REPRODUCES = "Paper 2, Figure 10."
CLAIM = ("MAST's topology alone (winning ticket) does not recover its performance: learning the topology "
         "during training matters.")

OUTPUT = {"group": "mast", "stem": "fig10_tickets"}
INPUTS = {"tickets": {"study": "mast_tickets", "doc": "metrics.summary.parquet of mast_tickets"},
          # the study whose masks the tickets took: mast_tickets' ticket_source
          "mast": {"source_of": "mast_tickets", "optional": True,
                   "doc": "metrics.summary.parquet of the MAST runs whose masks the tickets took"}}


def make(inputs: list[str], k: int = LAST_K):
    named = named_inputs(inputs, INPUTS, "figure mast_fig10")
    tickets = read_tables(named["tickets"])
    if TICKET not in tickets:
        tickets[TICKET] = "random"
    mast = read_optional(named["mast"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.4))
    c = curves(tickets, [TICKET])
    kinds = [t for t in ORDER if t in set(c[TICKET])] + sorted(set(c[TICKET]) - set(ORDER))
    for kind in kinds:
        draw_curve(left, c[c[TICKET] == kind], TICKET_NAMES.get(kind, kind), COLORS.get(kind))
    stats = seed_stats(final_win_rate(tickets, k), [TICKET])
    stats["order"] = stats[TICKET].map({t: i for i, t in enumerate(ORDER)}).fillna(99)
    stats = stats.sort_values("order")
    bars(right, stats, [TICKET_NAMES.get(t, t) for t in stats[TICKET]], [COLORS.get(t, "0.5") for t in stats[TICKET]])
    if mast is not None and len(mast):
        mc = curves(mast, ["cfg.sparse.method"])
        draw_curve(left, mc, "MAST", method_color("mast"), linestyle="--")
        m = seed_stats(final_win_rate(mast, k), ["cfg.sparse.method"]).iloc[0]
        right.axhline(m["mean"], color=method_color("mast"), linestyle="--", label=f"MAST ({seeds_text(m['seeds'])})")
        right.legend(fontsize=7)
    if not kinds:
        note(left, "no evaluations in the ticket runs")
    else:
        left.legend(fontsize=7)
    left.set_xlabel("environment steps")
    left.set_ylabel("test win rate")
    left.set_ylim(-0.02, 1.02)
    right.set_ylabel(win_rate_label(k))
    right.set_ylim(0, 1.1)
    fig.tight_layout()
    mark_evidence(fig, judge([(tickets, [TICKET]), (mast, ["cfg.sparse.method"])]))
    shown = pd.concat([f for f in (tickets, mast) if f is not None and len(f)], ignore_index=True)
    return fig, shown
