//! Unit tests of the plumbing the generated machines call: requests under a [`Point`], the
//! state a suspension writes and a resumed stage reads back, and the arguments per stage.

use serde_json::json;
use serde_json::value::RawValue;

use super::*;
use crate::context::ToolContext;
use crate::principal::Principal;
use crate::protocol::ClientCapabilities;

const DERIVED: Point = point("__mcp_m0", "dirs", false, true);
const FIXED: Point = point("__mcp_m1", "fixed", true, true);

fn cx() -> ToolContext {
    ToolContext::new(Principal::named("p"), ClientCapabilities::all())
}

/// `v` as saved JSON text.
fn raw(v: Value) -> Json {
    serde_json::value::to_raw_value(&v).expect("serializes")
}

/// Saved JSON text read back as a tree.
fn tree(j: &RawValue) -> Value {
    serde_json::from_str(j.get()).expect("JSON")
}

fn suspended(step: Result<FlowStep<Result<(), ToolError>>, ToolError>) -> Json {
    match step {
        Ok(FlowStep::Suspended(state)) => state,
        _ => panic!("a suspension expected"),
    }
}

#[test]
fn a_key_set_on_the_builder_is_kept_and_read_back() {
    let p = plumb::<ToolError>();
    let mut cx = cx();
    let m = p
        .request(&mut cx, &DERIVED, Roots::new().key("mine"))
        .expect("registered");
    assert_eq!(m.key(), "mine");
    assert_eq!(m.kept(), ("__mcp_m0", Some("mine".to_owned())));
    let state = suspended(p.suspend_keys(&mut cx, "S0", [("x", Ok(raw(json!(1))))], [m.kept()]));
    assert_eq!(tree(&state), json!(["S0", {"x": 1, "__mcp_m0": "mine"}]));

    let mut cx = self::cx();
    let (stage, mut vars) = p.open(&mut cx, Some(&state)).expect("opens");
    assert_eq!(stage, "S0");
    let m: Marker<Roots> = vars.marker(&DERIVED);
    assert_eq!(m.key(), "mine");
    assert_eq!(m.kept(), ("__mcp_m0", Some("mine".to_owned())));
    let x: Slot<u32> = vars.saved("x");
    assert!(matches!(x, Slot::Saved(v) if tree(&v) == json!(1)));
    assert!(vars.check().is_ok());
}

#[test]
fn a_derived_or_fixed_key_is_not_kept() {
    let p = plumb::<ToolError>();
    let mut cx = cx();
    let derived = p
        .request(&mut cx, &DERIVED, Roots::new())
        .expect("registered");
    assert_eq!(derived.kept(), ("__mcp_m0", None));
    // `.key("…")` at the suspension point wins over a key set on the builder
    let fixed = p
        .request(&mut cx, &FIXED, Roots::new().key("other"))
        .expect("registered");
    assert_eq!(fixed.key(), "fixed");
    assert_eq!(fixed.kept(), ("__mcp_m1", None));
    let state = suspended(p.suspend_keys(&mut cx, "S1", [], [derived.kept(), fixed.kept()]));
    assert_eq!(tree(&state), json!(["S1"]));
    let (_, mut vars) = p.open(&mut cx, Some(&state)).expect("opens");
    assert_eq!(vars.marker::<Roots>(&DERIVED).key(), "dirs");
    assert!(vars.check().is_ok());
}

#[test]
fn a_missing_variable_rejects_the_state_once_loaded() {
    let p = plumb::<ToolError>();
    let mut cx = cx();
    let (stage, mut vars) = p
        .open(&mut cx, Some(&raw(json!(["S2", {"y": 2}]))))
        .expect("opens");
    assert_eq!(stage, "S2");
    let _: Slot<u32> = vars.saved("x");
    let _: Slot<u32> = vars.saved("y");
    let r = p.ok(vars.check(), &mut cx);
    assert!(matches!(r, Err(ToolError::InvalidState)));
    // recorded, so the exact error reaches the server
    assert!(matches!(cx.take_abort(), Some(ToolError::InvalidState)));
}

#[test]
fn no_state_is_the_first_round_and_a_malformed_one_is_invalid() {
    let p = plumb::<ToolError>();
    let mut cx = cx();
    let (stage, vars) = p.open(&mut cx, None).expect("first round");
    assert_eq!(stage, "");
    assert!(vars.check().is_ok());
    assert!(matches!(
        p.open(&mut cx, Some(&raw(json!({"S0": 1})))),
        Err(ToolError::InvalidState)
    ));
    // a stage and its variables, nothing more
    assert!(matches!(
        p.open(&mut cx, Some(&raw(json!(["S0", {}, 3])))),
        Err(ToolError::InvalidState)
    ));
    assert!(matches!(
        p.open(&mut cx, Some(&raw(json!([])))),
        Err(ToolError::InvalidState)
    ));
    assert!(matches!(
        p.invalid::<()>(&mut cx),
        Err(ToolError::InvalidState)
    ));
}

#[test]
fn a_variable_that_does_not_save_is_the_suspensions_error() {
    let p = plumb::<ToolError>();
    let mut cx = cx();
    let r = p.suspend::<Result<(), ToolError>, 2>(
        &mut cx,
        "S0",
        [
            ("a", Ok(raw(json!(1)))),
            ("b", Err(ToolError::Internal("no".into()))),
        ],
    );
    assert!(matches!(r, Err(ToolError::Internal(_))));
    assert!(cx.take_abort().is_some());
}

#[test]
fn the_arguments_are_parsed_up_front_then_again_per_stage() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct A {
        n: u32,
    }
    let text = raw(json!({"n": 3}));
    let mut args = Args::<A>::json(&text).expect("parses");
    assert_eq!(args.get().expect("first"), A { n: 3 });
    assert_eq!(args.get().expect("again"), A { n: 3 });
    assert!(Args::<A>::json(&raw(json!({"n": "x"}))).is_err());
}
