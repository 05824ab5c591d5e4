/**
 * The QuickPicks: "codeseek: Semantic Search" (searches as you type, debounced, newest answer wins;
 * choosing a row opens it and keeps the whole answer in the Results view) and a fixed results list.
 */

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

import { DisplayItem, resultSummary, toDisplayItems } from './display';
import { ResultsView, openResult } from './resultsView';
import { SEMANTIC_SEARCH_METHOD, SemanticSearchResult, searchParams, serverPresets } from './requests';
import { SearchScheduler } from './scheduler';
import { CodeseekSettings } from './settings';

interface PickItem extends vscode.QuickPickItem {
  target?: DisplayItem;
}

/** Open `item`'s file at the definition's name line, its span revealed. */
export async function openLocation(item: DisplayItem): Promise<void> {
  await openResult(item, false);
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
export function showSearchPick(
  client: LanguageClient,
  settings: CodeseekSettings,
  initial: string,
  results?: ResultsView,
): void {
  let last: { query: string; items: DisplayItem[] } | undefined;
  const pick = vscode.window.createQuickPick<PickItem>();
  pick.title = 'codeseek';
  pick.placeholder = 'Ask about the code: a question, an identifier, "who calls X", "what breaks if I change X"';
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  const scheduler = new SearchScheduler<SemanticSearchResult>(
    settings.debounceMs,
    (query) => {
      const source = new vscode.CancellationTokenSource();
      const presets = serverPresets(client.initializeResult?.capabilities);
      const params = searchParams(query, { limit: settings.searchLimit, preset: settings.preset, presets });
      const result = client.sendRequest<SemanticSearchResult>(SEMANTIC_SEARCH_METHOD, params, source.token);
      return { result, cancel: source };
    },
    {
      onResult: (query, result) => {
        pick.title = `codeseek · ${resultSummary(result)}`;
        const items = toDisplayItems(result);
        last = { query, items };
        pick.items = toPickItems(items);
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
      if (results !== undefined && last !== undefined) {
        void results.show(`"${last.query}"`, last.items); // the answer stays in the Results view
      }
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
