//! Test-only package: cross-crate end-to-end tests and tests against independent peers
//! (see tests/tests/), plus [`fixture`], the fixture tools of the official MCP conformance
//! suite, served by the `conformance_fixture` binary; [`store_suite`] (what every store
//! backend must do) and [`once_replicas`] (a single-use round replayed on another replica
//! of a shared store), run against each backend; [`feed_suite`] (what every change feed
//! must do, and its latency); [`lambda_emulator`], the example tools on the Lambda runtime
//! emulator (`cargo lambda watch`), every round on a cold instance; [`loopback_arg`], the
//! address argument of the benchmark comparators (tests/examples/).

/// The README's Rust code: every block is compiled (and run unless marked `no_run`) by the
/// doctests of this package.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeCode;

/// The guide's Rust code (docs/GUIDE.md): compiled (and run unless marked `no_run`) by the
/// doctests of this package; a block marked `ignore` is an excerpt of a compiled file, checked
/// by `tests/docs_code.rs`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/GUIDE.md")]
pub struct GuideCode;

pub mod feed_suite;
pub mod fixture;
pub mod lambda_emulator;
pub mod once_replicas;
pub mod services;
pub mod store_suite;

/// The first command-line argument as the address a benchmark comparator listens on
/// (default `127.0.0.1:0`); anything but a loopback address is refused: they serve
/// benchmarks on this machine, never a network.
pub fn loopback_arg() -> Result<std::net::SocketAddr, Box<dyn std::error::Error>> {
    let addr: std::net::SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    if !addr.ip().is_loopback() {
        return Err("serves loopback addresses only".into());
    }
    Ok(addr)
}
