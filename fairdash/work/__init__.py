"""The work: fitting and evaluating models (`experiments`), the fit cache (`fit_cache`), a dashboard run (`runs`)."""
