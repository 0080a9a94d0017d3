'use strict';
/**
 * Which `loopc` executable the extension starts (README.md#which-loopc).
 *
 * No `vscode` import: the extension passes in what VS Code knows (the
 * `loopc.path` setting, the workspace folders, whether the workspace is
 * trusted) so that this module runs, and is tested, under plain Node.
 *
 * Order, first match wins:
 *   1. the `loopc.path` setting, when it is not empty;
 *   2. each workspace folder's virtual environment, `.venv` then `venv`
 *      (`bin/loopc`; on Windows `Scripts\loopc.exe`) — trusted workspaces only;
 *   3. `loopc` on PATH (with PATHEXT on Windows).
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const isexe = require('isexe');
const which = require('which');

/** The virtual-environment folder names looked for in each workspace folder, in order. */
const VENV_DIRS = ['.venv', 'venv'];

/**
 * The executable inside a virtual environment for `platform`.
 * @param {string} venv the environment's folder
 * @param {string} platform a `process.platform` value
 * @returns {string}
 */
function venvExecutable(venv, platform) {
  return platform === 'win32'
    ? path.win32.join(venv, 'Scripts', 'loopc.exe')
    : path.posix.join(venv, 'bin', 'loopc');
}

/** True when `file` is an existing regular file this process may execute. */
function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
  } catch {
    return false;
  }
  return isexe.sync(file, { ignoreErrors: true });
}

/**
 * Expand `~`, `${userHome}` and `${workspaceFolder}` in a `loopc.path` value
 * and make a relative one absolute against the first workspace folder.
 * @returns {{file: string} | {error: string}}
 */
function expandSetting(value, folders, home) {
  let v = value.trim();
  if (v === '~' || v.startsWith('~/') || v.startsWith('~\\')) v = home + v.slice(1);
  v = v.replace(/\$\{userHome\}/g, home);
  if (/\$\{workspaceFolder\}/.test(v)) {
    if (folders.length === 0) {
      return { error: `loopc.path is "${value}", which names \${workspaceFolder}, but no folder is open` };
    }
    v = v.replace(/\$\{workspaceFolder\}/g, folders[0]);
  }
  if (!path.isAbsolute(v)) {
    if (folders.length === 0) {
      return { error: `loopc.path is "${value}", a relative path, but no folder is open to take it from` };
    }
    v = path.resolve(folders[0], v);
  }
  return { file: v };
}

/**
 * Find the `loopc` executable.
 *
 * @param {object} opts
 * @param {string} [opts.setting] the `loopc.path` setting ('' or absent: not set).
 *   A bare name without a path separator (`loopc`, `loopc-dev`) is looked up on PATH.
 * @param {string[]} [opts.workspaceFolders] file-system paths of the open folders, first one first
 * @param {boolean} [opts.trusted] whether the workspace is trusted (default true); an
 *   untrusted workspace's virtual environment is never used
 * @param {object} [opts.env] the environment whose PATH (and PATHEXT) is searched (default process.env)
 * @param {string} [opts.platform] a `process.platform` value (default process.platform)
 * @param {string} [opts.home] the home directory for `~` (default os.homedir())
 * @returns {{command: string, source: 'setting'|'venv'|'path', tried: string[]}
 *         | {command: null, source: null, tried: string[], error: string}}
 *   `tried` lists every candidate looked at, in order (for the output channel);
 *   `error` says why nothing was found. Never throws.
 */
function findLoopc(opts = {}) {
  const setting = typeof opts.setting === 'string' ? opts.setting : '';
  const folders = Array.isArray(opts.workspaceFolders) ? opts.workspaceFolders.filter((f) => typeof f === 'string' && f) : [];
  const trusted = opts.trusted !== false;
  const env = opts.env || process.env;
  const platform = opts.platform || process.platform;
  const home = opts.home || os.homedir();
  const tried = [];
  const envPath = env.PATH ?? env.Path ?? '';
  const onPath = (name) => which.sync(name, { path: envPath, pathExt: env.PATHEXT, nothrow: true });

  if (setting.trim() !== '') {
    const v = setting.trim();
    if (!/[\\/]/.test(v) && !v.startsWith('~') && !v.includes('${')) {
      tried.push(`${v} on PATH (loopc.path)`);
      const found = onPath(v);
      if (found) return { command: found, source: 'setting', tried };
      return { command: null, source: null, tried, error: `loopc.path is "${setting}", but no "${v}" is on PATH` };
    }
    const exp = expandSetting(v, folders, home);
    if (exp.error) return { command: null, source: null, tried, error: exp.error };
    const candidates = [exp.file];
    if (platform === 'win32' && !path.extname(exp.file)) candidates.push(`${exp.file}.exe`);
    for (const c of candidates) {
      tried.push(c);
      if (isExecutableFile(c)) return { command: c, source: 'setting', tried };
    }
    return {
      command: null, source: null, tried,
      error: `loopc.path is "${setting}", but ${exp.file} is not an executable file`,
    };
  }

  if (trusted) {
    for (const folder of folders) {
      for (const dir of VENV_DIRS) {
        const c = venvExecutable((platform === 'win32' ? path.win32 : path.posix).join(folder, dir), platform);
        tried.push(c);
        if (isExecutableFile(c)) return { command: c, source: 'venv', tried };
      }
    }
  }

  tried.push('loopc on PATH');
  const found = onPath('loopc');
  if (found) return { command: found, source: 'path', tried };
  return {
    command: null, source: null, tried,
    error: 'loopc was not found: set loopc.path, create a virtual environment with loopc in the workspace '
      + '(.venv or venv), or put loopc on PATH (pip install -e . in a clone of loopc)',
  };
}

module.exports = { findLoopc, venvExecutable, VENV_DIRS };
