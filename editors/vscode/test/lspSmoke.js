'use strict';
/**
 * Without VS Code: find loopc the way the extension does (findServer.js),
 * start `<loopc> lsp` the way the extension's ServerOptions do (stdio, args
 * ["lsp"]), and talk to it with vscode-languageserver-protocol — the
 * protocol package vscode-languageclient is built on — sending the client
 * capabilities that the locked vscode-languageclient itself computes
 * (test/vscodeStub.js).
 *
 * Usage: node test/lspSmoke.js '<json>' where json is
 *   {"find": {...findLoopc options...}, "files": ["/abs/a.yaml", ...],
 *    "settings": {...the "loopc" section to answer workspace/configuration with...},
 *    "awaitSettings": true|false}
 * Prints one JSON object: {"found": ..., "serverInfo": ..., "pull": bool,
 * "debugInfo": {...}, "diagnostics": {path: [{code, severity, range}]},
 * "formatted": {path: text after "Format Document"},
 * "configurationRequests": n, "refreshes": n, "exitCode": n, "stderr": "..."}.
 * Exit 1 on failure.
 */
const cp = require('child_process');
const fs = require('fs');
const url = require('url');
const rpc = require('vscode-languageserver-protocol/node');
const { findLoopc } = require('../findServer');
const stub = require('./vscodeStub');

/** `text` with the LSP TextEdits applied (UTF-16 columns, as JavaScript strings count). */
function applyEdits(text, edits) {
  const starts = [0];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\r' && text[i + 1] === '\n') continue;
    if (text[i] === '\n' || text[i] === '\r') starts.push(i + 1);
  }
  const offset = (p) => (p.line >= starts.length ? text.length : Math.min(starts[p.line] + p.character, text.length));
  const sorted = edits.map((e) => [offset(e.range.start), offset(e.range.end), e.newText]).sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [a, b, t] of sorted) out = out.slice(0, a) + t + out.slice(b);
  return out;
}

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
  // Exactly what the locked vscode-languageclient declares (pulled
  // diagnostics, UTF-16, workspace/configuration, refresh support, ...).
  stub.install('1.82.0');
  const capabilities = stub.languageClientCapabilities();
  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: 'Visual Studio Code', version: '1.82.0' },
    rootUri: folders[0] ? url.pathToFileURL(folders[0]).href : null,
    workspaceFolders: folders.map((f) => ({ uri: url.pathToFileURL(f).href, name: f })),
    capabilities,
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
  // "Format Document": the edits applied to the text, as VS Code applies them.
  const formatted = {};
  for (const file of args.files) {
    const text = fs.readFileSync(file, 'utf8');
    const edits = await conn.sendRequest(rpc.DocumentFormattingRequest.type, {
      textDocument: { uri: url.pathToFileURL(file).href }, options: { tabSize: 2, insertSpaces: true },
    });
    formatted[file] = applyEdits(text, edits || []);
  }
  await conn.sendRequest(rpc.ShutdownRequest.type);
  await conn.sendNotification(rpc.ExitNotification.type);
  const code = await new Promise((resolve) => proc.on('exit', resolve));
  conn.dispose();
  process.stdout.write(JSON.stringify({
    found, serverInfo: init.serverInfo, capabilities, pull: Boolean(init.capabilities.diagnosticProvider),
    debugInfo: info, diagnostics, formatted, configurationRequests, refreshes, exitCode: code, stderr,
  }));
}

const timer = setTimeout(() => { process.stderr.write('lspSmoke: timed out\n'); process.exit(1); }, 60000);
main().then(() => clearTimeout(timer), (e) => {
  process.stderr.write(`lspSmoke: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
