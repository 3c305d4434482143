"""Training algorithms. Each module named in `ALGORITHMS` exposes `run(cfg, rundir)`; MADDPG and MASAC share
the off-policy loop, whose `LEARNERS` table picks the learner class (sequential or batched)."""

# algo name (config field `algo`) -> module implementing it
ALGORITHMS = {
    "random": "effmarl.algos.random_policy",
    "qmix": "effmarl.algos.qmix",
    "ow_qmix": "effmarl.algos.qmix",
    "res_qmix": "effmarl.algos.qmix",
    "maddpg": "effmarl.algos.offpolicy",   # the learner class: offpolicy.LEARNERS[algo, offpolicy.learner]
    "masac": "effmarl.algos.offpolicy",
}
