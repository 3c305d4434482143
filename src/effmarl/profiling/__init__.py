"""Phase timers and counter collectors."""
