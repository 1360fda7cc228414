"""The typed flow engine: where a loader (a sampler, a dataset) goes and how often it is iterated."""
