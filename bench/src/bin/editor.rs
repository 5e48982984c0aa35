//! How fast the language server answers an edit of a large script, and
//! whether its memory stays flat over many edits.
//!
//! Run: `cargo build --release -p redis-script-check && cargo run --release
//! -p redis-script-bench --bin editor [-- EDITS]`
//!
//! It writes a crate of its own in the temporary directory: `src/lib.rs`
//! declares `lua/big.lua` with `#[redis_script]`, and `lua/big.lua` is
//! every script of `tests/lua/corpus` as a local function of one chunk,
//! 600 lines or more. It starts `redis-script-check --lsp` (the release
//! build next to this program), opens the script, and sends `EDITS` edits
//! (10,000 unless given), one at a time: each changes one character of
//! the last line and waits for the diagnostics it publishes. The time from
//! sending the edit to reading its diagnostics is what an editor waits.
//! The server's resident memory is read from `/proc` along the way.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "../corpus.rs"]
mod corpus;

type BoxError = Box<dyn std::error::Error>;

/// Writes one framed message.
fn send(stdin: &mut ChildStdin, message: &Value) -> Result<(), BoxError> {
    let body = message.to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    stdin.flush()?;
    Ok(())
}

/// Reads one framed message.
fn read(reader: &mut impl BufRead) -> Result<Value, BoxError> {
    let mut length = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            return Err("the server closed its output".into());
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("Content-Length: ") {
            length = Some(value.parse::<usize>()?);
        }
    }
    let mut body = vec![0; length.ok_or("a message without Content-Length")?];
    reader.read_exact(&mut body)?;
    Ok(serde_json::from_slice(&body)?)
}

/// Reads until the diagnostics of `uri` come, and returns how many.
fn diagnostics_of(reader: &mut impl BufRead, uri: &str) -> Result<usize, BoxError> {
    loop {
        let message = read(reader)?;
        if message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
        {
            return Ok(message["params"]["diagnostics"]
                .as_array()
                .map_or(0, Vec::len));
        }
    }
}

/// The server's resident memory in KiB.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn scratch_crate(script: &str) -> Result<PathBuf, BoxError> {
    let root =
        std::env::temp_dir().join(format!("redis-script-bench-editor-{}", std::process::id()));
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::create_dir_all(root.join("lua"))?;
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"bench\"\nversion = \"0.1.0\"\n",
    )?;
    std::fs::write(
        root.join("src/lib.rs"),
        "#[redis_script::redis_script(path = \"lua/big.lua\", keys = 1, allow_unused, dynamic_keys)]\n\
         pub async fn big(keys: &[&str], args: &[&str]) -> i64;\n",
    )?;
    std::fs::write(root.join("lua/big.lua"), script)?;
    Ok(root)
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn main() -> Result<(), BoxError> {
    let edits: usize = match std::env::args().nth(1) {
        Some(text) => text.parse()?,
        None => 10_000,
    };
    let checker = std::env::current_exe()?
        .parent()
        .map(|directory| directory.join("redis-script-check"))
        .filter(|path| path.is_file())
        .ok_or("build the checker first: cargo build --release -p redis-script-check")?;
    let script = corpus::one_chunk(&corpus::scripts(), 600);
    let lines = script.lines().count();
    let root = scratch_crate(&script)?;
    let path = root.join("lua/big.lua");
    let uri = format!("file://{}", path.display());

    let mut server = Command::new(&checker)
        .arg("--lsp")
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let pid = server.id();
    let mut stdin = server.stdin.take().ok_or("no stdin")?;
    let mut reader = BufReader::new(server.stdout.take().ok_or("no stdout")?);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    )?;
    read(&mut reader)?;
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    )?;
    let started = Instant::now();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "lua", "version": 1, "text": script}}}),
    )?;
    let first = diagnostics_of(&mut reader, &uri)?;
    let open_time = started.elapsed();

    // `return 1` on the last line becomes `return 0`, `return 1`, …
    let last_line = lines - 1;
    let mut latencies = Vec::with_capacity(edits);
    let mut memory = vec![(0, resident_kib(pid))];
    for edit in 0..edits {
        let digit = (edit % 10).to_string();
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": edit + 2},
        "contentChanges": [{
            "range": {"start": {"line": last_line, "character": 7},
                      "end": {"line": last_line, "character": 8}},
            "text": digit,
        }]}});
        let sent = Instant::now();
        send(&mut stdin, &change)?;
        diagnostics_of(&mut reader, &uri)?;
        latencies.push(sent.elapsed());
        if (edit + 1) % (edits / 10).max(1) == 0 {
            memory.push((edit + 1, resident_kib(pid)));
        }
    }
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null}),
    )?;
    read(&mut reader)?;
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "exit", "params": null}),
    )?;
    server.wait()?;
    let _ = std::fs::remove_dir_all(&root);

    latencies.sort();
    let at = |percent: f64| {
        let rank = ((percent / 100.0) * latencies.len() as f64).ceil() as usize;
        milliseconds(latencies[rank.saturating_sub(1).min(latencies.len() - 1)])
    };
    println!(
        "### An edit of a {lines}-line script a Rust declaration names ({edits} edits, one at a time)\n"
    );
    println!("| open: diagnostics ms | edit p50 ms | p90 ms | p99 ms | max ms | diagnostics |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {first} |",
        milliseconds(open_time),
        at(50.0),
        at(90.0),
        at(99.0),
        at(100.0)
    );
    println!("\n### The server's resident memory\n");
    println!("| after edits | RSS MiB |");
    println!("| ---: | ---: |");
    for (after, kib) in memory {
        match kib {
            Some(kib) => println!("| {after} | {:.1} |", kib as f64 / 1024.0),
            None => println!("| {after} | (no /proc) |"),
        }
    }
    Ok(())
}
