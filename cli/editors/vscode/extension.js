// Starts `redis-script-check --lsp` for the Lua files of the workspace.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate() {
  const command = vscode.workspace.getConfiguration("redisScript").get("path");
  client = new LanguageClient(
    "redis-script",
    "redis-script",
    { command, args: ["--lsp"] },
    { documentSelector: [{ scheme: "file", language: "lua" }] },
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
