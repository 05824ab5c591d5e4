/**
 * Tests of the extension's pure modules (request building, display, settings, launch, scheduling)
 * without a server: the edge cases the end-to-end test does not reach.
 */

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { isReady, progressText, relativePath, resultSummary, statusText, summarizeStatus, toDisplayItems } from '../display';
import { ServerLaunchError, findExecutable, launchSpec, resolveLaunch } from '../launch';
import { CodeseekRequestError, SemanticSearchResult, callersParams, impactParams, searchParams, serverPresets, symbolAt } from '../requests';
import { SearchScheduler } from '../scheduler';
import { ACTIVATION_EXTENSIONS, INDEXED_LANGUAGE_IDS, activationEvents, documentSelector } from '../languages';
import { groupByFile, previewMarkdown, rowText } from '../resultsTree';
import { DEFAULT_SETTINGS, readSettings, serverOptionsPayload } from '../settings';

describe('request building', () => {
  it('trims the query and drops empty globs', () => {
    assert.deepEqual(searchParams('  who calls total ', { limit: 5, include: ['shop/**', ' '], exclude: [] }), {
      query: 'who calls total',
      limit: 5,
      include: ['shop/**'],
    });
  });

  it('rejects an empty query and a limit out of range with a named error', () => {
    assert.throws(() => searchParams('   '), CodeseekRequestError);
    assert.throws(() => searchParams('x', { limit: 0 }), /limit must be an integer from 1 to 200, got 0/);
    assert.throws(() => searchParams('x', { limit: 2.5 }), CodeseekRequestError);
  });

  it('builds callers and impact searches with their intents', () => {
    assert.deepEqual(callersParams('apply_discount', 7), { query: 'apply_discount', limit: 7, intent: 'find_references' });
    assert.deepEqual(impactParams(' total '), { query: 'total', intent: 'impact_analysis' });
    assert.throws(() => impactParams(''), /no symbol under the cursor/);
  });

  it('finds the identifier under or just after the cursor', () => {
    const line = '    return apply_discount(unit_price, percent) * quantity';
    assert.equal(symbolAt(line, 11), 'apply_discount');
    assert.equal(symbolAt(line, 24), 'apply_discount'); // right after the name, on "("
    assert.equal(symbolAt(line, 2), null);
    assert.equal(symbolAt('self.cart.total()', 12), 'total');
    assert.equal(symbolAt('x = 42', 5), null);
    assert.equal(symbolAt('', 0), null);
  });
});

describe('display', () => {
  const result: SemanticSearchResult = {
    query: 'apply_discount',
    intent: { name: 'find_definition', confidence: 0.9, source: 'rules' },
    strategy: 'direct',
    modalities: ['structural'],
    results: [
      {
        path: 'shop/pricing.py',
        uri: 'file:///w/shop/pricing.py',
        range: { start: { line: 7, character: 0 }, end: { line: 12, character: 28 } },
        start_line: 8,
        end_line: 13,
        symbol: 'apply_discount',
        kind: 'function',
        language: 'python',
        labels: ['source'],
        score: 1,
        snippet: '\ndef apply_discount(price: float, percent: float) -> float:\n',
        explain: {},
      },
    ],
    index: { state: 'ready', files: 4, chunks: 20, embedded: 0, model: null },
    timings_ms: { structural: 0.5 },
  };

  it('shows path:line, symbol, kind, labels and the first snippet line', () => {
    const [item] = toDisplayItems(result);
    assert.ok(item);
    assert.equal(item.label, '$(symbol-function) apply_discount');
    assert.equal(item.description, 'shop/pricing.py:8');
    assert.equal(item.detail, 'function · source · score 1.000 · def apply_discount(price: float, percent: float) -> float:');
    assert.equal(item.line, 8);
  });

  it('titles the QuickPick with the intent and the total time (timings_ms.total when given)', () => {
    assert.equal(resultSummary(result), '1 result · find definition · 1 ms');
    assert.match(resultSummary({ ...result, timings_ms: { text: 4, fuse: 1, total: 7 } }), / · 7 ms$/);
    const empty = { ...result, intent: null, results: [], strategy: 'none' };
    assert.equal(resultSummary({ ...empty, index: { ...result.index, state: 'indexing' } }), '0 results · index indexing · 1 ms');
    const floored = { ...result, results: [], index: { ...result.index, notes: ['relevance floor: 9 weak semantic-only matches left out (cosine < 0.25)'] } };
    assert.equal(resultSummary(floored), '0 results · find definition · nothing matched well enough · 1 ms');
    assert.ok(!resultSummary(empty).includes('?'));
  });

  it('summarises one folder, several folders, and nonsense', () => {
    assert.deepEqual(summarizeStatus({ state: 'ready', files: 3, chunks: 9, embedded: 9, model: 'm' }), {
      state: 'ready', files: 3, chunks: 9, embedded: 9, model: 'm', folders: 1,
    });
    const two = summarizeStatus({ folders: [{ index: { state: 'ready', files: 1 } }, { state: 'embedding', files: 2 }] });
    assert.equal(two.state, 'embedding');
    assert.equal(two.files, 3);
    assert.equal(two.folders, 2);
    assert.equal(summarizeStatus('garbage').state, 'unknown');
    const idle = summarizeStatus({ roots: [{ state: 'text-only', files: 5 }, { state: 'empty', files: 0 }] });
    assert.equal(idle.state, 'ready');
    assert.ok(isReady(idle));
    assert.equal(summarizeStatus({ roots: [{ state: 'empty' }] }).state, 'empty');
    assert.ok(!isReady(summarizeStatus({ roots: [{ state: 'starting' }] })));
    assert.equal(statusText(two), '$(sync~spin) codeseek: embedding · 3 files');
  });

  it('formats progress and relative paths', () => {
    assert.equal(progressText('indexing', { kind: 'report', message: 'embedding 312/1024 chunks', percentage: 30.4 }),
      '$(sync~spin) codeseek: embedding 312/1024 chunks (30%)');
    assert.equal(relativePath('file:///w/shop/cart.py', ['/x', '/w']), 'shop/cart.py');
    assert.equal(relativePath('file:///elsewhere/a.py', ['/w']), '/elsewhere/a.py');
  });
});

describe('settings', () => {
  it('falls back to defaults on wrong types and leaves empty model/indexDir to the server', () => {
    const raw: Record<string, unknown> = { maxFileSize: 'big', preset: 42, hover: false, excludes: ['*.min.js', 3] };
    const settings = readSettings((key) => raw[key]);
    assert.equal(settings.maxFileSize, DEFAULT_SETTINGS.maxFileSize);
    assert.equal(settings.preset, 'default');
    assert.deepEqual(serverOptionsPayload(settings), {
      excludes: ['*.min.js'], maxFileSize: 1_000_000, preset: 'default', hover: false, embeddings: true,
    });
  });
});

describe('presets', () => {
  it('come from the server\'s initialize answer and check the preset a search sends', () => {
    const capabilities = { hoverProvider: true, experimental: { codeseek: { presets: ['quick', 'default', 7, 'deep'] } } };
    const offered = serverPresets(capabilities);
    assert.deepEqual(offered, ['quick', 'default', 'deep']);
    assert.deepEqual(serverPresets({ hoverProvider: true }), []);
    assert.deepEqual(serverPresets(undefined), []);
    assert.equal(searchParams('x', { preset: 'deep', presets: offered }).preset, 'deep');
    assert.throws(() => searchParams('x', { preset: 'nonsense', presets: offered }),
      (e: unknown) => e instanceof CodeseekRequestError && e.message === 'unknown preset "nonsense"; the server offers: quick, default, deep');
    assert.equal(searchParams('x', { preset: 'nonsense' }).preset, 'nonsense'); // no list: the server decides
    assert.equal(readSettings((key) => ({ preset: 'deep' } as Record<string, unknown>)[key]).preset, 'deep');
  });
});

describe('launch', () => {
  it('prefers pythonPath and names the setting when the executable is missing', () => {
    const spec = launchSpec({ serverPath: 'codeseek', pythonPath: '/nowhere/python', serverArgs: ['--log-level', 'debug'], serverEnv: {} });
    assert.deepEqual(spec.args, ['-m', 'lsp_server.cli', 'serve', '--log-level', 'debug']);
    assert.throws(() => resolveLaunch(spec, undefined, ''), (error: unknown) => {
      assert.ok(error instanceof ServerLaunchError);
      assert.equal(error.setting, 'codeseek.pythonPath');
      assert.match(error.message, /"\/nowhere\/python" does not exist/);
      return true;
    });
    const onPath = launchSpec({ ...DEFAULT_SETTINGS, serverPath: 'codeseek-not-installed-here' });
    assert.throws(() => resolveLaunch(onPath, undefined, '/usr/bin'), /was not found on PATH\. Set "codeseek.serverPath"/);
  });

  it('resolves relative paths against the workspace and bare names on PATH', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codeseek-launch-'));
    const exe = path.join(dir, 'bin', 'codeseek');
    fs.mkdirSync(path.dirname(exe));
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(findExecutable('bin/codeseek', dir, ''), exe);
    assert.equal(findExecutable('codeseek', undefined, `/nonexistent${path.delimiter}${path.dirname(exe)}`), exe);
    fs.chmodSync(exe, 0o644);
    assert.equal(findExecutable('bin/codeseek', dir, ''), null);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('search-as-you-type scheduling', () => {
  it('debounces keystrokes, cancels stale searches and delivers only the newest answer', async () => {
    const started: string[] = [];
    const cancelled: string[] = [];
    const delivered: string[] = [];
    const scheduler = new SearchScheduler<string>(
      20,
      (query) => {
        started.push(query);
        const delay = query === 'apply' ? 80 : 5; // the older search answers last
        return {
          result: new Promise((resolve) => setTimeout(() => resolve(`answer:${query}`), delay)),
          cancel: { cancel: () => cancelled.push(query) },
        };
      },
      { onResult: (_q, r) => delivered.push(r), onError: (_q, e) => assert.fail(String(e)) },
    );
    scheduler.push('a');
    scheduler.push('ap');
    scheduler.push('apply'); // only this one survives the debounce
    await new Promise((r) => setTimeout(r, 40));
    scheduler.push('apply_discount'); // cancels the in-flight "apply"
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(started, ['apply', 'apply_discount']);
    assert.deepEqual(cancelled, ['apply']);
    assert.deepEqual(delivered, ['answer:apply_discount']);
    scheduler.dispose();
  });
});

describe('manifest (package.json)', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));

  it('activates only in workspaces with files codeseek indexes, never on startup', () => {
    assert.deepEqual(manifest.activationEvents, activationEvents());
    assert.ok(!manifest.activationEvents.some((e: string) => e === '*' || e === 'onStartupFinished'));
    assert.ok(ACTIVATION_EXTENSIONS.includes('py') && ACTIVATION_EXTENSIONS.includes('rs'));
    assert.deepEqual(documentSelector()[0], { scheme: 'file', language: 'python' });
    assert.equal(documentSelector().length, INDEXED_LANGUAGE_IDS.length);
  });

  it('keeps the launch settings out of reach of an untrusted workspace', () => {
    const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    for (const key of ['codeseek.serverPath', 'codeseek.pythonPath', 'codeseek.serverArgs', 'codeseek.serverEnv']) {
      assert.equal(manifest.contributes.configuration.properties[key].scope, 'machine-overridable', key);
      assert.ok(restricted.includes(key), key);
    }
  });

  it('gives keybindings and menus when clauses, with keys VS Code does not already use', () => {
    // Default VS Code bindings built around F (find, replace, search, format, fullscreen) on any platform.
    const builtins = ['ctrl+f', 'cmd+f', 'ctrl+h', 'cmd+alt+f', 'ctrl+alt+f', 'ctrl+shift+f', 'cmd+shift+f',
      'shift+alt+f', 'ctrl+shift+i', 'ctrl+cmd+f', 'f11', 'ctrl+shift+h', 'cmd+shift+h'];
    for (const binding of manifest.contributes.keybindings) {
      assert.ok(binding.when, binding.command);
      for (const key of [binding.key, binding.mac, binding.linux, binding.win].filter(Boolean)) {
        assert.ok(!builtins.includes(key), `${binding.command}: ${key} is a built-in binding`);
      }
    }
    for (const entry of manifest.contributes.menus['editor/context']) {
      assert.match(entry.when, /codeseek\.active/);
    }
  });

  it('ships a bundle: main points at dist/, a LICENSE exists, .vscodeignore keeps sources out', () => {
    assert.equal(manifest.main, './dist/extension.js');
    assert.ok(fs.existsSync(path.join(__dirname, '..', '..', 'LICENSE')));
    const ignore = fs.readFileSync(path.join(__dirname, '..', '..', '.vscodeignore'), 'utf8');
    assert.match(ignore, /^!dist\/extension\.js$/m);
  });
});

describe('results view', () => {
  const at = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 0 } });
  const item = (path: string, line: number, name: string) => ({
    label: `$(symbol-function) ${name}`, description: `${path}:${line}`, detail: '', uri: `file:///w/${path}`,
    path, line, range: at(line - 1), span: at(line - 3), snippet: `def ${name}():\n    pass`, name, kind: 'function',
  });

  it('groups by file in the order of each file\'s best result', () => {
    const groups = groupByFile([item('a.py', 3, 'f'), item('b.py', 9, 'g'), item('a.py', 20, 'h')]);
    assert.deepEqual(groups.map((g) => [g.path, g.items.map((i) => i.name)]), [['a.py', ['f', 'h']], ['b.py', ['g']]]);
  });

  it('names the symbol and its line and previews the snippet as code', () => {
    assert.deepEqual(rowText(item('a.py', 3, 'f')), { label: 'f', description: 'line 3 · function' });
    assert.equal(previewMarkdown(item('a.py', 3, 'f'), 'python'), '**a.py:3**\n\n```python\ndef f():\n    pass\n```');
  });
});
