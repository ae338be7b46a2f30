//! `mcp-tool`: the interactive MCP client of [`mcp_tool_cli`]; see its docs or
//! `mcp-tool --help`.

fn main() -> std::process::ExitCode {
    mcp_tool_cli::main()
}
