/**
 * The "Results" view in the codeseek panel: every search, callers and impact answer is listed here,
 * grouped by file, and stays until the next one (a QuickPick disappears). Hovering a row previews its
 * code; clicking opens it in a preview editor at the definition's name line with the span revealed.
 */

import * as vscode from 'vscode';

import type { DisplayItem } from './display';
import { ResultGroup, groupByFile, previewMarkdown, rowText, viewMessage } from './resultsTree';

export const VIEW_ID = 'codeseek.results';
export const OPEN_COMMAND = 'codeseek.openResult';

type Node = ResultGroup | DisplayItem;

function isGroup(node: Node): node is ResultGroup {
  return (node as ResultGroup).items !== undefined;
}

function languageOf(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1);
  const names: Record<string, string> = { py: 'python', ts: 'typescript', tsx: 'tsx', js: 'javascript', rs: 'rust', rb: 'ruby', kt: 'kotlin', cs: 'csharp', sh: 'bash', md: 'markdown' };
  return names[ext] ?? ext;
}

/** Open `item` in a preview editor, cursor at its name line, its whole span revealed. */
export async function openResult(item: DisplayItem, preview = true): Promise<void> {
  const uri = vscode.Uri.parse(item.uri);
  const at = new vscode.Position(item.range.start.line, item.range.start.character);
  const editor = await vscode.window.showTextDocument(uri, { selection: new vscode.Range(at, at), preview });
  const span = item.span ?? item.range;
  const end = new vscode.Position(span.end.line, span.end.character);
  const start = new vscode.Position(span.start.line, span.start.character);
  editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

export class ResultsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private groups: ResultGroup[] = [];
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;

  constructor() {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
  }

  /** Replace the listed answer and bring the view forward. */
  async show(title: string, items: readonly DisplayItem[]): Promise<void> {
    this.groups = groupByFile(items);
    this.view.message = viewMessage(title, items.length);
    this.changed.fire(undefined);
    await vscode.commands.executeCommand('setContext', 'codeseek.hasResults', items.length > 0);
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  clear(): void {
    this.groups = [];
    this.view.message = undefined;
    this.changed.fire(undefined);
    void vscode.commands.executeCommand('setContext', 'codeseek.hasResults', false);
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) {
      return this.groups;
    }
    return isGroup(node) ? node.items : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (isGroup(node)) {
      const item = new vscode.TreeItem(vscode.Uri.parse(node.uri), vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.path} · ${node.items.length}`;
      return item;
    }
    const text = rowText(node);
    const item = new vscode.TreeItem(text.label, vscode.TreeItemCollapsibleState.None);
    item.description = text.description;
    item.tooltip = new vscode.MarkdownString(previewMarkdown(node, languageOf(node.path)));
    item.iconPath = new vscode.ThemeIcon(node.label.match(/^\$\(([\w-]+)\)/)?.[1] ?? 'symbol-misc');
    item.command = { command: OPEN_COMMAND, title: 'Open', arguments: [node] };
    return item;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
