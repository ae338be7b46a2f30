//! The Skills extension (`io.modelcontextprotocol/skills`): skill entries, `skills/list`,
//! `skills/get` and `resources/directory/read` results.

use serde::{Deserialize, Serialize};

use super::{JsonObject, ResourceDescriptor, ResultType};

/// The extension identifier, a key of `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// One file of a skill: its URI, the SHA-256 digest and the length of its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// Resource URI of the file.
    pub uri: String,
    /// `sha256:` and 64 lowercase hexadecimal digits.
    pub digest: String,
    /// Length in bytes of the raw content.
    pub size: u64,
}

/// The marker of a skill whose files are generated (`"dynamic"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DynamicMarker {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// The `resources` of a skill entry: a complete manifest, or `"dynamic"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file of the skill (`SKILL.md` included), each once.
    Files(Vec<SkillResource>),
    /// Generated content: no stable digests can be published.
    Dynamic(DynamicMarker),
}

/// The entry of one skill, as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as a JSON object (`name` and `description` always present).
    pub frontmatter: JsonObject,
    /// The manifest.
    pub resources: SkillResources,
}

cacheable_result! {
    /// Result of `skills/list`.
    ListSkillsResult, paginated {
        /// The skills of this page.
        pub skills: Vec<SkillEntry>,
    }
}

cacheable_result! {
    /// Result of `skills/get`.
    GetSkillResult {
        /// The entry.
        pub skill: SkillEntry,
    }
}

/// Result of `resources/directory/read`: the direct children of a directory resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadDirectoryResult {
    /// Always `complete`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// Files (their resource metadata) and subdirectories (`inode/directory`).
    pub resources: Vec<ResourceDescriptor>,
    /// Cursor of the next page.
    #[serde(
        default,
        rename = "nextCursor",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// `_meta` (server info).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
