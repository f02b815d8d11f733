-- Headless Neovim with the DOCUMENTED helper config (docs/editors/neovim.md, the block marked
-- "tested: nvim-0.7", extracted by editor_neovim.sh into CONFIG) against the real server:
--   nvim --headless --clean -c "luafile nvim_helper_check.lua" WORKSPACE/FILE.py
-- env: CONFIG (the extracted init.lua), PROFILE, OUT (JSON report).
-- Steps: load the config (errors recorded), wait for the helper to attach, :KernlensLoadProfile,
-- wait for the per-line times the helper draws (virtual text on < 0.10), read the lenses, hover
-- one line (must be plain text on < 0.10), :KernlensRun (quickfix list), :KernlensReport and
-- :KernlensTrace (files written next to the profile).
local out_path = assert(os.getenv('OUT'), 'OUT not set')
local report = { steps = {}, nvim = vim.version() }
local function step(s) table.insert(report.steps, s) end
local function finish(code)
  local f = io.open(out_path, 'w')
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd(code == 0 and 'qa!' or 'cq!')
end

local ok, err = pcall(dofile, assert(os.getenv('CONFIG')))
report.config_error = ok and vim.NIL or tostring(err)
if not ok then return finish(1) end
step('config')

-- The buffer was opened before the config ran: the helper attaches loaded Python buffers itself.
local bufnr = vim.api.nvim_get_current_buf()
local kl = require('kernlens')
report.attached = vim.wait(10000, function()
  local c = kl.client(bufnr)
  return c ~= nil and c.initialized == true
end, 20)
if not report.attached then return finish(1) end
step('attached')

vim.cmd('KernlensLoadProfile ' .. os.getenv('PROFILE'))
-- The server answers, then asks for a refresh; the helper redraws: wait for the labels.
vim.wait(15000, function() return #kl.drawn_hints(bufnr) > 0 end, 20)
vim.wait(300)
report.hints = {}
for _, h in ipairs(kl.drawn_hints(bufnr)) do
  table.insert(report.hints, { line = h.line + 1, label = h.text })
end
step('hints')

-- Lenses: refreshed by the helper on attach and on the server's refresh (after the load: the
-- GPU lenses; before it only "▶ Profile").
local lenses = {}
vim.wait(15000, function()
  lenses = vim.lsp.codelens.get(bufnr)
  local gpu = false
  for _, l in ipairs(lenses) do
    if not l.command then return false end
    if l.command.title:sub(1, 4) == 'GPU ' then gpu = true end
  end
  return gpu
end, 50)
report.lenses = {}
for _, l in ipairs(lenses) do
  table.insert(report.lenses, { line = l.range.start.line + 1, title = l.command and l.command.title or '' })
end
step('lenses')

if report.hints[1] then
  vim.api.nvim_win_set_cursor(0, { report.hints[1].line, 4 })
  vim.lsp.buf.hover()
  local text = ''
  vim.wait(5000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then
        text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n')
        return true
      end
    end
    return false
  end, 20)
  report.hover = text
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then vim.api.nvim_win_close(w, true) end
  end
end
step('hover')

vim.cmd('KernlensRun')
local qf = {}
vim.wait(10000, function()
  qf = vim.fn.getqflist({ items = 1, title = 1 })
  return #qf.items > 0
end, 20)
report.quickfix_title = qf.title
report.quickfix = {}
for _, it in ipairs(qf.items or {}) do
  table.insert(report.quickfix, { file = it.bufnr > 0 and vim.fn.bufname(it.bufnr) or '', lnum = it.lnum, text = it.text })
end
step('run')

-- :KernlensReport / :KernlensTrace: the HTML report and the Perfetto trace of the loaded profile,
-- written next to it (kernlens.exportRun).
local dir = vim.fn.fnamemodify(os.getenv('PROFILE'), ':h')
report.exports = {}
for cmd, file in pairs({ KernlensReport = 'report.html', KernlensTrace = 'trace.perfetto.json' }) do
  vim.cmd(cmd)
  report.exports[cmd] = vim.wait(30000, function() return vim.fn.getfsize(dir .. '/' .. file) > 0 end, 50)
    and (dir .. '/' .. file) or vim.NIL
end
step('exports')

-- Messages shown while loading (errors from the helper would be here).
report.messages = vim.fn.execute('messages')
finish(0)
