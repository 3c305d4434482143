"""Sampling-phase benchmark (paper 1): a thin wrapper of `effmarl sampling-bench`
(src/effmarl/profiling/sampling_bench.py), writing benchmarks/results/sampling_phase.{csv,md,parquet}.

    python benchmarks/sampling_phase.py [--agents 3 12] [--rounds 30] ...
"""

from pathlib import Path

from effmarl.profiling.sampling_bench import main

if __name__ == "__main__":
    import sys

    here = Path(__file__).resolve().parent
    main(sys.argv[1:] if "--out" in sys.argv else [*sys.argv[1:], "--out", str(here / "results" / "sampling_phase")])
