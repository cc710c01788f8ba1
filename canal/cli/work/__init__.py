"""The commands that do the agent's work: run, sandboxes, tasks, forwards, forks, checkpoints, files,
workflows, tools.
"""
