/**
 * End-to-end: the real `codeseek serve` driven over vscode-jsonrpc with the exact requests the
 * extension sends (built by its own modules), on the fixture workspace tests/workspace/editors.
 *
 * The server is $CODESEEK_SERVER, else <repo>/.venv/bin/codeseek. The index goes to a temporary
 * CODESEEK_INDEX_DIR; embeddings are off (initializationOptions) so the test needs no model.
 */

import { strict as assert } from 'node:assert';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { MessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';

import {
  CallHierarchyIncomingCall,
  CallHierarchyItem,
  WorkDoneProgressValue,
  incomingCallsToItems,
  isReady,
  resultSummary,
  summarizeStatus,
  toDisplayItems,
} from '../display';
import { launchSpec, resolveLaunch } from '../launch';
import {
  EXECUTE_COMMAND_METHOD,
  HOVER_METHOD,
  INCOMING_CALLS_METHOD,
  PREPARE_CALL_HIERARCHY_METHOD,
  SEMANTIC_SEARCH_METHOD,
  SemanticSearchResult,
  callersParams,
  impactParams,
  incomingCallsParams,
  positionParams,
  searchParams,
  serverPresets,
  statusCommandParams,
} from '../requests';
import { readSettings, serverOptionsPayload } from '../settings';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const FIXTURE = path.join(REPO, 'tests', 'workspace', 'editors');
const SERVER = process.env.CODESEEK_SERVER ?? path.join(REPO, '.venv', 'bin', 'codeseek');
const READY_TIMEOUT_MS = 90_000;

/** The settings a user would have: defaults, with embeddings off to keep the test fast. */
const USER_SETTINGS: Record<string, unknown> = { serverPath: SERVER, embeddings: false };
const settings = readSettings((key) => USER_SETTINGS[key]);

let workspace = '';
let indexDir = '';
let server: ChildProcess;
let connection: MessageConnection;
let stderr = '';
let shuttingDown = false;
let capabilities: unknown;
const progress: WorkDoneProgressValue[] = [];
const shown: string[] = [];

function uriOf(rel: string): string {
  return pathToFileURL(path.join(workspace, rel)).href;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, with the server's stderr added to its failure. */
async function withStderr<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- server stderr ---\n${stderr}`);
  }
}

async function search(params: object): Promise<SemanticSearchResult> {
  return withStderr(connection.sendRequest<SemanticSearchResult>(SEMANTIC_SEARCH_METHOD, params));
}

describe('codeseek serve driven with the extension requests', () => {
  before(async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codeseek-vscode-'));
    workspace = path.join(tmp, 'workspace');
    indexDir = path.join(tmp, 'index');
    fs.cpSync(FIXTURE, workspace, { recursive: true });
    const spec = resolveLaunch(launchSpec(settings), workspace, process.env.PATH);
    server = spawn(spec.command, spec.args, {
      cwd: workspace,
      env: { ...process.env, ...spec.env, CODESEEK_INDEX_DIR: indexDir, HF_HUB_OFFLINE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // A server that dies must fail the test at once (with its stderr), not hang it.
    server.once('exit', (code, signal) => {
      if (!shuttingDown) {
        stderr += `\n[server exited: code ${code}, signal ${signal}]`;
        connection?.dispose();
      }
    });
    const stdout = server.stdout;
    const stdin = server.stdin;
    assert.ok(stdout && stdin);
    connection = createMessageConnection(new StreamMessageReader(stdout), new StreamMessageWriter(stdin));
    // What vscode-languageclient answers for the extension.
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('client/registerCapability', () => null);
    connection.onRequest('client/unregisterCapability', () => null);
    connection.onRequest('window/showMessageRequest', () => null);
    connection.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) =>
      params.items.map((item) => (item.section === 'codeseek' ? serverOptionsPayload(settings) : null)),
    );
    connection.onNotification('$/progress', (params: { value: WorkDoneProgressValue }) => {
      progress.push(params.value);
    });
    connection.onNotification('window/showMessage', (params: { type: number; message: string }) => {
      shown.push(params.message);
    });
    connection.onNotification(() => undefined); // logMessage, telemetry...
    connection.listen();

    const rootUri = pathToFileURL(workspace).href;
    const initialized = await withStderr(connection.sendRequest<{ capabilities?: unknown }>('initialize', {
      processId: process.pid,
      clientInfo: { name: 'codeseek-vscode-test' },
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'shop' }],
      initializationOptions: serverOptionsPayload(settings),
      capabilities: {
        window: { workDoneProgress: true, showMessage: {} },
        workspace: { configuration: true, workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: true } },
        textDocument: {
          hover: { contentFormat: ['markdown', 'plaintext'] },
          callHierarchy: { dynamicRegistration: false },
          references: {},
          synchronization: { didSave: true },
        },
      },
    }));
    capabilities = initialized.capabilities;
    await connection.sendNotification('initialized', {});

    // The status-bar item polls codeseek.status the same way until the index is ready.
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const summary = summarizeStatus(await withStderr(connection.sendRequest(EXECUTE_COMMAND_METHOD, statusCommandParams())));
      if (isReady(summary) && summary.files > 0) {
        break;
      }
      if (summary.state === 'error' || Date.now() > deadline) {
        assert.fail(`index not ready (${READY_TIMEOUT_MS} ms at most): ${JSON.stringify(summary)}\n${stderr}`);
      }
      await sleep(200);
    }
  });

  after(async () => {
    shuttingDown = true;
    if (connection !== undefined) {
      try {
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
      } catch {
        // the assertions below report what went wrong
      }
    }
    const exited = server.exitCode !== null ? server.exitCode : await Promise.race([
      new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code))),
      sleep(10_000).then(() => 'timeout' as const),
    ]);
    if (exited === 'timeout') {
      server.kill('SIGKILL');
    }
    connection?.dispose();
    fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
    assert.equal(exited, 0, `server did not exit cleanly after shutdown/exit\n${stderr}`);
  });

  it('reports the index through codeseek.status', async () => {
    const raw = await connection.sendRequest<{ options?: Record<string, unknown> }>(EXECUTE_COMMAND_METHOD, statusCommandParams());
    const summary = summarizeStatus(raw);
    assert.equal(summary.state, 'ready');
    assert.equal(summary.files, 5, JSON.stringify(summary)); // shop/*.py and README.md
    assert.ok(summary.chunks >= 11, JSON.stringify(summary));
  });

  it('accepts the settings the extension sends as its options, without complaint', async () => {
    const raw = await connection.sendRequest<{ options?: Record<string, unknown> }>(EXECUTE_COMMAND_METHOD, statusCommandParams());
    const sent = serverOptionsPayload(settings);
    for (const [key, value] of Object.entries(sent)) {
      assert.deepEqual(raw.options?.[key], value, `option ${key}: ${JSON.stringify(raw.options)}`);
    }
    assert.deepEqual(shown.filter((m) => /option/i.test(m)), []);
  });

  it('searches with each preset the server advertises, and names it in the result', async () => {
    const presets = serverPresets(capabilities);
    assert.deepEqual(presets, ['quick', 'default', 'thorough']);
    for (const preset of presets) {
      const result = await search(searchParams('what does the cart add up to', { preset, presets }));
      assert.equal(result.preset, preset);
      assert.ok(result.results.length > 0, JSON.stringify(result));
    }
  });

  it('finds a function by name at its exact path and line', async () => {
    const result = await search(searchParams('add_tax', { limit: settings.searchLimit, preset: settings.preset }));
    const top = result.results[0];
    assert.ok(top, JSON.stringify(result));
    assert.equal(top.path, 'shop/pricing.py');
    assert.equal(top.start_line, 16);
    assert.equal(top.range.start.line, 15);
    assert.equal(top.uri, uriOf('shop/pricing.py'));
    assert.equal(top.symbol, 'add_tax');
    assert.equal(result.intent?.name, 'find_definition');
    const [item] = toDisplayItems(result);
    assert.equal(item?.description, 'shop/pricing.py:16');
    assert.equal(item?.label, '$(symbol-function) add_tax');
    assert.match(resultSummary(result), /^\d+ results? · find definition · /);
    assert.ok(['ready', 'text-only'].includes(result.index.state), result.index.state);
  });

  it('lands on the definition line when the function shares a chunk with the module header', async () => {
    // shop/pricing.py lines 1-13 are one chunk (docstring, import, TAX_RATE, apply_discount).
    const result = await search(searchParams('apply_discount', { limit: 5 }));
    const top = result.results[0];
    assert.ok(top, JSON.stringify(result));
    assert.equal(`${top.path}:${top.start_line}`, 'shop/pricing.py:8');
    assert.equal(top.symbol, 'apply_discount');
    assert.equal(toDisplayItems(result)[0]?.range.start.line, 7);
  });

  it('finds a quoted string at its exact line', async () => {
    const result = await search(searchParams('"merging quantities"', { limit: 5 }));
    assert.equal(result.intent?.name, 'exact_match');
    const top = result.results[0];
    assert.ok(top, JSON.stringify(result));
    assert.equal(`${top.path}:${top.start_line}`, 'shop/cart.py:27');
    assert.equal(top.symbol, 'ShoppingCart.add_item');
  });

  it('lists the callers of a function through call hierarchy, as "Show Callers" does', async () => {
    // The cursor on "apply_discount" in "def apply_discount(" (shop/pricing.py line 8).
    const prepared = await connection.sendRequest<CallHierarchyItem[] | null>(
      PREPARE_CALL_HIERARCHY_METHOD,
      positionParams(uriOf('shop/pricing.py'), { line: 7, character: 6 }),
    );
    assert.ok(prepared && prepared.length > 0, 'prepareCallHierarchy found no item');
    const calls = await connection.sendRequest<CallHierarchyIncomingCall[]>(INCOMING_CALLS_METHOD, incomingCallsParams(prepared[0] as CallHierarchyItem));
    const items = incomingCallsToItems(calls, [workspace]);
    assert.deepEqual(items.map((i) => i.description).sort(), ['shop/cart.py:40', 'shop/pricing.py:23']);
    const byPlace = new Map(items.map((i) => [i.description, i.label]));
    assert.match(byPlace.get('shop/pricing.py:23') ?? '', /line_total$/);
    assert.match(byPlace.get('shop/cart.py:40') ?? '', /cheapest_price$/);
  });

  it('answers the find_references fallback of "Show Callers" with the call sites', async () => {
    const result = await search(callersParams('apply_discount', settings.searchLimit));
    assert.equal(result.intent?.name, 'find_references');
    const places = new Set(result.results.map((r) => `${r.path}:${r.start_line}`));
    assert.ok(places.has('shop/pricing.py:23') && places.has('shop/cart.py:40'), JSON.stringify([...places]));
  });

  it('lists what a change would affect, as "Show Impact" does', async () => {
    const result = await search(impactParams('apply_discount', settings.searchLimit));
    assert.equal(result.intent?.name, 'impact_analysis');
    const found = new Map(result.results.map((r) => [`${r.path}:${r.start_line}`, r]));
    for (const place of ['shop/pricing.py:21', 'shop/cart.py:38', 'shop/pricing.py:26']) {
      assert.ok(found.has(place), `${place} missing from impact: ${JSON.stringify([...found.keys()])}`);
    }
    const details = toDisplayItems(result).map((i) => i.detail);
    assert.ok(details.some((d) => d.includes('depth 2')), JSON.stringify(details));
  });

  it('shows the related-code hover of the server', async () => {
    const hover = await connection.sendRequest<{ contents: { kind: string; value: string } } | null>(
      HOVER_METHOD,
      positionParams(uriOf('shop/pricing.py'), { line: 7, character: 6 }),
    );
    assert.ok(hover, 'no hover');
    assert.equal(hover.contents.kind, 'markdown');
    const text = hover.contents.value;
    assert.match(text, /def apply_discount\(price: float, percent: float\) -> float/);
    assert.match(text, /Reduce a price by a percentage discount/);
    assert.match(text, /line_total/); // a caller
    assert.match(text, /shop\/pricing\.py:23|shop\/pricing\.py:21/);
  });

  it('surfaces an invalid request as an InvalidParams error the QuickPick can show', async () => {
    const bad = { ...searchParams('apply_discount'), intent: 'no_such_intent' };
    await assert.rejects(connection.sendRequest(SEMANTIC_SEARCH_METHOD, bad), (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, -32602);
      assert.match(error.message, /intent/);
      return true;
    });
  });

  it('reported indexing progress', () => {
    assert.ok(progress.some((p) => p.kind === 'begin'), JSON.stringify(progress));
    assert.ok(progress.some((p) => p.kind === 'end'), JSON.stringify(progress));
  });
});
