# Walking skeleton: random-policy rollouts of predator-prey -> one figure and one table.
if "skeleton" in RUNS:
    add_figure("skeleton", "random_returns", "skeleton_returns", metrics=[summary("skeleton")])
    add_table("skeleton", "random_returns", "skeleton_returns", metrics=[summary("skeleton")])
