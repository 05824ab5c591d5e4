-- End-to-end test of the codeseek Neovim plugin, run by tests/e2e/test_nvim_plugin.py as
--   nvim --headless --clean -u tests/e2e/nvim/codeseek_spec.lua
-- with the working directory at a copy of tests/workspace/editors. The plugin is loaded from the
-- repository (editors/nvim on 'runtimepath'); the server is the real `codeseek serve`.
-- Environment: CODESEEK_REPO, CODESEEK_SERVER, CODESEEK_TEST_MODE ('lsp_config' | 'lsp_start').
-- Exits with :cq 0 when every check passed, :cq 1 when one failed, :cq 2 on an error.

local repo = assert(os.getenv('CODESEEK_REPO'), 'CODESEEK_REPO is not set')
local server_path = assert(os.getenv('CODESEEK_SERVER'), 'CODESEEK_SERVER is not set')
local mode = os.getenv('CODESEEK_TEST_MODE') or 'lsp_config'
local workspace = vim.fs.normalize(vim.fn.getcwd())

vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
vim.opt.swapfile = false
vim.opt.shortmess:append('I')

local checks, failures = 0, {}

local function log(fmt, ...)
  io.stderr:write(('[codeseek-spec] ' .. fmt .. '\n'):format(...))
end

local function check(ok, what, detail)
  checks = checks + 1
  if ok then
    log('ok   %s', what)
  else
    failures[#failures + 1] = what
    log('FAIL %s: %s', what, detail ~= nil and vim.inspect(detail) or '')
  end
  return ok
end

local function rel(path)
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  if path:sub(1, #workspace + 1) == workspace .. '/' then
    return path:sub(#workspace + 2)
  end
  return path
end

--- The quickfix list as {"path:line" ..., texts = {...}}.
local function quickfix()
  local qf = vim.fn.getqflist({ items = 1, title = 1 })
  local places, texts = {}, {}
  for _, item in ipairs(qf.items) do
    places[#places + 1] = ('%s:%d'):format(rel(vim.api.nvim_buf_get_name(item.bufnr)), item.lnum)
    texts[#texts + 1] = item.text
  end
  return { title = qf.title, places = places, texts = texts }
end

local function index_of(list, value)
  for i, v in ipairs(list) do
    if v == value then
      return i
    end
  end
  return nil
end

local codeseek, server

--- Run `fn` (which starts an async command) and wait for the `User CodeseekResults` it fires.
local function run_and_wait(fn, timeout)
  local fired = nil
  local id = vim.api.nvim_create_autocmd('User', {
    pattern = 'CodeseekResults',
    once = true,
    callback = function(args)
      fired = args.data
    end,
  })
  fn()
  local done = vim.wait(timeout or 15000, function()
    return fired ~= nil
  end, 20)
  if not done then
    pcall(vim.api.nvim_del_autocmd, id)
  end
  return fired
end

--- Edit a workspace file and wait until the codeseek client is attached to it (on 0.11 attaching
--- happens in a scheduled callback after FileType, and `:edit` of the current file re-attaches).
local function open(rel_path)
  vim.cmd('cclose')
  vim.cmd.edit(workspace .. '/' .. rel_path)
  return vim.wait(10000, function()
    return #vim.lsp.get_clients({ bufnr = 0, name = 'codeseek' }) > 0
  end, 20)
end

local function cursor_on(lnum, col)
  vim.api.nvim_win_set_cursor(0, { lnum, col })
end

local function wait_ready()
  local ok = vim.wait(60000, function() -- a cold start imports torch, slow on a busy machine
    local client = server.get_client(0)
    return client ~= nil and (client.initialized == nil or client.initialized)
  end, 50)
  if not check(ok, 'the server starts and attaches to shop/pricing.py') then
    return false
  end
  local summary
  local deadline = vim.uv.now() + 90000
  repeat
    summary = codeseek.status(2000)
    ok = summary ~= nil and (summary.state == 'error' or (summary.state == 'ready' and summary.files > 0))
    if not ok then
      vim.wait(200)
    end
  until ok or vim.uv.now() > deadline
  return check(ok and summary.state == 'ready', 'codeseek.status reaches ready', summary)
end

local function test_search()
  local data = run_and_wait(function()
    vim.cmd('Codeseek add_tax')
  end)
  check(data and data.count > 0, ':Codeseek fires CodeseekResults with results', data)
  local qf = quickfix()
  check(qf.places[1] == 'shop/pricing.py:16', ':Codeseek add_tax -> shop/pricing.py:16 first', qf.places)
  check(qf.texts[1] == 'add_tax (function; source)', 'quickfix text names the symbol, kind and labels', qf.texts[1])
  check(qf.title:match('^codeseek search "add_tax": %d+ results? %(find definition%)$') ~= nil, 'quickfix title reads as words', qf.title)
  check(qf.title:find('?', 1, true) == nil, 'no "?" in the title', qf.title)
  check(vim.fn.getqflist({ winid = 1 }).winid ~= 0, 'picker "quickfix" opens the quickfix window')

  run_and_wait(function()
    vim.cmd('Codeseek apply_discount')
  end)
  qf = quickfix()
  check(qf.places[1] == 'shop/pricing.py:8', 'a function sharing a chunk with the module header is found at its def line', qf.places)

  run_and_wait(function()
    vim.cmd('Codeseek "merging quantities"')
  end)
  qf = quickfix()
  check(qf.places[1] == 'shop/cart.py:27', 'a quoted string is found at its exact line (shop/cart.py:27)', qf.places)
  check(codeseek.last.result.intent.name == 'exact_match', 'a quoted string is an exact_match search', codeseek.last.result.intent)

  local requests = require('codeseek.requests')
  local presets = requests.server_presets(server.get_client(0).server_capabilities)
  check(vim.deep_equal(presets, { 'quick', 'default', 'thorough' }), 'the server advertises its presets in initialize', presets)
  local _, problem = requests.search_params('x', { preset = 'fast', presets = presets })
  check(problem == 'unknown preset "fast"; the server offers: quick, default, thorough', 'a preset the server does not offer is refused', problem)
  check(requests.server_presets({ hoverProvider = true }) == nil, 'no advertised presets: nil')
  for _, preset in ipairs(presets or {}) do
    run_and_wait(function()
      codeseek.search('what does the cart add up to', { preset = preset })
    end)
    local result = codeseek.last and codeseek.last.result or {}
    check(result.preset == preset and #(result.results or {}) > 0, 'a search with an advertised preset names it', result.preset)
  end
end

local function test_callers_and_impact()
  check(open('shop/pricing.py'), 'the client is attached to shop/pricing.py')
  cursor_on(8, 6) -- on "apply_discount" in "def apply_discount("
  run_and_wait(function()
    vim.cmd('CodeseekCallers')
  end)
  local qf = quickfix()
  local sorted = vim.deepcopy(qf.places)
  table.sort(sorted)
  check(vim.deep_equal(sorted, { 'shop/cart.py:40', 'shop/pricing.py:23' }), ':CodeseekCallers lists both call sites', qf.places)
  local texts = table.concat(qf.texts, '\n')
  check(texts:find('line_total', 1, true) and texts:find('cheapest_price', 1, true), 'callers are named', qf.texts)
  check(qf.title == 'codeseek callers of apply_discount: 2 results', 'the callers title reads as words', qf.title)

  vim.cmd('cclose')
  cursor_on(8, 6)
  run_and_wait(function()
    vim.cmd('CodeseekImpact')
  end)
  qf = quickfix()
  for _, place in ipairs({ 'shop/pricing.py:21', 'shop/cart.py:38', 'shop/pricing.py:26' }) do
    check(index_of(qf.places, place) ~= nil, ':CodeseekImpact includes ' .. place, qf.places)
  end
  check(table.concat(qf.texts, '\n'):find('depth 2', 1, true) ~= nil, 'impact entries show their depth', qf.texts)
  check(codeseek.last.result.intent.name == 'impact_analysis', 'impact is an impact_analysis search', codeseek.last.result.intent)
end

local function test_hover()
  check(open('shop/pricing.py'), 'the client is attached to shop/pricing.py again')
  cursor_on(8, 6)
  local client = server.get_client(0)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local responses, err = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000)
  check(responses ~= nil, 'hover answers', err)
  responses = responses or {}
  local text = ''
  for _, response in pairs(responses) do
    local contents = response.result and response.result.contents
    if type(contents) == 'table' then
      text = text .. (contents.value or '')
    end
  end
  check(text:find('def apply_discount(price: float, percent: float) -> float', 1, true) ~= nil, 'hover shows the signature', text)
  check(text:find('Reduce a price by a percentage discount', 1, true) ~= nil, 'hover shows the doc line', text)
  check(text:find('line_total', 1, true) ~= nil, 'hover lists a caller', text)
  check(text:find('[shop/pricing.py:21](', 1, true) ~= nil, 'hover links the caller as path:line', text)
end

local function test_select_picker()
  codeseek.config.picker = 'select'
  local shown
  local original = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    shown = { count = #items, first = opts.format_item(items[1]), prompt = opts.prompt }
    on_choice(items[1], 1)
  end
  run_and_wait(function()
    vim.cmd('Codeseek order_total')
  end)
  vim.ui.select = original
  codeseek.config.picker = 'quickfix'
  check(shown and shown.first:match('^shop/pricing%.py:26  order_total') ~= nil, 'vim.ui.select shows path:line and symbol', shown)
  check(rel(vim.api.nvim_buf_get_name(0)) == 'shop/pricing.py' and vim.api.nvim_win_get_cursor(0)[1] == 26,
    'choosing a result jumps to shop/pricing.py:26', { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0) })
end

local function test_errors()
  local notified = {}
  local original = vim.notify
  vim.notify = function(msg, level)
    notified[#notified + 1] = { msg = msg, level = level }
  end
  local data = run_and_wait(function()
    codeseek.search('apply_discount', { intent = 'no_such_intent' })
  end)
  check(data and data.error and data.error:match('unknown intent') ~= nil, 'a bad intent is refused before sending', data)
  data = run_and_wait(function()
    codeseek.search('apply_discount', { include = { '../../**' } })
  end)
  check(data and data.error ~= nil, 'the server InvalidParams error (glob leaving the workspace) reaches the user', data)
  vim.notify = original
  check(#notified >= 2 and notified[#notified].level == vim.log.levels.ERROR, 'errors are notified at ERROR level', notified)
  data = run_and_wait(function()
    vim.cmd('Codeseek apply_discount')
  end)
  check(data and data.count > 0, 'the server keeps serving after an error', data)
end

local function test_health()
  vim.cmd('checkhealth codeseek')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(text:find('server executable: ' .. vim.fn.exepath(server_path), 1, true) ~= nil, ':checkhealth reports the executable', text)
  check(text:find('index: ready', 1, true) ~= nil, ':checkhealth reports the index state', text)
  check(text:find('model: ', 1, true) ~= nil, ':checkhealth reports the model', text)
  check(text:find('ERROR', 1, true) == nil, ':checkhealth has no errors', text)
end

local function test_outside_write()
  -- Neovim 0.11 on Linux offers no didChangeWatchedFiles: the server watches the workspace itself.
  local caps = server.get_client(0).capabilities or {}
  local watched = ((caps.workspace or {}).didChangeWatchedFiles or {}).dynamicRegistration
  local path = workspace .. '/shop/written_outside.py'
  local file = assert(io.open(path, 'w')) -- not through a buffer: as git or a generator would
  file:write('def refund_outside_editor(amount: float) -> float:\n    return -amount\n')
  file:close()
  local started, found = vim.uv.hrtime(), false
  while not found and (vim.uv.hrtime() - started) / 1e9 < 2.0 do
    run_and_wait(function()
      codeseek.search('refund_outside_editor')
    end, 2000)
    for _, r in ipairs((codeseek.last and codeseek.last.result or {}).results or {}) do
      found = found or r.symbol == 'refund_outside_editor'
    end
    if not found then
      vim.wait(50)
    end
  end
  local seconds = (vim.uv.hrtime() - started) / 1e9
  log('a file written outside the editor was found after %.2f s (client watching: %s)', seconds, tostring(watched))
  check(found, 'a file written outside the editor is found within 2 s', seconds)
  os.remove(path)
end

local function test_missing_server()
  local notified
  local original = vim.notify
  vim.notify = function(msg)
    notified = msg
  end
  local ok = require('codeseek').setup({ server_path = '/nonexistent/codeseek' })
  vim.notify = original
  check(ok == false and notified and notified:find('`server_path`', 1, true) ~= nil,
    'setup names the server_path option when the executable is missing', notified)
end

local function test_roots()
  local tmp = vim.fs.normalize(vim.fn.tempname())
  local function file(path, lines)
    vim.fn.mkdir(vim.fs.dirname(tmp .. '/' .. path), 'p')
    vim.fn.writefile(lines or {}, tmp .. '/' .. path)
    return vim.fn.bufadd(tmp .. '/' .. path)
  end
  local markers = codeseek.config.root_markers
  local stray = file('x/sub/notes.txt')
  check(server.root_for(stray, markers, false) == nil, 'a file in a folder without markers starts no server')
  check(server.root_for(stray, markers, true) == tmp .. '/x/sub', 'root_fallback = true indexes its folder')
  vim.fn.mkdir(tmp .. '/repo/.git', 'p')
  file('repo/pkg/package.json', { '{}' })
  local nested = file('repo/pkg/src/app.js')
  check(server.root_for(nested, markers, false) == tmp .. '/repo', 'the repository wins over a nested package.json',
    server.root_for(nested, markers, false))
  local home_file = file('home/notes.txt')
  file('home/package.json', { '{}' })
  local saved = vim.env.HOME
  vim.env.HOME = tmp .. '/home'
  local home_root = server.root_for(home_file, markers, true)
  vim.fn.mkdir(tmp .. '/home/.codeseek', 'p')
  local opted_in = server.root_for(home_file, markers, false)
  vim.env.HOME = saved
  check(home_root == nil, 'a marker in the home folder does not make it a root', home_root)
  check(opted_in == tmp .. '/home', 'a .codeseek folder opts the home folder in', opted_in)
end

local function test_auto_picker()
  local ui = require('codeseek.ui')
  check(ui.select_replaced() == false, "Neovim's own vim.ui.select is recognised")
  local original = vim.ui.select
  local used = false
  vim.ui.select = function(_, _, on_choice)
    used = true
    on_choice(nil, nil)
  end
  check(ui.select_replaced() == true, 'a replaced vim.ui.select is recognised')
  local item = { filename = workspace .. '/shop/pricing.py', lnum = 1, text = 'x' }
  local how = ui.show('codeseek search "x": 1 result', { item }, 'auto')
  vim.ui.select = original
  check(how == 'select' and used, 'auto uses a replaced vim.ui.select', how)
  how = ui.show('codeseek search "x": 1 result', { item }, 'auto')
  vim.cmd('cclose')
  check(how == 'quickfix', 'auto falls back to the quickfix window, not the paging built-in select', how)
end

local function main()
  codeseek = require('codeseek')
  server = require('codeseek.server')
  test_roots()
  test_auto_picker()
  check(vim.fn.exists(':Codeseek') == 2 and vim.fn.exists(':CodeseekCallers') == 2, 'plugin/codeseek.lua defines the commands')
  local requests = require('codeseek.requests')
  local params = requests.search_params('  who calls total ', { limit = 5, include = { 'shop/**', ' ' } })
  check(vim.deep_equal(params, { query = 'who calls total', limit = 5, include = { 'shop/**' } }), 'search params are trimmed and cleaned', params)
  local states = {
    requests.status_summary({ roots = { { state = 'text-only', files = 5 }, { state = 'empty' } } }).state,
    requests.status_summary({ roots = { { state = 'ready' }, { state = 'indexing' } } }).state,
    requests.status_summary({ roots = { { state = 'empty' } } }).state,
    requests.status_summary('garbage').state,
  }
  check(vim.deep_equal(states, { 'ready', 'indexing', 'empty', 'unknown' }), 'status summary states', states)

  local ok = codeseek.setup({
    server_path = server_path,
    picker = 'quickfix',
    options = { embeddings = false },
    use_lsp_config = mode == 'lsp_config',
  })
  local expected = mode == 'lsp_config' and 'vim.lsp.config' or 'vim.lsp.start'
  check(ok and codeseek.registration == expected, 'setup registers the server through ' .. expected, codeseek.registration)
  vim.cmd.edit(workspace .. '/shop/pricing.py')
  if not wait_ready() then
    return
  end
  test_search()
  if mode == 'lsp_config' then
    test_callers_and_impact()
    test_hover()
    test_select_picker()
    test_errors()
    test_health()
    test_outside_write()
    test_missing_server()
  end
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = xpcall(main, debug.traceback)
      if not ok then
        log('ERROR %s', err)
        vim.cmd('cq 2')
      end
      io.stdout:write(('codeseek nvim e2e (%s): %d checks, %d failed\n'):format(mode, checks, #failures))
      vim.cmd(#failures == 0 and 'cq 0' or 'cq 1')
    end)
  end,
})
