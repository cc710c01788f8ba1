"""One command through the pipeline: policy, confirmation, checkpoint, exec, presenter, and the result it
returns.
"""
