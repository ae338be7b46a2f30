//! Log levels of `notifications/message` (RFC 5424 severities, deprecated in 2026-07-28 by
//! SEP-2577 but still in the specification, and current in 2025-11-25).

use serde::{Deserialize, Serialize};

/// The method of log notifications.
pub const LOG_METHOD: &str = "notifications/message";

/// A log severity, from the least to the most severe; `Ord` follows severity, so a
/// message is sent when `level >= minimum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name (`"debug"`, …, `"emergency"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `name`, if it is one of the eight.
    pub fn parse(name: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_order_and_serde_agree() {
        for (i, l) in LogLevel::ALL.iter().enumerate() {
            assert_eq!(LogLevel::parse(l.as_str()), Some(*l));
            assert_eq!(serde_json::to_value(l).unwrap(), l.as_str());
            if i > 0 {
                assert!(LogLevel::ALL[i - 1] < *l);
            }
        }
        assert_eq!(LogLevel::parse("INFO"), None);
        assert_eq!(LogLevel::parse("verbose"), None);
    }
}
