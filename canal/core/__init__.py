"""The shared core every layer may use and that uses none of them: the one error root with its exit
codes, atomic private file writes, the mask for exact secrets, and structured next actions."""
