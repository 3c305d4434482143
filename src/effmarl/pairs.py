"""Paper 1's interleaved pairs: two runs equal in every field but how replay indices are drawn, one with the uniform
sampler and one with the neighbor sampler. One rule, read where runs are paired to train together
(effmarl/groups.py, `sampler_pairs`) and where their times are paired (analysis/metrics/end_to_end.py)."""

from __future__ import annotations

# the replay fields the two runs of a pair may differ in (neighbor_k: the window only the neighbor sampler reads)
PAIR_FIELDS = ("sampler", "neighbor_k")
