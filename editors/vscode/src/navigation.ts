/**
 * "codeseek: Show Callers" and "codeseek: Show Impact" on the symbol under the cursor.
 *
 * Callers come from the server's call hierarchy (prepareCallHierarchy + incomingCalls); where it has
 * no item at the cursor they fall back to a find_references search for the identifier. Impact is an
 * impact_analysis search (the definitions that depend on the symbol, nearest first).
 */

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

import { CallHierarchyIncomingCall, CallHierarchyItem, DisplayItem, incomingCallsToItems, toDisplayItems } from './display';
import {
  INCOMING_CALLS_METHOD,
  PREPARE_CALL_HIERARCHY_METHOD,
  SEMANTIC_SEARCH_METHOD,
  SemanticSearchResult,
  callersParams,
  impactParams,
  incomingCallsParams,
  positionParams,
  symbolAt,
} from './requests';

export interface CursorSymbol {
  uri: string;
  position: vscode.Position;
  symbol: string;
}

/** The identifier under the cursor of the active editor, or an error message for the user. */
export function cursorSymbol(): CursorSymbol | string {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    return 'codeseek: open a file and put the cursor on a symbol first';
  }
  const position = editor.selection.active;
  const selected = editor.document.getText(editor.selection).trim();
  const symbol = selected.length > 0 && !selected.includes('\n') ? selected : symbolAt(editor.document.lineAt(position.line).text, position.character);
  if (symbol === null) {
    return 'codeseek: there is no symbol under the cursor';
  }
  return { uri: editor.document.uri.toString(), position, symbol };
}

/** Callers of the symbol at `at`: call hierarchy first, find_references search as the fallback. */
export async function findCallers(client: LanguageClient, at: CursorSymbol, roots: readonly string[], limit: number): Promise<DisplayItem[]> {
  const prepared = await client.sendRequest<CallHierarchyItem[] | null>(
    PREPARE_CALL_HIERARCHY_METHOD,
    positionParams(at.uri, { line: at.position.line, character: at.position.character }),
  );
  if (prepared && prepared.length > 0) {
    const calls = await client.sendRequest<CallHierarchyIncomingCall[] | null>(INCOMING_CALLS_METHOD, incomingCallsParams(prepared[0] as CallHierarchyItem));
    const items = incomingCallsToItems(calls ?? [], roots);
    if (items.length > 0) {
      return items;
    }
  }
  const result = await client.sendRequest<SemanticSearchResult>(SEMANTIC_SEARCH_METHOD, callersParams(at.symbol, limit));
  return toDisplayItems(result);
}

/** Definitions affected by changing the symbol at `at`. */
export async function findImpact(client: LanguageClient, at: CursorSymbol, limit: number): Promise<DisplayItem[]> {
  const result = await client.sendRequest<SemanticSearchResult>(SEMANTIC_SEARCH_METHOD, impactParams(at.symbol, limit));
  return toDisplayItems(result);
}
