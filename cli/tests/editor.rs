//! A real editor shows the checker's diagnostics: Neovim, from Debian's
//! packages, with the set-up the README gives (`cli/editors/neovim.lua`),
//! on a crate whose script reads an argument its Rust declaration does not
//! send. Headless, its diagnostic list is read back; in a pseudo-terminal,
//! its screen is captured (the README shows it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_snapshot, ci_tools, workspace};

const DECLARATION: &str = "\
use redis_script::redis_script;

/// Releases the lock when the token still holds it.
#[redis_script(path = \"lua/release.lua\", keys = 1)]
pub async fn release(lock: &str, token: &str) -> i64;
";

const SCRIPT: &str = "\
-- Deletes the lock only when the caller's token still holds it.
if redis.call('GET', KEYS[1]) == ARGV[2] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

fn scratch_crate(name: &str) -> PathBuf {
    common::scratch_crate(name, DECLARATION, &[("release.lua", SCRIPT)])
}

/// `PATH` with the built checker first, as `cargo install` would put it.
fn path_with_checker() -> String {
    let checker = Path::new(env!("CARGO_BIN_EXE_redis-script-check"));
    let directory = checker.parent().expect("the binary's directory");
    format!(
        "{}:{}",
        directory.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn setup() -> PathBuf {
    workspace().join("cli/editors/neovim.lua")
}

#[test]
fn neovim_shows_the_diagnostics() {
    ci_tools();
    let root = scratch_crate("neovim-headless");
    let out = root.join("diagnostics.json");
    let dump = format!(
        "lua vim.wait(20000, function() return #vim.diagnostic.get(0) >= 2 end, 50) \
         local file = io.open('{}', 'w') \
         file:write(vim.fn.json_encode(vim.diagnostic.get(0))) file:close() \
         vim.cmd('qa!')",
        out.display()
    );
    let status = Command::new("nvim")
        .current_dir(&root)
        .env("PATH", path_with_checker())
        .args(["--clean", "--headless", "--cmd"])
        .arg(format!("luafile {}", setup().display()))
        .args(["lua/release.lua", "-c", &dump])
        .status()
        .expect("run nvim");
    assert!(status.success(), "nvim ended with {status}");
    let text = std::fs::read_to_string(&out).expect("the diagnostics Neovim holds");
    let diagnostics: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let shown: Vec<(u64, u64, String)> = diagnostics
        .as_array()
        .expect("a list")
        .iter()
        .map(|diagnostic| {
            (
                diagnostic["lnum"].as_u64().unwrap_or(u64::MAX),
                diagnostic["col"].as_u64().unwrap_or(u64::MAX),
                diagnostic["message"]
                    .as_str()
                    .and_then(|message| message.lines().next())
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert!(
        shown.contains(&(
            1,
            33,
            "`ARGV[2]` is out of range: the Rust function declares 1 argument".to_owned()
        )),
        "{shown:#?}"
    );
    assert!(
        shown.contains(&(
            0,
            0,
            "`token` (`ARGV[1]`) is never read by the script".to_owned()
        )),
        "{shown:#?}"
    );
}

#[test]
fn the_readme_shows_neovims_screen() {
    ci_tools();
    let root = scratch_crate("neovim-screen");
    let output = Command::new("python3")
        .current_dir(&root)
        .env("PATH", path_with_checker())
        .arg(workspace().join("cli/tests/editor/screen.py"))
        .arg(setup())
        .args(["lua/release.lua", "2", "is out of range"])
        .output()
        .expect("run screen.py");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let screen = String::from_utf8(output.stdout).expect("text");
    assert_snapshot("neovim-screen.txt", &screen);
    let readme = std::fs::read_to_string(workspace().join("cli/README.md")).expect("README");
    assert!(
        readme.contains(screen.trim_end()),
        "cli/README.md shows another screen than Neovim's:\n{screen}"
    );
}
