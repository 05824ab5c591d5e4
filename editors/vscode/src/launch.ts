/**
 * How the extension starts `codeseek serve`, and the message it shows when it cannot.
 *
 * `codeseek.pythonPath` (an interpreter with codeseek installed) wins over `codeseek.serverPath`
 * (the `codeseek` console script). The executable is looked up before the language client starts,
 * so a missing or wrong path gives a message that names the setting to fix instead of a bare
 * ENOENT. Pure (no `vscode` import): the Node test starts the server through this same function.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

import type { CodeseekSettings } from './settings';

/** The server could not be started; `setting` names the setting that chose the executable. */
export class ServerLaunchError extends Error {
  constructor(
    message: string,
    readonly setting: string,
  ) {
    super(message);
    this.name = 'ServerLaunchError';
  }
}

export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The setting that chose `command`, named in error messages. */
  setting: 'codeseek.serverPath' | 'codeseek.pythonPath';
}

/** The python module whose `main()` is the `codeseek` console script. */
export const CLI_MODULE = 'lsp_server.cli';

/** Command line and environment for `codeseek serve` under the given settings. */
export function launchSpec(
  settings: Pick<CodeseekSettings, 'serverPath' | 'pythonPath' | 'serverArgs' | 'serverEnv'>,
): LaunchSpec {
  const extra = [...settings.serverArgs];
  const env = { ...settings.serverEnv };
  if (settings.pythonPath) {
    return { command: settings.pythonPath, args: ['-m', CLI_MODULE, 'serve', ...extra], env, setting: 'codeseek.pythonPath' };
  }
  return { command: settings.serverPath, args: ['serve', ...extra], env, setting: 'codeseek.serverPath' };
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of `command`: a path with a separator is resolved against `cwd` (the first
 * workspace folder), a bare name is looked up on `PATH`. Null when there is no such executable.
 */
export function findExecutable(command: string, cwd: string | undefined, envPath: string | undefined): string | null {
  const expanded = command.startsWith('~/') ? path.join(process.env.HOME ?? '', command.slice(2)) : command;
  const suffixes = process.platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  if (expanded.includes('/') || expanded.includes(path.sep)) {
    const base = path.resolve(cwd ?? process.cwd(), expanded);
    return suffixes.map((s) => base + s).find(isExecutableFile) ?? null;
  }
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const hit = suffixes.map((s) => path.join(dir, expanded + s)).find(isExecutableFile);
    if (hit) {
      return hit;
    }
  }
  return null;
}

/**
 * `spec` with its command resolved to an absolute executable.
 * @throws ServerLaunchError naming the responsible setting when the executable does not exist.
 */
export function resolveLaunch(spec: LaunchSpec, cwd: string | undefined, envPath: string | undefined): LaunchSpec {
  const found = findExecutable(spec.command, cwd, envPath);
  if (found === null) {
    const what = spec.setting === 'codeseek.pythonPath' ? 'Python interpreter' : 'codeseek executable';
    const where = spec.command.includes('/') || spec.command.includes(path.sep) ? 'does not exist or is not executable' : 'was not found on PATH';
    throw new ServerLaunchError(
      `codeseek: cannot start the language server: the ${what} "${spec.command}" ${where}. ` +
        `Set "${spec.setting}" to ${spec.setting === 'codeseek.pythonPath' ? 'a Python with codeseek installed' : 'the path of the codeseek executable (e.g. .venv/bin/codeseek)'}.`,
      spec.setting,
    );
  }
  return { ...spec, command: found };
}

/** The message shown when the server process starts but the client cannot talk to it. */
export function startFailureMessage(spec: LaunchSpec, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return (
    `codeseek: the language server "${[spec.command, ...spec.args].join(' ')}" failed to start (${reason}). ` +
    `Check "${spec.setting}" and the "codeseek" output channel.`
  );
}
