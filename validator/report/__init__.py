"""The report: the result model, reading and writing JSON results, merging, diffing,
baselines, waivers and signatures. Sources -> rules -> evaluate -> **report** ->
renderers -> CLI."""
