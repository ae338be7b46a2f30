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
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name {
    ///     /// Your name.
    ///     name: String,
    /// }
    ///
    /// /// Greets the caller.
    /// #[mcp_tool]
    /// async fn greet(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     let who: Name = cx.ask("Who are you?").await?; // the request's key: `who`
    ///     Ok(format!("Hello, {}!", who.name))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let host = ScriptedHost::new(ClientCapabilities::all())
    ///     .answer_json("who", json!({"action": "accept", "content": {"name": "Ada"}}))?;
    /// assert_eq!(greet(&mut testing::direct(host)).await?, "Hello, Ada!");
    /// let declined = ScriptedHost::new(ClientCapabilities::all()).answer("who", ElicitResult::decline());
    /// assert!(matches!(greet(&mut testing::direct(declined)).await, Err(ToolError::Declined { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
    /// ```
    pub fn ask<T>(&mut self, message: impl Into<String>) -> Pending<'_, Ask<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Ask::new(message))
    }

    /// Form elicitation of a `T`, with decline/cancel as values.
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name {
    ///     /// Your name.
    ///     name: String,
    /// }
    /// use mcp_tool_runtime::Elicitation;
    ///
    /// /// Greets the caller, or nobody.
    /// #[mcp_tool]
    /// async fn greet(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     match cx.elicit::<Name>("Who are you?").key("who").await? {
    ///         Elicitation::Accept(who) => Ok(format!("Hello, {}!", who.name)),
    ///         Elicitation::Decline | Elicitation::Cancel => Ok("Hello, stranger!".into()),
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let host = ScriptedHost::new(ClientCapabilities::all()).answer("who", ElicitResult::decline());
    /// assert_eq!(greet(&mut testing::direct(host)).await?, "Hello, stranger!");
    /// # Ok::<(), ToolError>(()) }).unwrap();
    /// ```
    pub fn elicit<T>(&mut self, message: impl Into<String>) -> Pending<'_, Elicit<T>>
    where
        T: schemars::JsonSchema + DeserializeOwned + Send,
    {
        Pending::new(self, Elicit::new(message))
    }

    /// URL-mode elicitation.
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    /// use mcp_tool_runtime::UrlOutcome;
    ///
    /// /// Links the caller's account (the page at the URL does the linking).
    /// #[mcp_tool]
    /// async fn link(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     let outcome = cx.elicit_url("Sign in to link", "https://example.com/link").await?;
    ///     Ok(if outcome == UrlOutcome::Accept { "linked" } else { "not linked" }.into())
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let host = ScriptedHost::new(ClientCapabilities::all()).answer("outcome", ElicitResult::accept_url());
    /// assert_eq!(link(&mut testing::direct(host)).await?, "linked");
    /// # Ok::<(), ToolError>(()) }).unwrap();
    /// ```
    pub fn elicit_url(
        &mut self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Pending<'_, UrlElicit> {
        Pending::new(self, UrlElicit::new(message, url))
    }

    /// Sampling.
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    /// use mcp_tool_runtime::Sample;
    ///
    /// /// Names a colour in the client's model's words.
    /// #[mcp_tool]
    /// async fn colour(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     let said = cx.sample(Sample::user("Name a colour").max_tokens(10)).await?;
    ///     said.text()
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let host = ScriptedHost::new(ClientCapabilities::all())
    ///     .answer("said", CreateMessageResult::text("model-1", "teal"));
    /// assert_eq!(colour(&mut testing::direct(host)).await?, "teal");
    /// # Ok::<(), ToolError>(()) }).unwrap();
    /// ```
    pub fn sample(&mut self, sample: Sample) -> Pending<'_, Sample> {
        Pending::new(self, sample)
    }

    /// Roots listing.
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    ///
    /// /// Lists the client's roots.
    /// #[mcp_tool]
    /// async fn where_am_i(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     let roots = cx.roots().await?;
    ///     Ok(roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(" "))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let listed = ListRootsResult { roots: vec![Root::new("file:///work", Some("work"))], extra: Default::default() };
    /// let host = ScriptedHost::new(ClientCapabilities::all()).answer("roots", listed);
    /// assert_eq!(where_am_i(&mut testing::direct(host)).await?, "file:///work");
    /// # Ok::<(), ToolError>(()) }).unwrap();
    /// ```
    pub fn roots(&mut self) -> Pending<'_, Roots> {
        Pending::new(self, Roots::new())
    }

    /// Several requests in one round: `cx.round((Ask::<A>::new(".."), Sample::user("..")))`.
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name {
    ///     /// Your name.
    ///     name: String,
    /// }
    /// use mcp_tool_runtime::{Sample, requests::Ask};
    ///
    /// /// Asks the caller and the model at once: one `input_required` result with both.
    /// #[mcp_tool]
    /// async fn both(cx: &mut ToolContext) -> Result<String, ToolError> {
    ///     let (who, said) = cx.round((Ask::<Name>::new("Who?"), Sample::user("A colour?"))).await?;
    ///     Ok(format!("{} likes {}", who.name, said.text()?))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let host = ScriptedHost::new(ClientCapabilities::all())
    ///     .answer_json("who", json!({"action": "accept", "content": {"name": "Ada"}}))?
    ///     .answer("said", CreateMessageResult::text("model-1", "teal"));
    /// assert_eq!(both(&mut testing::direct(host)).await?, "Ada likes teal");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
    /// ```
    pub fn round<S: RoundSet>(&mut self, set: S) -> RoundPending<'_, S> {
        RoundPending { cx: self, set }
    }

    /// A round with no input request, only `requestState` (load shedding).
    ///
    /// ```
    /// # use mcp_tool_runtime::protocol::*;
    /// # use mcp_tool_runtime::testing::{self, ScriptedHost};
    /// # use serde_json::json;
    /// use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    ///
    /// /// Sums in chunks, handing the rest of the work back between them.
    /// #[mcp_tool]
    /// async fn sum(cx: &mut ToolContext) -> Result<u64, ToolError> {
    ///     let mut total = 0;
    ///     for chunk in 0..3u64 {
    ///         total += (chunk * 100..(chunk + 1) * 100).sum::<u64>();
    ///         cx.checkpoint().await?; // a round with only `requestState` (`total` travels)
    ///     }
    ///     Ok(total)
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // in direct mode a checkpoint goes straight on
    /// let host = ScriptedHost::new(ClientCapabilities::none());
    /// assert_eq!(sum(&mut testing::direct(host)).await?, (0..300).sum::<u64>());
    /// # Ok::<(), ToolError>(()) }).unwrap();
    /// ```
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
