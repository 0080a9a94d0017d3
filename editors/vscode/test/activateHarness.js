'use strict';
/**
 * Without VS Code: run extension.js's activate/deactivate against a stand-in
 * `vscode` API and a recording stand-in for vscode-languageclient's
 * LanguageClient, and report what the extension did — which executable it
 * passed to the client, with which options, what it told the user, when it
 * restarted. It says nothing about the real VS Code or the real
 * LanguageClient (README.md#what-is-tested-without-vs-code-and-what-is-not).
 *
 * Usage: node test/activateHarness.js '<json>' with
 *   {"folders": ["/ws"], "path": "<PATH for the lookup>", "explicit": "/x/loopc"}
 * Prints {"scenarios": {...}} as JSON.
 */
const Module = require('module');
const path = require('path');

const args = JSON.parse(process.argv[2]);
process.env.PATH = args.path;

const state = {};
function reset(over) {
  Object.assign(state, {
    config: { path: '' }, folders: [], trusted: true, failStart: false,
    messages: [], commands: {}, listeners: { config: [], folders: [], trust: [] },
    clients: [], output: null,
  }, over);
}

const disposable = { dispose() {} };
const vscode = {
  workspace: {
    getConfiguration(section) {
      if (section !== 'loopc') throw new Error(`unexpected section ${section}`);
      return { get: (key, dflt) => (key in state.config ? state.config[key] : dflt) };
    },
    get workspaceFolders() {
      return state.folders.length ? state.folders.map((f) => ({ uri: { scheme: 'file', fsPath: f } })) : undefined;
    },
    get isTrusted() { return state.trusted; },
    onDidChangeConfiguration(fn) { state.listeners.config.push(fn); return disposable; },
    onDidChangeWorkspaceFolders(fn) { state.listeners.folders.push(fn); return disposable; },
    onDidGrantWorkspaceTrust(fn) { state.listeners.trust.push(fn); return disposable; },
  },
  window: {
    createOutputChannel(name) {
      state.output = { name, lines: [], shown: 0, appendLine(l) { this.lines.push(l); }, show() { this.shown += 1; }, dispose() {} };
      return state.output;
    },
    showErrorMessage(message, ...items) {
      state.messages.push({ message, items });
      return Promise.resolve(undefined);
    },
  },
  commands: {
    registerCommand(id, fn) { state.commands[id] = fn; return disposable; },
    executeCommand() { return Promise.resolve(); },
  },
};

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    this.record = { id, name, serverOptions, clientOptions, started: false, stopped: false };
    state.clients.push(this.record);
  }
  async start() {
    if (state.failStart) throw new Error('spawn EACCES');
    this.record.started = true;
  }
  async stop() { this.record.stopped = true; }
  async dispose() { this.record.disposed = true; }
}

const fakes = { vscode, 'vscode-languageclient/node': { LanguageClient } };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (req, ...rest) {
  return req in fakes ? `fake:${req}` : resolve.call(this, req, ...rest);
};
for (const [name, exports] of Object.entries(fakes)) {
  require.cache[`fake:${name}`] = { id: name, filename: name, loaded: true, exports };
}
const extPath = path.join(__dirname, '..', 'extension.js');

function freshExtension() {
  delete require.cache[require.resolve(extPath)];
  return require(extPath);
}

/** Let every pending promise chain (the extension's start/stop queue) run. */
async function settle() {
  for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
}

function fire(kind, event) {
  for (const fn of state.listeners[kind]) fn(event);
}

function summary() {
  return JSON.parse(JSON.stringify({
    clients: state.clients.map((c) => ({
      id: c.id, name: c.name, command: c.serverOptions.command, args: c.serverOptions.args,
      cwd: c.serverOptions.options && c.serverOptions.options.cwd,
      documentSelector: c.clientOptions.documentSelector,
      configurationSection: c.clientOptions.synchronize && c.clientOptions.synchronize.configurationSection,
      outputChannel: c.clientOptions.outputChannel === state.output,
      started: c.started, stopped: c.stopped,
    })),
    messages: state.messages,
    commands: Object.keys(state.commands).sort(),
    output: state.output ? state.output.lines : [],
  }));
}

async function main() {
  const out = {};
  const context = () => ({ subscriptions: [] });

  // The workspace's virtual environment, then a loopc.path change, then deactivation.
  reset({ folders: args.folders });
  let ext = freshExtension();
  await ext.activate(context());
  const afterActivate = summary();
  state.config.path = args.explicit;
  fire('config', { affectsConfiguration: (s) => s === 'loopc.path' || s === 'loopc' });
  await settle();
  const afterPathChange = summary();
  fire('config', { affectsConfiguration: (s) => s === 'loopc.severity' || s === 'loopc' });
  await settle();
  const afterOtherChange = summary();
  await ext.deactivate();
  out.venvThenSetting = { afterActivate, afterPathChange, afterOtherChange, afterDeactivate: summary() };

  // Nothing to start: an error message with its two actions, no client.
  reset({ folders: [] });
  process.env.PATH = '';
  ext = freshExtension();
  await ext.activate(context());
  out.notFound = summary();
  process.env.PATH = args.path;

  // Restricted Mode: PATH only; trusting the workspace switches to its venv.
  reset({ folders: args.folders, trusted: false });
  ext = freshExtension();
  await ext.activate(context());
  const untrusted = summary();
  state.trusted = true;
  fire('trust', undefined);
  await settle();
  out.trust = { untrusted, trusted: summary() };
  await ext.deactivate();

  // A server that does not start: a message, and the restart command tries again.
  reset({ folders: args.folders, failStart: true });
  ext = freshExtension();
  await ext.activate(context());
  const failed = summary();
  state.failStart = false;
  await state.commands['loopc.restartServer']();
  await settle();
  out.startFails = { failed, restarted: summary() };
  await ext.deactivate();

  process.stdout.write(JSON.stringify({ scenarios: out }));
}

main().catch((e) => {
  process.stderr.write(`activateHarness: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
