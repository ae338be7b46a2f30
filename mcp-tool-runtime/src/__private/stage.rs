//! What a generated stage keeps between rounds: the kept-variable probes, [`Slot`], the
//! stage name and variables ([`Vars`]) sealed into `requestState`, and `suspend*`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::*;

/// Saved JSON text: a kept variable's, a flow's, a stage's whole state.
pub type Json = Box<RawValue>;

/// Values held across a suspension point are stored in the sealed state, so they must
/// round-trip through JSON as owned data. Implemented for nothing: a kept variable whose type
/// is not `Serialize + DeserializeOwned` reaches this bound (through [`autoref::NotKept`]) and
/// gets this one diagnostic, at the variable.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is held across a suspension point but is not serializable",
    label = "this variable is used after a suspension point (`ask`, `sample`, `roots`, a flow, …), so it is stored in the requestState",
    note = "variables kept across a suspension point need `Serialize + DeserializeOwned`: owned data, no borrows",
    note = "derive `Serialize, Deserialize`, turn it into an owned value before the suspension point (`.to_owned()`, `.to_vec()`), or compute it again afterwards"
)]
pub trait Kept {}

/// A kept variable in a resumed stage: live (the stage was reached in this round) or saved
/// (restored from the state when the stage's arm needs it).
pub enum Slot<T> {
    /// The value, reached in this round.
    Live(T),
    /// The saved JSON, from the state.
    Saved(Json),
    /// Not in the state: a variable kept only to make a request again, which was not saved
    /// (see [`SoftProbe`]).
    Absent,
}

impl<T> Slot<T> {
    /// The slot of a variable kept only to make a request again: its JSON saved before the
    /// request was made (`ty` pins its type), or absent.
    pub fn soft(saved: Option<Json>, _ty: Ty<T>) -> Slot<T> {
        match saved {
            Some(v) => Slot::Saved(v),
            None => Slot::Absent,
        }
    }
}

/// The type of a variable, without borrowing it (see [`type_of`]).
pub struct Ty<T>(PhantomData<fn() -> T>);

/// The type of `v`.
pub fn type_of<T>(_v: &T) -> Ty<T> {
    Ty(PhantomData)
}

/// Dispatch on the type of a variable the stage after a suspension point keeps only so that
/// it can make the point's requests again: read by a request's builder, not used later (see
/// [`autoref::IsSoft`]). Unlike [`KeptProbe`], a type that does not serialize is no error:
/// the request is then kept whole in the state.
pub struct SoftProbe<T>(PhantomData<fn() -> T>);

/// The soft dispatcher for the type of `v`.
pub fn soft_probe<T>(_v: &T) -> SoftProbe<T> {
    SoftProbe(PhantomData)
}

/// The soft dispatcher for the type of the value in `slot`.
pub fn soft_probe_slot<T>(_slot: &Slot<T>) -> SoftProbe<T> {
    SoftProbe(PhantomData)
}

/// Dispatch on the type of a kept variable (see [`autoref::IsKept`]).
pub struct KeptProbe<T>(PhantomData<fn() -> T>);

/// The dispatcher for the type of `v`.
pub fn probe<T>(_v: &T) -> KeptProbe<T> {
    KeptProbe(PhantomData)
}

/// The dispatcher for the type of the value in `slot`.
pub fn probe_slot<T>(_slot: &Slot<T>) -> KeptProbe<T> {
    KeptProbe(PhantomData)
}

/// How one kept variable is saved and restored.
pub struct KeptVTable<T> {
    save: fn(&T) -> Result<Json, ToolError>,
    restore: fn(&RawValue) -> Result<T, ToolError>,
}

impl<T> KeptVTable<T> {
    /// The variable's saved JSON.
    pub fn save(&self, v: &T) -> Result<Json, ToolError> {
        (self.save)(v)
    }

    /// The variable's value: live, or restored from its JSON (of another type ->
    /// [`ToolError::InvalidState`]).
    pub fn take(&self, slot: Slot<T>) -> Result<T, ToolError> {
        match slot {
            Slot::Live(v) => Ok(v),
            Slot::Saved(json) => (self.restore)(&json),
            Slot::Absent => {
                tracing::warn!("a saved variable is missing");
                Err(ToolError::InvalidState)
            }
        }
    }
}

/// The save/restore table of a serializable type.
pub(super) fn vtable_of<T: Serialize + DeserializeOwned>() -> KeptVTable<T> {
    KeptVTable {
        save: |v| {
            serde_json::value::to_raw_value(v).map_err(|e| {
                // the error text may quote the value: only its category is logged
                tracing::debug!(category = ?e.classify(), "a kept variable does not serialize");
                ToolError::Internal(
                    "a variable kept across a suspension point does not serialize".into(),
                )
            })
        },
        restore: |v| {
            serde_json::from_str(v.get()).map_err(|e| {
                tracing::warn!(category = ?e.classify(), "a saved variable does not deserialize");
                ToolError::InvalidState
            })
        },
    }
}

/// The variables a suspension saves, by name (the names are the macro's, but a flow's
/// call-site entry: `<slot>_site`).
pub(super) type SavedVars = Vec<(Cow<'static, str>, Json)>;

/// The saved state `[stage]`, or `[stage, {name: value}]` when variables are kept (an array,
/// the shortest JSON for it: the state travels on every round), written as JSON text.
#[derive(Serialize)]
struct StateOut<'a>(
    &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")] BTreeMap<&'a str, &'a RawValue>,
);

/// The state of `stage` with `vars`, as [`FlowStep::Suspended`].
fn suspended<R>(stage: &str, vars: &SavedVars) -> Result<FlowStep<R>, ToolError> {
    let vars = vars.iter().map(|(k, v)| (k.as_ref(), &**v)).collect();
    serde_json::value::to_raw_value(&StateOut(stage, vars))
        .map(FlowStep::Suspended)
        .map_err(|e| ToolError::Internal(format!("the state does not serialize: {e}")))
}

/// A request key kept in the state, as JSON.
fn key_json(key: &str) -> Result<Json, ToolError> {
    serde_json::value::to_raw_value(key)
        .map_err(|e| ToolError::Internal(format!("a request key does not serialize: {e}")))
}

/// The state `[stage, {name: value}]` (see `StateOut`) of the saved variables `vars`, the
/// variables saved only to make the requests again (`(name, Some(json))`; `None`: not saved,
/// the requests are kept whole instead) and the markers' keys that differ from the derived
/// ones (`(marker name, Marker::kept(..))`).
pub(super) fn suspend_full<R, const S: usize, const M: usize>(
    stage: &str,
    mut vars: SavedVars,
    soft: [(&'static str, Option<Json>); S],
    keys: [(&'static str, Option<String>); M],
) -> Result<FlowStep<R>, ToolError> {
    for (name, v) in soft {
        if let Some(v) = v {
            vars.push((Cow::Borrowed(name), v));
        }
    }
    for (name, k) in keys {
        if let Some(k) = k {
            vars.push((Cow::Borrowed(name), key_json(&k)?));
        }
    }
    suspended(stage, &vars)
}

/// The state of a round ended inside a flow call: the flow's own state is kept under the
/// slot's name, and its call-site name under `<slot>_site` when it is not the derived one.
pub(super) fn suspend_flow<R>(
    stage: &str,
    mut vars: SavedVars,
    slot: &'static str,
    flow_state: Json,
    site: &str,
    default_site: &str,
) -> Result<FlowStep<R>, ToolError> {
    vars.push((Cow::Borrowed(slot), flow_state));
    if site != default_site {
        vars.push((Cow::Owned(format!("{slot}_site")), key_json(site)?));
    }
    suspended(stage, &vars)
}

/// A flow call between the caller's stages: finished in this round, or saved.
pub enum FlowSlot<R> {
    /// The flow returned.
    Done(R),
    /// The flow suspended: its call site and state.
    Saved(String, Json),
}

impl<R> FlowSlot<R> {
    /// The flow suspended.
    pub fn suspended(&self) -> bool {
        matches!(self, FlowSlot::Saved(..))
    }
}

/// A round of a flow call (`FlowOps::call`, `FlowOps::again`): the flow's step as a
/// [`FlowSlot`], its state kept with the call site.
pub struct SlotFuture<'s, R> {
    step: BoxFuture<'s, FlowStep<R>>,
    site: String,
}

impl<'s, R> SlotFuture<'s, R> {
    pub(super) fn new(step: BoxFuture<'s, FlowStep<R>>, site: String) -> Self {
        SlotFuture { step, site }
    }
}

impl<R> std::future::Future for SlotFuture<'_, R> {
    type Output = FlowSlot<R>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<FlowSlot<R>> {
        let this = self.get_mut();
        this.step.as_mut().poll(cx).map(|step| match step {
            FlowStep::Done(r) => FlowSlot::Done(r),
            FlowStep::Suspended(state) => FlowSlot::Saved(std::mem::take(&mut this.site), state),
        })
    }
}

/// The saved variables of a state opened with [`open_state`]. The generated code loads a
/// stage's fields one after another without checking each (a missing one is recorded and
/// stands in as a placeholder), then calls [`Vars::check`] once: the fields of a stage fit on
/// one line each.
#[derive(Debug, Default)]
pub struct Vars(Vec<(String, Json)>, bool);

impl Vars {
    /// Takes the saved JSON of `name`.
    fn take(&mut self, name: &str) -> Option<Json> {
        let at = self.0.iter().position(|(k, _)| k == name)?;
        Some(self.0.swap_remove(at).1)
    }

    /// The saved JSON of the kept variable `name`; absent: recorded (see [`Vars::check`]).
    pub fn saved<T>(&mut self, name: &str) -> Slot<T> {
        match self.take(name) {
            Some(v) => Slot::Saved(v),
            None => {
                tracing::warn!(var = name, "saved state lacks a variable");
                self.1 = true;
                Slot::Absent
            }
        }
    }

    /// The saved JSON of `name`, kept only to make a request again: absent when it was not
    /// saved (see [`SoftProbe`]).
    pub fn saved_soft<T>(&mut self, name: &str) -> Slot<T> {
        self.take(name).map_or(Slot::Absent, Slot::Saved)
    }

    /// The marker of `point` in a resumed stage: the key kept by `suspend_keys`, else the
    /// point's.
    pub fn marker<B>(&mut self, point: &'static Point) -> Marker<B> {
        let key = self.site(point.name, point.key);
        Marker {
            custom: key != point.key,
            key,
            name: point.name,
            _builder: PhantomData,
        }
    }

    /// The slot of a flow call saved by `suspend_flow`.
    pub fn flow<R>(&mut self, slot: &str, default_site: &str) -> FlowSlot<R> {
        let state = self.take(slot).unwrap_or_else(|| {
            tracing::warn!(slot, "saved state lacks a flow's state");
            self.1 = true;
            RawValue::NULL.to_owned()
        });
        let site = self.site(&format!("{slot}_site"), default_site);
        FlowSlot::Saved(site, state)
    }

    /// [`ToolError::InvalidState`] when a field loaded so far was missing or malformed.
    pub fn check(&self) -> Result<(), ToolError> {
        if self.1 {
            Err(ToolError::InvalidState)
        } else {
            Ok(())
        }
    }

    fn site(&mut self, name: &str, default: &str) -> String {
        match self.take(name) {
            None => default.to_owned(),
            Some(json) => serde_json::from_str::<String>(json.get()).unwrap_or_else(|_| {
                tracing::warn!(name, "saved request key is not a string");
                self.1 = true;
                default.to_owned()
            }),
        }
    }
}

/// A state written by `suspend*` as read: `[stage]` or `[stage, {name: value}]`, nothing
/// else.
#[derive(Deserialize)]
struct StateIn(String, #[serde(default)] BTreeMap<String, Json>);

/// Opens a state written by `suspend*`: its stage name and variables.
pub fn open_state(saved: &RawValue) -> Result<(String, Vars), ToolError> {
    let StateIn(stage, vars) =
        serde_json::from_str(saved.get()).map_err(|_| ToolError::InvalidState)?;
    Ok((stage, Vars(vars.into_iter().collect(), false)))
}
