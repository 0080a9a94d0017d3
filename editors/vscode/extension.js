'use strict';
/**
 * The loopc extension: starts `loopc lsp` over stdio and attaches it to
 * every YAML file on disk; the server itself decides by content which of
 * them are loop plans (docs/editors.md#which-files-are-plans) and
 * answers nothing for the others.
 */
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const { findLoopc } = require('./findServer');

/** @type {LanguageClient | undefined} */
let client;
/** @type {string | undefined} the executable the running client was started with */
let running;
/** @type {vscode.OutputChannel} */
let output;
/** Serialises start/stop so that quick setting changes do not start two servers. */
let queue = Promise.resolve();

function folderPaths() {
  return (vscode.workspace.workspaceFolders || [])
    .filter((f) => f.uri.scheme === 'file')
    .map((f) => f.uri.fsPath);
}

function resolveServer() {
  return findLoopc({
    setting: vscode.workspace.getConfiguration('loopc').get('path', ''),
    workspaceFolders: folderPaths(),
    trusted: vscode.workspace.isTrusted,
    env: process.env,
  });
}

async function stop() {
  const c = client;
  client = undefined;
  running = undefined;
  if (c) {
    try {
      await c.stop();
    } catch (e) {
      output.appendLine(`stopping the server: ${e && e.message ? e.message : e}`);
    }
  }
}

async function start() {
  const found = resolveServer();
  output.appendLine(`looked for loopc: ${found.tried.join(', ')}`);
  if (!found.command) {
    output.appendLine(found.error);
    // Not awaited: activation must not wait for the user to dismiss the message.
    vscode.window.showErrorMessage(found.error, 'Open Settings', 'Show Output').then((choice) => {
      if (choice === 'Open Settings') {
        vscode.commands.executeCommand('workbench.action.openSettings', 'loopc.path');
      } else if (choice === 'Show Output') {
        output.show(true);
      }
    });
    return;
  }
  output.appendLine(`starting ${found.command} lsp (found ${found.source === 'path' ? 'on PATH' : `by ${found.source}`})`);
  const folders = folderPaths();
  /** @type {import('vscode-languageclient/node').ServerOptions} */
  const serverOptions = {
    command: found.command,
    args: ['lsp'],
    options: { cwd: folders[0], env: process.env },
  };
  /** @type {import('vscode-languageclient/node').LanguageClientOptions} */
  const clientOptions = {
    // Every YAML file on disk; the server answers only for plans (by content).
    documentSelector: [{ scheme: 'file', language: 'yaml' }],
    // Sends workspace/didChangeConfiguration when a loopc.* setting changes;
    // the server then re-reads section "loopc" with workspace/configuration.
    synchronize: { configurationSection: 'loopc' },
    outputChannel: output,
  };
  const c = new LanguageClient('loopc', 'loopc', serverOptions, clientOptions);
  try {
    await c.start();
  } catch (e) {
    const msg = `loopc lsp (${found.command}) did not start: ${e && e.message ? e.message : e}`;
    output.appendLine(msg);
    vscode.window.showErrorMessage(msg, 'Show Output').then((choice) => {
      if (choice) output.show(true);
    });
    try {
      await c.dispose();
    } catch {
      // already gone
    }
    return;
  }
  client = c;
  running = found.command;
}

/** Queue `fn` after every earlier start/stop. */
function enqueue(fn) {
  queue = queue.then(fn, fn).catch((e) => output.appendLine(String(e && e.stack ? e.stack : e)));
  return queue;
}

function restart() {
  return enqueue(async () => {
    await stop();
    await start();
  });
}

/** Restart only when the executable that would be found now is another one. */
function restartIfMoved() {
  return enqueue(async () => {
    const found = resolveServer();
    if (found.command !== running) {
      await stop();
      await start();
    }
  });
}

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  output = vscode.window.createOutputChannel('loopc');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('loopc.restartServer', () => restart()),
    vscode.commands.registerCommand('loopc.showOutput', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('loopc.path')) restart();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => restartIfMoved()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => restartIfMoved()),
  );
  return enqueue(start);
}

function deactivate() {
  return enqueue(stop);
}

module.exports = { activate, deactivate };
