"""FairDash's benchmarks: speed, scale and reproduction figures, run by hand from the repository root
(``python -m benchmarks`` lists them; ``benchmarks/README.md`` has the recorded figures). Never imported by
the package or the tests."""
