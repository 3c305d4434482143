"""effmarl: efficient multi-agent RL training, reproducing neighbor sampling (Gogineni et al., 2023) and
MAST dynamic sparse training (Hu et al., NeurIPS 2024)."""

__version__ = "0.1.0"
