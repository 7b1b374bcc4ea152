"""The figures: Plotly figure builders (`plots`), the target view (`plots_target`), one look for all (`plot_style`)."""
