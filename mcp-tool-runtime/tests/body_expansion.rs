//! How much memory a maximal request body takes once parsed: the figure behind
//! `transport::http::DEFAULT_MAX_BODY_BYTES` (1 MiB). A counting allocator measures the
//! peak of `serde_json::from_slice::<Value>` for the worst shapes we know of.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_runtime::transport::http::DEFAULT_MAX_BODY_BYTES;
use serde_json::Value;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers every call to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes allocated while parsing `body` (the body itself excluded).
fn parse_peak(body: &[u8]) -> usize {
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let v: Value = serde_json::from_slice(body).expect("valid JSON");
    let peak = PEAK.load(Ordering::SeqCst) - base;
    drop(v);
    peak
}

fn filled(unit: &str) -> Vec<u8> {
    let n = (DEFAULT_MAX_BODY_BYTES - 2) / (unit.len() + 1);
    let mut body = String::with_capacity(DEFAULT_MAX_BODY_BYTES);
    body.push('[');
    for i in 0..n {
        if i > 0 {
            body.push(',');
        }
        body.push_str(unit);
    }
    body.push(']');
    assert!(body.len() <= DEFAULT_MAX_BODY_BYTES);
    body.into_bytes()
}

/// The shapes at the default limit: arrays of empty objects (the shape the issue names)
/// peak at 24 times the body, arrays of one-member objects (a `BTreeMap` node each) at
/// about 83 times, the worst we know: under 90 times, about 90 MiB per 1 MiB request.
/// These are the figures the documentation of `DEFAULT_MAX_BODY_BYTES` states.
#[test]
fn a_maximal_body_expands_less_than_90_times_when_parsed() {
    assert_eq!(DEFAULT_MAX_BODY_BYTES, 1024 * 1024);
    let mut worst = 0.0f64;
    for unit in ["{}", "[]", "0", "{\"a\":0}", "[[]]"] {
        let body = filled(unit);
        let peak = parse_peak(&body);
        let factor = peak as f64 / body.len() as f64;
        println!(
            "{unit:>8}: body {} B, peak {peak} B, {factor:.1}x",
            body.len()
        );
        if unit == "{}" {
            assert!((15.0..=25.0).contains(&factor), "[{{}},…]: {factor:.1}x");
        }
        worst = worst.max(factor);
    }
    assert!(worst < 90.0, "worst expansion {worst:.1}x");
    // And the worst shape really is far above the empty objects: the figure is not vacuous.
    assert!(worst > 50.0, "worst expansion {worst:.1}x");
}
