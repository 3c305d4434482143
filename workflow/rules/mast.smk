# Paper 2 (MAST): Table 1 by the paper's own procedure, Tables 5-10, Figures 1, 4-6, 8, 10-16 and the claims table,
# all under {FIGURES}/mast/. docs/paper2-study.md says which study feeds which output.
#
# Two stages (paper 2: "the sparsity level indicated in Table 1 corresponds to the highest admissible sparsity
# threshold of MAST ... all other baselines are evaluated under the same sparsity level"):
#   1. mast_dense + mast_sweep -> tables/selection.csv: per (algo, map), MAST's statistic at each swept sparsity
#      against dense, and the chosen (highest admissible) sparsity;
#   2. studies with sparsity_from: selection (mast_table1) get that sparsity written into their configs by
#      run_config_selected (runs.smk), so the selection is an output with provenance that decides their runs.
# Each block registers only what its studies in the profile can feed; a profile without a study skips its outputs.


def _have(*studies):
    return all(s in RUNS for s in studies)


if _have("mast_dense", "mast_sweep"):
    add_table("mast", "selection", "mast_selection", dense=[summary("mast_dense")], sweep=[summary("mast_sweep")])

if _have("mast_dense", "mast_sweep", "mast_table1"):
    _cells = dict(dense=[summary("mast_dense")], sweep=[summary("mast_sweep")], baselines=[summary("mast_table1")],
                  selection=[SELECTION])
    add_table("mast", "table1", "mast_table1", **_cells,
              sparsity=[summary("mast_sweep", "sparsity"), summary("mast_table1", "sparsity")])
    add_table("mast", "table5", "mast_table5", **_cells)
    for _number, _algo in ((13, "qmix"), (14, "ow_qmix"), (15, "res_qmix")):
        if any(cfg["algo"] == _algo for cfg in RUNS["mast_table1"].values()):
            add_figure("mast", f"fig{_number}_curves_{_algo}", f"mast_fig{_number}", **_cells)
    add_table("mast", "claims", "mast_claims", **_cells,
              sparsity=[summary("mast_sweep", "sparsity"), summary("mast_table1", "sparsity")],
              fig1=[summary("mast_fig1")] if _have("mast_fig1") else [])

if _have("mast_fig1"):
    add_figure("mast", "fig1_methods_3s5z", "mast_fig1", metrics=[summary("mast_fig1")])

# Fig. 8: the baselines from mast_fig8's sparsity grid and/or Table 1's runs at the selected sparsity (a profile
# that cannot afford the grid at Table 1's budget plots what Table 1 trained), against the sweep and dense.
if _have("mast_dense", "mast_sweep") and (_have("mast_fig8") or _have("mast_table1")):
    add_figure("mast", "fig8_win_rate_vs_sparsity", "mast_fig8",
               **({"fig8": [summary("mast_fig8")]} if _have("mast_fig8") else {}),
               **({"baselines": [summary("mast_table1")]} if _have("mast_table1") else {}),
               dense=[summary("mast_dense")], sweep=[summary("mast_sweep")])

# Ablations (MAST-QMIX, one knob per study): Tables 6-10 and Figures 4, 5, 6, 16.
for _study, _stem, _name in (("mast_abl_t0", "table6_burn_in", "mast_table6"),
                             ("mast_abl_lambda", "table7_lambda", "mast_table7"),
                             ("mast_abl_smm", "table8_soft_mellowmax", "mast_table8"),
                             ("mast_abl_b1b2", "table9_b1_b2", "mast_table9"),
                             ("mast_abl_dm", "table10_delta_m", "mast_table10")):
    if _have(_study):
        add_table("mast", _stem, _name, metrics=[summary(_study)])

for _study, _stem, _name in (("mast_abl_nstep", "fig4_multi_step", "mast_fig4"),
                             ("mast_abl_operator", "fig5_soft_mellowmax", "mast_fig5"),
                             ("mast_abl_buffer", "fig6_dual_buffer", "mast_fig6"),
                             ("mast_abl_operator", "fig16_operators", "mast_fig16")):
    if _have(_study):
        add_figure("mast", _stem, _name, metrics=[summary(_study)])

# Tickets (Fig. 10): winning / cheating tickets take their masks from the ticket_source study's runs.
if _have("mast_tickets"):
    _source = config["studies"]["mast_tickets"].get("ticket_source")
    add_figure("mast", "fig10_tickets", "mast_fig10", tickets=[summary("mast_tickets")],
               mast=[summary(_source)] if _source else [])

# Masks (Figs. 11-12): MAST's learned first-layer masks per agent and per unit type, and learned vs manual budgets.
if _have("mast_alloc"):
    # the first-layer detail its caption describes: the masks of MAST's own (learned) allocation
    add_figure("mast", "fig11_first_layer_masks", "mast_fig11", masks=[summary("mast_alloc", "agent_masks")],
               mask_files=[f"{RESULTS}/mast_alloc/{rid}/masks.pt" for rid, c in RUNS["mast_alloc"].items()
                           if c["sparse"].get("allocation", "learned") == "learned"])
    add_figure("mast", "fig12_allocation", "mast_fig12", masks=[summary("mast_alloc", "agent_masks")],
               allocation=[summary("mast_alloc")])
