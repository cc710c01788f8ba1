"""Sandbox image build contexts, installed as ``canal._images`` (data only)."""
