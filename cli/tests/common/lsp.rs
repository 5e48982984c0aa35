//! A language-server client for the tests: it starts `redis-script-check
//! --lsp`, speaks JSON-RPC with `Content-Length` framing over its stdio,
//! and waits for answers with a bound, so a silent server fails the test
//! instead of hanging it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one answer may take.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// The latest diagnostics published per URI, and how many times.
    pub published: HashMap<String, (Vec<Value>, usize)>,
    /// Requests the server sent (`client/registerCapability`).
    pub server_requests: Vec<Value>,
}

/// The `file://` URI of a path (the tests' paths are plain ASCII).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Client {
    /// Starts the server in `directory` with extra environment variables,
    /// and initializes it (with file watching offered when `watch`).
    pub fn start(directory: &Path, environment: &[(&str, &str)], watch: bool) -> Client {
        let mut command = Command::new(env!("CARGO_BIN_EXE_redis-script-check"));
        command
            .arg("--lsp")
            .current_dir(directory)
            .env_remove("REDIS_SCRIPT_TARGET")
            .env_remove("REDIS_SCRIPT_COMMANDS")
            .env_remove("REDIS_SCRIPT_BASE_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in environment {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start redis-script-check --lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            messages,
            next_id: 0,
            published: HashMap::new(),
            server_requests: Vec::new(),
        };
        let initialized = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri(directory),
                "capabilities": {
                    "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": watch}},
                    "textDocument": {"publishDiagnostics": {"relatedInformation": true}},
                },
            }),
        );
        assert!(
            initialized["capabilities"]["hoverProvider"] == json!(true),
            "{initialized}"
        );
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its `result` (panics on an error
    /// answer), keeping what the server publishes meanwhile.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request_answer(method, params);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Sends a request and returns the whole answer.
    pub fn request_answer(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = self.next_message(deadline, method);
            if message.get("method").is_none() && message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn next_message(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = match self.messages.recv_timeout(left) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("no answer to {waiting_for} in {PATIENCE:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the server closed its output waiting for {waiting_for}")
            }
        };
        match message["method"].as_str() {
            Some("textDocument/publishDiagnostics") => {
                let uri = message["params"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let diagnostics = message["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let entry = self.published.entry(uri).or_default();
                entry.0 = diagnostics;
                entry.1 += 1;
            }
            Some(_) if message.get("id").is_some() => {
                // A request from the server: answered, as an editor does.
                let id = message["id"].clone();
                self.server_requests.push(message.clone());
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            _ => {}
        }
        message
    }

    /// Waits until the server has published diagnostics for `uri` at
    /// least `count` times in all, and returns the latest.
    pub fn diagnostics(&mut self, uri: &str, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some((diagnostics, times)) = self.published.get(uri)
                && *times >= count
            {
                return diagnostics.clone();
            }
            self.next_message(deadline, &format!("diagnostics of {uri}"));
        }
    }

    /// Times the server published for `uri` so far.
    pub fn published_times(&self, uri: &str) -> usize {
        self.published.get(uri).map_or(0, |(_, times)| *times)
    }

    /// Opens a document with `text` and returns its first diagnostics.
    pub fn open(&mut self, path: &Path, text: &str) -> Vec<Value> {
        let uri = uri(path);
        let before = self.published_times(&uri);
        let language = if path.extension().is_some_and(|ext| ext == "rs") {
            "rust"
        } else {
            "lua"
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        self.diagnostics(&uri, before + 1)
    }

    /// Says `shutdown` and `exit`, and checks the server ends well.
    pub fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "the server ended with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A test that failed midway leaves no server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One framed message, or `None` at the end of the stream.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
