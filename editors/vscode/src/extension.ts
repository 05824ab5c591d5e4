/**
 * The codeseek VS Code extension: starts `codeseek serve` through vscode-languageclient and adds the
 * commands "codeseek: Semantic Search", "Show Callers", "Show Impact", "Reindex Workspace",
 * "Show Index Status" and "Restart Server", plus a status-bar item with the index state.
 */

import * as vscode from 'vscode';

import { LAUNCH_SETTINGS, ServerController, currentSettings, workspaceRoots } from './client';
import { summarizeStatus, statusTooltip } from './display';
import { cursorSymbol, findCallers, findImpact } from './navigation';
import { showSearchPick } from './picks';
import { OPEN_COMMAND, ResultsView, openResult } from './resultsView';
import type { DisplayItem } from './display';
import { IndexStatusBar } from './statusBar';

let controller: ServerController | undefined;

function reportError(error: unknown): void {
  void vscode.window.showErrorMessage(`codeseek: ${error instanceof Error ? error.message : String(error)}`);
}

/** Wrap a command body so a failure becomes an error message instead of an unhandled rejection. */
function guarded(body: () => Promise<void> | void): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (error) {
      reportError(error);
    }
  };
}

function selectedText(): string {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.selection.isEmpty) {
    return '';
  }
  const text = editor.document.getText(editor.selection);
  return text.includes('\n') ? '' : text;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('codeseek');
  const status = new IndexStatusBar();
  const server = new ServerController(output, status);
  controller = server;
  const results = new ResultsView();
  context.subscriptions.push(output, status, server, results);

  const register = (id: string, body: () => Promise<void> | void): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, guarded(body)));
  };

  register('codeseek.search', () => showSearchPick(server.running(), currentSettings(), selectedText(), results));
  context.subscriptions.push(
    vscode.commands.registerCommand(OPEN_COMMAND, (item: DisplayItem) => guarded(() => openResult(item))()),
  );
  register('codeseek.clearResults', () => results.clear());

  const showList = async (title: string, items: DisplayItem[]): Promise<void> => {
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`codeseek: ${title}: nothing found`);
      return;
    }
    await results.show(title, items);
  };

  register('codeseek.showCallers', async () => {
    const at = cursorSymbol();
    if (typeof at === 'string') {
      void vscode.window.showInformationMessage(at);
      return;
    }
    const items = await findCallers(server.running(), at, workspaceRoots(), currentSettings().searchLimit);
    await showList(`Callers of ${at.symbol}`, items);
  });

  register('codeseek.showImpact', async () => {
    const at = cursorSymbol();
    if (typeof at === 'string') {
      void vscode.window.showInformationMessage(at);
      return;
    }
    const items = await findImpact(server.running(), at, currentSettings().searchLimit);
    await showList(`Impact of changing ${at.symbol}`, items);
  });

  register('codeseek.reindexWorkspace', async () => {
    await server.reindex();
    void vscode.window.showInformationMessage('codeseek: reindexing the workspace');
  });

  register('codeseek.showStatus', async () => {
    const summary = summarizeStatus(await server.statusReport());
    void vscode.window.showInformationMessage(statusTooltip(summary).split('\n').slice(0, 3).join(' · '));
  });

  register('codeseek.restartServer', () => server.restart());

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration('codeseek')) {
        return;
      }
      if (LAUNCH_SETTINGS.some((key) => event.affectsConfiguration(`codeseek.${key}`))) {
        void server.restart().catch(reportError);
      } else {
        void server.pushConfiguration().catch(reportError);
      }
    }),
  );

  await server.start();
  await vscode.commands.executeCommand('setContext', 'codeseek.active', true);
}

export async function deactivate(): Promise<void> {
  const server = controller;
  controller = undefined;
  await server?.stop();
}
