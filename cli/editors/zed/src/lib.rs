//! Zed's side of `redis-script-check --lsp`: the command that starts it.

use zed_extension_api as zed;

struct RedisScript;

impl zed::Extension for RedisScript {
    fn new() -> Self {
        RedisScript
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &zed::LanguageServerId,
        worktree: &zed::Worktree,
    ) -> zed::Result<zed::Command> {
        let command = worktree.which("redis-script-check").ok_or_else(|| {
            "redis-script-check is not on PATH: install it with `cargo install --path cli`"
                .to_owned()
        })?;
        Ok(zed::Command {
            command,
            args: vec!["--lsp".to_owned()],
            env: Vec::new(),
        })
    }
}

zed::register_extension!(RedisScript);
