//! The domain types every version of the tool shares (not counted as author code: each
//! version would declare them the same way).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CityArgs {
    /// The city to rate.
    pub city: String,
}

/// The answer to the first round's form.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Login {
    /// A GitHub username.
    pub name: String,
}

/// The tool's structured result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    pub user: String,
    pub city: String,
    pub verdict: String,
}

/// The weather lookup both rounds share (stands in for real work between rounds).
pub fn fetch(city: &str) -> String {
    format!("sunny in {city}")
}
