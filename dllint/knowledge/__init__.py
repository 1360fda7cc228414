"""What libraries and frameworks document about their loaders: pure data, imports nothing from dllint."""
