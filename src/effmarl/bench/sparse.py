"""Sparse agent-network inference in wall-clock time: what unstructured sparsity buys on this CPU.

The MAST paper reports theoretical FLOPs; this measures batched action selection (one step for `rows`
observations) of the PyMARL agent fc(I->h) -> ReLU -> GRUCell(h) -> fc(h->m) in five variants that compute the
same outputs (checked before timing):

  dense         the network with every weight non-zero: the reference
  masked_dense  the masked weights stored densely (zeros included), ordinary dense kernels
  mask_mul      weight * mask recomputed on every call (what a naive masked layer costs)
  csr           every weight matrix as torch sparse CSR (effmarl.sparse.inference.CSRLinear)
  compact       all-zero rows/columns removed, dense kernels on the rest (effmarl.sparse.inference.CompactLinear)

The networks are either a trained run's per-agent networks with its final masks (`--run RUN_DIR`: model.pt and
masks.pt of a MAST run; each agent's network on its `rows` observations, the agents one after another, "dense"
being the same networks with the masked-out weights given values again), or a fresh network of the given size
masked at `--sparsity` (Erdős–Rényi layer densities, effmarl.sparse.SparseTopology).

Timing: one process, torch threads fixed, the variants interleaved in a rotating order within each repeat, the
median time per call; speedup = dense / variant with the q25-q75 of the per-repeat ratios. masked_dense does the
dense arithmetic, so its distance from 1.00 is the machine's noise.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

VARIANTS = ("dense", "masked_dense", "mask_mul", "csr", "compact")
LAYERS = {"fc1.weight": "agent.fc1.weight", "fc1.bias": "agent.fc1.bias", "rnn.weight_ih": "agent.rnn.ih.weight",
          "rnn.bias_ih": "agent.rnn.ih.bias", "rnn.weight_hh": "agent.rnn.hh.weight",
          "rnn.bias_hh": "agent.rnn.hh.bias", "fc2.weight": "agent.fc2.weight", "fc2.bias": "agent.fc2.bias"}
CAPTION = ("Sparse agent-network inference on the CPU (effmarl bench sparse): wall-clock time per action-selection "
           "step of the dense network and of four ways to run its sparse version, with the theoretical FLOPs "
           "ratio beside them.")


def _modules():
    """The network variants (torch imported only when the benchmark runs)."""
    import torch
    from torch import nn

    from effmarl.sparse.inference import CompactLinear, CSRLinear

    def gru_gates(gi, gh, h):
        i_r, i_z, i_n = gi.chunk(3, dim=-1)
        h_r, h_z, h_n = gh.chunk(3, dim=-1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        return (1.0 - z) * torch.tanh(i_n + r * h_n) + z * h

    class Agent(nn.Module):
        def __init__(self, obs: int, hidden: int, actions: int):
            super().__init__()
            self.fc1, self.rnn = nn.Linear(obs, hidden), nn.GRUCell(hidden, hidden)
            self.fc2 = nn.Linear(hidden, actions)

        def forward(self, x, h):
            h = self.rnn(torch.relu(self.fc1(x)), h)
            return self.fc2(h), h

    class Factored(nn.Module):
        """The agent with each weight matrix as a layer of class `kind` (CSRLinear / CompactLinear)."""

        def __init__(self, agent, kind):
            super().__init__()
            self.fc1 = kind(agent.fc1.weight, agent.fc1.bias)
            self.ih = kind(agent.rnn.weight_ih, agent.rnn.bias_ih)
            self.hh = kind(agent.rnn.weight_hh, agent.rnn.bias_hh)
            self.fc2 = kind(agent.fc2.weight, agent.fc2.bias)

        def forward(self, x, h):
            h = gru_gates(self.ih(torch.relu(self.fc1(x))), self.hh(h), h)
            return self.fc2(h), h

    class MaskMul(nn.Module):
        def __init__(self, agent, masks):
            super().__init__()
            self.agent, self.masks = agent, {name: m.float() for name, m in masks.items()}

        def forward(self, x, h):
            a, m, linear = self.agent, self.masks, nn.functional.linear
            x = torch.relu(linear(x, a.fc1.weight * m["fc1.weight"], a.fc1.bias))
            gi = linear(x, a.rnn.weight_ih * m["rnn.weight_ih"], a.rnn.bias_ih)
            gh = linear(h, a.rnn.weight_hh * m["rnn.weight_hh"], a.rnn.bias_hh)
            h = gru_gates(gi, gh, h)
            return linear(h, a.fc2.weight * m["fc2.weight"], a.fc2.bias), h

    class PerAgent(nn.Module):
        """n per-agent networks; x [n, rows, in], h [n, rows, hidden]; agent i's network on x[i]."""

        def __init__(self, nets):
            super().__init__()
            self.nets = nn.ModuleList(nets)

        def forward(self, x, h):
            outs = [net(x[i], h[i]) for i, net in enumerate(self.nets)]
            return torch.stack([o[0] for o in outs]), torch.stack([o[1] for o in outs])

    return Agent, Factored, MaskMul, PerAgent, CSRLinear, CompactLinear


def variants_of_size(obs: int, hidden: int, actions: int, sparsity: float, seed: int) -> tuple[dict, dict]:
    """The five variants of a fresh network masked at `sparsity`, and what describes it."""
    import torch

    from effmarl.sparse import SparseTopology
    from effmarl.sparse.flops import count

    Agent, Factored, MaskMul, _, CSRLinear, CompactLinear = _modules()
    torch.manual_seed(seed)
    dense, sparse = Agent(obs, hidden, actions), Agent(obs, hidden, actions)
    sparse.load_state_dict(dense.state_dict())
    topo = SparseTopology(sparse, sparsity, seed=seed)
    variants = {"dense": dense, "masked_dense": sparse, "mask_mul": MaskMul(sparse, topo.masks),
                "csr": Factored(sparse, CSRLinear), "compact": Factored(sparse, CompactLinear)}
    flops = count(sparse, topo)
    compact = variants["compact"]
    return variants, {"source": f"a fresh network masked at sparsity {sparsity} (seed {seed})", "n_agents": 1,
                      "obs": obs, "hidden": hidden, "actions": actions, "lead": (),
                      "flops_ratio": flops["forward_flops"] / flops["dense_forward_flops"],
                      "densities": "; ".join(f"{k} {v:.3f}" for k, v in topo.layer_density().items()),
                      "kept": {n: round(getattr(compact, n).kept_fraction, 3) for n in ("fc1", "ih", "hh", "fc2")}}


def variants_of_run(run: Path) -> tuple[dict, dict]:
    """The five variants of a trained run's per-agent networks (model.pt) with its final masks (masks.pt)."""
    import torch

    from effmarl.safeload import load_torch
    from effmarl.sparse.flops import gru_forward_flops, linear_forward_flops

    Agent, Factored, MaskMul, PerAgent, CSRLinear, CompactLinear = _modules()
    weights = load_torch(run / "model.pt", map_location="cpu")  # data only (effmarl.safeload)
    masks = load_torch(run / "masks.pt", map_location="cpu")["online"]["topology"]["masks"]
    if weights["agent.fc1.weight"].dim() != 3:
        raise ValueError(f"{run}/model.pt: one shared agent network; the benchmark needs per-agent networks "
                         "(qmix.shared_params: false)")
    n, hidden, obs = weights["agent.fc1.weight"].shape
    actions = weights["agent.fc2.weight"].shape[1]
    per_agent = {k: [] for k in VARIANTS}
    flops = {"sparse": 0.0, "dense": 0.0}
    densities = []
    gen = torch.Generator().manual_seed(0)
    for a in range(n):
        sparse, dense = Agent(obs, hidden, actions), Agent(obs, hidden, actions)
        sparse.load_state_dict({k: weights[v][a] for k, v in LAYERS.items()})
        agent_masks = {k: masks[v][a] for k, v in LAYERS.items() if v in masks}
        dense.load_state_dict(sparse.state_dict())
        with torch.no_grad():  # the dense model: the masked-out weights get values again (its cost is what counts)
            for k, m in agent_masks.items():
                dict(dense.named_parameters())[k][~m] = torch.randn(int((~m).sum()), generator=gen) * 0.05
        for k, m in agent_masks.items():
            if dict(sparse.named_parameters())[k][~m].any():
                raise ValueError(f"{run}: agent {a}'s {k} has non-zero weights where masks.pt masks them out")
        for key, net in (("dense", dense), ("masked_dense", sparse), ("mask_mul", MaskMul(sparse, agent_masks)),
                         ("csr", Factored(sparse, CSRLinear)), ("compact", Factored(sparse, CompactLinear))):
            per_agent[key].append(net)
        d = {k: float(m.float().mean()) for k, m in agent_masks.items()}
        densities.append(d)
        gru_d = float(agent_masks["rnn.weight_ih"].sum() + agent_masks["rnn.weight_hh"].sum()) / (6 * hidden * hidden)
        for key, scale in (("sparse", None), ("dense", 1.0)):
            flops[key] += (linear_forward_flops(obs, hidden, scale or d["fc1.weight"])
                           + gru_forward_flops(hidden, hidden, scale or gru_d)
                           + linear_forward_flops(hidden, actions, scale or d["fc2.weight"]))
    compacts = per_agent["compact"]
    return {k: PerAgent(v) for k, v in per_agent.items()}, {
        "source": f"the {n} trained per-agent networks of {run} (model.pt, masks.pt)", "n_agents": n, "obs": obs,
        "hidden": hidden, "actions": actions, "lead": (n,), "flops_ratio": flops["sparse"] / flops["dense"],
        "densities": "; ".join(f"agent {a}: " + ", ".join(f"{k} {v:.3f}" for k, v in d.items())
                               for a, d in enumerate(densities)),
        "kept": {name: round(sum(getattr(c, name).kept_fraction for c in compacts) / len(compacts), 3)
                 for name in ("fc1", "ih", "hh", "fc2")}}


def _time_block(fn, x, h, iters: int) -> float:
    start = time.perf_counter()
    for _ in range(iters):
        fn(x, h)
    return (time.perf_counter() - start) / iters


def measure(variants: dict, info: dict, rows_list: list[int], repeats: int, budget_s: float) -> list[dict]:
    """Rows of (rows, variant, median µs per call, speedup vs dense with its q25-q75)."""
    import torch

    out = []
    with torch.inference_mode():
        for rows in rows_list:
            gen = torch.Generator().manual_seed(rows)
            x = torch.randn(*info["lead"], rows, info["obs"], generator=gen)
            h = torch.randn(*info["lead"], rows, info["hidden"], generator=gen)
            ref = variants["masked_dense"](x, h)
            for name in ("mask_mul", "csr", "compact"):  # every variant computes the same outputs
                torch.testing.assert_close(variants[name](x, h)[0], ref[0], rtol=1e-4, atol=1e-5)
            per_call = _time_block(variants["dense"], x, h, 3)  # warm-up and sizing
            iters = max(1, int(budget_s / max(per_call, 1e-7)))
            for name in VARIANTS:
                _time_block(variants[name], x, h, iters)
            samples = {name: [] for name in VARIANTS}
            for r in range(repeats):
                for name in VARIANTS[r % len(VARIANTS):] + VARIANTS[: r % len(VARIANTS)]:
                    samples[name].append(_time_block(variants[name], x, h, iters))
            dense_med = statistics.median(samples["dense"])
            for name in VARIANTS:
                ratios = sorted(d / s for d, s in zip(samples["dense"], samples[name], strict=True))
                med = statistics.median(samples[name])
                out.append({"rows": rows, "variant": name, "median_us": med * 1e6, "speedup_vs_dense": dense_med / med,
                            "speedup_q25": ratios[len(ratios) // 4], "speedup_q75": ratios[3 * len(ratios) // 4],
                            "iters_per_block": iters, "repeats": repeats, "flops_ratio": info["flops_ratio"]})
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", help="a trained sparse run directory (model.pt + masks.pt, per-agent networks); "
                        "without it, a fresh network of --obs/--hidden/--actions at --sparsity")
    parser.add_argument("--obs", type=int, default=150, help="agent input size (default 150: 3s5z's obs + last "
                        "action + agent id)")
    parser.add_argument("--hidden", type=int, default=64, help="GRU width (default 64, PyMARL's)")
    parser.add_argument("--actions", type=int, default=14, help="actions (default 14, 3s5z's)")
    parser.add_argument("--sparsity", type=float, default=0.9, help="sparsity of the fresh network (default 0.9)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fresh network's weights and masks")
    parser.add_argument("--rows", type=int, nargs="+", default=[8, 64, 512, 4096],
                        help="observations per step (n_envs x n_agents; with --run, per agent)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=30, help="interleaved repeats (default 30)")
    parser.add_argument("--budget-s", type=float, default=0.01, help="target seconds per timed block (sets iters)")
    parser.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table")
    parser.add_argument("--out", required=True, help="output stem: writes <out>.csv, .md, .provenance.json")


def run(args):
    import pandas as pd
    import torch

    from effmarl import io, provenance
    from effmarl.config import ConfigError
    from effmarl.profiling.machine_load import MachineLoad

    problems = [f"--{name} must be positive, got {value}" for name, value in
                (("repeats", args.repeats), ("threads", args.threads), ("budget-s", args.budget_s),
                 *(("rows", r) for r in args.rows)) if value <= 0]
    if not 0.0 <= args.sparsity < 1.0:
        problems.append(f"--sparsity must be in [0, 1), got {args.sparsity}")
    if args.run and not all((Path(args.run) / f).is_file() for f in ("model.pt", "masks.pt")):
        problems.append(f"--run {args.run}: no model.pt and masks.pt there (a finished sparse run directory)")
    if problems:
        raise ConfigError(problems, "effmarl bench sparse")
    torch.set_num_threads(args.threads)
    if args.run:
        variants, info = variants_of_run(Path(args.run))
    else:
        variants, info = variants_of_size(args.obs, args.hidden, args.actions, args.sparsity, args.seed)
    with MachineLoad() as load:
        table = pd.DataFrame(measure(variants, info, args.rows, args.repeats, args.budget_s))
    rec = provenance.record(inputs=[str(Path(args.run) / f) for f in ("model.pt", "masks.pt")] if args.run else None,
                            extra={"benchmark": "bench_sparse", "kind": "benchmark", "name": "bench sparse",
                                   "caption": CAPTION, "machine_load": load.record(),
                                   "args": {k: v for k, v in vars(args).items() if k != "func"}})
    out = Path(args.out)
    source = f"--run {args.run}" if args.run else (f"--obs {args.obs} --hidden {args.hidden} --actions "
                                                   f"{args.actions} --sparsity {args.sparsity} --seed {args.seed}")
    lines = [
        "# Sparse agent-network inference on the CPU", "",
        f"Command: `effmarl bench sparse {source} --rows {' '.join(map(str, args.rows))} --threads {args.threads} "
        f"--repeats {args.repeats} --out {args.out}` (profile {args.profile}); {rec['hardware']['cpu_model']}, "
        f"torch {torch.__version__}, commit {rec['git']['commit']}; {load.text}", "",
        f"Networks: {info['source']}: fc({info['obs']}->{info['hidden']}) -> GRUCell({info['hidden']}) -> "
        f"fc({info['hidden']}->{info['actions']}); densities: {info['densities']}",
        f"Theoretical forward FLOPs sparse/dense: {info['flops_ratio']:.3f} (a {1 / info['flops_ratio']:.1f}x "
        f"reduction). Compaction keeps (live rows x live columns / all) per matrix: {info['kept']}", "",
        "Speedup = median dense time / median variant time (variants interleaved; q25-q75 of the per-repeat "
        "ratios). masked_dense does the dense arithmetic, so its distance from 1.00 is the machine's noise.", "",
        table.drop(columns=["flops_ratio"]).to_markdown(index=False, floatfmt=".3g"),
    ]
    io.write_text(out.with_suffix(".csv"), table.to_csv(index=False))
    io.write_text(out.with_suffix(".md"), "\n".join(lines) + "\n")
    io.write_json(out.with_suffix(".provenance.json"), rec)
    return table
