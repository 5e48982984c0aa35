//! `redis-script-check --lsp`: a language server over stdio giving the
//! editor the verdict `cargo build` gives.
//!
//! It is built on `lsp-server` and `lsp-types`, rust-analyzer's own
//! transport and protocol types: a synchronous loop over a channel of
//! messages, no async runtime. The analysis takes a few milliseconds a
//! script and runs on the loop's thread, so an edit is answered before
//! the next one is read; nothing needs cancelling or locking.

mod actions;
mod call_site;
mod completion;
mod diagnose;
mod hover;
mod rust_crate;
mod text;
mod uri;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::ExitCode;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, GotoDefinition, HoverRequest, RegisterCapability, Request as _,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern,
    GotoDefinitionResponse, HoverProviderCapability, InitializeParams, OneOf,
    PublishDiagnosticsParams, Registration, RegistrationParams, SaveOptions, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use diagnose::{Crates, Verdict};

/// Runs the server on stdin and stdout until the editor says `exit`.
pub fn run() -> ExitCode {
    let (connection, io_threads) = Connection::stdio();
    let outcome = serve(&connection);
    // The writer thread ends when the connection's sender is dropped.
    drop(connection);
    let joined = io_threads.join();
    match (outcome, joined) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(message), _) => {
            eprintln!("redis-script-check --lsp: {message}");
            ExitCode::from(1)
        }
        (_, Err(error)) => {
            eprintln!("redis-script-check --lsp: {error}");
            ExitCode::from(1)
        }
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["'".to_owned(), "\"".to_owned()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        definition_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// One open document.
#[derive(Debug)]
struct Document {
    text: String,
    path: Option<PathBuf>,
    /// The latest verdict, for a `.lua` document.
    verdict: Verdict,
}

impl Document {
    fn is_rust(&self) -> bool {
        self.path
            .as_ref()
            .is_some_and(|path| path.extension().is_some_and(|ext| ext == "rs"))
    }
}

#[derive(Debug, Default)]
struct Server {
    documents: HashMap<Uri, Document>,
    crates: Crates,
    next_request: i32,
}

fn serve(connection: &Connection) -> Result<(), String> {
    let initialize = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo {
            name: "redis-script-check".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        },
    });
    let (id, params) = connection
        .initialize_start()
        .map_err(|error| error.to_string())?;
    connection
        .initialize_finish(id, initialize)
        .map_err(|error| error.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let mut server = Server::default();
    let watches = params
        .capabilities
        .workspace
        .and_then(|workspace| workspace.did_change_watched_files)
        .and_then(|watched| watched.dynamic_registration)
        .unwrap_or(false);
    if watches {
        server.watch_files(connection);
    }
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|error| error.to_string())?
                {
                    return Ok(());
                }
                let id = request.id.clone();
                let response =
                    std::panic::catch_unwind(AssertUnwindSafe(|| server.answer(request)))
                        .unwrap_or_else(|_| {
                            Response::new_err(
                        id,
                        ErrorCode::InternalError as i32,
                        "internal error in redis-script-check; please report it with the script"
                            .to_owned(),
                    )
                        });
                send(connection, response.into());
            }
            Message::Notification(notification) => {
                // A panic while analysing loses that verdict, never the
                // server.
                let published =
                    std::panic::catch_unwind(AssertUnwindSafe(|| server.notice(notification)))
                        .unwrap_or_default();
                for (uri, diagnostics) in published {
                    publish(connection, uri, diagnostics);
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn send(connection: &Connection, message: Message) {
    // The only failure is a closed connection, which ends the loop.
    let _ = connection.sender.send(message);
}

fn publish(connection: &Connection, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>) {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version: None,
    };
    send(
        connection,
        Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into(),
    );
}

fn parse<T: DeserializeOwned>(params: Value) -> Option<T> {
    serde_json::from_value(params).ok()
}

impl Server {
    /// Asks the editor to say when files the verdicts depend on change:
    /// the crate's Rust sources, scripts, configurations.
    fn watch_files(&mut self, connection: &Connection) {
        let watchers = ["**/*.rs", "**/*.lua", "**/*.toml", "**/*.commands"]
            .into_iter()
            .map(|pattern| FileSystemWatcher {
                glob_pattern: GlobPattern::String(pattern.to_owned()),
                kind: None,
            })
            .collect();
        let registration = Registration {
            id: "redis-script-watch".to_owned(),
            method: DidChangeWatchedFiles::METHOD.to_owned(),
            register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions {
                watchers,
            })
            .ok(),
        };
        self.next_request += 1;
        let request = Request::new(
            RequestId::from(self.next_request),
            RegisterCapability::METHOD.to_owned(),
            RegistrationParams {
                registrations: vec![registration],
            },
        );
        send(connection, request.into());
    }

    fn answer(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            HoverRequest::METHOD => parse::<lsp_types::HoverParams>(request.params).map(|params| {
                let at = params.text_document_position_params;
                let hover = self
                    .documents
                    .get(&at.text_document.uri)
                    .and_then(|document| {
                        hover::hover(&document.text, at.position, &document.verdict)
                    });
                serde_json::to_value(hover)
            }),
            Completion::METHOD => {
                parse::<lsp_types::CompletionParams>(request.params).map(|params| {
                    let at = params.text_document_position;
                    let items = self
                        .documents
                        .get(&at.text_document.uri)
                        .map(|document| {
                            completion::complete(
                                &document.text,
                                at.position,
                                &document.verdict.target,
                            )
                        })
                        .unwrap_or_default();
                    serde_json::to_value(items)
                })
            }
            CodeActionRequest::METHOD => {
                parse::<lsp_types::CodeActionParams>(request.params).map(|params| {
                    let actions = self
                        .documents
                        .get(&params.text_document.uri)
                        .map(|document| {
                            actions::code_actions(
                                &params.text_document.uri,
                                &document.text,
                                &params.context.diagnostics,
                            )
                        })
                        .unwrap_or_default();
                    serde_json::to_value(actions)
                })
            }
            GotoDefinition::METHOD => {
                parse::<lsp_types::GotoDefinitionParams>(request.params).map(|params| {
                    let uri = params.text_document_position_params.text_document.uri;
                    let locations: Vec<lsp_types::Location> = self
                        .documents
                        .get(&uri)
                        .map(|document| {
                            document
                                .verdict
                                .declarations
                                .iter()
                                .filter_map(diagnose::rust_location)
                                .collect()
                        })
                        .unwrap_or_default();
                    let response =
                        (!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations));
                    serde_json::to_value(response)
                })
            }
            _ => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("redis-script-check does not answer `{}`", request.method),
                );
            }
        };
        match result {
            Some(Ok(value)) => Response {
                id,
                result: Some(value),
                error: None,
            },
            Some(Err(error)) => {
                Response::new_err(id, ErrorCode::InternalError as i32, error.to_string())
            }
            None => Response::new_err(
                id,
                ErrorCode::InvalidParams as i32,
                "the request's parameters do not parse".to_owned(),
            ),
        }
    }

    /// Handles a notification; returns the diagnostics to publish.
    fn notice(&mut self, notification: Notification) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidOpenTextDocumentParams>(notification.params)
                else {
                    return Vec::new();
                };
                let uri = params.text_document.uri;
                let document = Document {
                    path: uri::to_path(&uri),
                    text: params.text_document.text,
                    verdict: Verdict::default(),
                };
                self.documents.insert(uri.clone(), document);
                self.changed(&uri)
            }
            DidChangeTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidChangeTextDocumentParams>(notification.params)
                else {
                    return Vec::new();
                };
                let uri = params.text_document.uri;
                let Some(document) = self.documents.get_mut(&uri) else {
                    return Vec::new();
                };
                for change in params.content_changes {
                    text::apply(&mut document.text, change);
                }
                self.changed(&uri)
            }
            DidCloseTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidCloseTextDocumentParams>(notification.params)
                else {
                    return Vec::new();
                };
                let uri = params.text_document.uri;
                let Some(closed) = self.documents.remove(&uri) else {
                    return Vec::new();
                };
                match (closed.is_rust(), &closed.path) {
                    (true, Some(path)) => {
                        self.crates.close_rust_file(path);
                        self.diagnose_all()
                    }
                    // Its diagnostics leave with it.
                    _ => vec![(uri, Vec::new())],
                }
            }
            DidSaveTextDocument::METHOD | DidChangeWatchedFiles::METHOD => {
                self.crates.mark_stale();
                self.diagnose_all()
            }
            _ => Vec::new(),
        }
    }

    /// After the text of `uri` changed: its diagnostics, or, for a Rust
    /// file, every script's again.
    fn changed(&mut self, uri: &Uri) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
        let Some(document) = self.documents.get(uri) else {
            return Vec::new();
        };
        if document.is_rust() {
            if let Some(path) = &document.path {
                self.crates.update_rust_file(path, &document.text);
            }
            return self.diagnose_all();
        }
        self.diagnose(uri).into_iter().collect()
    }

    fn diagnose(&mut self, uri: &Uri) -> Option<(Uri, Vec<lsp_types::Diagnostic>)> {
        let document = self.documents.get_mut(uri)?;
        let path = document.path.clone()?;
        if document.is_rust() {
            return None;
        }
        document.verdict = diagnose::diagnose(&path, &document.text, &mut self.crates);
        Some((uri.clone(), document.verdict.diagnostics.clone()))
    }

    fn diagnose_all(&mut self) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
        let uris: Vec<Uri> = self.documents.keys().cloned().collect();
        uris.iter().filter_map(|uri| self.diagnose(uri)).collect()
    }
}
