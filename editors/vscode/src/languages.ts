/**
 * Which files the extension serves: the VS Code language ids of the files codeseek indexes (the
 * document selector: hover and navigation only there) and the file extensions behind the
 * `workspaceContains` activation events in package.json (the extension starts only in a workspace
 * with such files). Pure (no `vscode` import): the Node test checks package.json against it.
 */

/** VS Code language ids whose files codeseek parses with a grammar. */
export const INDEXED_LANGUAGE_IDS = [
  'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust', 'java', 'c',
  'cpp', 'csharp', 'ruby', 'php', 'kotlin', 'lua', 'shellscript', 'scala', 'swift', 'haskell', 'zig',
] as const;

/** File extensions (without the dot) that activate the extension when a workspace contains one. */
export const ACTIVATION_EXTENSIONS = [
  'py', 'js', 'mjs', 'cjs', 'jsx', 'ts', 'mts', 'cts', 'tsx', 'go', 'rs', 'java', 'c', 'h', 'cc', 'cpp',
  'hpp', 'cs', 'rb', 'php', 'kt', 'lua', 'sh', 'scala', 'swift', 'hs', 'zig',
] as const;

/** The `activationEvents` entries package.json must carry (one glob: VS Code searches once). */
export function activationEvents(): string[] {
  return [`workspaceContains:**/*.{${ACTIVATION_EXTENSIONS.join(',')}}`];
}

/** The language client's document selector: files on disk of an indexed language. */
export function documentSelector(): { scheme: string; language: string }[] {
  return INDEXED_LANGUAGE_IDS.map((language) => ({ scheme: 'file', language }));
}
