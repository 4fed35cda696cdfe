"""One training run: configuration, data, kernels, engines, observables, the run's files."""
