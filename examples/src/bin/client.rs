//! `client`: the interactive MCP client under its old name, for the commands and tests written
//! against `target/debug/client`. The client itself is the `mcp-tool-cli` crate (installed as
//! `mcp-tool`); this binary is the same program.

fn main() -> std::process::ExitCode {
    mcp_tool_cli::main()
}
