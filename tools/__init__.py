"""Thin command-line front ends: gc-opt (and later gc-run, gc-translate)."""
