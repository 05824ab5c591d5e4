--- Showing codeseek answers: quickfix entries (always filled, at each definition's name line), then
--- telescope when it is installed, a replaced `vim.ui.select` otherwise, else the quickfix window
--- (option `picker`).

local requests = require('codeseek.requests')

local M = {}

--- Byte column (1-based) of an LSP position in `uri`, through Neovim's own encoding-aware conversion.
local function byte_col(uri, range, encoding)
  local ok, items = pcall(vim.lsp.util.locations_to_items, { { uri = uri, range = range } }, encoding)
  if ok and type(items) == 'table' and items[1] then
    return items[1].col
  end
  return (range.start.character or 0) + 1
end

--- Quickfix entries for `workspace/semanticSearch` results, in the server's (ranked) order.
function M.search_items(results, encoding)
  local items = {}
  for _, r in ipairs(results or {}) do
    items[#items + 1] = {
      filename = vim.uri_to_fname(r.uri),
      lnum = requests.result_line(r), -- the definition's name line; the span stays in user_data
      col = type(r.column) == 'number' and r.column + 1 or byte_col(r.uri, r.range, encoding),
      text = requests.result_text(r),
      user_data = { codeseek = r },
    }
  end
  return items
end

--- Quickfix entries for `callHierarchy/incomingCalls`: one per call site.
function M.call_items(calls, encoding, target)
  local items = {}
  for _, call in ipairs(calls or {}) do
    local ranges = call.fromRanges
    if type(ranges) ~= 'table' or #ranges == 0 then
      ranges = { call.from.selectionRange }
    end
    for _, range in ipairs(ranges) do
      items[#items + 1] = {
        filename = vim.uri_to_fname(call.from.uri),
        lnum = range.start.line + 1,
        col = byte_col(call.from.uri, range, encoding),
        text = ('%s (calls %s)'):format(call.from.name, target),
        user_data = { codeseek = call },
      }
    end
  end
  return items
end

function M.has_telescope()
  return (pcall(require, 'telescope.pickers'))
end

local function telescope(title, items)
  local pickers = require('telescope.pickers')
  local finders = require('telescope.finders')
  local make_entry = require('telescope.make_entry')
  local conf = require('telescope.config').values
  pickers
    .new({}, {
      prompt_title = title,
      finder = finders.new_table({ results = items, entry_maker = make_entry.gen_from_quickfix({}) }),
      previewer = conf.qflist_previewer({}),
      sorter = conf.generic_sorter({}),
    })
    :find()
end

local function relative(filename)
  return vim.fn.fnamemodify(filename, ':~:.')
end

--- Fill the quickfix list with `items` titled `title`, then present them with `picker`
--- ('auto' | 'telescope' | 'select' | 'quickfix' | 'none').
--- @return string how  the picker actually used
--- True when something (dressing, fzf-lua, snacks, mini.pick...) replaced Neovim's own
--- vim.ui.select, whose inputlist pages a long list behind "Press ENTER" / "-- More --".
function M.select_replaced()
  local info = debug.getinfo(vim.ui.select, 'S')
  return not (info and type(info.source) == 'string' and info.source:find('vim/ui.lua', 1, true))
end

function M.show(title, items, picker, empty_reason)
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if #items == 0 then
    vim.notify(title .. (empty_reason and (' (' .. empty_reason .. ')') or ''), vim.log.levels.INFO)
    return 'none'
  end
  if picker == 'auto' then
    picker = M.has_telescope() and 'telescope' or (M.select_replaced() and 'select' or 'quickfix')
  end
  if picker == 'telescope' and M.has_telescope() then
    telescope(title, items)
    return 'telescope'
  elseif picker == 'select' then
    vim.ui.select(items, {
      prompt = title,
      kind = 'codeseek',
      format_item = function(item)
        return ('%s:%d  %s'):format(relative(item.filename), item.lnum, item.text)
      end,
    }, function(_, idx)
      if idx then
        vim.cmd(('cc %d'):format(idx))
      end
    end)
    return 'select'
  elseif picker == 'quickfix' or picker == 'telescope' then
    vim.cmd('botright copen')
    return 'quickfix'
  end
  return 'none'
end

return M
