-- redis-script-check as the language server of every Lua buffer, for
-- Neovim 0.7 to 0.10 (0.11 and later: see the checker's README). Source it
-- from init.lua (`dofile("/path/to/neovim.lua")`) or paste it there; the
-- checker must be on PATH (`cargo install redis-script-check`).
local client_id
vim.api.nvim_create_autocmd("FileType", {
  pattern = "lua",
  callback = function(event)
    if not client_id then
      client_id = vim.lsp.start_client({
        name = "redis-script",
        cmd = { "redis-script-check", "--lsp" },
        root_dir = vim.fn.getcwd(),
      })
    end
    if client_id then
      vim.lsp.buf_attach_client(event.buf, client_id)
    end
  end,
})
