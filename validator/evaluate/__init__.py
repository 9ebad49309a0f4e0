"""Evaluating a rule pack against facts documents: one verdict per rule and subject.
Sources -> rules -> **evaluate** -> report -> renderers -> CLI."""
