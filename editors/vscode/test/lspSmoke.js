'use strict';
/**
 * Without VS Code: find loopc the way the extension does (findServer.js),
 * start `<loopc> lsp` the way the extension's ServerOptions do (stdio, args
 * ["lsp"]), and talk to it with vscode-languageserver-protocol — the
 * protocol package vscode-languageclient is built on — declaring pulled
 * diagnostics and workspace/configuration as VS Code does.
 *
 * Usage: node test/lspSmoke.js '<json>' where json is
 *   {"find": {...findLoopc options...}, "files": ["/abs/a.yaml", ...],
 *    "settings": {...the "loopc" section to answer workspace/configuration with...},
 *    "awaitSettings": true|false}
 * Prints one JSON object: {"found": ..., "serverInfo": ..., "pull": bool,
 * "debugInfo": {...}, "diagnostics": {path: [{code, severity, range}]},
 * "configurationRequests": n, "refreshes": n, "exitCode": n, "stderr": "..."}.
 * Exit 1 on failure.
 */
const cp = require('child_process');
const fs = require('fs');
const url = require('url');
const rpc = require('vscode-languageserver-protocol/node');
const { findLoopc } = require('../findServer');

async function main() {
  const args = JSON.parse(process.argv[2]);
  const found = findLoopc(args.find);
  if (!found.command) throw new Error(found.error);
  const folders = args.find.workspaceFolders || [];
  const proc = cp.spawn(found.command, ['lsp'], { cwd: folders[0], stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createProtocolConnection(
    new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  let configurationRequests = 0;
  conn.onRequest(rpc.ConfigurationRequest.type, (p) => {
    configurationRequests += 1;
    return p.items.map((it) => (it.section === 'loopc' ? args.settings || {} : null));
  });
  conn.onRequest(rpc.RegistrationRequest.type, () => null);
  let refreshes = 0;
  conn.onRequest(rpc.DiagnosticRefreshRequest.type, () => { refreshes += 1; return null; });
  conn.onNotification(rpc.LogMessageNotification.type, () => {});
  conn.listen();
  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: 'Visual Studio Code', version: '1.82.0' },
    rootUri: folders[0] ? url.pathToFileURL(folders[0]).href : null,
    workspaceFolders: folders.map((f) => ({ uri: url.pathToFileURL(f).href, name: f })),
    capabilities: {
      general: { positionEncodings: ['utf-16'] },
      workspace: {
        configuration: true,
        didChangeConfiguration: { dynamicRegistration: true },
        didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
        diagnostics: { refreshSupport: true },
        workspaceFolders: true,
      },
      textDocument: {
        synchronization: { dynamicRegistration: true, didSave: true },
        diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
        publishDiagnostics: { relatedInformation: true, versionSupport: false },
      },
    },
  });
  await conn.sendNotification(rpc.InitializedNotification.type, {});
  await conn.sendNotification(rpc.DidChangeConfigurationNotification.type, { settings: { loopc: args.settings || {} } });
  // "awaitSettings": open the documents only once the server reports (in
  // loopc.debugInfo) the severity overrides it was given; without it the
  // documents are opened at once, as VS Code opens them.
  let info = null;
  for (let i = 0; i < 100; i += 1) {
    info = await conn.sendRequest(rpc.ExecuteCommandRequest.type, { command: 'loopc.debugInfo', arguments: [] });
    const want = Object.keys((args.settings || {}).severity || {}).length;
    if (!args.awaitSettings || Object.keys(info.settings.severity).length === want) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const diagnostics = {};
  const pullAll = async () => {
    for (const file of args.files) {
      const uri = url.pathToFileURL(file).href;
      const report = await conn.sendRequest(rpc.DocumentDiagnosticRequest.type, { textDocument: { uri } });
      diagnostics[file] = (report.items || []).map((d) => ({ code: d.code, severity: d.severity, range: d.range }));
    }
  };
  for (const file of args.files) {
    await conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
      textDocument: { uri: url.pathToFileURL(file).href, languageId: 'yaml', version: 1, text: fs.readFileSync(file, 'utf8') },
    });
  }
  // As VS Code does: pull, and pull again after each workspace/diagnostic/refresh
  // (the server sends one when the settings it read change the result).
  let seen = -1;
  for (let round = 0; round < 20 && seen !== refreshes; round += 1) {
    seen = refreshes;
    await pullAll();
    await new Promise((r) => setTimeout(r, 300));
  }
  await conn.sendRequest(rpc.ShutdownRequest.type);
  await conn.sendNotification(rpc.ExitNotification.type);
  const code = await new Promise((resolve) => proc.on('exit', resolve));
  conn.dispose();
  process.stdout.write(JSON.stringify({
    found, serverInfo: init.serverInfo, pull: Boolean(init.capabilities.diagnosticProvider),
    debugInfo: info, diagnostics, configurationRequests, refreshes, exitCode: code, stderr,
  }));
}

const timer = setTimeout(() => { process.stderr.write('lspSmoke: timed out\n'); process.exit(1); }, 60000);
main().then(() => clearTimeout(timer), (e) => {
  process.stderr.write(`lspSmoke: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
