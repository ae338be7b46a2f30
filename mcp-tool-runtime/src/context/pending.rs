//! What `cx.ask(..)`, `cx.sample(..)`, `cx.round(..)` and `cx.checkpoint()` return: a
//! builder bound to the context ([`Pending`], [`RoundPending`], [`Checkpoint`]), which the
//! `#[mcp_tool]` transform splits at its `.await` and which runs for real in direct mode
//! (where the context's host answers).

use std::future::IntoFuture;

use serde::de::DeserializeOwned;

use super::{OUTSIDE_TRANSFORM, Reentrant, ToolContext};
use crate::error::{BoxFuture, ToolError};
use crate::host::host_error;
use crate::requests::{Ask, Elicit, InputBuilder, Roots, Sample, UrlElicit};

impl ToolContext {
    // --- Linear, author-facing API ------------------------------------------------------

    /// Form elicitation of a `T`; decline/cancel become [`ToolError::Declined`]/[`ToolError::Cancelled`].
    pub fn ask<T>(&mut self, message: impl Into<String>) -> Pending<'_, Ask<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Ask::new(message))
    }

    /// Form elicitation of a `T`, with decline/cancel as values.
    pub fn elicit<T>(&mut self, message: impl Into<String>) -> Pending<'_, Elicit<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Elicit::new(message))
    }

    /// URL-mode elicitation.
    pub fn elicit_url(
        &mut self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Pending<'_, UrlElicit> {
        Pending::new(self, UrlElicit::new(message, url))
    }

    /// Sampling.
    pub fn sample(&mut self, sample: Sample) -> Pending<'_, Sample> {
        Pending::new(self, sample)
    }

    /// Roots listing.
    pub fn roots(&mut self) -> Pending<'_, Roots> {
        Pending::new(self, Roots::new())
    }

    /// Several requests in one round: `cx.round((Ask::<A>::new(".."), Sample::user("..")))`.
    pub fn round<S: RoundSet>(&mut self, set: S) -> RoundPending<'_, S> {
        RoundPending { cx: self, set }
    }

    /// A round with no input request, only `requestState` (load shedding).
    pub fn checkpoint(&mut self) -> Checkpoint<'_> {
        Checkpoint { cx: self }
    }

    // --- Direct mode --------------------------------------------------------------------

    fn next_key<B: InputBuilder>(&mut self, b: &B) -> String {
        match b.explicit_key() {
            Some(k) => k.to_owned(),
            None => {
                self.counter = self.counter.saturating_add(1);
                format!("{}_{}", B::key_prefix(), self.counter)
            }
        }
    }

    /// Direct mode: sends one builder's request to the host (under the key the state
    /// machine would use, flow prefix included) and takes the answer.
    async fn direct_one<B: InputBuilder>(&mut self, builder: B) -> Result<B::Output, ToolError> {
        let key = self.next_key(&builder);
        let full = self.scoped(&key).into_owned();
        let req = builder.into_request()?;
        let Some(host) = self.host.as_mut() else {
            return Err(ToolError::Internal(OUTSIDE_TRANSFORM.to_owned()));
        };
        let answer = host
            .respond(&full, &req)
            .await
            .map_err(|e| host_error(&full, e))?;
        self.answers.insert(full, answer);
        self.take_answer::<B>(&key)
    }
}

/// A builder bound to a context: `.key(..)` names it, `.await` runs it (direct mode).
#[must_use = "a request does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct Pending<'a, B> {
    cx: &'a mut ToolContext,
    builder: B,
}

impl<'a, B: InputBuilder> Pending<'a, B> {
    /// Wraps `builder`.
    pub fn new(cx: &'a mut ToolContext, builder: B) -> Self {
        Pending { cx, builder }
    }

    /// Sets the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.builder.set_key(key.into());
        self
    }

    /// Sets the key derived by `#[mcp_tool]` (the `let` binding's name) unless the builder
    /// already has one (a literal or computed `.key(..)`, or a key set where the builder was
    /// made), so that direct mode asks the host with the keys the state machine sends.
    #[doc(hidden)]
    pub fn __mcp_default_key(mut self, key: &str) -> Self {
        if self.builder.explicit_key().is_none() {
            self.builder.set_key(key.to_owned());
        }
        self
    }

    /// The builder.
    pub fn into_builder(self) -> B {
        self.builder
    }
}

impl<'a> Pending<'a, Sample> {
    /// Modifies the sampling request (`.with(|s| s.system("..").max_tokens(100))`).
    pub fn with(mut self, f: impl FnOnce(Sample) -> Sample) -> Self {
        self.builder = f(self.builder);
        self
    }
}

impl<'a, B> IntoFuture for Pending<'a, B>
where
    B: InputBuilder + 'a,
{
    type Output = Result<B::Output, ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { self.cx.direct_one(self.builder).await })
    }
}

/// Several builders answered in one round. Implemented for tuples of up to 6 builders.
pub trait RoundSet: Send {
    /// The tuple of answers.
    type Output: Send;
    /// Direct mode: asks the host for each request in order.
    fn run_direct<'a>(
        self,
        cx: &'a mut ToolContext,
    ) -> BoxFuture<'a, Result<Self::Output, ToolError>>
    where
        Self: 'a;
    /// MRTR mode: registers every request under its explicit key, or under
    /// `keys[i]` when the builder has none.
    fn register(self, cx: &mut ToolContext, keys: &[&str]) -> Result<(), ToolError>;
    /// Gives every builder without a key the key `keys[i]` (the names `#[mcp_tool]` derives
    /// from the tuple pattern), so that direct mode uses the state machine's keys.
    #[doc(hidden)]
    fn __mcp_default_keys(self, keys: &[&str]) -> Self
    where
        Self: Sized,
    {
        let _ = keys;
        self
    }
}

macro_rules! round_set {
    ($($B:ident $b:ident $i:tt),+) => {
        impl<$($B: InputBuilder),+> RoundSet for ($($B,)+) {
            type Output = ($($B::Output,)+);
            fn run_direct<'a>(self, cx: &'a mut ToolContext) -> BoxFuture<'a, Result<Self::Output, ToolError>>
            where
                Self: 'a,
            {
                let ($($b,)+) = self;
                Box::pin(async move {
                    Ok(($(cx.direct_one($b).await?,)+))
                })
            }
            fn register(self, cx: &mut ToolContext, keys: &[&str]) -> Result<(), ToolError> {
                let ($($b,)+) = self;
                $(
                    let key = match $b.explicit_key() {
                        Some(k) => k.to_owned(),
                        None => keys.get($i).map(|k| (*k).to_owned()).ok_or_else(|| {
                            ToolError::Internal(format!("no key for request {} of the round", $i))
                        })?,
                    };
                    cx.request_builder(key, $b)?;
                )+
                Ok(())
            }
            fn __mcp_default_keys(self, keys: &[&str]) -> Self {
                let ($(mut $b,)+) = self;
                $(
                    if $b.explicit_key().is_none()
                        && let Some(k) = keys.get($i)
                    {
                        $b.set_key((*k).to_owned());
                    }
                )+
                ($($b,)+)
            }
        }
    };
}

round_set!(A a 0);
round_set!(A a 0, B b 1);
round_set!(A a 0, B b 1, C c 2);
round_set!(A a 0, B b 1, C c 2, D d 3);
round_set!(A a 0, B b 1, C c 2, D d 3, E e 4);
round_set!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);

/// `cx.round(..)` bound to a context; `.await` runs it (direct mode).
#[must_use = "a round does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct RoundPending<'a, S> {
    cx: &'a mut ToolContext,
    set: S,
}

impl<'a, S: RoundSet> RoundPending<'a, S> {
    /// Per-element `Pending::__mcp_default_key`: `keys[i]` for each builder without a key.
    #[doc(hidden)]
    pub fn __mcp_default_keys(self, keys: &[&str]) -> Self {
        RoundPending {
            cx: self.cx,
            set: self.set.__mcp_default_keys(keys),
        }
    }
}

impl<'a, S: RoundSet + 'a> IntoFuture for RoundPending<'a, S> {
    type Output = Result<S::Output, ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        if !self.cx.is_direct() {
            return Box::pin(std::future::ready(Err(ToolError::Internal(
                OUTSIDE_TRANSFORM.to_owned(),
            ))));
        }
        self.set.run_direct(self.cx)
    }
}

/// `cx.checkpoint()`; in direct mode it completes at once.
#[must_use = "a checkpoint does nothing until awaited (direct mode) or split by #[mcp_tool]"]
pub struct Checkpoint<'a> {
    cx: &'a mut ToolContext,
}

impl<'a> IntoFuture for Checkpoint<'a> {
    type Output = Result<(), ToolError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let r = if self.cx.is_direct() {
            Ok(())
        } else {
            Err(ToolError::Internal(OUTSIDE_TRANSFORM.to_owned()))
        };
        Box::pin(std::future::ready(r))
    }
}
