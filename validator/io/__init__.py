"""Reading and writing files: size-capped reads, atomic writes, the line-tracking YAML
loader and the JSON/YAML/TOML tree reader, fetching over the network, and where the
bundled spec/ and rules/ live. The lowest stage above the values: nothing here knows
about rules, facts or results."""
