//! The client side: the [`Host`] trait that answers input requests, ready-made hosts,
//! client transports and the [`Driver`] that runs a `tools/call` through its rounds.

pub mod host;

pub use host::{Host, HostError, HostFuture, ScriptedHost};
