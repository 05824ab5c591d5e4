/**
 * Turning the server's answers into what the extension shows: QuickPick rows for search, callers and
 * impact results, the QuickPick title (intent, index state), and the status-bar text for the index
 * state and indexing progress. Pure (no `vscode` import) so the Node test checks it against the real
 * server's answers.
 */

import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

import type { IndexInfo, Range, SearchResultItem, SemanticSearchResult } from './requests';

/**
 * One result row (QuickPick or results tree); `line` is 1-based and `range` is the 0-based LSP range
 * the cursor goes to (the definition's name line), `span` the whole result for display and preview.
 */
export interface DisplayItem {
  label: string;
  description: string;
  detail: string;
  uri: string;
  path: string;
  line: number;
  range: Range;
  span?: Range;
  snippet?: string;
  name?: string;
  kind?: string | null;
}

const KIND_ICONS: Record<string, string> = {
  function: 'symbol-function',
  method: 'symbol-method',
  class: 'symbol-class',
  interface: 'symbol-interface',
  struct: 'symbol-struct',
  enum: 'symbol-enum',
  module: 'symbol-module',
  variable: 'symbol-variable',
  constant: 'symbol-constant',
  section: 'symbol-string',
  text: 'file-text',
  block: 'symbol-namespace',
};

/** A codicon name for a chunk or definition kind. */
export function kindIcon(kind: string | null | undefined): string {
  return KIND_ICONS[kind ?? ''] ?? 'symbol-misc';
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return line.trim().slice(0, 120);
}

/** QuickPick rows for a `workspace/semanticSearch` answer, in the server's order. */
export function toDisplayItems(result: SemanticSearchResult): DisplayItem[] {
  return result.results.map((r: SearchResultItem) => {
    const name = r.symbol && r.symbol.length > 0 ? r.symbol : path.posix.basename(r.path);
    const details: string[] = [];
    if (r.kind) {
      details.push(r.kind);
    }
    if (r.depth !== undefined) {
      details.push(`depth ${r.depth}`);
    }
    if (r.labels.length > 0) {
      details.push(r.labels.join(', '));
    }
    details.push(`score ${r.score.toFixed(3)}`);
    const snippet = firstLine(r.snippet ?? '');
    if (snippet) {
      details.push(snippet);
    }
    const line = typeof r.line === 'number' ? r.line : r.start_line;
    const at = { line: line - 1, character: 0 };
    return {
      label: `$(${kindIcon(r.kind)}) ${name}`,
      description: `${r.path}:${line}`,
      detail: details.join(' · '),
      uri: r.uri,
      path: r.path,
      line,
      range: r.selectionRange ?? { start: at, end: at },
      span: r.range,
      snippet: r.snippet ?? '',
      name,
      kind: r.kind,
    };
  });
}

/**
 * The QuickPick title in words: how many results, the intent the server chose, the index state while
 * it is not ready, and why an answer is empty (the relevance floor) when it is.
 */
export function resultSummary(result: SemanticSearchResult): string {
  const timings = result.timings_ms ?? {};
  const total = typeof timings.total === 'number' ? timings.total : Object.values(timings).reduce((a, b) => a + b, 0);
  const count = result.results.length;
  const parts = [`${count} result${count === 1 ? '' : 's'}`];
  if (result.intent) {
    parts.push(result.intent.name.replace(/_/g, ' '));
  }
  const state = result.index.state;
  if (state !== 'ready' && state !== 'text-only') {
    parts.push(`index ${state}`);
  }
  const reason = emptyReason(result);
  if (count === 0 && reason) {
    parts.push(reason);
  }
  parts.push(`${total.toFixed(0)} ms`);
  return parts.join(' · ');
}

/** Why an answer is empty, in words (every candidate below the relevance floor), else null. */
export function emptyReason(result: SemanticSearchResult): string | null {
  const notes = (result.index as { notes?: unknown }).notes;
  if (Array.isArray(notes) && notes.some((n) => typeof n === 'string' && n.includes('relevance floor'))) {
    return 'nothing matched well enough';
  }
  return null;
}

/** Minimal LSP call-hierarchy shapes (the extension gets them from the server as JSON). */
export interface CallHierarchyItem {
  name: string;
  kind: number;
  detail?: string;
  uri: string;
  range: Range;
  selectionRange: Range;
}

export interface CallHierarchyIncomingCall {
  from: CallHierarchyItem;
  fromRanges: Range[];
}

/** A workspace-relative POSIX path for a file URI, or the URI's file path when outside every root. */
export function relativePath(uri: string, roots: readonly string[]): string {
  let file: string;
  try {
    file = fileURLToPath(uri);
  } catch {
    return uri;
  }
  for (const root of roots) {
    const rel = path.relative(root, file);
    if (rel.length > 0 && !rel.startsWith('..') && !path.isAbsolute(rel)) {
      return rel.split(path.sep).join('/');
    }
  }
  return file;
}

/** QuickPick rows for `callHierarchy/incomingCalls`: one per caller, at its first call site. */
export function incomingCallsToItems(
  calls: readonly CallHierarchyIncomingCall[],
  roots: readonly string[],
): DisplayItem[] {
  return calls.map((call) => {
    const sites = call.fromRanges.length > 0 ? call.fromRanges : [call.from.selectionRange];
    const first = sites[0] as Range;
    const rel = relativePath(call.from.uri, roots);
    const lines = sites.map((r) => r.start.line + 1);
    return {
      label: `$(symbol-function) ${call.from.name}`,
      description: `${rel}:${first.start.line + 1}`,
      detail: `calls at line${lines.length === 1 ? '' : 's'} ${lines.join(', ')}`,
      uri: call.from.uri,
      path: rel,
      line: first.start.line + 1,
      range: first,
    };
  });
}

/** The index as `codeseek.status` reports it, summed over workspace folders. */
export interface StatusSummary extends IndexInfo {
  folders: number;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function folderEntries(raw: unknown): Record<string, unknown>[] {
  if (Array.isArray(raw)) {
    return raw.filter(isRecord).flatMap((entry) => folderEntries(entry));
  }
  if (!isRecord(raw)) {
    return [];
  }
  for (const key of ['folders', 'workspaces', 'roots']) {
    const list = raw[key];
    if (Array.isArray(list)) {
      return folderEntries(list);
    }
    if (isRecord(list)) {
      return folderEntries(Object.values(list));
    }
  }
  if (typeof raw.state === 'string') {
    return [raw];
  }
  if (isRecord(raw.index)) {
    return folderEntries(raw.index).map((entry) => ({ ...raw, ...entry }));
  }
  return [];
}

/**
 * Summarise a `codeseek.status` answer: one folder's `{state, files, chunks, embedded, model}`
 * (possibly under `index`), or a list of them under `roots`/`folders`. The state shown is the first
 * folder's that is busy or failed, so "indexing" wins over "ready"; "text-only" shows as "ready".
 */
export function summarizeStatus(raw: unknown): StatusSummary {
  const entries = folderEntries(raw);
  if (entries.length === 0) {
    return { state: 'unknown', files: 0, chunks: 0, embedded: 0, model: null, folders: 0 };
  }
  const states = entries.map((e) => (typeof e.state === 'string' ? e.state : 'unknown')).map((s) => (s === 'text-only' ? 'ready' : s));
  const model = entries.map((e) => e.model).find((m): m is string => typeof m === 'string') ?? null;
  return {
    state: states.find((s) => !IDLE_STATES.has(s)) ?? (states.includes('ready') ? 'ready' : 'empty'),
    files: entries.reduce((a, e) => a + num(e.files), 0),
    chunks: entries.reduce((a, e) => a + num(e.chunks), 0),
    embedded: entries.reduce((a, e) => a + num(e.embedded), 0),
    model,
    folders: entries.length,
  };
}

/**
 * States with no background work left: "text-only" is ready with embeddings off (shown as ready),
 * "empty" means the folder has nothing to index.
 */
const IDLE_STATES = new Set(['ready', 'text-only', 'empty']);

/** Whether the server has no indexing work pending (polling slows down, the spinner stops). */
export function isReady(summary: Pick<StatusSummary, 'state'>): boolean {
  return IDLE_STATES.has(summary.state);
}

/** Status-bar text for the index state, e.g. `$(database) codeseek: ready · 84 files`. */
export function statusText(summary: StatusSummary): string {
  const icon = isReady(summary) ? 'database' : summary.state === 'error' ? 'error' : 'sync~spin';
  const files = summary.files === 1 ? '1 file' : `${summary.files} files`;
  return `$(${icon}) codeseek: ${summary.state} · ${files}`;
}

/** Tooltip for the status-bar item. */
export function statusTooltip(summary: StatusSummary): string {
  return [
    `codeseek index: ${summary.state}`,
    `${summary.files} files, ${summary.chunks} chunks, ${summary.embedded} embedded`,
    `model: ${summary.model ?? 'none'}`,
    'Click to search.',
  ].join('\n');
}

/** The `value` of a `$/progress` notification (LSP work-done progress). */
export interface WorkDoneProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
}

/** Status-bar text while the server reports progress, e.g. `codeseek: embedding 312/1024 chunks (30%)`. */
export function progressText(title: string, value: WorkDoneProgressValue): string {
  if (value.kind === 'end') {
    return `$(check) codeseek: ${value.message ?? 'done'}`;
  }
  const parts = [value.message ?? title];
  if (typeof value.percentage === 'number') {
    parts.push(`(${Math.round(value.percentage)}%)`);
  }
  return `$(sync~spin) codeseek: ${parts.join(' ')}`;
}
