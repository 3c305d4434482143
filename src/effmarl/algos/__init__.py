"""Training algorithms. Each module named in `ALGORITHMS` exposes `run(cfg, rundir)`; MADDPG and MASAC share
the off-policy loop, whose `LEARNERS` table picks the learner class (sequential or batched)."""

from effmarl.variants import QMIX_VARIANTS

# algo name (config field `algo`) -> module implementing it (the QMIX family's from its table, effmarl/variants.py)
ALGORITHMS = {
    "random": "effmarl.algos.random_policy",
    **{name: v.module for name, v in QMIX_VARIANTS.items()},
    "maddpg": "effmarl.algos.offpolicy",   # the learner class: offpolicy.LEARNERS[algo, offpolicy.learner]
    "masac": "effmarl.algos.offpolicy",
}
