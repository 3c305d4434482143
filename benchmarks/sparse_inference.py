"""Real wall-clock speed of sparse agent-network inference (batched action selection) on the CPU.

The MAST paper reports theoretical FLOPs; this measures what unstructured sparsity buys on a CPU in practice.
Network: the PyMARL agent fc(I->h) -> ReLU -> GRUCell(h) -> fc(h->m), sized like a 3s5z agent by default,
masked by SparseTopology at the given sparsity with Erdős–Rényi per-layer densities. One step of action
selection for `rows` = n_envs × n_agents observations. Variants, all computing the same outputs (checked):

  dense         the same network with dense (non-zero) weights: the reference
  masked_dense  the masked weights stored densely (zeros included), ordinary dense kernels
  mask_mul      weight * mask recomputed on every call (what a naive masked layer costs)
  csr           every weight matrix as torch sparse CSR, torch.sparse.mm
  compact       all-zero rows/columns removed, dense kernels on what is left (gather/scatter around them)

Timing: one process, torch threads fixed, the variants interleaved in a rotating order within each repeat
(A B C ... then B C ... A), many repeats; we report the median time per call and speedup = dense / variant.

    python benchmarks/sparse_inference.py --out benchmarks/results/sparse_inference

With --run RUN_DIR the networks are a trained run's per-agent agent networks (model.pt) with their final masks
(masks.pt, e.g. a MAST run): each agent's own network runs on its `rows` observations (rows = parallel envs), the
agents one after another, in every variant alike; "dense" then has the trained weights with the masks ignored
(the dense per-agent model's cost).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from effmarl.sparse import SparseTopology
from effmarl.sparse.flops import count, gru_forward_flops, linear_forward_flops
from effmarl.sparse.inference import CompactLinear, CSRLinear


class Agent(nn.Module):
    def __init__(self, obs: int, hidden: int, actions: int):
        super().__init__()
        self.fc1, self.rnn, self.fc2 = nn.Linear(obs, hidden), nn.GRUCell(hidden, hidden), nn.Linear(hidden, actions)

    def forward(self, x, h):
        h = self.rnn(torch.relu(self.fc1(x)), h)
        return self.fc2(h), h


def gru_gates(gi: torch.Tensor, gh: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    i_r, i_z, i_n = gi.chunk(3, dim=-1)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    return (1.0 - z) * torch.tanh(i_n + r * h_n) + z * h


class Factored(nn.Module):
    """The agent network with each weight matrix replaced by a layer of class `kind` (CSRLinear/CompactLinear)."""

    def __init__(self, agent: Agent, kind):
        super().__init__()
        self.fc1 = kind(agent.fc1.weight, agent.fc1.bias)
        self.ih = kind(agent.rnn.weight_ih, agent.rnn.bias_ih)
        self.hh = kind(agent.rnn.weight_hh, agent.rnn.bias_hh)
        self.fc2 = kind(agent.fc2.weight, agent.fc2.bias)

    def forward(self, x, h):
        h = gru_gates(self.ih(torch.relu(self.fc1(x))), self.hh(h), h)
        return self.fc2(h), h


class MaskMul(nn.Module):
    def __init__(self, agent: Agent, masks: dict[str, torch.Tensor]):
        super().__init__()
        self.agent = agent
        self.masks = {name: m.float() for name, m in masks.items()}

    def forward(self, x, h):
        a, m = self.agent, self.masks
        x = torch.relu(nn.functional.linear(x, a.fc1.weight * m["fc1.weight"], a.fc1.bias))
        gi = nn.functional.linear(x, a.rnn.weight_ih * m["rnn.weight_ih"], a.rnn.bias_ih)
        gh = nn.functional.linear(h, a.rnn.weight_hh * m["rnn.weight_hh"], a.rnn.bias_hh)
        h = gru_gates(gi, gh, h)
        return nn.functional.linear(h, a.fc2.weight * m["fc2.weight"], a.fc2.bias), h


def build(obs: int, hidden: int, actions: int, sparsity: float, seed: int):
    torch.manual_seed(seed)
    dense = Agent(obs, hidden, actions)
    sparse = Agent(obs, hidden, actions)
    sparse.load_state_dict(dense.state_dict())
    topo = SparseTopology(sparse, sparsity, seed=seed)
    variants = {"dense": dense, "masked_dense": sparse, "mask_mul": MaskMul(sparse, topo.masks),
                "csr": Factored(sparse, CSRLinear), "compact": Factored(sparse, CompactLinear)}
    return variants, topo


class PerAgent(nn.Module):
    """n per-agent networks; x [n, rows, in], h [n, rows, hidden]; agent i's network on x[i]."""

    def __init__(self, nets: list[nn.Module]):
        super().__init__()
        self.nets = nn.ModuleList(nets)

    def forward(self, x, h):
        outs = [net(x[i], h[i]) for i, net in enumerate(self.nets)]
        return torch.stack([o[0] for o in outs]), torch.stack([o[1] for o in outs])


def build_from_run(run: Path):
    """Variants of a trained run's per-agent agent networks (model.pt) with its final masks (masks.pt)."""
    weights = torch.load(run / "model.pt", map_location="cpu")
    masks = torch.load(run / "masks.pt", map_location="cpu")["online"]["topology"]["masks"]
    n, hidden, obs = weights["agent.fc1.weight"].shape
    actions = weights["agent.fc2.weight"].shape[1]
    names = {"fc1.weight": "agent.fc1.weight", "fc1.bias": "agent.fc1.bias", "rnn.weight_ih": "agent.rnn.ih.weight",
             "rnn.bias_ih": "agent.rnn.ih.bias", "rnn.weight_hh": "agent.rnn.hh.weight",
             "rnn.bias_hh": "agent.rnn.hh.bias", "fc2.weight": "agent.fc2.weight", "fc2.bias": "agent.fc2.bias"}
    per_agent = {k: [] for k in ("dense", "masked_dense", "mask_mul", "csr", "compact")}
    flops = {"sparse": 0.0, "dense": 0.0}
    densities = []
    for a in range(n):
        sparse, dense = Agent(obs, hidden, actions), Agent(obs, hidden, actions)
        sparse.load_state_dict({k: weights[v][a] for k, v in names.items()})
        agent_masks = {k: masks[v][a] for k, v in names.items() if v in masks}
        dense.load_state_dict(sparse.state_dict())
        with torch.no_grad():  # the dense model: the masked-out weights get values again (cost is what matters)
            for k, m in agent_masks.items():
                p = dict(dense.named_parameters())[k]
                p[~m] = torch.randn(int((~m).sum())) * 0.05
        for k, m in agent_masks.items():
            assert not dict(sparse.named_parameters())[k][~m].any(), k  # the trained weights are exactly sparse
        per_agent["dense"].append(dense)
        per_agent["masked_dense"].append(sparse)
        per_agent["mask_mul"].append(MaskMul(sparse, agent_masks))
        per_agent["csr"].append(Factored(sparse, CSRLinear))
        per_agent["compact"].append(Factored(sparse, CompactLinear))
        d = {k: float(m.float().mean()) for k, m in agent_masks.items()}
        densities.append(d)
        gru_d = (agent_masks["rnn.weight_ih"].sum() + agent_masks["rnn.weight_hh"].sum()).item() / (
            3 * hidden * (2 * hidden))
        for key, scale in (("sparse", None), ("dense", 1.0)):
            flops[key] += (linear_forward_flops(obs, hidden, scale or d["fc1.weight"])
                           + gru_forward_flops(hidden, hidden, scale or gru_d)
                           + linear_forward_flops(hidden, actions, scale or d["fc2.weight"]))
    variants = {k: PerAgent(v) for k, v in per_agent.items()}
    return variants, {"n_agents": n, "obs": obs, "hidden": hidden, "actions": actions, "densities": densities,
                      "flops_ratio": flops["sparse"] / flops["dense"]}


def time_block(fn, x, h, iters: int) -> float:
    start = time.perf_counter()
    for _ in range(iters):
        fn(x, h)
    return (time.perf_counter() - start) / iters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obs", type=int, default=150, help="agent input size (3s5z: obs + last action + agent id)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--actions", type=int, default=14)
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--rows", type=int, nargs="+", default=[8, 64, 512, 4096], help="n_envs x n_agents per step")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--budget-s", type=float, default=0.01, help="target seconds per timed block (sets iters)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/sparse_inference"))
    ap.add_argument("--run", type=Path, help="a trained run directory (model.pt + masks.pt): its per-agent networks")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    if args.run:
        variants, info = build_from_run(args.run)
        args.obs, args.hidden, args.actions = info["obs"], info["hidden"], info["actions"]
        lead = (info["n_agents"],)
        compacts = variants["compact"].nets
        kept = {n: round(sum(getattr(c, n).kept_fraction for c in compacts) / len(compacts), 3)
                for n in ("fc1", "ih", "hh", "fc2")}
        flops_ratio = info["flops_ratio"]
        density_text = "; ".join(f"agent {a}: " + ", ".join(f"{k} {v:.3f}" for k, v in d.items())
                                 for a, d in enumerate(info["densities"]))
    else:
        variants, topo = build(args.obs, args.hidden, args.actions, args.sparsity, args.seed)
        lead = ()
        compact = variants["compact"]
        kept = {n: round(getattr(compact, n).kept_fraction, 3) for n in ("fc1", "ih", "hh", "fc2")}
        flops = count(variants["masked_dense"], topo)
        flops_ratio = flops["forward_flops"] / flops["dense_forward_flops"]
        density_text = ", ".join(f"{k} {v:.3f}" for k, v in topo.layer_density().items())
    names = list(variants)
    rows_out = []
    with torch.inference_mode():
        for rows in args.rows:
            gen = torch.Generator().manual_seed(rows)
            x = torch.randn(*lead, rows, args.obs, generator=gen)
            h = torch.randn(*lead, rows, args.hidden, generator=gen)
            ref = variants["masked_dense"](x, h)
            for name in ("mask_mul", "csr", "compact"):
                out = variants[name](x, h)
                torch.testing.assert_close(out[0], ref[0], rtol=1e-4, atol=1e-5)
            per_call = time_block(variants["dense"], x, h, 3)  # warm-up and sizing
            iters = max(1, int(args.budget_s / max(per_call, 1e-7)))
            for name in names:
                time_block(variants[name], x, h, iters)
            samples = {name: [] for name in names}
            for r in range(args.repeats):
                order = names[r % len(names):] + names[: r % len(names)]
                for name in order:
                    samples[name].append(time_block(variants[name], x, h, iters))
            dense_med = statistics.median(samples["dense"])
            for name in names:
                med = statistics.median(samples[name])
                ratios = sorted(d / s for d, s in zip(samples["dense"], samples[name], strict=True))
                rows_out.append({"rows": rows, "variant": name, "median_us": med * 1e6,
                                 "speedup_vs_dense": dense_med / med,
                                 "speedup_q25": ratios[len(ratios) // 4], "speedup_q75": ratios[3 * len(ratios) // 4],
                                 "iters_per_block": iters, "repeats": args.repeats})
            print(f"rows={rows}: " + ", ".join(f"{r['variant']} {r['speedup_vs_dense']:.2f}x"
                                               for r in rows_out if r["rows"] == rows), flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = list(rows_out[0])
    with open(args.out.with_suffix(".csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows_out:
            f.write(",".join(f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in header) + "\n")
    command = (f"python benchmarks/sparse_inference.py --run {args.run}" if args.run else
               f"python benchmarks/sparse_inference.py --obs {args.obs} --hidden {args.hidden} --actions "
               f"{args.actions} --sparsity {args.sparsity}")
    network = (f"{lead[0]} trained per-agent networks from {args.run} (model.pt, masks.pt), each "
               if args.run else "Network ")
    lines = [
        "# Sparse agent-network inference on the CPU",
        "",
        f"Command: `{command} --rows {' '.join(map(str, args.rows))} --threads {args.threads} --repeats "
        f"{args.repeats} --out {args.out}`",
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, {args.threads} thread(s), "
        f"{platform.python_version()}",
        f"{network}fc({args.obs}->{args.hidden}) -> GRUCell({args.hidden}) -> fc({args.hidden}->{args.actions}), "
        f"densities: {density_text}",
        f"Theoretical forward FLOPs ratio sparse/dense: {flops_ratio:.3f} (a {1 / flops_ratio:.1f}x reduction)",
        f"Compaction keeps (live rows x live cols / all) per matrix: {kept}",
        "",
        "Speedup = median dense time / median variant time (interleaved; q25-q75 of per-repeat ratios).",
        "masked_dense does exactly the arithmetic of dense (zeros are not skipped); its distance from 1.00 shows",
        "the measurement noise of the machine the run was on.",
        "",
        "| rows | variant | median µs/call | speedup vs dense | q25-q75 |",
        "|---:|---|---:|---:|---|",
    ]
    lines += [f"| {r['rows']} | {r['variant']} | {r['median_us']:.1f} | {r['speedup_vs_dense']:.2f} | "
              f"{r['speedup_q25']:.2f}-{r['speedup_q75']:.2f} |" for r in rows_out]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out.with_suffix('.csv')} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
