"""What the data says before training: proxies and leaks of s or y (`proxies`), the single-feature AUCs
(`feature_auc`), what all features together reveal (`separability`), the readout of a target on the training split
(`rates`)."""
