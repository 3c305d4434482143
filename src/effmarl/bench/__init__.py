"""`effmarl bench SECTION`: benchmarks that are workflow steps with provenance (speed ratios, not tests).

Each section is a module with `add_arguments(parser)` and `run(args)`; `SECTIONS` names them.
"""

SECTIONS = {
    "paper1": "effmarl.bench.paper1",
    "qmix": "effmarl.bench.qmix",
    "sparse": "effmarl.bench.sparse",
}
