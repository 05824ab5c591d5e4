--- `:checkhealth codeseek`: the Neovim version, the server executable, whether the server runs for
--- the current buffer, its index state (via `codeseek.status`) and model, and the picker.

local M = {}

function M.check()
  local health = vim.health
  local codeseek = require('codeseek')
  local server = require('codeseek.server')
  local config = codeseek.config

  health.start('codeseek: setup')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok(('Neovim %s (vim.lsp.config)'):format(tostring(vim.version())))
  elseif vim.fn.has('nvim-0.10') == 1 then
    health.ok(('Neovim %s (vim.lsp.start)'):format(tostring(vim.version())))
  else
    health.error('Neovim 0.10 or newer is required')
  end
  if codeseek.registration then
    health.ok('server registered through ' .. codeseek.registration)
  elseif codeseek.setup_error then
    health.error(codeseek.setup_error)
  else
    health.warn("setup() has not been called", { "add require('codeseek').setup{} to your config" })
  end

  health.start('codeseek: server')
  local cmd, option = server.command(config)
  local exe = vim.fn.exepath(cmd[1])
  if exe ~= '' then
    health.ok(('server executable: %s (command: %s)'):format(exe, table.concat(cmd, ' ')))
  else
    health.error(('server executable %q not found'):format(cmd[1]), {
      ('set `%s` in setup{} to the codeseek executable, e.g. /path/to/.venv/bin/codeseek'):format(option),
      'or install codeseek: pip install codeseek (see the README)',
    })
  end
  local client = server.get_client(0)
  if not client then
    health.warn('the server is not running for the current buffer', {
      'open a file inside a workspace; the server starts for file buffers',
    })
  else
    health.ok(('server running (client id %d, root %s)'):format(client.id, tostring(client.root_dir)))
    local summary, raw = codeseek.status(config.timeout_ms)
    if not summary then
      health.error('codeseek.status failed: ' .. tostring(raw))
    else
      local text = ('index: %s · %d files · %d chunks · %d embedded'):format(
        summary.state,
        summary.files,
        summary.chunks,
        summary.embedded
      )
      if summary.state == 'ready' then
        health.ok(text)
      elseif summary.state == 'error' or summary.state == 'unknown' then
        health.error(text)
      else
        health.info(text .. ' (indexing in the background)')
      end
      health.info('model: ' .. tostring(summary.model or config.options.model or 'the server default'))
    end
  end

  health.start('codeseek: options')
  health.info('server options: ' .. vim.inspect(server.server_options(config), { newline = ' ', indent = '' }))
  if config.options.embeddings == false then
    health.info('embeddings are off: semantic search is disabled')
  end
  local ui = require('codeseek.ui')
  if config.picker == 'telescope' and not ui.has_telescope() then
    health.warn('picker = "telescope" but telescope.nvim is not installed; the quickfix window is used')
  else
    health.ok(('picker: %s%s'):format(config.picker, ui.has_telescope() and ' (telescope installed)' or ''))
  end
end

return M
