"""What libraries and frameworks do with loaders: pure data, imported by the facts and the project layers."""
