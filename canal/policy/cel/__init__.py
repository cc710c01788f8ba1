"""The CEL engine of the policy: its environment, and rules translated into Python closures (with the
interpreter behind).
"""
