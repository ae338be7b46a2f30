//! The `journal` checks: with answers kept by key across builds, each key a tool fixes at
//! compile time (a literal or derived request key, a flow call's site) must name one answer
//! per call, so it may neither repeat nor sit inside a loop. Keys only known at run time (set
//! on a builder made elsewhere, or computed) are the runtime's to check.

use super::model::Point;
use super::refusal::Refusal;
use super::susp;
use crate::errors::Errors;

/// Refuses, for a tool with `journal`, fixed keys and flow sites that repeat or sit in a loop
/// (`points` in source order, as lowered).
pub fn check(points: &[Point], errors: &mut Errors) {
    let mut keys: Vec<&str> = Vec::new();
    let mut sites: Vec<&str> = Vec::new();
    for p in points {
        if let Some(call) = &p.flow {
            // a computed `.key(…)` names each call at run time (the runtime checks repeats)
            let fixed = call.key.is_none() || call.literal_key().is_some();
            let site = &p.keys[0];
            if fixed && p.in_loop {
                errors.refuse(&p.susp.tokens, Refusal::JournalFlowInLoop { site });
            }
            if fixed && sites.contains(&site.as_str()) {
                errors.refuse(&p.susp.tokens, Refusal::JournalDuplicateSite { site });
            }
            sites.push(site);
        }
        for (part, key) in p.susp.parts.iter().zip(&p.keys) {
            if !susp::static_key(part) {
                continue;
            }
            if p.in_loop {
                errors.refuse(&part.tokens, Refusal::JournalKeyInLoop { key });
            }
            if keys.contains(&key.as_str()) {
                errors.refuse(&part.tokens, Refusal::JournalDuplicateKey { key });
            }
            keys.push(key);
        }
    }
}
