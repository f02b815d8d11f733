-- kernlens for Neovim 0.7+: starts `kernlens lsp` for Python buffers and shows its results.
--
--   require('kernlens').setup({ settings = { entry = 'python3 train.py --steps 2' } })
--
-- What it does on every version (tested headless on Debian's 0.7.2):
--  - one client per workspace root (the nearest root marker above the file), attached to each
--    Python buffer; the server's `kernlens` settings are sent as initializationOptions and
--    workspace/didChangeConfiguration;
--  - GPU time per line: Neovim 0.10+ uses its native inlay hints; 0.7-0.9 get the same labels
--    as end-of-line virtual text (requested with textDocument/inlayHint, redrawn when the
--    server asks for a refresh and after edits);
--  - code lenses refreshed once the client is initialised (on attach), when the server asks
--    (workspace/codeLens/refresh) and on BufEnter / InsertLeave;
--  - hovers: the server answers plain text to Neovim < 0.10 (no Markdown tables there);
--  - commands (:Kernlens...) that call the server through workspace/executeCommand with the
--    request API of the running version; `:KernlensRun` fills the quickfix list with the run's
--    hottest lines.
-- Contract: setup() may be called once; calling it again replaces the options.
local M = {}

local api = vim.api
local has = function(v) return vim.fn.has('nvim-' .. v) == 1 end

M.options = {
  cmd = { 'kernlens', 'lsp' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git', '.kernlens' },
  settings = {},          -- the `kernlens` settings object (see docs/editors/neovim.md)
  virtual_text = nil,     -- nil: on where there are no native inlay hints (< 0.10)
  hl_group = 'Comment',   -- highlight of the virtual-text labels
  lenses = true,          -- refresh code lenses (vim.lsp.codelens)
  progress = true,        -- echo the server's $/progress messages (profiling rounds)
  on_attach = nil,        -- function(client, bufnr) called after kernlens' own attach
}

local ns = api.nvim_create_namespace('kernlens_hints')
local clients = {}        -- root -> client id
local timers = {}         -- bufnr -> debounce timer

local function notify(msg, level) vim.notify('kernlens: ' .. msg, level or vim.log.levels.INFO) end

--- A request through the client object with the calling convention of this Neovim version.
local function request(client, method, params, handler, bufnr)
  if has('0.11') then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

local function virtual_text_on()
  if M.options.virtual_text ~= nil then return M.options.virtual_text end
  return not has('0.10')
end

--- The directory holding one of the root markers, walking up from `path`; its own directory
--- when none does.
local function find_root(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local cur = dir
  while true do
    for _, marker in ipairs(M.options.root_markers) do
      if vim.loop.fs_stat(cur .. '/' .. marker) then return cur end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then return dir end
    cur = parent
  end
end

--- The kernlens client attached to `bufnr` (0 = current), or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local list
  if vim.lsp.get_clients then list = vim.lsp.get_clients({ bufnr = bufnr, name = 'kernlens' })
  else list = vim.lsp.buf_get_clients(bufnr) end
  for _, c in pairs(list or {}) do
    if c.name == 'kernlens' then return c end
  end
  return nil
end

-- ---- Per-line times as virtual text (Neovim < 0.10) ----

local function label_text(label)
  if type(label) == 'string' then return label end
  local parts = {}
  for _, p in ipairs(label or {}) do table.insert(parts, p.value or '') end
  return table.concat(parts)
end

--- Asks the server for the buffer's inlay hints and draws them as end-of-line virtual text.
function M.refresh_hints(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not virtual_text_on() or not api.nvim_buf_is_loaded(bufnr) then return end
  local client = M.client(bufnr)
  if not client then return end
  local lines = api.nvim_buf_line_count(bufnr)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                   range = { start = { line = 0, character = 0 }, ['end'] = { line = lines, character = 0 } } }
  request(client, 'textDocument/inlayHint', params, function(err, result)
    if err or not api.nvim_buf_is_loaded(bufnr) then return end
    api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    local count = api.nvim_buf_line_count(bufnr)
    for _, hint in ipairs(result or {}) do
      local line = hint.position and hint.position.line
      if line and line < count then
        api.nvim_buf_set_extmark(bufnr, ns, line, 0, {
          virt_text = { { label_text(hint.label), M.options.hl_group } },
          virt_text_pos = 'eol',
          hl_mode = 'combine',
        })
      end
    end
  end, bufnr)
end

--- The extmark labels currently drawn: { {line = 0-based, text = label}, ... } (for tests).
function M.drawn_hints(bufnr)
  local out = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(bufnr or 0, ns, 0, -1, { details = true })) do
    local chunks = m[4] and m[4].virt_text or {}
    table.insert(out, { line = m[2], text = chunks[1] and chunks[1][1] or '' })
  end
  return out
end

local function refresh_hints_later(bufnr, delay)
  if not virtual_text_on() then return end
  local t = timers[bufnr]
  if t then t:stop() else t = vim.loop.new_timer(); timers[bufnr] = t end
  t:start(delay or 300, 0, vim.schedule_wrap(function() M.refresh_hints(bufnr) end))
end

-- ---- Code lenses ----

--- Per buffer: the number of the latest lens request (older answers are dropped).
local lens_requests = {}

--- Requests the buffer's lenses and shows them. vim.lsp.codelens.refresh() drops a refresh asked
--- while another is in flight (0.7–0.10: `active_refreshes`), so the server's refresh right after
--- the attach-time one was lost and the lenses stayed "▶ Profile" without the GPU times: the
--- request is sent here, every time, and only the latest answer is shown (on_codelens resolves
--- and displays it).
function M.refresh_lenses(bufnr)
  if not M.options.lenses then return end
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = api.nvim_buf_is_loaded(bufnr) and M.client(bufnr) or nil
  if not client then return end
  if vim.lsp.codelens.on_codelens then
    local n = (lens_requests[bufnr] or 0) + 1
    lens_requests[bufnr] = n
    request(client, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(bufnr) } },
      function(err, result, ctx)
        if lens_requests[bufnr] ~= n then return end
        ctx = ctx or { bufnr = bufnr, client_id = client.id }
        ctx.bufnr, ctx.client_id = bufnr, ctx.client_id or client.id
        vim.lsp.codelens.on_codelens(err, result, ctx)
      end, bufnr)
  elseif has('0.10') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  else
    api.nvim_buf_call(bufnr, function() vim.lsp.codelens.refresh() end)
  end
end

local function attached_buffers(client_id)
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.lsp.buf_is_attached(b, client_id) then table.insert(out, b) end
  end
  return out
end

-- ---- Client ----

local function on_attach(client, bufnr)
  if has('0.10') and not virtual_text_on() then vim.lsp.inlay_hint.enable(true, { bufnr = bufnr }) end
  M.refresh_lenses(bufnr)
  M.refresh_hints(bufnr)
  local group = api.nvim_create_augroup('kernlens_buf_' .. bufnr, { clear = true })
  api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave' }, {
    group = group, buffer = bufnr,
    callback = function() M.refresh_lenses(bufnr) end,
  })
  api.nvim_create_autocmd({ 'TextChanged', 'InsertLeave' }, {
    group = group, buffer = bufnr,
    callback = function() refresh_hints_later(bufnr) end,
  })
  if M.options.on_attach then M.options.on_attach(client, bufnr) end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.codeLens = { refreshSupport = true }
  caps.workspace.inlayHint = { refreshSupport = true }
  return caps
end

local function handlers()
  local h = {}
  h['workspace/codeLens/refresh'] = function(_, _, ctx)
    for _, b in ipairs(attached_buffers(ctx.client_id)) do M.refresh_lenses(b) end
    return vim.NIL
  end
  if virtual_text_on() then
    h['workspace/inlayHint/refresh'] = function(_, _, ctx)
      for _, b in ipairs(attached_buffers(ctx.client_id)) do M.refresh_hints(b) end
      return vim.NIL
    end
  end
  h['$/progress'] = function(err, result, ctx, config)
    local default = vim.lsp.handlers['$/progress']
    if default then default(err, result, ctx, config) end
    local v = result and result.value
    if M.options.progress and type(v) == 'table' then
      local text = v.kind == 'begin' and (v.title or '') .. (v.message and (': ' .. v.message) or '')
        or (v.message or '')
      if text ~= '' then api.nvim_echo({ { 'kernlens: ' .. text } }, false, {}) end
    end
  end
  return h
end

--- Starts (or reuses) the client of the buffer's workspace and attaches the buffer.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local name = api.nvim_buf_get_name(bufnr)
  if name == '' or M.client(bufnr) then return end
  local root = find_root(name)
  local id = clients[root]
  if id and (not vim.lsp.get_client_by_id(id) or vim.lsp.client_is_stopped(id)) then id = nil end
  if not id then
    local config = {
      name = 'kernlens',
      cmd = M.options.cmd,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = { kernlens = M.options.settings },
      settings = { kernlens = M.options.settings },
      capabilities = capabilities(),
      handlers = handlers(),
      on_attach = on_attach,
    }
    if vim.lsp.start then  -- 0.8+: starts or reuses, and attaches the buffer
      id = vim.lsp.start(config, { bufnr = bufnr })
    else
      id = vim.lsp.start_client(config)
    end
    if not id then return notify('could not start ' .. table.concat(M.options.cmd, ' '), vim.log.levels.ERROR) end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

-- ---- Commands ----

--- workspace/executeCommand on the current buffer's client; `done(result)` on success.
--- The one kernlens client of the session (nil when none or several run).
local function only_client()
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ name = 'kernlens' }) or vim.lsp.get_active_clients()
  local found
  for _, c in pairs(list or {}) do
    if c.name == 'kernlens' then
      if found then return nil end
      found = c
    end
  end
  return found
end

--- workspace/executeCommand through the client of the current buffer; `anywhere`: a command
--- about the run, not the buffer (run summary, exports, cancel, clear, keep), which also works
--- from a window without kernlens (the quickfix list) when one kernlens client runs.
function M.exec(command, arguments, done, anywhere)
  local client = M.client(0) or (anywhere and only_client() or nil)
  if not client then return notify('not attached to this buffer', vim.log.levels.WARN) end
  request(client, 'workspace/executeCommand', { command = command, arguments = arguments },
    function(err, result)
      if err then return notify(command .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR) end
      if done then done(result) end
    end, api.nvim_get_current_buf())
end

local function cursor_args()
  local pos = api.nvim_win_get_cursor(0)
  return { { uri = vim.uri_from_bufnr(0), position = { line = pos[1] - 1, character = pos[2] } } }
end

--- Applies the first code action of `kind` for the whole buffer (the same on every version:
--- 0.7's vim.lsp.buf.code_action has neither `apply` nor filtering).
function M.apply_source_action(kind)
  local client = M.client(0)
  if not client then return notify('not attached to this buffer', vim.log.levels.WARN) end
  local bufnr = api.nvim_get_current_buf()
  local last = api.nvim_buf_line_count(bufnr)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                   range = { start = { line = 0, character = 0 }, ['end'] = { line = last, character = 0 } },
                   context = { diagnostics = {}, only = { kind } } }
  local enc = client.offset_encoding or 'utf-16'
  local function apply(action)
    if action.edit then vim.lsp.util.apply_workspace_edit(action.edit, enc) end
    local cmd = type(action.command) == 'table' and action.command or nil
    if cmd then M.exec(cmd.command, cmd.arguments) end
  end
  request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then return notify(err.message, vim.log.levels.ERROR) end
    local action
    for _, a in ipairs(actions or {}) do
      if a.kind == kind then action = a; break end
    end
    if not action then return notify('nothing to do (' .. kind .. ')') end
    if action.edit or action.command then return apply(action) end
    request(client, 'codeAction/resolve', action, function(e, resolved)
      if e then return notify(e.message, vim.log.levels.ERROR) end
      apply(resolved or action)
    end, bufnr)
  end, bufnr)
end

--- Fills the quickfix list with the last run's summary (kernlens.runSummary) and opens it.
function M.show_run()
  M.exec('kernlens.runSummary', {}, function(s)
    if type(s) ~= 'table' or not s.runId then return notify('no results yet') end
    local items = {}
    for _, l in ipairs(s.hottest or {}) do
      table.insert(items, { filename = l.file, lnum = l.line, col = 1,
                            text = l.time .. ' (' .. l.share .. ')' .. (l.kind == 'call' and ' total' or '')
                                   .. ' · ' .. (l.text or '') })
    end
    for _, u in ipairs(s.unmapped or {}) do
      table.insert(items, { text = 'unmapped: ' .. u.name .. (u.time and (' · ' .. u.time) or '') .. ' · ' .. u.reason, valid = 0 })
    end
    vim.fn.setqflist({}, ' ', { title = 'kernlens: ' .. (s.headline or s.runId), items = items })
    vim.cmd('copen')
  end, true)
end

local function user_commands()
  local cmd = function(name, fn, opts) api.nvim_create_user_command(name, fn, opts or {}) end
  cmd('KernlensProfileFunction', function() M.exec('kernlens.profileFunction', cursor_args()) end)
  cmd('KernlensRefine', function(o)
    M.exec('kernlens.refineHere', { { uri = vim.uri_from_bufnr(0),
      range = { start = { line = o.line1 - 1, character = 0 }, ['end'] = { line = o.line2 - 1, character = 0 } } } })
  end, { range = true })
  cmd('KernlensLoadProfile', function(o) M.exec('kernlens.loadProfile', { vim.fn.fnamemodify(o.args, ':p') }) end,
    { nargs = 1, complete = 'file' })
  cmd('KernlensCancel', function() M.exec('kernlens.cancel', {}, nil, true) end)
  cmd('KernlensClear', function() M.exec('kernlens.clearResults', {}, nil, true) end)
  cmd('KernlensRemoveRanges', function() M.apply_source_action('source.removeNvtx') end)
  cmd('KernlensKeep', function() M.exec('kernlens.keepAnnotations', {}, nil, true) end)
  cmd('KernlensRun', function() M.show_run() end)
  cmd('KernlensReport', function()
    M.exec('kernlens.exportRun', { { format = 'html' } }, function(r) if r and r.path then notify('report: ' .. r.path) end end, true)
  end)
  cmd('KernlensTrace', function()
    M.exec('kernlens.exportRun', { { format = 'perfetto' } }, function(r) if r and r.path then notify('Perfetto trace: ' .. r.path) end end, true)
  end)
  cmd('KernlensHints', function()
    if virtual_text_on() then
      M.options.virtual_text = false
      for _, b in ipairs(api.nvim_list_bufs()) do
        if api.nvim_buf_is_loaded(b) then api.nvim_buf_clear_namespace(b, ns, 0, -1) end
      end
    elseif has('0.10') then
      local on = vim.lsp.inlay_hint.is_enabled({ bufnr = 0 })
      vim.lsp.inlay_hint.enable(not on, { bufnr = 0 })
    else
      M.options.virtual_text = true
      M.refresh_hints(0)
    end
  end)
end

function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', M.options, opts or {})
  user_commands()
  local group = api.nvim_create_augroup('kernlens', { clear = true })
  api.nvim_create_autocmd('FileType', {
    group = group, pattern = 'python',
    callback = function(ev) M.attach(ev.buf) end,
  })
  -- setup() after the current buffer's FileType event (e.g. from a plugin manager).
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == 'python' then M.attach(b) end
  end
end

return M
