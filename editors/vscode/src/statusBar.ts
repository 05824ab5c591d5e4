/**
 * The status-bar item: the index state from `codeseek.status` (polled while the index is not ready)
 * and the server's `$/progress` reports while it indexes and embeds. Clicking it opens the search.
 */

import * as vscode from 'vscode';

import {
  StatusSummary,
  WorkDoneProgressValue,
  isReady,
  progressText,
  statusText,
  statusTooltip,
  summarizeStatus,
} from './display';

const BUSY_POLL_MS = 2_000;
const IDLE_POLL_MS = 30_000;

export class IndexStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly titles = new Map<string, string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private fetchStatus: (() => Promise<unknown>) | undefined;
  private summary: StatusSummary | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('codeseek.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'codeseek index';
    this.item.command = 'codeseek.search';
    this.item.text = '$(sync~spin) codeseek: starting';
    this.item.show();
  }

  /** Middleware hook for `$/progress`: show the newest report of any running progress. */
  onProgress(token: string | number, value: WorkDoneProgressValue): void {
    const key = String(token);
    if (value.kind === 'begin') {
      this.titles.set(key, value.title ?? 'indexing');
    }
    const title = this.titles.get(key) ?? 'indexing';
    this.item.text = progressText(title, value);
    this.item.tooltip = `codeseek: ${value.message ?? title}`;
    if (value.kind === 'end') {
      this.titles.delete(key);
      this.schedule(0);
    }
  }

  /** Start polling `codeseek.status` through `fetch` (the running client's executeCommand). */
  watch(fetch: () => Promise<unknown>): void {
    this.fetchStatus = fetch;
    this.schedule(0);
  }

  /** The server stopped or could not start: say so and offer the settings. */
  showError(message: string): void {
    this.stopPolling();
    this.fetchStatus = undefined;
    this.item.text = '$(error) codeseek: not running';
    this.item.tooltip = message;
    this.item.command = 'codeseek.restartServer';
  }

  get current(): StatusSummary | undefined {
    return this.summary;
  }

  private schedule(delayMs: number): void {
    this.stopPolling();
    this.timer = setTimeout(() => void this.poll(), delayMs);
  }

  private async poll(): Promise<void> {
    const fetch = this.fetchStatus;
    if (fetch === undefined) {
      return;
    }
    try {
      const summary = summarizeStatus(await fetch());
      this.summary = summary;
      if (this.titles.size === 0) {
        this.item.text = statusText(summary);
      }
      this.item.tooltip = statusTooltip(summary);
      this.item.command = 'codeseek.search';
      this.schedule(isReady(summary) ? IDLE_POLL_MS : BUSY_POLL_MS);
    } catch (error) {
      this.item.tooltip = `codeseek.status failed: ${error instanceof Error ? error.message : String(error)}`;
      this.schedule(BUSY_POLL_MS * 5);
    }
  }

  private stopPolling(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    this.stopPolling();
    this.fetchStatus = undefined;
    this.item.dispose();
  }
}
