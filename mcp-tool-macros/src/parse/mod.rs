//! Parsing: the attribute's options ([`attr`]) and the function's signature ([`sig`]).

pub mod attr;
pub mod sig;

pub use attr::{TaskOpt, TaskStartOpt, ToolAttr, doc_string, parse_attr, parse_flow_attr};
pub use sig::{FLOW_LIFETIME, FnKind, Param, Sig, parse_sig};
