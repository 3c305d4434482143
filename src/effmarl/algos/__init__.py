"""Training algorithms, one readable module each. Each module exposes `run(cfg, rundir)`."""

# algo name (config field `algo`) -> module implementing it
ALGORITHMS = {
    "random": "effmarl.algos.random_policy",
    "maddpg": "effmarl.algos.maddpg",
    "masac": "effmarl.algos.masac",
}
