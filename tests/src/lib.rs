//! Test-only package: cross-crate end-to-end tests and tests against independent peers
//! (see tests/tests/), plus [`fixture`], the fixture tools of the official MCP conformance
//! suite, served by the `conformance_fixture` binary.

pub mod fixture;
pub mod store_suite;
