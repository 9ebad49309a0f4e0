"""The rule pack and the spec: the rule model, loading and validating the YAML, the
committed compile of the bundled pack, rule selection, formulas and operators, and the words rules are written
in. Sources -> **rules** -> evaluate -> report -> renderers -> CLI."""
