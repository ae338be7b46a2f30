//! The results hosts may cache (`cacheable_result!`) and the paginated ones among them
//! ([`Listed`]).

use super::{CacheScope, JsonObject};

/// Defines a result that hosts may cache: `resultType` (always `complete`), the fields given,
/// then `ttlMs`, `cacheScope` and `_meta`. A `paginated` result has one field, its page of
/// items, followed by `nextCursor`, and is [`Listed`].
macro_rules! cacheable_result {
    (
        $(#[$doc:meta])* $name:ident, paginated {
            $(#[$items_attr:meta])* pub $items:ident: Vec<$item:ty>,
        }
    ) => {
        cacheable_result!($(#[$doc])* $name {
            $(#[$items_attr])* pub $items: Vec<$item>,
            /// Cursor of the next page.
            #[serde(default, rename = "nextCursor", skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
        });

        impl $crate::protocol::Listed for $name {
            type Item = $item;
            fn listed(
                items: Vec<$item>,
                next_cursor: Option<String>,
                ttl_ms: u64,
                cache_scope: $crate::protocol::CacheScope,
                meta: $crate::protocol::JsonObject,
            ) -> Self {
                $name {
                    result_type: $crate::protocol::ResultType::Complete,
                    $items: items,
                    next_cursor,
                    ttl_ms,
                    cache_scope,
                    meta: Some(meta),
                }
            }
        }
    };
    ($(#[$doc:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            /// Always `complete`.
            #[serde(rename = "resultType", default)]
            pub result_type: $crate::protocol::ResultType,
            $($fields)*
            /// Cache freshness in milliseconds.
            #[serde(rename = "ttlMs")]
            pub ttl_ms: u64,
            /// Cache scope.
            #[serde(rename = "cacheScope")]
            pub cache_scope: $crate::protocol::CacheScope,
            /// `_meta` (server info).
            #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
            pub meta: Option<$crate::protocol::JsonObject>,
        }
    };
}

/// A paginated list result (`tools/list`, ...), made from one page of its items.
pub(crate) trait Listed {
    /// What it lists.
    type Item;
    /// The complete result: these items, the cursor of the next page, and the cache hints
    /// and `_meta` every result carries.
    fn listed(
        items: Vec<Self::Item>,
        next_cursor: Option<String>,
        ttl_ms: u64,
        cache_scope: CacheScope,
        meta: JsonObject,
    ) -> Self;
}
