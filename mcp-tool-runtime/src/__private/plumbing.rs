//! Failures of the generated plumbing (recorded in the context so the exact `ToolError`
//! reaches the server) and entering and leaving flows.

use super::*;

/// The value of a plumbing step, or its error recorded in the context (so that the exact
/// `ToolError` reaches the server whatever the tool's error type makes of it) and returned
/// as the machine's error type `E`.
pub fn ok<T, E: CarriesToolError>(r: Result<T, ToolError>, cx: &mut ToolContext) -> Result<T, E> {
    r.map_err(|e| {
        cx.set_abort(e.clone());
        E::from(e)
    })
}

/// `e` recorded in the context, as the machine's error type (for a `return Err(..)`).
pub fn abort<E: CarriesToolError>(cx: &mut ToolContext, e: ToolError) -> E {
    cx.set_abort(e.clone());
    E::from(e)
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
