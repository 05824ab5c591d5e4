--- codeseek user commands. Loading the plugin starts nothing: call require('codeseek').setup{}.

if vim.g.loaded_codeseek then
  return
end
vim.g.loaded_codeseek = true

local function codeseek()
  return require('codeseek')
end

vim.api.nvim_create_user_command('Codeseek', function(args)
  if args.args ~= '' then
    return codeseek().search(args.args)
  end
  vim.ui.input({ prompt = 'codeseek: ' }, function(query)
    if query and query ~= '' then
      codeseek().search(query)
    end
  end)
end, { nargs = '*', desc = 'codeseek: semantic search into the quickfix list' })

vim.api.nvim_create_user_command('CodeseekCallers', function()
  codeseek().callers()
end, { desc = 'codeseek: callers of the symbol under the cursor' })

vim.api.nvim_create_user_command('CodeseekImpact', function(args)
  codeseek().impact(args.args ~= '' and args.args or nil)
end, { nargs = '?', desc = 'codeseek: what a change to the symbol under the cursor affects' })

vim.api.nvim_create_user_command('CodeseekStatus', function()
  local summary, err = codeseek().status()
  if not summary then
    return vim.notify('codeseek: ' .. tostring(err), vim.log.levels.ERROR)
  end
  vim.notify(require('codeseek.requests').status_text(summary) .. ' · model ' .. tostring(summary.model))
end, { desc = 'codeseek: index state' })

vim.api.nvim_create_user_command('CodeseekReindex', function()
  codeseek().reindex()
end, { desc = 'codeseek: rebuild the index' })
