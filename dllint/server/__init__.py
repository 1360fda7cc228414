"""``dllint server``: dllint as a Language Server Protocol server for editors (see :mod:`dllint.server.app`).

pygls and lsprotocol are imported only here, by ``dllint server``: the command line and the
flake8 plugin never load them.
"""
