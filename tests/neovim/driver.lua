-- Drives a real Neovim against `loopc lsp` for tests/test_neovim.py.
--
-- Run as `nvim --headless --clean -u <config from docs/editors.md> -c 'luafile driver.lua' <plan>`
-- with LOOPC_NVIM_SPEC naming a JSON file:
--   {"result": path, "timeout_ms": n, "target": [line, byte_col], "new_name": "subject"}
-- (`target`: 0-based line and byte column of the identifier to hover, jump
-- from and rename). Every step goes through Neovim's own LSP client (its
-- position conversion, its edit application); the results are written to
-- `result` as JSON and Neovim quits. Works on Neovim 0.7 to 0.11.
local spec_file = assert(vim.env.LOOPC_NVIM_SPEC, 'LOOPC_NVIM_SPEC is not set')
local json_encode = (vim.json and vim.json.encode) or vim.fn.json_encode
local json_decode = (vim.json and vim.json.decode) or vim.fn.json_decode
local spec = json_decode(table.concat(vim.fn.readfile(spec_file), '\n'))
local timeout = spec.timeout_ms
local out = { version = vim.version() }

local function lines(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

local function loopc_client(buf)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf })
    or vim.tbl_values(vim.lsp.buf_get_clients(buf))
  for _, c in ipairs(clients) do
    if c.name == 'loopc' then
      return c
    end
  end
end

-- the protocol diagnostics as they arrived (Neovim 0.7 keeps no range in
-- `user_data.lsp`): wrapped before the event loop first runs, so none is missed
local pushed = {}
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ...)
  if result then
    pushed = result.diagnostics
  end
  return publish(err, result, ...)
end

local function raw_of(d)
  if d.user_data and d.user_data.lsp and d.user_data.lsp.range then
    return d.user_data.lsp
  end
  for _, r in ipairs(pushed) do
    if r.message == d.message and r.range.start.line == d.lnum then
      return r
    end
  end
  return {}
end

local function diagnostics(buf)
  local got = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local raw = raw_of(d)
    table.insert(got, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      code = d.code or raw.code, message = d.message, range = raw.range,
    })
  end
  return got
end

local function wait(what, cond)
  if not vim.wait(timeout, cond, 20) then
    error('timed out waiting for ' .. what)
  end
end

local function request(buf, method, params)
  local replies = vim.lsp.buf_request_sync(buf, method, params, timeout) or {}
  for _, r in pairs(replies) do
    if r.err then
      error(method .. ' failed: ' .. vim.inspect(r.err))
    end
    return r.result
  end
end

local function run()
  local buf = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[buf].filetype
  local client
  wait('loopc to attach', function()
    client = loopc_client(buf)
    return client ~= nil and client.server_capabilities ~= nil and client.offset_encoding ~= nil
  end)
  out.encoding = client.offset_encoding
  out.pull = client.server_capabilities.diagnosticProvider ~= nil

  wait('diagnostics', function() return #vim.diagnostic.get(buf) > 0 end)
  out.diagnostics = diagnostics(buf)

  -- hover and definition at the target, with the position Neovim makes
  local win = vim.api.nvim_get_current_win()
  local function at_target()
    vim.api.nvim_win_set_cursor(win, { spec.target[1] + 1, spec.target[2] })
    return vim.lsp.util.make_position_params(win, client.offset_encoding)
  end
  out.hover = request(buf, 'textDocument/hover', at_target())
  out.definition = request(buf, 'textDocument/definition', at_target())
  -- the jump Neovim itself makes
  at_target()
  vim.lsp.buf.definition()
  wait('the definition jump', function()
    local cur = vim.api.nvim_win_get_cursor(win)
    return cur[1] - 1 ~= spec.target[1] or cur[2] ~= spec.target[2]
  end)
  local cur = vim.api.nvim_win_get_cursor(win)
  out.jump = { cur[1] - 1, cur[2] }

  -- rename: Neovim's own prepareRename/rename and edit application
  at_target()
  local before = vim.api.nvim_buf_get_changedtick(buf)
  vim.lsp.buf.rename(spec.new_name)
  wait('the rename edit', function() return vim.api.nvim_buf_get_changedtick(buf) ~= before end)
  vim.wait(200) -- the whole edit is applied in one go; let the didChange go out
  out.renamed = lines(buf)
  -- the diagnostics of the renamed text (Neovim pulls on change; push clients get them published)
  local old_cols = vim.tbl_map(function(d) return d.col end, out.diagnostics)
  wait('diagnostics after the rename', function()
    local now = diagnostics(buf)
    return #now > 0 and now[1].col ~= old_cols[1]
  end)
  out.diagnostics_after_rename = diagnostics(buf)

  -- formatting: what Neovim makes of the server's edits
  if vim.lsp.buf.format then
    vim.lsp.buf.format({ bufnr = buf, timeout_ms = timeout })
  else -- 0.7
    vim.lsp.buf.formatting_sync(nil, timeout)
  end
  out.formatted = lines(buf)
end

local ok, err = pcall(run)
if not ok then
  out.error = tostring(err)
end
vim.fn.writefile({ json_encode(out) }, spec.result)
vim.cmd('qa!')
