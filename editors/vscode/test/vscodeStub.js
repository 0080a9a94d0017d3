'use strict';
/**
 * A stand-in for the `vscode` module, for loading extension code under plain
 * Node: every property is a callable, constructible stand-in, `version` is
 * the given VS Code version. It implements nothing; it only lets modules
 * that `require('vscode')` load (and lets vscode-languageclient compute the
 * capabilities it declares, which depend on no editor state).
 */
const Module = require('module');

function install(version = '1.82.0') {
  const handler = {
    get(t, p) {
      if (p === '__esModule' || p === 'then') return undefined;
      if (p === Symbol.toPrimitive) return () => 0;
      if (p === Symbol.iterator) return function* empty() {};
      if (!(p in t)) t[p] = new Proxy(function stand() {}, handler);
      return t[p];
    },
    construct() { return new Proxy({}, handler); },
    apply() { return new Proxy(function stand() {}, handler); },
  };
  const target = function vscode() {};
  target.version = version;
  const stub = new Proxy(target, handler);
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (req, ...rest) {
    return req === 'vscode' ? 'vscode-stand-in' : resolve.call(this, req, ...rest);
  };
  require.cache['vscode-stand-in'] = { id: 'vscode', filename: 'vscode-stand-in', loaded: true, exports: stub };
  return stub;
}

/**
 * The ClientCapabilities the locked vscode-languageclient sends in
 * `initialize` for a client like the extension's (its features' own
 * `fillClientCapabilities`, through the client's `computeClientCapabilities`,
 * an internal method of vscode-languageclient 9). Call install() first.
 */
function languageClientCapabilities() {
  const { LanguageClient } = require('vscode-languageclient/node');
  const client = new LanguageClient('loopc', 'loopc', { command: 'loopc', args: ['lsp'] },
    { documentSelector: [{ scheme: 'file', language: 'yaml' }] });
  return JSON.parse(JSON.stringify(client.computeClientCapabilities()));
}

module.exports = { install, languageClientCapabilities };
