"""The language server front end (pygls): the server, its handlers, LSP conversion, options and
the JSON-RPC hardening."""
