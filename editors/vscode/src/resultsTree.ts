/**
 * The shape of the "codeseek: Results" tree (the panel's search-results view): results grouped by
 * file in the server's order, each row naming the symbol and its line, with the snippet as a code
 * preview. Pure (no `vscode` import): the Node test checks the grouping and the rows.
 */

import type { DisplayItem } from './display';

export interface ResultGroup {
  path: string;
  uri: string;
  items: DisplayItem[];
}

/** Results grouped by file; files in order of their best result, results in server order. */
export function groupByFile(items: readonly DisplayItem[]): ResultGroup[] {
  const groups = new Map<string, ResultGroup>();
  for (const item of items) {
    let group = groups.get(item.uri);
    if (group === undefined) {
      group = { path: item.path, uri: item.uri, items: [] };
      groups.set(item.uri, group);
    }
    group.items.push(item);
  }
  return [...groups.values()];
}

/** A result row: `name` as the label, `line N · kind` as the description. */
export function rowText(item: DisplayItem): { label: string; description: string } {
  const name = item.name ?? item.label.replace(/^\$\([\w-]+\)\s*/, '');
  const kind = item.kind ? ` · ${item.kind}` : '';
  return { label: name, description: `line ${item.line}${kind}` };
}

/** The preview shown for a row: its snippet as a fenced code block under `path:line`. */
export function previewMarkdown(item: DisplayItem, language: string): string {
  const fence = '```';
  const snippet = (item.snippet ?? '').replace(/```/g, '``\u200b`');
  return `**${item.path}:${item.line}**\n\n${fence}${language}\n${snippet}\n${fence}`;
}

/** The view's message line: the title and the result count. */
export function viewMessage(title: string, count: number): string {
  return `${title} · ${count} result${count === 1 ? '' : 's'}`;
}
