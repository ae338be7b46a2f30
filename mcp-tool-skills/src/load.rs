//! Reading a skills directory: the walk with its refusals and bounds, the skills found, and
//! their files' MIME types.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_tool_runtime::RegistrationError;
use mcp_tool_runtime::resource::skills::{MAX_SKILL_BYTES, Skill, valid_segment};

use crate::frontmatter::parse_frontmatter;

/// Most bytes in all the skills of one directory (they are held in memory): 64 MiB.
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Most files in one skills directory.
pub const MAX_TOTAL_FILES: usize = 4096;
/// Deepest directory nesting below the skills directory.
pub const MAX_DEPTH: usize = 16;

fn skill_error(path: &str, message: impl Into<String>) -> RegistrationError {
    RegistrationError::Skill {
        path: path.to_owned(),
        message: message.into(),
    }
}

struct FoundFile {
    /// Path below the skills directory, `/`-separated.
    rel: String,
    bytes: Arc<[u8]>,
}

/// The skills under `root`: every directory below it holding a `SKILL.md` is a skill whose
/// path is its path below `root`, with every file below that directory (a nested skill's
/// too), in path order. Hidden files (`.name`) are skipped; a file in no skill is left out.
///
/// # Errors
///
/// [`RegistrationError::Skill`], naming the path and the rule, for a `root` that is not a
/// directory or holds a `SKILL.md` itself, a symbolic or hard link or special file anywhere,
/// a name that is not a plain URI segment (or not UTF-8), a size over the bounds (a file
/// over [`MAX_SKILL_BYTES`], more than [`MAX_TOTAL_FILES`] files or [`MAX_TOTAL_BYTES`] in
/// all, deeper than [`MAX_DEPTH`]), and a `SKILL.md` that is not UTF-8 or whose frontmatter
/// [`parse_frontmatter`] refuses. The rules of a skill itself (`name` and `description`,
/// 512 files and 16 MiB per skill) are the runtime's, checked when the skills are
/// registered ([`ServerBuilder::skill`](mcp_tool_runtime::server::ServerBuilder::skill)).
pub fn load(root: impl AsRef<Path>) -> Result<Vec<Skill>, RegistrationError> {
    let root = root.as_ref();
    let label = root.display().to_string();
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| skill_error(&label, format!("cannot read the skills directory: {e}")))?;
    if !meta.is_dir() {
        return Err(skill_error(
            &label,
            "the skills directory is not a directory (a symlink is not followed)",
        ));
    }
    let mut files = Vec::new();
    let mut dirs_with_skill = BTreeSet::new();
    let mut total = 0u64;
    walk(
        root,
        root,
        "",
        0,
        &mut files,
        &mut dirs_with_skill,
        &mut total,
    )?;
    if dirs_with_skill.contains("") {
        return Err(skill_error(
            &label,
            "the skills directory itself holds a SKILL.md: put each skill in a directory of its own",
        ));
    }
    let mut skills = Vec::new();
    for dir in &dirs_with_skill {
        let prefix = format!("{dir}/");
        let own = || {
            files
                .iter()
                .filter_map(|f| Some((f.rel.strip_prefix(&prefix)?, f)))
        };
        let (_, md) = own()
            .find(|(rel, _)| *rel == "SKILL.md")
            .ok_or_else(|| skill_error(dir, "no SKILL.md"))?;
        let text = std::str::from_utf8(&md.bytes)
            .map_err(|_| skill_error(dir, "SKILL.md is not UTF-8"))?;
        let frontmatter = parse_frontmatter(text)
            .map_err(|m| skill_error(dir, format!("SKILL.md frontmatter: {m}")))?;
        let skill = own().fold(Skill::new(dir.clone(), frontmatter), |skill, (rel, f)| {
            let file_name = rel.rsplit('/').next().unwrap_or_default();
            skill.file_with_type(rel, mime_of(file_name, &f.bytes), Arc::clone(&f.bytes))
        });
        skills.push(skill);
    }
    Ok(skills)
}

fn walk(
    root: &Path,
    dir: &Path,
    rel: &str,
    depth: usize,
    files: &mut Vec<FoundFile>,
    skills: &mut BTreeSet<String>,
    total: &mut u64,
) -> Result<(), RegistrationError> {
    let here = if rel.is_empty() {
        root.display().to_string()
    } else {
        rel.to_owned()
    };
    if depth > MAX_DEPTH {
        return Err(skill_error(
            &here,
            format!("nested deeper than {MAX_DEPTH} directories"),
        ));
    }
    let read = std::fs::read_dir(dir)
        .map_err(|e| skill_error(&here, format!("cannot list the directory: {e}")))?;
    let mut children: Vec<(String, PathBuf)> = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| skill_error(&here, format!("cannot list: {e}")))?;
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| skill_error(&here, format!("the name {n:?} is not UTF-8")))?;
        // Hidden files (`.git`, `.DS_Store`) are not part of any skill.
        if name.starts_with('.') {
            continue;
        }
        children.push((name, entry.path()));
    }
    children.sort();
    for (name, path) in children {
        let child_rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if !valid_segment(&name) {
            return Err(skill_error(
                &child_rel,
                "a file or directory name outside `A-Z a-z 0-9 - . _ ~` cannot be a skill:// URI segment",
            ));
        }
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| skill_error(&child_rel, format!("cannot stat: {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(skill_error(
                &child_rel,
                "is a symbolic link: links are refused (they could leave the skills directory)",
            ));
        }
        if meta.is_dir() {
            walk(root, &path, &child_rel, depth + 1, files, skills, total)?;
        } else if meta.is_file() {
            if name == "SKILL.md" {
                skills.insert(rel.to_owned());
            }
            if meta.len() > MAX_SKILL_BYTES {
                return Err(skill_error(
                    &child_rel,
                    format!(
                        "{} bytes, more than the {MAX_SKILL_BYTES} a skill may hold",
                        meta.len()
                    ),
                ));
            }
            let bytes = read_bounded(&path, &meta, MAX_SKILL_BYTES)
                .map_err(|m| skill_error(&child_rel, m))?;
            *total += bytes.len() as u64;
            if *total > MAX_TOTAL_BYTES || files.len() >= MAX_TOTAL_FILES {
                return Err(skill_error(
                    &child_rel,
                    format!(
                        "the skills directory holds more than {MAX_TOTAL_FILES} files or \
                         {MAX_TOTAL_BYTES} bytes"
                    ),
                ));
            }
            files.push(FoundFile {
                rel: child_rel,
                bytes: bytes.into(),
            });
        } else {
            return Err(skill_error(
                &child_rel,
                "is neither a regular file nor a directory",
            ));
        }
    }
    Ok(())
}

/// The file's bytes, at most `max`, checking that the file opened is the one examined
/// (no swap for a link between the check and the read).
fn read_bounded(path: &Path, seen: &std::fs::Metadata, max: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let opened = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if opened.dev() != seen.dev() || opened.ino() != seen.ino() {
            return Err("changed while it was read".into());
        }
        // A hard link is the same file as another path, possibly outside the directory.
        if opened.nlink() > 1 {
            return Err(
                "has more than one hard link (it may be a file outside the skills directory)"
                    .into(),
            );
        }
    }
    #[cfg(not(unix))]
    let _ = seen;
    if !opened.is_file() {
        return Err("is not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("more than {max} bytes"));
    }
    Ok(bytes)
}

/// A MIME type from the file name (and whether the content is UTF-8).
fn mime_of(name: &str, bytes: &[u8]) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js") => "text/javascript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}
