--- Starting `codeseek serve` in Neovim: the command line, the root folder, and registration with
--- `vim.lsp.config`/`vim.lsp.enable` (Neovim 0.11+) or a FileType autocmd calling `vim.lsp.start`
--- (Neovim 0.10). Also the small compatibility layer for requests (0.10 `client.request` vs 0.11
--- `client:request`).

local M = {}

M.NAME = 'codeseek'
M.CLI_MODULE = 'lsp_server.cli'

local has_011 = vim.fn.has('nvim-0.11') == 1

--- The server command line from the options: `cmd` as given, else `<python_path> -m lsp_server.cli
--- serve`, else `<server_path> serve`, with `server_args` appended.
--- @return string[] cmd, string option  (the option that chose the executable, for error messages)
function M.command(config)
  if type(config.cmd) == 'table' and #config.cmd > 0 then
    return vim.deepcopy(config.cmd), 'cmd'
  end
  local cmd, option
  if type(config.python_path) == 'string' and config.python_path ~= '' then
    cmd, option = { vim.fn.expand(config.python_path), '-m', M.CLI_MODULE, 'serve' }, 'python_path'
  else
    cmd, option = { vim.fn.expand(config.server_path or 'codeseek'), 'serve' }, 'server_path'
  end
  vim.list_extend(cmd, config.server_args or {})
  return cmd, option
end

--- An error message naming the option to fix when the executable cannot be run, else nil.
function M.check_executable(config)
  local cmd, option = M.command(config)
  if vim.fn.executable(cmd[1]) == 1 then
    return nil
  end
  return ('codeseek: cannot start the language server: %q is not an executable. Set `%s` in '
    .. "require('codeseek').setup{} (see :help codeseek-setup and :checkhealth codeseek)."):format(cmd[1], option)
end

local function is_refused(dir)
  local home = vim.fs.normalize((vim.uv or vim.loop).os_homedir() or '')
  local parent = vim.fs.dirname(dir)
  return dir == home or parent == dir or dir == '/'
end

--- The nearest folder above `file` holding one of `names` (a string or a list), else nil.
local function nearest(file, names)
  if type(names) == 'string' then
    names = { names }
  end
  local found = vim.fs.find(names, { path = vim.fs.dirname(file), upward = true, limit = 1 })[1]
  return found and vim.fs.dirname(found) or nil
end

--- The workspace root for a buffer, as `codeseek` itself finds it: for each entry of `markers` in
--- order (a name, or a list of names of equal rank) the nearest folder holding it; the first entry
--- that matches wins. A home folder or the filesystem root is never a root (unless it holds
--- .codeseek). Without a marker: nil, or with `fallback` the current directory when the file is
--- inside it, else the file's folder.
function M.root_for(bufnr, markers, fallback)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local file = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  for _, entry in ipairs(markers or {}) do
    local root = nearest(file, entry)
    if root then
      if is_refused(root) and vim.fn.isdirectory(root .. '/.codeseek') == 0 and
          vim.fn.filereadable(root .. '/.codeseek') == 0 then
        return nil
      end
      return root
    end
  end
  if not fallback then
    return nil
  end
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  local root = (file:sub(1, #cwd + 1) == cwd .. '/') and cwd or vim.fs.dirname(file)
  if is_refused(root) then
    return nil
  end
  return root
end

--- The server options sent as initializationOptions and as settings section `codeseek`.
function M.server_options(config)
  local out = {}
  for key, value in pairs(config.options or {}) do
    if value ~= nil and value ~= '' then
      out[key] = value
    end
  end
  return out
end

local function lsp_config(config)
  local cmd = M.command(config)
  local options = M.server_options(config)
  return {
    name = M.NAME,
    cmd = cmd,
    cmd_env = config.cmd_env,
    filetypes = config.filetypes,
    init_options = options,
    settings = { codeseek = options },
    on_attach = config.on_attach,
    capabilities = config.capabilities,
  }
end

--- Register the server so it starts for file buffers (all filetypes unless `filetypes` is set).
--- @return boolean registered, string path  ('vim.lsp.config' or 'vim.lsp.start')
function M.register(config)
  local use_config = config.use_lsp_config
  if use_config == nil then
    use_config = has_011 and vim.lsp.config ~= nil and vim.lsp.enable ~= nil
  end
  local base = lsp_config(config)
  if use_config then
    base.root_dir = function(bufnr, on_dir)
      local root = M.root_for(bufnr, config.root_markers, config.root_fallback)
      if root then
        on_dir(root)
      end
    end
    vim.lsp.config(M.NAME, base)
    vim.lsp.enable(M.NAME)
    return true, 'vim.lsp.config'
  end
  local group = vim.api.nvim_create_augroup('codeseek.start', { clear = true })
  local function start(bufnr)
    if vim.bo[bufnr].buftype ~= '' then
      return
    end
    if config.filetypes and not vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      return
    end
    local root = M.root_for(bufnr, config.root_markers, config.root_fallback)
    if not root then
      return
    end
    local start_config = vim.deepcopy(base)
    start_config.root_dir = root
    start_config.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
    vim.lsp.start(start_config, { bufnr = bufnr })
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    callback = function(args)
      start(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype ~= '' then
      start(bufnr)
    end
  end
  return true, 'vim.lsp.start'
end

--- The codeseek client attached to `bufnr`, else any running codeseek client, else nil.
function M.get_client(bufnr)
  local attached = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr or 0 })
  if #attached > 0 then
    return attached[1]
  end
  return vim.lsp.get_clients({ name = M.NAME })[1]
end

--- `client:request` on 0.11, `client.request` on 0.10.
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- `client:request_sync` on 0.11, `client.request_sync` on 0.10.
--- @return table|nil response {err, result}, string|nil error
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

return M
