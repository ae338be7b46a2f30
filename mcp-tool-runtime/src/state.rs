//! Application state: the values a server hands to its tools — a database pool, an HTTP
//! client, configuration — by type, never serialized into `requestState`.
//!
//! The server builder takes any number of typed values ([`ServerBuilder::state`]); a tool
//! (or a flow) names the ones it needs as parameters of type [`State<T>`]:
//!
//! ```
//! use mcp_tool_runtime::{State, ToolContext, ToolError, mcp_tool};
//!
//! struct Config {
//!     greeting: String,
//! }
//!
//! /// Greets the caller.
//! #[mcp_tool]
//! async fn greet(cx: &mut ToolContext, config: State<Config>) -> Result<String, ToolError> {
//!     Ok(format!("{}, {}!", config.greeting, cx.principal().id()))
//! }
//!
//! let server = mcp_tool_runtime::Server::builder(
//!     mcp_tool_runtime::protocol::Implementation::new("demo", "1.0"),
//! )
//! .state(Config { greeting: "Hello".into() })
//! .tool(greet::tool())
//! .build()
//! .expect("every state a tool needs was given");
//! # let _ = server;
//! ```
//!
//! Why a parameter, and not `&self` methods (rmcp's convention) or a global: a tool stays a
//! free function that can be called directly in tests; one tool can take several independent
//! values (a pool and a configuration) without a server struct that knows every tool; the
//! server checks at `build()` that every type a tool names was given (a typo fails at
//! startup, not at the first call); and the value is an `Arc` taken from the context in every
//! round, so it is never kept in the sealed state and the same tool resumes on any replica
//! with that replica's own pool.
//!
//! [`ServerBuilder::state`]: crate::ServerBuilder::state

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A shared application value of type `T`, taken from the server's state by type. Cheap to
/// clone (an [`Arc`]); dereferences to `T` (so `state.0` is `T`'s own field `0`).
pub struct State<T: ?Sized>(Arc<T>);

impl<T> State<T> {
    /// Wraps a value (for direct mode and tests; servers take values with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state)).
    pub fn new(value: T) -> Self {
        State(Arc::new(value))
    }
}

impl<T: ?Sized> State<T> {
    /// Wraps a shared value.
    pub fn from_arc(value: Arc<T>) -> Self {
        State(value)
    }

    /// The shared pointer.
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }

    /// The shared pointer, by value.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State<{}>", std::any::type_name::<T>())
    }
}

/// Names one type of application state (what a tool needs, checked at `build()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateKey {
    /// The type's id.
    pub type_id: TypeId,
    /// The type's name, for messages.
    pub type_name: &'static str,
    /// The id of `Arc<T>`: a value given as an `Arc<T>` serves `State<T>` too.
    pub shared_type_id: TypeId,
}

impl StateKey {
    /// The key of `T`.
    pub fn of<T: ?Sized + 'static>() -> Self {
        StateKey {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            shared_type_id: TypeId::of::<Arc<T>>(),
        }
    }
}

/// Application values by type. A server holds one and shares it with every request.
#[derive(Clone, Default)]
pub struct StateMap {
    values: HashMap<TypeId, (&'static str, Arc<dyn Any + Send + Sync>)>,
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.values.values().map(|(n, _)| *n).collect();
        names.sort_unstable();
        f.debug_set().entries(names).finish()
    }
}

impl StateMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the value of type `T`. An `Arc<U>` serves `State<U>` as well
    /// (shared, not copied), unless a `U` itself is given.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let value = Arc::new(value) as Arc<dyn Any + Send + Sync>;
        self.values
            .insert(TypeId::of::<T>(), (std::any::type_name::<T>(), value));
    }

    /// The value of type `T` (or the `Arc<T>` given), if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        if let Some((_, v)) = self.values.get(&TypeId::of::<T>()) {
            return Arc::clone(v).downcast::<T>().ok().map(State);
        }
        let (_, v) = self.values.get(&TypeId::of::<Arc<T>>())?;
        v.downcast_ref::<Arc<T>>().cloned().map(State)
    }

    /// The value of type `T`, or [`ToolError::Internal`](crate::error::ToolError::Internal)
    /// saying how to give it.
    pub(crate) fn require<T: Send + Sync + 'static>(
        &self,
    ) -> Result<State<T>, crate::error::ToolError> {
        self.get::<T>().ok_or_else(|| {
            crate::error::ToolError::Internal(format!(
                "no application state of type `{}`: give it to the server with `.state(..)` \
                 (or to a direct-mode context with `.with_state(..)`)",
                std::any::type_name::<T>()
            ))
        })
    }

    /// Whether a value of the key's type (or an `Arc` of it) was given.
    pub fn contains(&self, key: &StateKey) -> bool {
        self.values.contains_key(&key.type_id) || self.values.contains_key(&key.shared_type_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_type() {
        let mut m = StateMap::new();
        m.insert(5u32);
        m.insert(String::from("cfg"));
        assert_eq!(*m.get::<u32>().unwrap(), 5);
        assert_eq!(m.get::<String>().unwrap().as_str(), "cfg");
        assert!(m.get::<u64>().is_none());
        assert!(m.contains(&StateKey::of::<u32>()));
        assert!(!m.contains(&StateKey::of::<i32>()));
        m.insert(6u32);
        assert_eq!(*m.get::<u32>().unwrap(), 6);
        assert_eq!(m.values.len(), 2);
        assert_eq!(format!("{m:?}"), "{\"alloc::string::String\", \"u32\"}");
        // an Arc<T> serves State<T> (the same allocation) and State<Arc<T>>
        let shared = Arc::new(vec![1u8, 2]);
        m.insert(Arc::clone(&shared));
        assert!(m.contains(&StateKey::of::<Vec<u8>>()));
        let state = m.get::<Vec<u8>>().unwrap();
        assert!(Arc::ptr_eq(&state.0, &shared));
        assert!(Arc::ptr_eq(&*m.get::<Arc<Vec<u8>>>().unwrap().0, &shared));
        assert!(!m.contains(&StateKey::of::<Vec<u16>>()));
    }
}
