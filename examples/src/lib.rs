//! Example tools written with `#[mcp_tool]`.
