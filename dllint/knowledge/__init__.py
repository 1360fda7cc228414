"""What libraries and frameworks document about their loaders and what they do with them: pure data,
imported by the facts and the project layers; it imports nothing from dllint."""
