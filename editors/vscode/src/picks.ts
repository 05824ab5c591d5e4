/**
 * The QuickPicks: "codeseek: Semantic Search" (searches as you type, debounced, newest answer wins)
 * and the results list used by "Show Callers" and "Show Impact". Choosing a row opens its location.
 */

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

import { DisplayItem, resultSummary, toDisplayItems } from './display';
import { SEMANTIC_SEARCH_METHOD, SemanticSearchResult, searchParams } from './requests';
import { SearchScheduler } from './scheduler';
import { CodeseekSettings } from './settings';

interface PickItem extends vscode.QuickPickItem {
  target?: DisplayItem;
}

/** Open `item`'s file with its range selected and centred. */
export async function openLocation(item: DisplayItem): Promise<void> {
  const uri = vscode.Uri.parse(item.uri);
  const start = new vscode.Position(item.range.start.line, item.range.start.character);
  const editor = await vscode.window.showTextDocument(uri, { selection: new vscode.Range(start, start) });
  const end = new vscode.Position(item.range.end.line, item.range.end.character);
  editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

function toPickItems(items: readonly DisplayItem[]): PickItem[] {
  // alwaysShow: the server already ranked these; the QuickPick must not filter them by label.
  return items.map((target) => ({
    label: target.label,
    description: target.description,
    detail: target.detail,
    alwaysShow: true,
    target,
  }));
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** "codeseek: Semantic Search": a QuickPick that asks the server as the user types. */
export function showSearchPick(client: LanguageClient, settings: CodeseekSettings, initial: string): void {
  const pick = vscode.window.createQuickPick<PickItem>();
  pick.title = 'codeseek';
  pick.placeholder = 'Ask about the code: a question, an identifier, "who calls X", "what breaks if I change X"';
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  const scheduler = new SearchScheduler<SemanticSearchResult>(
    settings.debounceMs,
    (query) => {
      const source = new vscode.CancellationTokenSource();
      const params = searchParams(query, { limit: settings.searchLimit, preset: settings.preset });
      const result = client.sendRequest<SemanticSearchResult>(SEMANTIC_SEARCH_METHOD, params, source.token);
      return { result, cancel: source };
    },
    {
      onResult: (_query, result) => {
        pick.title = `codeseek · ${resultSummary(result)}`;
        pick.items = toPickItems(toDisplayItems(result));
      },
      onError: (_query, error) => {
        pick.title = 'codeseek';
        pick.items = [{ label: '$(error) search failed', detail: errorText(error), alwaysShow: true }];
      },
      onBusy: (busy) => {
        pick.busy = busy;
      },
    },
  );
  pick.onDidChangeValue((value) => scheduler.push(value));
  pick.onDidAccept(() => {
    const chosen = pick.selectedItems[0]?.target;
    if (chosen !== undefined) {
      pick.hide();
      void openLocation(chosen);
    }
  });
  pick.onDidHide(() => {
    scheduler.dispose();
    pick.dispose();
  });
  pick.show();
  if (initial.trim().length > 0) {
    pick.value = initial;
    scheduler.push(initial);
  }
}

/** A fixed list of results (callers, impact); opens the chosen one. */
export async function showResultsPick(title: string, items: readonly DisplayItem[]): Promise<void> {
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`${title}: nothing found`);
    return;
  }
  const chosen = await vscode.window.showQuickPick(toPickItems(items), {
    title,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (chosen?.target !== undefined) {
    await openLocation(chosen.target);
  }
}
