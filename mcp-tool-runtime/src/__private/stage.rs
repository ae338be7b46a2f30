//! What a generated stage keeps between rounds: the kept-variable probes, [`Slot`], the
//! stage name and variables ([`Vars`]) sealed into `requestState`, and `suspend*`.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

/// [`ToolError::InvalidState`].
pub fn invalid_state() -> ToolError {
    ToolError::InvalidState
}

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
    Saved(Value),
    /// Not in the state: a variable kept only to make a request again, which was not saved
    /// (see [`SoftProbe`]).
    Absent,
}

impl<T> Slot<T> {
    /// The slot of a variable kept only to make a request again: its JSON saved before the
    /// request was made (`ty` pins its type), or absent.
    pub fn soft(saved: Option<Value>, _ty: Ty<T>) -> Slot<T> {
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
    save: fn(&T) -> Result<Value, ToolError>,
    restore: fn(Value) -> Result<T, ToolError>,
}

impl<T> KeptVTable<T> {
    /// The variable's saved JSON.
    pub fn save(&self, v: &T) -> Result<Value, ToolError> {
        (self.save)(v)
    }

    /// The variable's value: live, or restored from its JSON (of another type ->
    /// [`ToolError::InvalidState`]).
    pub fn take(&self, slot: Slot<T>) -> Result<T, ToolError> {
        match slot {
            Slot::Live(v) => Ok(v),
            Slot::Saved(json) => (self.restore)(json),
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
            serde_json::to_value(v).map_err(|e| {
                // the error text may quote the value: only its category is logged
                tracing::debug!(category = ?e.classify(), "a kept variable does not serialize");
                ToolError::Internal(
                    "a variable kept across a suspension point does not serialize".into(),
                )
            })
        },
        restore: |v| {
            serde_json::from_value(v).map_err(|e| {
                tracing::warn!(category = ?e.classify(), "a saved variable does not deserialize");
                ToolError::InvalidState
            })
        },
    }
}

/// The saved state: `[stage]`, or `[stage, {name: value}]` when variables are kept (an
/// array, the shortest JSON for it: the state travels on every round).
fn state_value(stage: &str, vars: JsonObject) -> Value {
    let stage = Value::String(stage.to_owned());
    if vars.is_empty() {
        Value::Array(vec![stage])
    } else {
        Value::Array(vec![stage, Value::Object(vars)])
    }
}

/// Ends the round: the state is `[stage, {name: value}]` (see `state_value`).
pub fn suspend<R, E, const N: usize>(
    stage: &str,
    vars: [(&str, Value); N],
) -> Result<FlowStep<R>, E> {
    let vars: JsonObject = vars.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    Ok(FlowStep::Suspended(state_value(stage, vars)))
}

/// Like [`suspend`], also keeping the markers' keys that differ from the derived ones
/// (`(marker name, Marker::saved(..))`), next to the variables.
pub fn suspend_keys<R, E, const N: usize, const M: usize>(
    stage: &str,
    vars: [(&str, Value); N],
    keys: [(&str, Option<String>); M],
) -> Result<FlowStep<R>, E> {
    suspend_full(stage, vars, [], keys)
}

/// Like [`suspend_keys`], also keeping the variables saved only to make the requests again
/// (`(name, Some(json))`; `None`: not saved, the requests are kept whole instead).
pub fn suspend_full<R, E, const N: usize, const S: usize, const M: usize>(
    stage: &str,
    vars: [(&str, Value); N],
    soft: [(&str, Option<Value>); S],
    keys: [(&str, Option<String>); M],
) -> Result<FlowStep<R>, E> {
    let soft = soft
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| (name, v)));
    let extra = keys
        .into_iter()
        .filter_map(|(name, k)| k.map(|k| (name, Value::String(k))));
    let vars: JsonObject = vars
        .into_iter()
        .chain(soft)
        .chain(extra)
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    Ok(FlowStep::Suspended(state_value(stage, vars)))
}

/// Ends the round inside a flow call: the flow's own state is kept under the slot's name,
/// and its call-site name under `<slot>_site` when it is not the derived one.
pub fn suspend_flow<R, E, const N: usize>(
    stage: &str,
    vars: [(&str, Value); N],
    slot: &str,
    flow_state: Value,
    site: &str,
    default_site: &str,
) -> Result<FlowStep<R>, E> {
    let mut vars: JsonObject = vars.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    vars.insert(slot.to_owned(), flow_state);
    if site != default_site {
        vars.insert(format!("{slot}_site"), Value::String(site.to_owned()));
    }
    Ok(FlowStep::Suspended(state_value(stage, vars)))
}

/// A flow call between the caller's stages: finished in this round, or saved.
pub enum FlowSlot<R> {
    /// The flow returned.
    Done(R),
    /// The flow suspended: its call site and state.
    Saved(String, Value),
}

/// The saved variables of a state opened with [`open_state`].
#[derive(Debug)]
pub struct Vars(JsonObject);

impl Vars {
    /// The saved JSON of the kept variable `name`; absent -> [`ToolError::InvalidState`].
    pub fn saved<T>(&mut self, name: &str) -> Result<Slot<T>, ToolError> {
        self.0.remove(name).map(Slot::Saved).ok_or_else(|| {
            tracing::warn!(var = name, "saved state lacks a variable");
            ToolError::InvalidState
        })
    }

    /// The saved JSON of `name`, kept only to make a request again: absent when it was not
    /// saved (see [`SoftProbe`]).
    pub fn saved_soft<T>(&mut self, name: &str) -> Slot<T> {
        self.0.remove(name).map_or(Slot::Absent, Slot::Saved)
    }

    /// The marker `name` of a resumed stage: the key kept by [`suspend_keys`], else `default`.
    pub fn marker<B>(&mut self, name: &str, default: &str) -> Result<Marker<B>, ToolError> {
        let key = self.site(name, default)?;
        Ok(Marker {
            key,
            _builder: PhantomData,
        })
    }

    /// The slot of a flow call saved by [`suspend_flow`].
    pub fn flow<R>(&mut self, slot: &str, default_site: &str) -> Result<FlowSlot<R>, ToolError> {
        let state = self.0.remove(slot).ok_or_else(|| {
            tracing::warn!(slot, "saved state lacks a flow's state");
            ToolError::InvalidState
        })?;
        let site = self.site(&format!("{slot}_site"), default_site)?;
        Ok(FlowSlot::Saved(site, state))
    }

    fn site(&mut self, name: &str, default: &str) -> Result<String, ToolError> {
        match self.0.remove(name) {
            None => Ok(default.to_owned()),
            Some(Value::String(k)) => Ok(k),
            Some(_) => {
                tracing::warn!(name, "saved request key is not a string");
                Err(ToolError::InvalidState)
            }
        }
    }
}

/// Opens a state written by [`suspend`]: its stage name and variables.
pub fn open_state(saved: Value) -> Result<(String, Vars), ToolError> {
    let Value::Array(items) = saved else {
        return Err(ToolError::InvalidState);
    };
    let mut items = items.into_iter();
    let (Some(Value::String(stage)), vars, None) = (items.next(), items.next(), items.next())
    else {
        return Err(ToolError::InvalidState);
    };
    let vars = match vars {
        Some(Value::Object(v)) => v,
        None => JsonObject::new(),
        Some(_) => return Err(ToolError::InvalidState),
    };
    Ok((stage, Vars(vars)))
}
