"""Who pays for deciding without s (issue 49; docs/METHOD.md, "Who pays for deciding without s"): on one split, the
people a rule without s decides otherwise than the best rule with s at the same rates, the features it leans on
instead of s and the within-group disparity on them (:mod:`.measure`); those in the results table and over the
splits (:mod:`.table`); and in words (:mod:`.words`)."""
