"""The files a run reads and writes: the configuration JSON (`run_spec`), the results CSV (`results_file`), the
`.fairdash` model file (`export`), the scoring contract (`scoring`)."""
