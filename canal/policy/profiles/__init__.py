"""Shipped policy profiles (YAML package data)."""
