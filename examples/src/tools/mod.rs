//! The example tools, one module per tool, each written as one linear `async fn` with
//! `#[mcp_tool]`.

use std::sync::Arc;

use mcp_tool_runtime::Tool;

pub mod confirm;
pub mod donate;
pub mod get_weather;
pub mod link_accounts;
pub mod list_roots;
pub mod notes;
pub mod prune_branches;
pub mod review;
pub mod slow_job;
pub mod sum_of_squares;
pub mod summarize_repo;

/// Every example tool, ready for `ServerBuilder::tool`.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(summarize_repo::summarize_repo::tool()),
        Arc::new(get_weather::get_weather::tool()),
        Arc::new(link_accounts::link_accounts::tool()),
        Arc::new(sum_of_squares::sum_of_squares::tool()),
        Arc::new(list_roots::list_roots::tool()),
        Arc::new(prune_branches::prune_branches::tool()),
        Arc::new(notes::add_note::tool()),
        Arc::new(notes::list_notes::tool()),
        Arc::new(notes::delete_notes::tool()),
        Arc::new(notes::edit_note::tool()),
        Arc::new(donate::donate::tool()),
        Arc::new(donate::balance::tool()),
    ]
}

/// The tools that run as tasks, registered by `serve` (which gives them a task store,
/// `--store`) but not by [`all`]: `slow_job`.
pub fn task_tools() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(slow_job::slow_job::tool())]
}

/// Cuts untrusted text (a model's answer) to at most `max` bytes at a character boundary.
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
