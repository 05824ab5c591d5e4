--- codeseek for Neovim: semantic code search, callers and change impact from the codeseek
--- language server (`codeseek serve`).
---
--- require('codeseek').setup{} registers the server (vim.lsp.config/vim.lsp.enable on 0.11+,
--- vim.lsp.start on 0.10). The commands (plugin/codeseek.lua) call search(), callers() and impact()
--- here; each fills the quickfix list, presents it (telescope, vim.ui.select or the quickfix window)
--- and fires `User CodeseekResults`. Hover (`K`), references and call hierarchy are the server's.

local requests = require('codeseek.requests')
local server = require('codeseek.server')
local ui = require('codeseek.ui')

local M = {}

--- @class codeseek.Config
local defaults = {
  server_path = 'codeseek', -- the codeseek executable, started as `<server_path> serve`
  python_path = nil, -- or a Python with codeseek installed: `<python> -m lsp_server.cli serve`
  cmd = nil, -- or the full command line (overrides both)
  server_args = {}, -- extra arguments after `serve`
  cmd_env = nil, -- extra environment for the server process
  filetypes = nil, -- nil: every file buffer; or a list of filetypes
  -- Earlier entries win over nearer later ones: an opt-in .codeseek, then the repository, then a
  -- project file (so a buffer in src/pkg uses the repository's root). No marker: no server.
  root_markers = { '.codeseek', { '.git', '.hg' }, { 'pyproject.toml', 'package.json', 'go.mod', 'Cargo.toml' } },
  root_fallback = false, -- true: index the current directory (or the file's folder) when no marker is found
  options = { -- server options (initializationOptions and settings section `codeseek`)
    model = nil, -- sentence-transformers id or path; nil: the packaged all-MiniLM-L6-v2
    indexDir = nil, -- base folder of the indexes; nil: $CODESEEK_INDEX_DIR or the user cache
    excludes = {}, -- extra gitignore-style patterns
    maxFileSize = 1000000,
    preset = 'default', -- one of the presets the server advertises: quick | default | thorough
    hover = true, -- the related-code hover panel
    embeddings = true, -- off: text, structural and call-graph search only
  },
  limit = 30, -- results per search
  -- 'auto': telescope if installed, else a vim.ui.select replacement (dressing, fzf-lua, snacks...) if
  -- one is set, else the quickfix window (the built-in select would page long lists with "Press ENTER").
  picker = 'auto', -- | 'telescope' | 'select' | 'quickfix' | 'none'
  use_lsp_config = nil, -- nil: vim.lsp.config on 0.11+; false: force the vim.lsp.start path
  on_attach = nil,
  capabilities = nil,
  timeout_ms = 5000, -- for the synchronous status request
}

local LIST_KEYS = { 'root_markers', 'filetypes', 'server_args', 'cmd' }

M.config = vim.deepcopy(defaults)
--- How the server was registered ('vim.lsp.config' or 'vim.lsp.start'), nil before setup.
M.registration = nil
--- The message explaining why setup could not register the server, if it could not.
M.setup_error = nil
--- The last answer: {kind, query, result?, items, error?}.
M.last = nil

local function merge(opts)
  local config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  -- Lists replace the defaults instead of merging index by index.
  for _, key in ipairs(LIST_KEYS) do
    if opts and opts[key] ~= nil then
      config[key] = vim.deepcopy(opts[key])
    end
  end
  if opts and type(opts.options) == 'table' and opts.options.excludes ~= nil then
    config.options.excludes = vim.deepcopy(opts.options.excludes)
  end
  return config
end

local PICKERS = { auto = true, telescope = true, select = true, quickfix = true, none = true }

--- Configure and register the server. Returns false (and notifies) when it cannot be started.
--- @param opts? codeseek.Config
--- @return boolean
function M.setup(opts)
  local config = merge(opts)
  if not PICKERS[config.picker] then
    vim.notify(
      ('codeseek: unknown picker %q; using "auto" (auto, telescope, select, quickfix, none)'):format(
        tostring(config.picker)
      ),
      vim.log.levels.WARN
    )
    config.picker = 'auto'
  end
  M.config = config
  M.setup_error = server.check_executable(config)
  if M.setup_error then
    vim.notify(M.setup_error, vim.log.levels.ERROR)
    return false
  end
  local _, how = server.register(config)
  M.registration = how
  return true
end

local function finish(kind, query, result, items, on_done)
  local title = requests.title(kind, query, result, #items)
  M.last = { kind = kind, query = query, result = result, items = items, title = title }
  M.last.picker = ui.show(title, items, M.config.picker, #items == 0 and requests.empty_reason(result) or nil)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'CodeseekResults',
    data = { kind = kind, query = query, count = #items },
  })
  if on_done then
    on_done(nil, result, items)
  end
end

local function fail(kind, query, message, on_done)
  M.last = { kind = kind, query = query, items = {}, error = message }
  vim.notify('codeseek: ' .. message, vim.log.levels.ERROR)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'CodeseekResults',
    data = { kind = kind, query = query, count = 0, error = message },
  })
  if on_done then
    on_done(message)
  end
end

local function client_or_fail(kind, query, bufnr, on_done)
  local client = server.get_client(bufnr)
  if not client then
    fail(kind, query, 'the language server is not running for this buffer (see :checkhealth codeseek)', on_done)
  end
  return client
end

local function send_search(kind, label, params, on_done)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_or_fail(kind, label, bufnr, on_done)
  if not client then
    return
  end
  server.request(client, requests.SEARCH_METHOD, params, function(err, result)
    if err then
      return fail(kind, label, err.message or vim.inspect(err), on_done)
    end
    if type(result) ~= 'table' then
      return fail(kind, label, 'the server sent no search result', on_done)
    end
    finish(kind, label, result, ui.search_items(result.results, client.offset_encoding), on_done)
  end, bufnr)
end

--- `:Codeseek {query}`: semantic search into the quickfix list.
--- @param query string
--- @param opts? {limit?: integer, preset?: string, intent?: string, include?: string[], exclude?: string[]}
--- @param on_done? fun(err: string|nil, result: table|nil, items: table[]|nil)
function M.search(query, opts, on_done)
  opts = opts or {}
  local client = server.get_client(0)
  local params, problem = requests.search_params(query, {
    limit = opts.limit or M.config.limit,
    preset = opts.preset or M.config.options.preset,
    presets = client and requests.server_presets(client.server_capabilities) or nil,
    intent = opts.intent,
    include = opts.include,
    exclude = opts.exclude,
  })
  if not params then
    return fail('search', query or '', problem, on_done)
  end
  send_search('search', params.query, params, on_done)
end

--- `:CodeseekImpact`: what a change to the symbol under the cursor would affect.
function M.impact(symbol, on_done)
  symbol = symbol or vim.fn.expand('<cword>')
  local params, problem = requests.impact_params(symbol, M.config.limit)
  if not params then
    return fail('impact', symbol or '', problem, on_done)
  end
  send_search('impact', params.query, params, on_done)
end

--- `:CodeseekCallers`: callers of the symbol under the cursor, from the server's call hierarchy;
--- a find_references search when the call hierarchy has nothing at the cursor.
function M.callers(on_done)
  local bufnr = vim.api.nvim_get_current_buf()
  local symbol = vim.fn.expand('<cword>')
  local client = client_or_fail('callers', symbol, bufnr, on_done)
  if not client then
    return
  end
  local function fallback()
    local params, problem = requests.callers_params(symbol, M.config.limit)
    if not params then
      return fail('callers', symbol, problem, on_done)
    end
    send_search('callers', params.query, params, on_done)
  end
  local position = vim.lsp.util.make_position_params(0, client.offset_encoding)
  server.request(client, 'textDocument/prepareCallHierarchy', position, function(err, prepared)
    if err or type(prepared) ~= 'table' or #prepared == 0 then
      return fallback()
    end
    local item = prepared[1]
    server.request(client, 'callHierarchy/incomingCalls', { item = item }, function(err2, calls)
      if err2 or type(calls) ~= 'table' or #calls == 0 then
        return fallback()
      end
      finish('callers', item.name, nil, ui.call_items(calls, client.offset_encoding, item.name), on_done)
    end, bufnr)
  end, bufnr)
end

--- The index state from `codeseek.status` (synchronous).
--- @return table|nil summary {state, files, chunks, embedded, model, folders}, table|string raw_or_error
function M.status(timeout_ms)
  local client = server.get_client(0)
  if not client then
    return nil, 'the language server is not running'
  end
  local response, err = server.request_sync(
    client,
    'workspace/executeCommand',
    requests.command_params(requests.STATUS_COMMAND),
    timeout_ms or M.config.timeout_ms,
    0
  )
  if not response then
    return nil, err or 'no answer'
  end
  if response.err then
    return nil, response.err.message or vim.inspect(response.err)
  end
  return requests.status_summary(response.result), response.result
end

--- `:CodeseekReindex`: rebuild the index in the background.
function M.reindex()
  local client = server.get_client(0)
  if not client then
    return vim.notify('codeseek: the language server is not running', vim.log.levels.ERROR)
  end
  server.request(client, 'workspace/executeCommand', requests.command_params(requests.REINDEX_COMMAND), function(err)
    if err then
      vim.notify('codeseek: reindex failed: ' .. (err.message or ''), vim.log.levels.ERROR)
    else
      vim.notify('codeseek: reindexing', vim.log.levels.INFO)
    end
  end, 0)
end

return M
