/**
 * Request building and result formatting for the codeseek language server.
 *
 * Everything the extension sends to the server (semantic search, callers, impact, hover, status) is
 * built here, and everything it shows (QuickPick rows, status-bar text) is derived here from the
 * server's answers. This module has no `vscode` import on purpose: the Node end-to-end test imports
 * it and drives the real server with exactly the requests the extension sends, so the two cannot
 * drift apart.
 */

/** The custom request answered by `codeseek serve`. */
export const SEMANTIC_SEARCH_METHOD = 'workspace/semanticSearch';
/** `workspace/executeCommand` commands the server offers. */
export const STATUS_COMMAND = 'codeseek.status';
export const REINDEX_COMMAND = 'codeseek.reindex';
export const PREPARE_CALL_HIERARCHY_METHOD = 'textDocument/prepareCallHierarchy';
export const INCOMING_CALLS_METHOD = 'callHierarchy/incomingCalls';
export const HOVER_METHOD = 'textDocument/hover';
export const EXECUTE_COMMAND_METHOD = 'workspace/executeCommand';

/** Query intents the server understands; the server classifies the query when none is given. */
export const INTENTS = [
  'find_definition',
  'find_references',
  'understand_code',
  'find_similar',
  'impact_analysis',
  'exact_match',
] as const;
export type IntentName = (typeof INTENTS)[number];

/**
 * The search presets the server accepts, as it advertises them in its `initialize` answer
 * (`capabilities.experimental.codeseek.presets`); empty when it does not say. The names are never
 * typed here: the server's ranking profiles (retrievers/profile.py) define them.
 */
export function serverPresets(capabilities: unknown): string[] {
  const experimental = (capabilities as { experimental?: { codeseek?: { presets?: unknown } } } | undefined)?.experimental;
  const presets = experimental?.codeseek?.presets;
  return Array.isArray(presets) ? presets.filter((p): p is string => typeof p === 'string') : [];
}

/** Bounds the server accepts for `limit`. */
export const MIN_LIMIT = 1;
export const MAX_LIMIT = 200;

/** A request that cannot be built from the user's input (empty query, bad limit...). */
export class CodeseekRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodeseekRequestError';
  }
}

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface SemanticSearchParams {
  query: string;
  limit?: number;
  preset?: string;
  intent?: IntentName;
  include?: string[];
  exclude?: string[];
}

export interface SearchIntent {
  name: string;
  confidence: number;
  source: string;
}

export interface IndexInfo {
  /** starting | indexing | embedding | ready | text-only | empty | error | stopped (retrievers/lifecycle.py) */
  state: string;
  files: number;
  chunks: number;
  embedded: number;
  model: string | null;
}

/** One ranked location of a `workspace/semanticSearch` answer. */
export interface SearchResultItem {
  path: string;
  uri: string;
  /** The whole span (for display). */
  range: Range;
  /** Where the cursor goes: the start of the definition's name line (older servers: absent). */
  selectionRange?: Range;
  start_line: number;
  end_line: number;
  /** 1-based line of the definition's name (older servers: absent; use start_line). */
  line?: number;
  symbol: string | null;
  kind: string | null;
  language: string | null;
  labels: string[];
  score: number;
  snippet: string;
  explain: Record<string, unknown>;
  /** Present for impact_analysis: how many call edges away from the changed symbol. */
  depth?: number;
}

export interface SemanticSearchResult {
  query: string;
  /** The ranking profile the search used (absent from servers older than the field). */
  preset?: string;
  /** null when nothing could be searched yet (no folder open, or indexing has not finished phase 1). */
  intent: SearchIntent | null;
  strategy: string;
  modalities: string[];
  results: SearchResultItem[];
  index: IndexInfo;
  timings_ms: Record<string, number>;
}

export interface SearchOptions {
  limit?: number;
  preset?: string;
  /** The presets the server advertised (`serverPresets`); when given, `preset` must be one of them. */
  presets?: readonly string[];
  intent?: IntentName;
  include?: string[];
  exclude?: string[];
}

function checkLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) {
    return undefined;
  }
  if (!Number.isInteger(limit) || limit < MIN_LIMIT || limit > MAX_LIMIT) {
    throw new CodeseekRequestError(`limit must be an integer from ${MIN_LIMIT} to ${MAX_LIMIT}, got ${limit}`);
  }
  return limit;
}

function cleanGlobs(globs: readonly string[] | undefined): string[] | undefined {
  const kept = (globs ?? []).map((g) => g.trim()).filter((g) => g.length > 0);
  return kept.length > 0 ? kept : undefined;
}

/** Params of `workspace/semanticSearch` for what the user typed. */
export function searchParams(query: string, options: SearchOptions = {}): SemanticSearchParams {
  const text = query.trim();
  if (text.length === 0) {
    throw new CodeseekRequestError('the search query is empty');
  }
  const params: SemanticSearchParams = { query: text };
  const limit = checkLimit(options.limit);
  if (limit !== undefined) {
    params.limit = limit;
  }
  if (options.preset !== undefined && options.preset !== '') {
    const offered = options.presets ?? [];
    if (offered.length > 0 && !offered.includes(options.preset)) {
      throw new CodeseekRequestError(`unknown preset "${options.preset}"; the server offers: ${offered.join(', ')}`);
    }
    params.preset = options.preset;
  }
  if (options.intent !== undefined) {
    params.intent = options.intent;
  }
  const include = cleanGlobs(options.include);
  if (include !== undefined) {
    params.include = include;
  }
  const exclude = cleanGlobs(options.exclude);
  if (exclude !== undefined) {
    params.exclude = exclude;
  }
  return params;
}

function symbolQuery(symbol: string): string {
  const name = symbol.trim();
  if (name.length === 0) {
    throw new CodeseekRequestError('there is no symbol under the cursor');
  }
  return name;
}

/** "Who calls X": the find_references search, used when call hierarchy has nothing at the cursor. */
export function callersParams(symbol: string, limit?: number): SemanticSearchParams {
  return searchParams(symbolQuery(symbol), { intent: 'find_references', limit });
}

/** "What breaks if I change X": definitions that depend on X, nearest first. */
export function impactParams(symbol: string, limit?: number): SemanticSearchParams {
  return searchParams(symbolQuery(symbol), { intent: 'impact_analysis', limit });
}

export interface TextDocumentPositionParams {
  textDocument: { uri: string };
  position: Position;
}

/** Params of textDocument/hover and textDocument/prepareCallHierarchy. */
export function positionParams(uri: string, position: Position): TextDocumentPositionParams {
  return { textDocument: { uri }, position: { line: position.line, character: position.character } };
}

export interface ExecuteCommandParams {
  command: string;
  arguments: unknown[];
}

export function statusCommandParams(): ExecuteCommandParams {
  return { command: STATUS_COMMAND, arguments: [] };
}

export function reindexCommandParams(): ExecuteCommandParams {
  return { command: REINDEX_COMMAND, arguments: [] };
}

const IDENTIFIER = /[A-Za-z0-9_$]/;

/**
 * The identifier under (or just before) `character` on `lineText`, or null. A dotted receiver is
 * dropped (`self.cart.total` -> `total`): the server resolves bare names through its call graph.
 */
export function symbolAt(lineText: string, character: number): string | null {
  let at = Math.min(Math.max(character, 0), lineText.length);
  if (at === lineText.length || !IDENTIFIER.test(lineText[at] ?? '')) {
    at -= 1; // cursor right after the identifier
  }
  if (at < 0 || !IDENTIFIER.test(lineText[at] ?? '')) {
    return null;
  }
  let start = at;
  while (start > 0 && IDENTIFIER.test(lineText[start - 1] ?? '')) {
    start -= 1;
  }
  let end = at + 1;
  while (end < lineText.length && IDENTIFIER.test(lineText[end] ?? '')) {
    end += 1;
  }
  const word = lineText.slice(start, end);
  return /^[0-9]/.test(word) ? null : word;
}

/** Params of `callHierarchy/incomingCalls` for an item `prepareCallHierarchy` returned. */
export function incomingCallsParams<T extends object>(item: T): { item: T } {
  return { item };
}
