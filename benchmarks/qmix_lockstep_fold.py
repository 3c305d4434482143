"""Seeds in lockstep on a CPU: S seeds' learner updates as S separate learners, as the seed-by-seed SeedStack loop,
and as the SeedStack fold (every seed's per-agent agents unrolled in one pass, `nets.rnn_agent.folded_unroll`), side
by side in one process on one thread. QMIX at SMAX 3m's sizes (3 agents, obs 30, 9 actions, state 48; PyMARL's
widths), per-agent networks, batches of 32 episodes of 10-20 transitions (3m's test episodes last 13-15), dense
and MAST at 90 % sparsity (Soft Mellowmax target, topology evolution every 20 updates).

    python benchmarks/qmix_lockstep_fold.py --out benchmarks/results/qmix_lockstep_fold

Per (method, S, mode): the median over 7 interleaved blocks (every mode once per block, in rotating order) of the
seconds per update of all S seeds (5 updates per block after 2 warm-up updates). Writes <out>.csv and <out>.md."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pandas as pd
import torch

from effmarl import provenance
from effmarl.algos.qmix import Learner, SeedStack
from effmarl.config import validate
from effmarl.envs.base import EnvSpec
from effmarl.replay.episode import empty_batch, episode_scheme

N, OBS, A, STATE, B = 3, 30, 9, 48, 32
MODES = ("separate", "loop", "fold")


def random_batch(g: torch.Generator) -> dict[str, torch.Tensor]:
    lengths = torch.randint(10, 21, (B,), generator=g).tolist()
    spec = EnvSpec([f"a{i}" for i in range(N)], ["ally"] * N, [OBS] * N, [A] * N, STATE, max(lengths))
    b = empty_batch(episode_scheme(spec), B)
    for k, n in enumerate(lengths):
        b["obs"][k, : n + 1] = torch.randn(n + 1, N, OBS, generator=g)
        b["state"][k, : n + 1] = torch.randn(n + 1, STATE, generator=g)
        b["avail"][k, : n + 1] = True
        b["actions"][k, :n] = torch.randint(0, A, (n, N), generator=g)
        b["reward"][k, :n] = torch.rand(n, generator=g)
        b["filled"][k, :n] = True
        b["terminated"][k, n - 1] = True
    return b


def make_learners(method: str, seeds: int) -> list[Learner]:
    cfg = validate({"study": "bench", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.9},
                    "qmix": {"shared_params": False}}, part="run")
    out = []
    for s in range(seeds):
        torch.manual_seed(s)
        out.append(Learner("qmix", cfg["qmix"], N, OBS, A, STATE, seed=s,
                           sparse={**cfg["sparse"], "delta_m": 20} if method != "dense" else None,
                           mellowmax={"alpha": 1.0, "omega": 10.0} if method == "mast" else None))
    return out


def updater(mode: str, method: str, seeds: int):
    """A function doing one update of every seed, and a counter of updates."""
    kind = ("one_step", 1, 0.0)
    state = {"t": 0}
    if mode == "separate":
        learners = make_learners(method, seeds)

        def update(batches):
            state["t"] += 1
            for learner, batch in zip(learners, batches, strict=True):
                loss, _ = learner.loss(batch, kind)
                learner.step(loss, state["t"], 0.5)
        return update
    stack = SeedStack(make_learners(method, seeds), vectorised=False, fold=mode == "fold")
    everyone = list(range(seeds))

    def update(batches):
        state["t"] += 1
        total, _, _ = stack.losses(batches, [kind] * seeds, everyone)
        stack.step(total, everyone, [state["t"]] * seeds, [0.5] * seeds)
    return update


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--blocks", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    g, rows = torch.Generator().manual_seed(0), []
    for method in ("dense", "mast"):
        for seeds in (3, 8):
            batches = [[random_batch(g) for _ in range(seeds)] for _ in range(4)]
            updates = {mode: updater(mode, method, seeds) for mode in MODES}
            for mode, update in updates.items():
                for i in range(2):
                    update(batches[i % 4])
            times = {mode: [] for mode in MODES}
            for block in range(args.blocks):
                order = MODES[block % 3:] + MODES[:block % 3]
                for mode in order:
                    start = time.perf_counter()
                    for i in range(5):
                        updates[mode](batches[i % 4])
                    times[mode].append((time.perf_counter() - start) / 5)
            for mode in MODES:
                rows.append({"method": method, "seeds": seeds, "mode": mode,
                             "ms_per_update_all_seeds": 1000 * statistics.median(times[mode])})
            print(rows[-3:], flush=True)
    table = pd.DataFrame(rows)
    sep = table[table["mode"] == "separate"].set_index(["method", "seeds"])["ms_per_update_all_seeds"]
    table["speedup_vs_separate"] = [sep[(m, s)] / v for m, s, v in
                                    zip(table["method"], table["seeds"], table["ms_per_update_all_seeds"], strict=True)]
    rec = provenance.record()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(
        "# Seeds in lockstep on a CPU: separate learners vs the SeedStack loop vs the fold (QMIX, SMAX 3m sizes, "
        "1 thread)\n\n"
        f"{rec['hardware']['cpu_model']}, commit {rec['git']['commit']}; command: `python "
        f"benchmarks/qmix_lockstep_fold.py --out {args.out}`\n\n" + table.to_markdown(index=False, floatfmt=".3g")
        + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
