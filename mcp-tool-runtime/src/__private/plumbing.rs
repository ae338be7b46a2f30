//! Failures of the generated plumbing (recorded in the context so the exact `ToolError`
//! reaches the server) and entering and leaving flows.

use serde_json::value::RawValue;

use super::*;

/// The plumbing of one machine (`let __mcp_p = plumb::<E>();` at its top, `E` the machine's
/// error type): every step of the generated code that can fail with a [`ToolError`] goes
/// through it, which records the error in the context (so that the exact `ToolError` reaches
/// the server whatever the tool's error type makes of it, see [`to_step`]) and returns it as
/// `E`.
/// The bound `E: CarriesToolError` is checked once, by [`plumb`] (where a wrong error type is
/// reported); the methods convert through the function kept.
pub struct Plumb<E>(fn(ToolError) -> E);

impl<E> Clone for Plumb<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Plumb<E> {}

/// The plumbing of a machine whose error type is `E`.
pub fn plumb<E: CarriesToolError>() -> Plumb<E> {
    Plumb(E::from)
}

impl<E> Plumb<E> {
    /// The value of a plumbing step, or its error recorded in the context and returned as `E`.
    pub fn ok<T>(self, r: Result<T, ToolError>, cx: &mut ToolContext) -> Result<T, E> {
        r.map_err(|e| self.abort(cx, e))
    }

    /// `e` recorded in the context, as `E`.
    pub fn abort(self, cx: &mut ToolContext, e: ToolError) -> E {
        cx.set_abort(e.clone());
        (self.0)(e)
    }

    /// [`ToolError::InvalidState`], recorded (a saved stage the machine does not have).
    pub fn invalid<T>(self, cx: &mut ToolContext) -> Result<T, E> {
        Err(self.abort(cx, ToolError::InvalidState))
    }

    /// Opens the saved state, if any: its stage name (`""` without a state: the first round)
    /// and its variables (see [`open_state`]).
    pub fn open(self, cx: &mut ToolContext, state: Option<&RawValue>) -> Result<(String, Vars), E> {
        match state {
            None => Ok((String::new(), Vars::default())),
            Some(saved) => self.ok(open_state(saved), cx),
        }
    }

    /// Registers the request of `point` built by `builder` (see [`request_key`]).
    pub fn request<B: InputBuilder>(
        self,
        cx: &mut ToolContext,
        point: &'static Point,
        builder: B,
    ) -> Result<Marker<B>, E> {
        let r = request_key(cx, point, point.regen, builder);
        self.ok(r, cx)
    }

    /// Like [`Plumb::request`], made again from the state only when `regen` holds too (the
    /// variables its builder reads were saved).
    pub fn request_if<B: InputBuilder>(
        self,
        cx: &mut ToolContext,
        point: &'static Point,
        regen: bool,
        builder: B,
    ) -> Result<Marker<B>, E> {
        let r = request_key(cx, point, point.regen && regen, builder);
        self.ok(r, cx)
    }

    /// Ends the round: the state is `[stage, {name: value}]` (see [`suspend_full`]); a
    /// variable that does not save is the error.
    pub fn suspend<R, const N: usize>(
        self,
        cx: &mut ToolContext,
        stage: &str,
        vars: [(&'static str, Result<Json, ToolError>); N],
    ) -> Result<FlowStep<R>, E> {
        self.suspend_full(cx, stage, vars, [], [])
    }

    /// Like [`Plumb::suspend`], also keeping the markers' keys that differ from the derived
    /// ones (`Marker::kept`).
    pub fn suspend_keys<R, const N: usize, const M: usize>(
        self,
        cx: &mut ToolContext,
        stage: &str,
        vars: [(&'static str, Result<Json, ToolError>); N],
        keys: [(&'static str, Option<String>); M],
    ) -> Result<FlowStep<R>, E> {
        self.suspend_full(cx, stage, vars, [], keys)
    }

    /// Like [`Plumb::suspend_keys`], also keeping the variables saved only to make the
    /// requests again (`(name, Some(json))`; `None`: not saved, the requests are kept whole).
    pub fn suspend_full<R, const N: usize, const S: usize, const M: usize>(
        self,
        cx: &mut ToolContext,
        stage: &str,
        vars: [(&'static str, Result<Json, ToolError>); N],
        soft: [(&'static str, Option<Json>); S],
        keys: [(&'static str, Option<String>); M],
    ) -> Result<FlowStep<R>, E> {
        let vars = self.ok(saved_vars(vars), cx)?;
        self.ok(suspend_full(stage, vars, soft, keys), cx)
    }

    /// Ends the round inside a flow call, whose suspended `flow` is kept under the name `slot`
    /// (see [`suspend_flow`]; `default_site`: the call site the macro derived).
    pub fn suspend_flow<R, F, const N: usize>(
        self,
        cx: &mut ToolContext,
        stage: &str,
        vars: [(&'static str, Result<Json, ToolError>); N],
        slot: &'static str,
        flow: FlowSlot<F>,
        default_site: &str,
    ) -> Result<FlowStep<R>, E> {
        let vars = self.ok(saved_vars(vars), cx)?;
        match flow {
            FlowSlot::Saved(site, state) => self.ok(
                suspend_flow(stage, vars, slot, state, &site, default_site),
                cx,
            ),
            // not reached: the generated code suspends only a saved slot
            FlowSlot::Done(_) => self.invalid(cx),
        }
    }
}

/// The saved variables, or the first that does not save.
fn saved_vars<const N: usize>(
    vars: [(&'static str, Result<Json, ToolError>); N],
) -> Result<SavedVars, ToolError> {
    vars.into_iter()
        .map(|(k, v)| v.map(|v| (std::borrow::Cow::Borrowed(k), v)))
        .collect()
}

/// One request of a suspension point, as the macro derived it (a `const` of the machine,
/// shared by the first request, the one made again and the loading of its marker).
pub struct Point {
    pub(super) name: &'static str,
    pub(super) key: &'static str,
    pub(super) fixed: bool,
    pub(super) regen: bool,
}

/// The [`Point`] whose marker is kept in the state as `name` (when its key is not the
/// derived one), whose request has the key `key` (`fixed`: written with `.key("…")` at the
/// point) and can be made again from the state (`regen`, see [`request_key`]).
pub const fn point(name: &'static str, key: &'static str, fixed: bool, regen: bool) -> Point {
    Point {
        name,
        key,
        fixed,
        regen,
    }
}

/// The recorded plumbing failure, if any.
pub fn take_abort(cx: &mut ToolContext) -> Option<ToolError> {
    cx.take_abort()
}

// ---- flows ----------------------------------------------------------------------------------

/// Enters a flow (keys get `<site>/` in front); returns the mark for [`flow_leave`].
pub fn flow_enter(cx: &mut ToolContext, default_site: &str) -> usize {
    cx.enter_flow(default_site)
}

/// Leaves the flow entered with `mark`.
pub fn flow_leave(cx: &mut ToolContext, mark: usize) {
    cx.leave_flow(mark)
}

/// Names the call site of the next flow (direct mode: the key the state machine derives).
pub fn site<'c>(cx: &'c mut ToolContext, site: &str) -> &'c mut ToolContext {
    cx.set_site(site.to_owned());
    cx
}

// ---- one round's outcome --------------------------------------------------------------------

/// One round of a tool's, prompt's or resource's machine as a [`Step`]: a plumbing failure
/// recorded in the context first (the exact `ToolError`), then the completed value
/// (`done`: the generated `__mcp_done`, shared with direct mode), the suspension with its
/// state, or the function's error (through `done` as well, so it is converted in one place).
pub fn to_step<R: ToolReturn, O>(
    cx: &mut ToolContext,
    out: Result<FlowStep<R>, R::Error>,
    done: impl FnOnce(R) -> Result<O, ToolError>,
) -> Result<Step<O>, ToolError> {
    if let Some(e) = cx.take_abort() {
        return Err(e);
    }
    match out {
        Ok(FlowStep::Done(r)) => done(r).map(Step::Complete),
        Ok(FlowStep::Suspended(state)) => Ok(Step::Suspend { state }),
        Err(e) => done(R::from_error(e)).map(Step::Complete),
    }
}

/// The end of a direct-mode call: a plumbing failure recorded in the context first, else the
/// function's result `r` completed by `done` (the generated `__mcp_done`, shared with `step`).
pub fn direct_done<R, O>(
    cx: &mut ToolContext,
    r: R,
    done: impl FnOnce(R) -> Result<O, ToolError>,
) -> Result<O, ToolError> {
    match cx.take_abort() {
        Some(e) => Err(e),
        None => done(r),
    }
}
