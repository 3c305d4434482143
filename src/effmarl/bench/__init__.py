"""`effmarl bench <section>`: benchmarks measured side by side in one process, written with provenance.
Each section is a module with add_arguments(parser) and run(args)."""

SECTIONS = {"qmix": "effmarl.bench.qmix"}
