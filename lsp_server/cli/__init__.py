"""The `codeseek` command line: the parser and `main` (`lsp_server.cli.main`), search, index and the
other subcommands, output formats. `python -m lsp_server.cli` runs it."""
