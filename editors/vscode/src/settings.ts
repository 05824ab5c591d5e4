/**
 * The extension's settings (section `codeseek`) and the server options derived from them.
 *
 * The server options (model, indexDir, excludes, maxFileSize, preset, hover, embeddings) are sent
 * as `initializationOptions` and answered again for `workspace/configuration` section `codeseek`.
 * Pure: values come through a getter so the Node test can build the same options without VS Code.
 */


export interface CodeseekSettings {
  serverPath: string;
  pythonPath: string;
  serverArgs: string[];
  serverEnv: Record<string, string>;
  model: string;
  indexDir: string;
  excludes: string[];
  maxFileSize: number;
  preset: string;
  hover: boolean;
  embeddings: boolean;
  searchLimit: number;
  debounceMs: number;
}

export const DEFAULT_SETTINGS: Readonly<CodeseekSettings> = Object.freeze({
  serverPath: 'codeseek',
  pythonPath: '',
  serverArgs: [],
  serverEnv: {},
  model: '',
  indexDir: '',
  excludes: [],
  maxFileSize: 1_000_000,
  preset: 'default',
  hover: true,
  embeddings: true,
  searchLimit: 30,
  debounceMs: 200,
});

/** The options the server reads from initializationOptions / workspace configuration. */
export interface ServerOptionsPayload {
  model?: string;
  indexDir?: string;
  excludes: string[];
  maxFileSize: number;
  preset: string;
  hover: boolean;
  embeddings: boolean;
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value.trim() : fallback;
}

function strList(value: unknown, fallback: readonly string[]): string[] {
  if (!Array.isArray(value)) {
    return [...fallback];
  }
  return value.filter((v): v is string => typeof v === 'string' && v.trim().length > 0).map((v) => v.trim());
}

function int(value: unknown, fallback: number, min: number, max: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : fallback;
}

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function env(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'string') {
        out[k] = v;
      }
    }
  }
  return out;
}

/**
 * Read the settings through `get(key)` (keys relative to the `codeseek` section, e.g. `search.limit`).
 * A value of the wrong type falls back to its default, so a typo in settings.json never stops the
 * extension.
 */
export function readSettings(get: (key: string) => unknown): CodeseekSettings {
  const d = DEFAULT_SETTINGS;
  return {
    serverPath: str(get('serverPath'), d.serverPath) || d.serverPath,
    pythonPath: str(get('pythonPath'), d.pythonPath),
    serverArgs: strList(get('serverArgs'), d.serverArgs),
    serverEnv: env(get('serverEnv')),
    model: str(get('model'), d.model),
    indexDir: str(get('indexDir'), d.indexDir),
    excludes: strList(get('excludes'), d.excludes),
    maxFileSize: int(get('maxFileSize'), d.maxFileSize, 1, Number.MAX_SAFE_INTEGER),
    // Checked against the presets the server advertises when a search is sent (requests.serverPresets).
    preset: str(get('preset'), d.preset) || d.preset,
    hover: bool(get('hover'), d.hover),
    embeddings: bool(get('embeddings'), d.embeddings),
    searchLimit: int(get('search.limit'), d.searchLimit, 1, 200),
    debounceMs: int(get('search.debounceMs'), d.debounceMs, 0, 10_000),
  };
}

/** The server's options: empty model/indexDir are left out so the server uses its own defaults. */
export function serverOptionsPayload(settings: CodeseekSettings): ServerOptionsPayload {
  const payload: ServerOptionsPayload = {
    excludes: [...settings.excludes],
    maxFileSize: settings.maxFileSize,
    preset: settings.preset,
    hover: settings.hover,
    embeddings: settings.embeddings,
  };
  if (settings.model) {
    payload.model = settings.model;
  }
  if (settings.indexDir) {
    payload.indexDir = settings.indexDir;
  }
  return payload;
}
