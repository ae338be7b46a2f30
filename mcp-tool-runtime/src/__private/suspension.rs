//! The suspension points of a generated stage: registering a request under its key
//! ([`Marker`], `request_key`), re-asking, taking answers, and iterating across rounds.

use std::collections::VecDeque;
use std::marker::PhantomData;

use super::*;
use crate::context::Reentrant;

/// The request of one suspension point between its registration and its answer: the
/// builder type and the key it was registered under (kept in the state when it differs
/// from the key the macro derived).
pub struct Marker<B> {
    pub(super) key: String,
    /// Its name in the state (see [`Point`]).
    pub(super) name: &'static str,
    /// The key is not the one the macro derived (so the state keeps it).
    pub(super) custom: bool,
    pub(super) _builder: PhantomData<fn() -> B>,
}

impl<B> Marker<B> {
    /// The key the request was registered under.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The entry to keep in the state under the marker's name: `None` when the key is the
    /// one the macro derived (restored from the macro).
    pub fn kept(&self) -> (&'static str, Option<String>) {
        (self.name, self.custom.then(|| self.key.clone()))
    }
}

/// Registers `builder`'s request for `point`. With `fixed` (a `.key("…")` written at the
/// suspension point) the key is the point's `key`; otherwise a key set on the builder value
/// where it was built wins and `key` (derived from the binding) is the default, as in direct
/// mode. A key used twice in one round is the runtime's duplicate-key error.
///
/// With `regen`, the machine can make the request again from its state (the stage after the
/// suspension point keeps everything the builder reads and starts with [`reasking`]), so the
/// server keeps only the request's kind in the sealed state, not the request itself.
pub fn request_key<B: InputBuilder>(
    cx: &mut ToolContext,
    point: &'static Point,
    regen: bool,
    builder: B,
) -> Result<Marker<B>, ToolError> {
    let (key, custom) = match builder.explicit_key() {
        Some(k) if !point.fixed => (k.to_owned(), k != point.key),
        _ => (point.key.to_owned(), false),
    };
    let req = builder.into_request()?;
    if regen {
        cx.request_reproducible(key.clone(), req)?;
    } else {
        cx.request(key.clone(), req)?;
    }
    Ok(Marker {
        key,
        name: point.name,
        custom,
        _builder: PhantomData,
    })
}

/// True when this run only makes the requests of the stage it resumes again (answers to
/// them are missing): the stage registers them and ends with [`reask`].
pub fn reasking(cx: &ToolContext) -> bool {
    cx.is_reasking()
}

/// Ends a re-asking run (see [`reasking`]): the server sends the requests just made again,
/// with the state it received.
pub fn reask<R, E>() -> Result<FlowStep<R>, E> {
    Ok(FlowStep::Suspended(
        serde_json::value::RawValue::NULL.to_owned(),
    ))
}

/// Takes the answer to the request of `marker`, under the key it was registered with.
pub fn answer_for<B: InputBuilder>(
    cx: &mut ToolContext,
    marker: Marker<B>,
) -> Result<B::Output, ToolError> {
    cx.take_answer::<B>(&marker.key)
}

/// Combines the answers of one `cx.round(..)` into a tuple.
pub fn answers<A: Answers>(a: A) -> Result<A::Output, ToolError> {
    a.collect()
}

/// A tuple of answer results (`(Result<A>, Result<B>, ..)`).
pub trait Answers {
    /// The tuple of values.
    type Output;
    /// The values, or the first error.
    fn collect(self) -> Result<Self::Output, ToolError>;
}

macro_rules! answers_tuple {
    ($($T:ident $t:ident),+) => {
        impl<$($T),+> Answers for ($(Result<$T, ToolError>,)+) {
            type Output = ($($T,)+);
            fn collect(self) -> Result<Self::Output, ToolError> {
                let ($($t,)+) = self;
                Ok(($($t?,)+))
            }
        }
    };
}

answers_tuple!(A a);
answers_tuple!(A a, B b);
answers_tuple!(A a, B b, C c);
answers_tuple!(A a, B b, C c, D d);
answers_tuple!(A a, B b, C c, D d, E e);
answers_tuple!(A a, B b, C c, D d, E e, F f);
answers_tuple!(A a, B b, C c, D d, E e, F f, G g);
answers_tuple!(A a, B b, C c, D d, E e, F f, G g, H h);

/// What a resumed checkpoint evaluates to.
pub fn resumed() -> Result<(), ToolError> {
    Ok(())
}

/// The items of a `for` loop that contains a suspension point, kept in the state.
pub fn for_items<I: IntoIterator>(src: I) -> VecDeque<I::Item> {
    src.into_iter().collect()
}

/// Item `pos` of an iterable evaluated again from the arguments (a `for` loop over a
/// borrow of the arguments keeps only its position); missing: the state does not fit.
pub fn nth_item<I: IntoIterator>(src: I, pos: usize) -> Result<I::Item, ToolError> {
    src.into_iter().nth(pos).ok_or_else(|| {
        tracing::warn!("saved loop position is past the end of the arguments' items");
        ToolError::InvalidState
    })
}
