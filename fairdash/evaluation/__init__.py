"""The evaluation of fitted models: the table of a results row's columns (`metric_table`), per-group rates and
ratios (`metrics`), gaps to the target and the ceiling (`gaps`), the price of deciding without s (`blindness`), thin
groups (`thin`)."""
