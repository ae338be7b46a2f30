//! The fuzz targets' budget and runner: proptest on stable Rust, with the number of cases
//! from `MCP_FUZZ_CASES` (scripts/fuzz.sh sets millions; the normal `cargo test` run uses
//! each target's small default so CI stays fast).
#![allow(dead_code)]

use std::fmt::Debug;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// The number of cases: `MCP_FUZZ_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("MCP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Runs `test` on `cases(default)` inputs drawn from `strategy` (shrinking a failure, no
/// persistence file), then prints the count for scripts/fuzz.sh to add up.
pub fn fuzz<S: Strategy>(
    name: &str,
    default: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: Debug,
{
    let n = cases(default);
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        max_shrink_iters: 2048,
        ..Config::default()
    });
    let started = std::time::Instant::now();
    if let Err(e) = runner.run(&strategy, test) {
        panic!("fuzz target {name} failed: {e}");
    }
    println!(
        "fuzz target {name}: {n} cases, 0 failures, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
