"""What one learner update's time scales with: dense per-agent QMIX at SMAX 3m's sizes (3 agents, obs 30, 9 actions,
state 48; PyMARL's widths), one thread, `SeedStack.losses` + `SeedStack.step` (one seed) on random batches of B
episodes that all have T transitions, for B in 32 / 96 / 256 (1 / 3 / 8 seeds' batches as one) and T in 13 / 26.

    python benchmarks/qmix_update_scaling.py --out benchmarks/results/qmix_update_scaling

Per cell: the median of 5 blocks of 10 updates after 3 warm-up updates. Writes <out>.csv and <out>.md."""

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

N, OBS, A, STATE = 3, 30, 9, 48


def random_batch(batch: int, steps: int, g: torch.Generator) -> dict[str, torch.Tensor]:
    spec = EnvSpec([f"a{i}" for i in range(N)], ["ally"] * N, [OBS] * N, [A] * N, STATE, steps)
    b = empty_batch(episode_scheme(spec), batch)
    b["obs"].normal_(generator=g)
    b["state"].normal_(generator=g)
    b["avail"][:] = True
    b["actions"][:, :steps] = torch.randint(0, A, (batch, steps, N), generator=g)
    b["reward"].uniform_(generator=g)
    b["filled"][:] = True
    b["terminated"][:, -1] = True
    return b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = validate({"study": "bench", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "qmix": {"shared_params": False}}, part="run")
    torch.manual_seed(0)
    stack = SeedStack([Learner("qmix", cfg["qmix"], N, OBS, A, STATE, seed=0)])
    g, rows = torch.Generator().manual_seed(0), []
    for batch in (32, 96, 256):
        for steps in (13, 26):
            data = random_batch(batch, steps, g)

            def update(data=data):
                total, _, _ = stack.losses([data], [("one_step", 1, 0.0)], [0])
                stack.step(total, [0], [1], [0.5])

            for _ in range(3):
                update()
            blocks = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(10):
                    update()
                blocks.append((time.perf_counter() - start) / 10)
            rows.append({"batch": batch, "steps": steps, "ms_per_update": 1000 * statistics.median(blocks)})
    table = pd.DataFrame(rows)
    base = table[table.batch == 32].set_index("steps")["ms_per_update"]
    table["vs_batch_32"] = table["ms_per_update"] / table["steps"].map(base)
    rec = provenance.record()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(
        f"# One QMIX learner update vs batch and episode length (dense per-agent, SMAX 3m sizes, 1 thread)\n\n"
        f"{rec['hardware']['cpu_model']}, commit {rec['git']['commit']}; command: `python "
        f"benchmarks/qmix_update_scaling.py --out {args.out}`\n\n" + table.to_markdown(index=False, floatfmt=".3g")
        + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
