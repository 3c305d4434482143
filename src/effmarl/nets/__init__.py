"""Neural network building blocks shared by the algorithms."""
