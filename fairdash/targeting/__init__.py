"""The target maths (the bottom floor above the leaves): base rates, presets, transition tables and ceilings
(`targets`), what a criterion means (`criteria`), decision rules (`decision`), the one validated target
(`target_spec`)."""
