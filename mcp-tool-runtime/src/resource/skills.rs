//! Agent Skills served as resources (the Skills extension): skills held in memory, each
//! file a `skill://<skill-path>/<file>` resource, and dynamically generated skills
//! registered from code.
//!
//! A [`Skill`] is given its files as bytes; reading a skills directory from the file
//! system (and parsing `SKILL.md`'s YAML frontmatter) is the crate `mcp-tool-skills`. What
//! is served is checked here, when the server is built: the path segments, the frontmatter's
//! `name` and `description`, the bounds of a skill (see the constants), and that no two
//! skills claim one URI. Requests never touch the file system.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::{Address, Resource, ResourceInfo};
use crate::context::ToolContext;
use crate::error::{BoxFuture, RegistrationError, ToolError};
use crate::protocol::{
    DIRECTORY_MIME_TYPE, JsonObject, ResourceContents, ResourceDescriptor, SkillEntry,
    SkillResource, SkillResources,
};
use crate::tool::Step;

/// Most files in one skill (the extension's limit, `SKILL.md` and nested skills included).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// Most bytes in one skill, summed over its files (the extension's limit: 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// Longest `description` (the Agent Skills specification's limit, in characters).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Whether `name` follows the Agent Skills naming rules: 1–64 characters of lowercase
/// ASCII letters, digits and hyphens, no hyphen first, last or doubled.
pub fn valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Whether `seg` may be a segment of a `skill://` URI as it is: unreserved characters
/// only (`A-Z a-z 0-9 - . _ ~`), not `.` or `..`, at most 255 bytes.
pub fn valid_segment(seg: &str) -> bool {
    !seg.is_empty()
        && seg.len() <= 255
        && seg != "."
        && seg != ".."
        && seg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A skill file held in memory, served at its `skill://` URI.
#[derive(Clone)]
pub(crate) struct SkillFile {
    uri: String,
    name: String,
    description: Option<String>,
    mime: String,
    bytes: Arc<[u8]>,
}

impl Resource for SkillFile {
    fn info(&self) -> ResourceInfo {
        let mut info = ResourceInfo::uri(&self.uri, &self.name);
        info.description.clone_from(&self.description);
        info.mime_type = Some(self.mime.clone());
        info
    }

    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        uri: String,
        _vars: &'a serde_json::value::RawValue,
        _state: Option<&'a serde_json::value::RawValue>,
    ) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>> {
        let mime = Some(self.mime.clone());
        let contents = match std::str::from_utf8(&self.bytes) {
            Ok(text) => ResourceContents::text(uri, mime, text),
            Err(_) => ResourceContents::blob(uri, mime, &self.bytes),
        };
        Box::pin(std::future::ready(Ok(Step::Complete(vec![contents]))))
    }
}

/// A skill whose files are held in memory: its `SKILL.md` and the files beside and below it,
/// each served at `skill://<path>/<file>` and listed in the skill's manifest with its
/// SHA-256 digest and size. Register it with
/// [`ServerBuilder::skill`](crate::server::ServerBuilder::skill).
///
/// The frontmatter given here is what `skills/list` publishes; the `SKILL.md` among the
/// files must carry the same (the crate `mcp-tool-skills` reads both from a directory).
/// `build()` refuses, with [`RegistrationError::Skill`], a path or file path whose segments
/// are not unreserved URI characters, a frontmatter whose `name` is not the path's last
/// segment or breaks the naming rules or that has no `description`, a skill without
/// `SKILL.md`, a file given twice, more than [`MAX_FILES_PER_SKILL`] files or
/// [`MAX_SKILL_BYTES`] bytes, and a file another skill serves with other bytes.
#[derive(Clone, PartialEq)]
pub struct Skill {
    path: String,
    frontmatter: JsonObject,
    files: Vec<(String, String, Arc<[u8]>)>,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files: Vec<(&str, usize)> = self
            .files
            .iter()
            .map(|(rel, _, b)| (rel.as_str(), b.len()))
            .collect();
        f.debug_struct("Skill")
            .field("path", &self.path)
            .field("frontmatter", &self.frontmatter)
            .field("files", &files)
            .finish()
    }
}

impl Skill {
    /// A skill at `path` (`acme/billing/refunds`: the last segment is its `name`) with the
    /// frontmatter of its `SKILL.md`, and no files yet.
    pub fn new(path: impl Into<String>, frontmatter: JsonObject) -> Self {
        Skill {
            path: path.into(),
            frontmatter,
            files: Vec::new(),
        }
    }

    /// Adds a file at `rel` below the skill (`SKILL.md`, `references/guide.md`): served as
    /// `text/markdown` if its name ends in `.md`, else `text/plain` if it is UTF-8, else
    /// `application/octet-stream`.
    pub fn file(self, rel: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        let (rel, bytes) = (rel.into(), bytes.into());
        let mime = if rel.ends_with(".md") {
            "text/markdown"
        } else if std::str::from_utf8(&bytes).is_ok() {
            "text/plain"
        } else {
            "application/octet-stream"
        };
        self.file_with_type(rel, mime, bytes)
    }

    /// Adds a file at `rel` below the skill, served with the MIME type `mime`.
    pub fn file_with_type(
        mut self,
        rel: impl Into<String>,
        mime: impl Into<String>,
        bytes: impl Into<Arc<[u8]>>,
    ) -> Self {
        self.files.push((rel.into(), mime.into(), bytes.into()));
        self
    }

    /// Its skill path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The frontmatter `skills/list` publishes.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.frontmatter
    }

    /// Its entry and the resources of its files, after the checks above (all but the one
    /// against other skills, which the builder makes).
    pub(crate) fn checked(&self) -> Result<(SkillEntry, Vec<SkillFile>), RegistrationError> {
        let refuse = |message: String| skill_error(&self.path, message);
        check_path_and_frontmatter(&self.path, &self.frontmatter)?;
        if self.files.len() > MAX_FILES_PER_SKILL {
            return Err(refuse(format!(
                "{} files, more than the {MAX_FILES_PER_SKILL} a skill may have",
                self.files.len()
            )));
        }
        let size: u64 = self.files.iter().map(|(_, _, b)| b.len() as u64).sum();
        if size > MAX_SKILL_BYTES {
            return Err(refuse(format!(
                "{size} bytes in all, more than the {MAX_SKILL_BYTES} a skill may have"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (rel, _, _) in &self.files {
            let file = format!("{}/{rel}", self.path);
            if !rel.split('/').all(valid_segment) {
                return Err(skill_error(
                    &file,
                    "a file or directory name outside `A-Z a-z 0-9 - . _ ~` cannot be a skill:// URI segment",
                ));
            }
            if !seen.insert(rel.as_str()) {
                return Err(skill_error(&file, "the skill has this file twice"));
            }
        }
        if !seen.contains("SKILL.md") {
            return Err(refuse("no SKILL.md".into()));
        }
        let str_of = |k: &str| self.frontmatter.get(k).and_then(Value::as_str);
        let files: Vec<SkillFile> = self
            .files
            .iter()
            .map(|(rel, mime, bytes)| {
                let own = rel == "SKILL.md";
                let file_name = rel.rsplit('/').next().unwrap_or_default();
                SkillFile {
                    uri: format!("skill://{}/{rel}", self.path),
                    name: str_of("name")
                        .filter(|_| own)
                        .unwrap_or(file_name)
                        .to_owned(),
                    description: str_of("description").filter(|_| own).map(str::to_owned),
                    mime: mime.clone(),
                    bytes: Arc::clone(bytes),
                }
            })
            .collect();
        let manifest = files
            .iter()
            .map(|f| SkillResource {
                uri: f.uri.clone(),
                digest: digest(&f.bytes),
                size: f.bytes.len() as u64,
            })
            .collect();
        let entry = SkillEntry {
            uri: format!("skill://{}/SKILL.md", self.path),
            frontmatter: self.frontmatter.clone(),
            resources: SkillResources::Files(manifest),
        };
        Ok((entry, files))
    }
}

impl SkillFile {
    /// Whether `self` and `other` serve the same bytes.
    pub(crate) fn same_bytes(&self, other: &SkillFile) -> bool {
        self.bytes == other.bytes
    }

    /// Its URI.
    pub(crate) fn uri(&self) -> &str {
        &self.uri
    }
}

/// A skill whose files are generated by code, listed with `"resources": "dynamic"`.
///
/// Register the resources that serve its files yourself (a fixed URI or a template under
/// `skill://<path>/`), at least `skill://<path>/SKILL.md`; `build()` refuses a dynamic
/// skill whose `SKILL.md` no resource serves. The frontmatter given here is what
/// `skills/list` publishes: the generated `SKILL.md` must carry the same.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicSkill {
    path: String,
    frontmatter: JsonObject,
}

impl DynamicSkill {
    /// A dynamic skill at `path` (`reports/daily`: the last segment is its `name`).
    pub fn new(path: impl Into<String>, description: impl Into<String>) -> Self {
        let path = path.into();
        let name = path.rsplit('/').next().unwrap_or_default().to_owned();
        let mut frontmatter = JsonObject::new();
        frontmatter.insert("name".into(), Value::String(name));
        frontmatter.insert("description".into(), Value::String(description.into()));
        DynamicSkill { path, frontmatter }
    }

    /// Adds a frontmatter field (`license`, `metadata`, ...).
    pub fn field(mut self, key: impl Into<String>, value: Value) -> Self {
        self.frontmatter.insert(key.into(), value);
        self
    }

    /// Its skill path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of its `SKILL.md`.
    pub fn skill_md_uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.path)
    }

    /// Its entry, after checking the path and the frontmatter.
    pub(crate) fn entry(&self) -> Result<SkillEntry, RegistrationError> {
        check_path_and_frontmatter(&self.path, &self.frontmatter)?;
        Ok(SkillEntry {
            uri: self.skill_md_uri(),
            frontmatter: self.frontmatter.clone(),
            resources: SkillResources::Dynamic(crate::protocol::DynamicMarker::Dynamic),
        })
    }
}

fn skill_error(path: &str, message: impl Into<String>) -> RegistrationError {
    RegistrationError::Skill {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// A skill path of unreserved URI segments, and its frontmatter as [`check_frontmatter`]
/// requires it.
fn check_path_and_frontmatter(path: &str, fm: &JsonObject) -> Result<(), RegistrationError> {
    if !path.split('/').all(valid_segment) {
        return Err(skill_error(
            path,
            "each segment of a skill path must be unreserved URI characters",
        ));
    }
    check_frontmatter(fm, path).map_err(|m| skill_error(path, m))
}

/// `name` and `description` as the extension requires them: `name` equal to the last
/// segment of `path` and following the naming rules, `description` non-empty.
fn check_frontmatter(fm: &JsonObject, path: &str) -> Result<(), String> {
    let dir = path.rsplit('/').next().unwrap_or_default();
    match fm.get("name") {
        Some(Value::String(name)) if name == dir && valid_skill_name(name) => {}
        Some(Value::String(name)) if name != dir => {
            return Err(format!(
                "frontmatter `name` is `{name}` but the skill's directory is `{dir}`: they must match"
            ));
        }
        Some(Value::String(name)) => {
            return Err(format!(
                "frontmatter `name` `{name}` breaks the Agent Skills naming rules \
                 (1-64 lowercase letters, digits and single hyphens, not first or last)"
            ));
        }
        _ => return Err("frontmatter has no string `name`".into()),
    }
    match fm.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => {
            if d.chars().count() > MAX_DESCRIPTION_CHARS {
                return Err(format!(
                    "frontmatter `description` is longer than {MAX_DESCRIPTION_CHARS} characters"
                ));
            }
            Ok(())
        }
        _ => Err("frontmatter has no non-empty string `description`".into()),
    }
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The directory resources of the `skill://` namespace: each directory URI (no trailing
/// slash) and its direct children, files with their resource metadata, subdirectories as
/// `inode/directory`, sorted by URI.
pub(crate) fn directory_index<'a>(
    files: impl Iterator<Item = ResourceDescriptor>,
    roots: impl Iterator<Item = &'a str>,
) -> BTreeMap<String, Vec<ResourceDescriptor>> {
    let mut index: BTreeMap<String, BTreeMap<String, ResourceDescriptor>> = BTreeMap::new();
    let add_dirs = |index: &mut BTreeMap<String, BTreeMap<String, ResourceDescriptor>>,
                    path: &str| {
        // every ancestor directory of `path` (a `/`-separated path below `skill://`)
        let segs: Vec<&str> = path.split('/').collect();
        for i in 1..=segs.len() {
            let dir = format!("skill://{}", segs[..i].join("/"));
            index.entry(dir.clone()).or_default();
            if i > 1 {
                let parent = format!("skill://{}", segs[..i - 1].join("/"));
                index.entry(parent).or_default().insert(
                    dir.clone(),
                    ResourceDescriptor {
                        uri: dir,
                        name: segs[i - 1].to_owned(),
                        title: None,
                        description: None,
                        mime_type: Some(DIRECTORY_MIME_TYPE.into()),
                        annotations: None,
                        size: None,
                        extra: JsonObject::new(),
                    },
                );
            }
        }
    };
    for root in roots {
        add_dirs(&mut index, root);
    }
    for file in files {
        let Some(path) = file.uri.strip_prefix("skill://") else {
            continue;
        };
        let Some((dir, _)) = path.rsplit_once('/') else {
            continue;
        };
        if !path.split('/').all(valid_segment) {
            continue;
        }
        add_dirs(&mut index, dir);
        index
            .entry(format!("skill://{dir}"))
            .or_default()
            .insert(file.uri.clone(), file);
    }
    index
        .into_iter()
        .map(|(k, v)| (k, v.into_values().collect()))
        .collect()
}

/// The skills a server serves and the directories of its `skill://` namespace.
pub(crate) struct SkillsCatalog {
    /// The entries, in `skills/list` order.
    pub(crate) entries: Vec<SkillEntry>,
    /// Index into `entries` by `SKILL.md` URI.
    pub(crate) by_uri: BTreeMap<String, usize>,
    /// Directory URI -> its direct children.
    pub(crate) dirs: BTreeMap<String, Vec<ResourceDescriptor>>,
}

/// The catalog of `entries` (`None` when there are none), after checking that no two share
/// a URI and that a resource serves the `SKILL.md` of each dynamic skill.
pub(crate) fn catalog(
    entries: Vec<SkillEntry>,
    dynamic_paths: &[String],
    resources: &[&ResourceInfo],
) -> Result<Option<SkillsCatalog>, RegistrationError> {
    if entries.is_empty() {
        return Ok(None);
    }
    let mut by_uri = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if by_uri.insert(e.uri.clone(), i).is_some() {
            return Err(RegistrationError::Skill {
                path: e.uri.clone(),
                message: "two skills share this URI".into(),
            });
        }
    }
    for path in dynamic_paths {
        let uri = format!("skill://{path}/SKILL.md");
        let served = resources.iter().any(|r| match &r.address {
            Address::Uri(u) => *u == uri,
            Address::Template(t) => t.matches(&uri).is_some(),
        });
        if !served {
            return Err(RegistrationError::Skill {
                path: path.clone(),
                message: format!(
                    "dynamic skill without a resource serving {uri}: register one (a fixed URI or a template)"
                ),
            });
        }
    }
    let files = resources.iter().filter_map(|r| r.descriptor());
    let dirs = directory_index(files, dynamic_paths.iter().map(String::as_str));
    Ok(Some(SkillsCatalog {
        entries,
        by_uri,
        dirs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_segments() {
        assert!(valid_skill_name("notes"));
        assert!(valid_skill_name("pdf-2"));
        for bad in ["", "-a", "a-", "a--b", "Notes", "a_b", &"a".repeat(65)] {
            assert!(!valid_skill_name(bad), "{bad}");
        }
        assert!(valid_segment("SKILL.md"));
        for bad in ["", ".", "..", "a b", "a%2F", "a/b", "é"] {
            assert!(!valid_segment(bad), "{bad}");
        }
    }

    #[test]
    fn digest_is_sha256_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
