//! seal
