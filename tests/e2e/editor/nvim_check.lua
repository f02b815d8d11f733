-- Headless Neovim (0.7.2+) against the real kernlens server:
--   nvim --headless --clean -c "luafile nvim_check.lua" WORKSPACE/FILE.py
-- env: KERNLENS (binary), PROFILE (to load), OUT (JSON report), HOVER_LINES (comma-separated
-- 1-based lines to hover). Writes a JSON report; the shell test compares it with the oracle.
local out_path = assert(os.getenv('OUT'), 'OUT not set')
local report = { steps = {} }
local function step(s) table.insert(report.steps, s) end
local function finish(code)
  local f = io.open(out_path, 'w')
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd(code == 0 and 'qa!' or 'cq!')
end

local bufnr = vim.api.nvim_get_current_buf()
local root = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p:h')
local client_id = vim.lsp.start_client({
  name = 'kernlens',
  cmd = { os.getenv('KERNLENS'), 'lsp' },
  root_dir = root,
  init_options = { kernlens = { hints = { minShare = 0.01 } } },
})
if not client_id then report.error = 'start_client failed'; return finish(1) end
vim.lsp.buf_attach_client(bufnr, client_id)
local client = vim.lsp.get_client_by_id(client_id)
report.initialized = vim.wait(10000, function() return client.initialized end, 20)
report.nvim = vim.version()
step('initialized')

local function request(method, params)
  local res = vim.lsp.buf_request_sync(bufnr, method, params, 20000)
  if not res then return nil, 'timeout' end
  local r = res[client_id]
  if not r then return nil, 'no response' end
  if r.err then return nil, r.err.message or vim.inspect(r.err) end
  return r.result
end

local uri = vim.uri_from_bufnr(bufnr)
local loaded, err = request('workspace/executeCommand',
  { command = 'kernlens.loadProfile', arguments = { os.getenv('PROFILE') } })
report.load = loaded or { error = err }
if not loaded then return finish(1) end
step('loaded')

local function hints()
  local r = request('textDocument/inlayHint', { textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 100000, character = 0 } } })
  local out = {}
  for _, h in ipairs(r or {}) do
    table.insert(out, { line = h.position.line + 1, character = h.position.character, label = h.label })
  end
  return out
end
report.hints_before = hints()

report.hovers = {}
for l in string.gmatch(os.getenv('HOVER_LINES') or '', '%d+') do
  -- Real UI path: vim.lsp.buf.hover() opens a float; read the float's text back.
  local line = tonumber(l)
  vim.api.nvim_win_set_cursor(0, { line, 4 })
  vim.lsp.buf.hover()
  local text = ''
  vim.wait(5000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      local cfg = vim.api.nvim_win_get_config(w)
      if cfg.relative ~= '' then
        text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n')
        return true
      end
    end
    return false
  end, 20)
  report.hovers[l] = text
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then vim.api.nvim_win_close(w, true) end
  end
end
step('hovered')

-- Code lenses through Neovim's own codelens module (it resolves lenses without a command).
local function lenses()
  vim.lsp.codelens.save({}, bufnr, client_id)  -- forget old lenses: wait for this refresh's
  vim.lsp.codelens.refresh()
  local got = {}
  vim.wait(10000, function()
    got = vim.lsp.codelens.get(bufnr)
    local resolved = #got > 0
    for _, lens in ipairs(got) do
      if not lens.command then resolved = false end
    end
    return resolved
  end, 50)
  local out = {}
  for _, lens in ipairs(got) do
    table.insert(out, { line = lens.range.start.line + 1,
                        title = lens.command and lens.command.title or '',
                        command = lens.command and lens.command.command or '' })
  end
  return out
end
report.lenses_before = lenses()
step('lenses')

-- Edit: insert two lines at the top (a real buffer change -> incremental didChange).
vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# inserted by the test', '# and another line' })
vim.wait(300)
report.hints_after = hints()
report.lenses_after = lenses()
step('edited')

vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.lsp.client_is_stopped(client_id) end, 20)
report.stopped = vim.lsp.client_is_stopped(client_id)
finish(0)
