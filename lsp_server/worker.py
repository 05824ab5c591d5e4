"""The stop that both background workers share: the language server's per-root indexer
(`lsp_server.lsp.indexer.RootIndex`) and the MCP server's refresh thread (`lsp_server.mcp.service`)."""

from __future__ import annotations

import threading


class StoppableWorker:
    """A daemon thread that waits on `_cond` and ends when `_stop` is set."""

    _cond: threading.Condition
    _stop: bool
    _thread: threading.Thread

    def _halt(self, timeout: float) -> bool:
        """Ask the thread to stop and wait up to `timeout` seconds; False while it still runs (stuck in
        one long step, such as a model load: the index it uses must stay open)."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()
