"""Training algorithms, one readable module each. Each module exposes `run(cfg, rundir)`."""

# algo name (config field `algo`) -> module implementing it
ALGORITHMS = {
    "random": "effmarl.algos.random_policy",
    "qmix": "effmarl.algos.qmix",
    "ow_qmix": "effmarl.algos.qmix",
    "res_qmix": "effmarl.algos.qmix",
    "maddpg": "effmarl.algos.maddpg",
    "masac": "effmarl.algos.masac",
}
