/**
 * Starting, restarting and stopping `codeseek serve` through vscode-languageclient, and the typed
 * requests the commands send through it. Hover, references, call hierarchy and workspace symbols
 * are the language client's standard features backed by the server.
 */

import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import { WorkDoneProgressValue } from './display';
import { LaunchSpec, ServerLaunchError, launchSpec, resolveLaunch, startFailureMessage } from './launch';
import {
  EXECUTE_COMMAND_METHOD,
  reindexCommandParams,
  statusCommandParams,
} from './requests';
import { CodeseekSettings, readSettings, serverOptionsPayload } from './settings';
import { IndexStatusBar } from './statusBar';
import { documentSelector } from './languages';

/** Settings that change how the server process is started: a change restarts it. */
export const LAUNCH_SETTINGS = ['serverPath', 'pythonPath', 'serverArgs', 'serverEnv'];

export function currentSettings(): CodeseekSettings {
  const config = vscode.workspace.getConfiguration('codeseek');
  return readSettings((key) => config.get(key));
}

export function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

async function offerSettings(message: string, setting: string, output: vscode.OutputChannel): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output');
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', setting);
  } else if (choice === 'Show Output') {
    output.show(true);
  }
}

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private spec: LaunchSpec | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly status: IndexStatusBar,
  ) {}

  /** The running client, or an error the commands show. */
  running(): LanguageClient {
    if (this.client === undefined || this.client.state !== State.Running) {
      throw new Error('the codeseek language server is not running (see the "codeseek" output channel)');
    }
    return this.client;
  }

  async start(): Promise<void> {
    const settings = currentSettings();
    const roots = workspaceRoots();
    let spec: LaunchSpec;
    try {
      spec = resolveLaunch(launchSpec(settings), roots[0], process.env.PATH);
    } catch (error) {
      if (error instanceof ServerLaunchError) {
        this.output.appendLine(error.message);
        this.status.showError(error.message);
        void offerSettings(error.message, error.setting, this.output);
        return;
      }
      throw error;
    }
    this.spec = spec;
    this.output.appendLine(`starting: ${[spec.command, ...spec.args].join(' ')}`);
    const serverOptions: ServerOptions = {
      command: spec.command,
      args: spec.args,
      transport: TransportKind.stdio,
      options: { cwd: roots[0], env: { ...process.env, ...spec.env } },
    };
    const status = this.status;
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(),
      initializationOptions: serverOptionsPayload(settings),
      outputChannel: this.output,
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          status.onProgress(token, params as WorkDoneProgressValue);
          next(token, params);
        },
        workspace: {
          // Answer `workspace/configuration` for section "codeseek" with the same validated options
          // as initializationOptions, not the raw settings object.
          configuration: async (params, token, next) => {
            const raw = await next(params, token);
            if (!Array.isArray(raw)) {
              return raw;
            }
            const options = serverOptionsPayload(currentSettings());
            return params.items.map((item, i) => (item.section === 'codeseek' ? options : raw[i]));
          },
        },
      },
      initializationFailedHandler: (error) => {
        const message = startFailureMessage(spec, error);
        this.status.showError(message);
        void offerSettings(message, spec.setting, this.output);
        return false;
      },
    };
    const client = new LanguageClient('codeseek', 'codeseek', serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      const message = startFailureMessage(spec, error);
      this.output.appendLine(message);
      this.status.showError(message);
      void offerSettings(message, spec.setting, this.output);
      return;
    }
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped) {
        this.status.showError('the codeseek language server stopped; run "codeseek: Restart Server"');
      }
    });
    this.status.watch(() => client.sendRequest(EXECUTE_COMMAND_METHOD, statusCommandParams()));
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.state === State.Running) {
      await client.stop();
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Push changed server options (model, excludes, ...) without restarting. */
  async pushConfiguration(): Promise<void> {
    if (this.client?.state === State.Running) {
      await this.client.sendNotification('workspace/didChangeConfiguration', {
        settings: { codeseek: serverOptionsPayload(currentSettings()) },
      });
    }
  }

  async reindex(): Promise<unknown> {
    return this.running().sendRequest(EXECUTE_COMMAND_METHOD, reindexCommandParams());
  }

  async statusReport(): Promise<unknown> {
    return this.running().sendRequest(EXECUTE_COMMAND_METHOD, statusCommandParams());
  }

  get launch(): LaunchSpec | undefined {
    return this.spec;
  }

  dispose(): void {
    void this.stop();
  }
}
