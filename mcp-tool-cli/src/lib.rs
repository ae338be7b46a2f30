//! `mcp-tool`: an interactive terminal client for MCP 2026-07-28 servers, the kind
//! that answer a tool call with `input_required` (multi round-trip requests, SEP-2322).
//!
//! ```text
//! cargo install --path mcp-tool-cli        # from a clone of mcp-tool; installs `mcp-tool`
//! mcp-tool --stdio "serve --repo ."                                          # a server on stdio
//! mcp-tool --url https://mcp.example.com/mcp --bearer TOKEN                   # Streamable HTTP
//! mcp-tool --url https://localhost:8443/mcp --ca-cert ca.pem                  # a private CA
//! mcp-tool --url … --call get_weather --args '{"location":"Paris"}'          # one call, then exit
//! ```
//!
//! It discovers the server, lists its tools and calls one: the tool's arguments are asked
//! field by field from its `inputSchema` ([`arguments`]), validated like elicitation forms,
//! unless `--args JSON` (scripts) or `NAME {JSON}` at the prompt gives them whole. Every
//! round is shown as it happens ([`host::Showing`]); elicitations are answered at the prompt
//! ([`interactive::Console`]), sampling by the `--sampling` responder, `roots/list` with the
//! `--root` directories. Over HTTP, failed rounds that no replica answered are sent again
//! ([`RetryTransport`](mcp_tool_client::RetryTransport): backoff with jitter, the
//! server's `Retry-After` honoured).
//!
//! The library is what the binary is made of, so that other binaries (the examples' `client`)
//! can be the same program: [`main`] runs it on the process's arguments.

#![warn(missing_docs)]

pub mod app;
pub mod arguments;
mod fields;
pub mod host;
pub mod interactive;

/// Runs the client on the process's command line, standard input and output; the exit status
/// is 1 when it fails (an error on standard error) or when a `--call` fails.
pub fn main() -> std::process::ExitCode {
    use clap::Parser;
    let cli = app::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(app::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
