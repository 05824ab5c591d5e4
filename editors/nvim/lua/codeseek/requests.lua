--- Request building and result formatting for the codeseek language server.
---
--- Pure Lua (no editor state): the params of `workspace/semanticSearch` for a search, for callers
--- (intent find_references) and for impact (intent impact_analysis), the text of quickfix entries
--- and titles, and a summary of the `codeseek.status` command. The commands and the tests use the
--- same functions, so what is tested is what users send. The search presets are not listed here: the
--- server advertises them in its `initialize` answer (`M.server_presets`).

local M = {}

M.SEARCH_METHOD = 'workspace/semanticSearch'
M.STATUS_COMMAND = 'codeseek.status'
M.REINDEX_COMMAND = 'codeseek.reindex'
M.MIN_LIMIT = 1
M.MAX_LIMIT = 200
M.INTENTS = {
  'find_definition',
  'find_references',
  'impact_analysis',
  'exact_match',
  'understand_code',
  'find_similar',
}

local function contains(list, value)
  for _, v in ipairs(list) do
    if v == value then
      return true
    end
  end
  return false
end

local function clean_globs(globs)
  local out = {}
  for _, g in ipairs(globs or {}) do
    if type(g) == 'string' and g:match('%S') then
      out[#out + 1] = vim.trim(g)
    end
  end
  return #out > 0 and out or nil
end

--- The search presets the server accepts, from its capabilities (`experimental.codeseek.presets`, as
--- its `initialize` answer advertises them); nil when it does not say.
--- @param capabilities table|nil the client's `server_capabilities`
--- @return string[]|nil
function M.server_presets(capabilities)
  local experimental = type(capabilities) == 'table' and capabilities.experimental or nil
  local codeseek = type(experimental) == 'table' and experimental.codeseek or nil
  local presets = type(codeseek) == 'table' and codeseek.presets or nil
  if type(presets) ~= 'table' then
    return nil
  end
  local out = {}
  for _, name in ipairs(presets) do
    if type(name) == 'string' then
      out[#out + 1] = name
    end
  end
  return #out > 0 and out or nil
end

--- Params of `workspace/semanticSearch`.
--- @param query string what the user typed
--- @param opts? {limit?: integer, preset?: string, presets?: string[], intent?: string, include?: string[], exclude?: string[]}
---   `presets`: the names the server advertised (`M.server_presets`); when given, `preset` must be one
--- @return table|nil params, string|nil error  (nil and a message for input that cannot be sent)
function M.search_params(query, opts)
  opts = opts or {}
  if type(query) ~= 'string' or not query:match('%S') then
    return nil, 'the search query is empty'
  end
  local params = { query = vim.trim(query) }
  if opts.limit ~= nil then
    local limit = opts.limit
    if type(limit) ~= 'number' or limit ~= math.floor(limit) or limit < M.MIN_LIMIT or limit > M.MAX_LIMIT then
      return nil, ('limit must be an integer from %d to %d, got %s'):format(M.MIN_LIMIT, M.MAX_LIMIT, tostring(limit))
    end
    params.limit = limit
  end
  if opts.preset ~= nil and opts.preset ~= '' then
    if opts.presets ~= nil and not contains(opts.presets, opts.preset) then
      return nil, ('unknown preset %q; the server offers: %s'):format(opts.preset, table.concat(opts.presets, ', '))
    end
    params.preset = opts.preset
  end
  if opts.intent ~= nil then
    if not contains(M.INTENTS, opts.intent) then
      return nil, ('unknown intent %q; expected one of: %s'):format(opts.intent, table.concat(M.INTENTS, ', '))
    end
    params.intent = opts.intent
  end
  params.include = clean_globs(opts.include)
  params.exclude = clean_globs(opts.exclude)
  return params, nil
end

local function symbol_query(symbol)
  if type(symbol) ~= 'string' or not symbol:match('%S') then
    return nil
  end
  return vim.trim(symbol)
end

--- "Who calls X" as a search: the fallback when call hierarchy has no item at the cursor.
function M.callers_params(symbol, limit)
  local name = symbol_query(symbol)
  if not name then
    return nil, 'there is no symbol under the cursor'
  end
  return M.search_params(name, { intent = 'find_references', limit = limit })
end

--- "What breaks if I change X": definitions depending on X, nearest first.
function M.impact_params(symbol, limit)
  local name = symbol_query(symbol)
  if not name then
    return nil, 'there is no symbol under the cursor'
  end
  return M.search_params(name, { intent = 'impact_analysis', limit = limit })
end

--- `workspace/executeCommand` params for codeseek.status / codeseek.reindex.
function M.command_params(command)
  return { command = command, arguments = {} }
end

--- The text of one search result in the quickfix list / picker:
--- `symbol (kind; labels; depth N)`, or the path when the chunk has no symbol.
function M.result_text(r)
  local name = (type(r.symbol) == 'string' and r.symbol ~= '') and r.symbol or r.path
  local notes = {}
  if type(r.kind) == 'string' and r.kind ~= '' then
    notes[#notes + 1] = r.kind
  end
  if type(r.labels) == 'table' and #r.labels > 0 then
    notes[#notes + 1] = table.concat(r.labels, ',')
  end
  if r.depth ~= nil and r.depth ~= vim.NIL then
    notes[#notes + 1] = 'depth ' .. tostring(r.depth)
  end
  if #notes == 0 then
    return name
  end
  return ('%s (%s)'):format(name, table.concat(notes, '; '))
end

--- The line a result points at: the definition's name line (`line`), else its first line.
function M.result_line(r)
  if type(r.line) == 'number' then
    return r.line
  end
  return r.start_line
end

--- `path:line` of a result (1-based line), as shown by pickers.
function M.result_place(r)
  return ('%s:%d'):format(r.path, M.result_line(r))
end

local function count_text(n)
  return n == 1 and '1 result' or ('%d results'):format(n)
end

--- Quickfix title for an answer: `codeseek search "query": 12 results (find_definition)`, with the
--- index state only while it is not ready; `codeseek callers of name: 3 results` for a call list.
function M.title(kind, query, result, count)
  local what
  if kind == 'search' then
    what = ('codeseek search "%s"'):format(query)
  else
    what = ('codeseek %s of %s'):format(kind, query)
  end
  local parts = { what .. ': ' .. count_text(count or 0) }
  local intent = type(result) == 'table' and type(result.intent) == 'table' and result.intent or nil
  if kind == 'search' and intent and type(intent.name) == 'string' then
    parts[#parts + 1] = ('(%s)'):format((intent.name:gsub('_', ' ')))
  end
  local index = type(result) == 'table' and type(result.index) == 'table' and result.index or nil
  if index and type(index.state) == 'string' and index.state ~= 'ready' and index.state ~= 'text-only' then
    parts[#parts + 1] = ('[index %s]'):format(index.state)
  end
  return table.concat(parts, ' ')
end

--- Why an answer is empty, in words (the relevance floor, an index still building), else nil.
function M.empty_reason(result)
  local index = type(result) == 'table' and type(result.index) == 'table' and result.index or {}
  for _, note in ipairs(type(index.notes) == 'table' and index.notes or {}) do
    if type(note) == 'string' and note:find('relevance floor', 1, true) then
      return 'nothing matched well enough (every candidate was below the relevance floor)'
    end
  end
  if type(index.state) == 'string' and index.state ~= 'ready' and index.state ~= 'text-only' then
    return ('the index is %s; try again shortly'):format(index.state)
  end
  return nil
end

local function folder_entries(raw)
  if type(raw) ~= 'table' then
    return {}
  end
  if vim.islist(raw) then
    local out = {}
    for _, entry in ipairs(raw) do
      vim.list_extend(out, folder_entries(entry))
    end
    return out
  end
  for _, key in ipairs({ 'folders', 'workspaces', 'roots' }) do
    if type(raw[key]) == 'table' then
      return folder_entries(vim.islist(raw[key]) and raw[key] or vim.tbl_values(raw[key]))
    end
  end
  if type(raw.state) == 'string' then
    return { raw }
  end
  if type(raw.index) == 'table' then
    return folder_entries(raw.index)
  end
  return {}
end

--- Summary of a `codeseek.status` answer, summed over workspace folders; the state is the first
--- folder's that is busy or failed ("indexing" wins over "ready"); "text-only" (embeddings off)
--- counts as "ready"; "empty" (nothing to index) shows only when no folder is ready.
--- @return {state: string, files: integer, chunks: integer, embedded: integer, model: string|nil, folders: integer}
function M.status_summary(raw)
  local entries = folder_entries(raw)
  local summary = { state = 'unknown', files = 0, chunks = 0, embedded = 0, model = nil, folders = #entries }
  if #entries == 0 then
    return summary
  end
  local busy, any_ready = nil, false
  for _, e in ipairs(entries) do
    local state = type(e.state) == 'string' and e.state or 'unknown'
    if state == 'text-only' then -- ready, with embeddings turned off
      state = 'ready'
    end
    if state == 'ready' then
      any_ready = true
    elseif state ~= 'empty' and busy == nil then
      busy = state
    end
    for _, key in ipairs({ 'files', 'chunks', 'embedded' }) do
      if type(e[key]) == 'number' then
        summary[key] = summary[key] + e[key]
      end
    end
    if summary.model == nil and type(e.model) == 'string' then
      summary.model = e.model
    end
  end
  summary.state = busy or (any_ready and 'ready' or 'empty')
  return summary
end

--- One-line status text, e.g. `codeseek: ready · 84 files · 512/512 embedded`.
function M.status_text(summary)
  return ('codeseek: %s · %d files · %d chunks · %d embedded'):format(
    summary.state,
    summary.files,
    summary.chunks,
    summary.embedded
  )
end

return M
