//! Repository access for `summarize_repo`: a sandbox around one directory.
//!
//! Everything a model proposes goes through here before any file is opened:
//!
//! * [`Repo::list_files`] lists what git would publish of the repository: a walk with the
//!   `ignore` crate (ripgrep's walker) skips everything that `.gitignore` files (the root's,
//!   nested ones and those of parent directories), `.git/info/exclude` and the global git
//!   excludes (`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`) skip, and every
//!   hidden file and directory (a name starting with `.`, `.git` included). Of what is left it
//!   lists the regular files (sorted, bounded in count, depth and entries visited), skipping
//!   `target` in any letter case, symbolic links, files with more than one hard link, and —
//!   unless [`Limits::hide_secrets`] is turned off — every file that is not of an offered type
//!   ([`OFFERED_EXTENSIONS`], [`OFFERED_NAMES`]) or whose path has a secret-looking name
//!   ([`is_secret_name`]): that filter, the second line of defence, fails closed, see
//!   [`is_offered_file_name`].
//! * [`Repo::parse_picks`] accepts the model's answer to `pick_files` only if it is a JSON
//!   array (optionally inside a fenced code block) of one to [`Limits::max_picks`] distinct
//!   strings, each naming a file **that the listing offered** (the listing is deterministic,
//!   so it is computed again and the pick must be in it; a path it does not offer is refused
//!   with one reason whether it exists or not) and that [`Repo::resolve`] accepts: no
//!   absolute paths, no `..`/`.` or empty components, no backslashes or control characters,
//!   nothing under `.git/` or `target/`, no hidden or secret-looking name, no file of a type
//!   not offered, no symbolic link whose target leaves the root.
//! * [`Repo::read_offered`] reads one file for a client that names it (the `repo://files/…`
//!   resource, the `review_file` prompt): only a file the listing offers, read as
//!   [`Repo::read_files`] does, and one refusal ([`RepoError::NotOffered`]) for every path it
//!   does not read, so that a client cannot tell a missing path from a refused one.
//! * [`Repo::read_files`] re-validates every path (offered by the listing, accepted by
//!   [`Repo::resolve`]), then opens it one component at a time
//!   from the root with `O_NOFOLLOW` (so a file or directory swapped for a symbolic link
//!   after validation is not followed) and `O_NONBLOCK` (so a FIFO swapped in does not
//!   block), checks with `fstat` that it is a regular file with one link, and reads at most
//!   [`Limits::max_file_bytes`] per file and [`Limits::max_request_bytes`] in total.
//!
//! Every method does blocking file-system work: call them from a blocking thread
//! (`tokio::task::spawn_blocking`), as `summarize_repo` does.
//!
//! The default repository is a small embedded demo project ([`Repo::embedded_demo`]),
//! materialised into a private temporary directory so that exactly the same rules apply
//! to it as to a directory given with `--repo PATH` ([`Repo::open`]).

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The files of the embedded demo repository (`examples/demo-repo/`), as `(path, contents)`.
pub const DEMO_FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../demo-repo/README.md")),
    ("docs/intro.md", include_str!("../demo-repo/docs/intro.md")),
    ("forecast.py", include_str!("../demo-repo/forecast.py")),
    (
        "pyproject.toml",
        include_str!("../demo-repo/pyproject.toml"),
    ),
    ("server.py", include_str!("../demo-repo/server.py")),
    (
        "tests/test_forecast.py",
        include_str!("../demo-repo/tests/test_forecast.py"),
    ),
];

/// The reason of every refused path that exists or not but is not among the files the
/// listing offers (ignored by git, hidden, a link, missing, beyond the listing's bounds, …).
const NOT_AMONG_OFFERED: &str = "not among the files offered";

/// Directory names that are never listed and never readable through the sandbox, in any
/// letter case (`.GIT` on a case-insensitive file system is `.git`).
pub const SKIPPED_DIRS: &[&str] = &[".git", "target"];

/// Whether `name` is one of [`SKIPPED_DIRS`], ignoring ASCII case.
fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// The file types the sandbox offers (when [`Limits::hide_secrets`] is on): a file is listed
/// and readable only if its last extension, compared without regard to ASCII case, is one
/// of these (source code, documentation, build and project files), or its whole name is in
/// [`OFFERED_NAMES`]. Everything else — keys, certificates, keystores, `*.tfvars`, `*.ppk`,
/// files without an extension such as `id_rsa`, `kubeconfig`, `htpasswd` or `shadow`, and
/// any type nobody thought of — is not offered: the filter fails closed.
pub const OFFERED_EXTENSIONS: &[&str] = &[
    // documentation and text
    "md", "markdown", "rst", "txt", "adoc", "asciidoc", "org", "tex",
    // project data (the secret-word and name rules below still apply to these)
    "toml", "yaml", "yml", "json", "jsonc", "json5", "xml", "csv", "lock", // source code
    "rs", "py", "pyi", "ipynb", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "go", "java",
    "kt", "kts", "scala", "groovy", "gradle", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx",
    "cs", "fs", "fsx", "swift", "m", "mm", "rb", "php", "pl", "pm", "lua", "r", "jl", "dart", "ex",
    "exs", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "elm", "zig", "nim", "v", "sv", "vhd",
    "sol", "sql", "proto", "graphql", "gql", "thrift", "wat", "nix", "tf", "cmake", "mk", "sh",
    "bash", "zsh", "fish", "ps1", "bat", "vim", // web
    "html", "htm", "css", "scss", "sass", "less", "vue", "svelte", "astro", // templates
    "j2", "jinja", "hbs", "mustache", "tmpl", "erb",
];

/// Whole file names (compared without regard to ASCII case) offered although their
/// extension is not in [`OFFERED_EXTENSIONS`] or they have none.
pub const OFFERED_NAMES: &[&str] = &[
    "makefile",
    "gnumakefile",
    "dockerfile",
    "containerfile",
    "justfile",
    "rakefile",
    "gemfile",
    "procfile",
    "vagrantfile",
    "brewfile",
    "jenkinsfile",
    "build",
    "workspace",
    "license",
    "licence",
    "license-mit",
    "license-apache",
    "copying",
    "notice",
    "readme",
    "changelog",
    "changes",
    "authors",
    "contributors",
    "codeowners",
    "todo",
    "go.mod",
    "go.sum",
    "requirements.in",
];

/// Extensions that mark a secret wherever they appear in a name (`server.key.txt`,
/// `terraform.tfvars.json`, `terraform.tfstate.backup`): keys, certificates, keystores,
/// signatures, infrastructure state and variables, VPN and password-manager files.
const SECRET_EXTENSIONS: &[&str] = &[
    "pem",
    "key",
    "p12",
    "pfx",
    "p8",
    "pk8",
    "jks",
    "keystore",
    "bks",
    "ppk",
    "crt",
    "cer",
    "der",
    "csr",
    "asc",
    "gpg",
    "pgp",
    "ovpn",
    "kdbx",
    "kdb",
    "tfvars",
    "tfstate",
    "secret",
    "secrets",
    "pub",
    "env",
    "kubeconfig",
    "htpasswd",
    "netrc",
    "pgpass",
    "keytab",
    "jceks",
    "tfplan",
    "har",
    "sqlite",
    "sqlite3",
    "bak",
    "dump",
];

/// Words that mark a secret when a name's word (split at `.`, `-`, `_` and spaces) starts
/// with them: `secret.json`, `client_secret_123.json`, `credentials`, `passwords.txt`,
/// `private-key.json`, `apikey.txt`.
const SECRET_WORD_PREFIXES: &[&str] = &[
    "secret",
    "credential",
    "passw",
    "passphrase",
    "apikey",
    "privatekey",
    "private",
    "privkey",
    "htpasswd",
    "kubeconfig",
    "keystore",
    "keychain",
    "netrc",
    "pgpass",
    "npmrc",
    "pypirc",
    "dockercfg",
    "authinfo",
    "keytab",
];

/// Parts of a name that mark a secret anywhere in it: `api_key.txt`, `aws-access-key.csv`,
/// `gcp-service-account.json`, `firebase-adminsdk-x1.json`.
const SECRET_SUBSTRINGS: &[&str] = &[
    "api_key",
    "api-key",
    "access_key",
    "access-key",
    "accesskey",
    "signing_key",
    "signing-key",
    "auth_key",
    "auth-key",
    "service-account",
    "service_account",
    "serviceaccount",
    "adminsdk",
    "docker-config",
    "docker_config",
    "dockerconfig",
    "kube-config",
    "kube_config",
];

/// Extensions of data files (text, tables, dumps, configuration, stores): in such a file,
/// the parts of [`SECRET_DATA_SUBSTRINGS`] and the words of [`SECRET_DATA_WORDS`] mark a
/// secret too (`cookies.txt`, `backup.sql`, `gcloud.json`, `auth.json`), while a source
/// file with the same word (`backup.rs`, `cookie.js`) is not refused for it.
const DATA_EXTENSIONS: &[&str] = &[
    "txt", "json", "jsonc", "json5", "csv", "tsv", "sql", "yaml", "yml", "xml", "toml", "ini",
    "cfg", "conf", "log", "db", "sqlite", "sqlite3", "bak", "dump",
];

/// Parts of a data file's name that mark a secret anywhere in it: browser cookies and
/// wallets, database dumps and backups, Google Cloud SDK files, OAuth client files.
const SECRET_DATA_SUBSTRINGS: &[&str] = &[
    "cookie", "backup", "dump", "gcloud", "wallet", "keyring", "oauth", "authinfo",
];

/// Words (split at `.`, `-`, `_`, space) that mark a secret in a data file's name:
/// Composer's `auth.json`, Firefox's `logins.json`, saved sessions.
const SECRET_DATA_WORDS: &[&str] = &["auth", "session", "sessions", "logins"];

/// Words that mark a secret when a name's word ends with them: `token.json`,
/// `api_token.txt`, `accesstoken.txt`, `auth-tokens.yaml`, `mysecret.txt`.
const SECRET_WORD_SUFFIXES: &[&str] = &["token", "tokens", "secret", "secrets", "credentials"];

/// Whole names (compared without regard to ASCII case) that are secrets although nothing
/// else in them says so.
const SECRET_NAMES: &[&str] = &[
    "wp-config.php",
    "local.settings.json",
    "application_default_credentials.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "_netrc",
    "authorized_keys",
    "known_hosts",
    "master.key",
    "shadow",
    "gshadow",
    "settings.php",
    "database.yml",
    "terraform.rc",
    "sftp-config.json",
    "sitemanager.xml",
    "recentservers.xml",
    "rootkey.csv",
];

/// Whether a file or directory name is hidden by [`Limits::hide_secrets`] (a deny-list,
/// checked for every component of a path, directories included: the second line of
/// defence, behind git's ignore rules). Compared without regard to ASCII case:
///
/// * a dotfile or dot-directory (`.env`, `.env.production`, `.ssh/`, `.aws/`, `.npmrc`,
///   `.git-credentials`, …: never offered anyway, whatever [`Limits::hide_secrets`] says);
/// * any dot-separated part after the first being a secret type (`*.pem`, `*.key`, `*.p12`,
///   `*.pfx`, `*.p8`, `*.jks`, `*.keystore`, `*.ppk`, `*.crt`, `*.asc`, `*.gpg`, `*.ovpn`,
///   `*.kdbx`, `*.tfvars`, `*.tfstate`, `*.kubeconfig`, `*.pub`, `*.env`, …);
/// * a word (split at `.`, `-`, `_`, space) starting with `secret`, `credential`, `passw`,
///   `private`, `apikey`, `kubeconfig`, `htpasswd`, `keystore`, … or ending with `token(s)`,
///   `secret(s)` (so `src/token.rs` is not offered either: failing closed has false
///   positives; turn [`Limits::hide_secrets`] off for a repository known to be clean);
/// * `api_key`, `access-key`, `service-account`, `adminsdk`, `docker-config`, … anywhere in
///   it; an SSH key (`id_rsa*`, `id_dsa*`, `id_ecdsa*`, `id_ed25519*`); or a known secret
///   file (`wp-config.php`, `master.key`, `_netrc`, `shadow`, `authorized_keys`,
///   `sftp-config.json`, `rootkey.csv`, …);
/// * for a data file (`*.txt`, `*.json`, `*.sql`, `*.csv`, `*.yaml`, …): `cookie`, `backup`,
///   `dump`, `gcloud`, `wallet`, `keyring`, `oauth` anywhere in the name, or a word `auth`,
///   `session(s)`, `logins` (`cookies.txt`, `backup.sql`, `db_dump.sql`, `gcloud.json`,
///   `auth.json`, `logins.json`).
///
/// A file must moreover be of an offered type ([`is_offered_file_name`]): this list only
/// catches secrets that look like ordinary source or data files.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with('.') || SECRET_NAMES.contains(&lower.as_str()) {
        return true;
    }
    if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
        .iter()
        .any(|p| lower.starts_with(p))
        || SECRET_SUBSTRINGS.iter().any(|p| lower.contains(p))
    {
        return true;
    }
    if lower
        .split('.')
        .skip(1)
        .any(|ext| SECRET_EXTENSIONS.contains(&ext))
    {
        return true;
    }
    let data = lower
        .rsplit_once('.')
        .is_some_and(|(_, ext)| DATA_EXTENSIONS.contains(&ext));
    if data
        && (SECRET_DATA_SUBSTRINGS.iter().any(|p| lower.contains(p))
            || lower
                .split(['.', '-', '_', ' '])
                .any(|w| SECRET_DATA_WORDS.contains(&w)))
    {
        return true;
    }
    lower
        .split(['.', '-', '_', ' '])
        .filter(|w| !w.is_empty())
        .any(|w| {
            SECRET_WORD_PREFIXES.iter().any(|p| w.starts_with(p))
                || SECRET_WORD_SUFFIXES.iter().any(|s| w.ends_with(s))
        })
}

/// Whether a file name is offered (when [`Limits::hide_secrets`] is on): of an offered type
/// ([`OFFERED_EXTENSIONS`], [`OFFERED_NAMES`]) and not secret-looking ([`is_secret_name`]).
pub fn is_offered_file_name(name: &str) -> bool {
    if is_secret_name(name) {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    if OFFERED_NAMES.contains(&lower.as_str()) {
        return true;
    }
    match lower.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && OFFERED_EXTENSIONS.contains(&ext),
        None => false,
    }
}

/// Bounds applied by the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of files [`Repo::list_files`] returns.
    pub max_listed: usize,
    /// Maximum directory depth [`Repo::list_files`] descends into.
    pub max_depth: usize,
    /// Maximum number of paths accepted from `pick_files`.
    pub max_picks: usize,
    /// Maximum length in bytes of one proposed path.
    pub max_path_len: usize,
    /// Maximum size in bytes of the raw model answer to `pick_files`.
    pub max_answer_bytes: usize,
    /// Maximum bytes read from one file.
    pub max_file_bytes: usize,
    /// Maximum bytes read from all files of one request together.
    pub max_request_bytes: usize,
    /// Maximum directory entries [`Repo::list_files`] looks at (files, directories, links and
    /// everything it skips for its name), counted as the walk meets them: the walk's work is
    /// bounded, not only its output. Entries that git ignores (and hidden ones) are passed
    /// over by the walker without counting: a directory of many ignored files costs one
    /// pass over its entries, held nowhere. What is met after the budget is spent is not
    /// listed.
    pub max_visited: usize,
    /// Offer only files of an offered type ([`is_offered_file_name`]) and hide secret-looking
    /// names ([`is_secret_name`]) from listing and reading. Default `true`; turn it off only
    /// for a repository known to hold no secrets. Files that git ignores and hidden files
    /// (dotfiles, dot-directories) are never offered, whatever this says.
    pub hide_secrets: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_listed: 200,
            max_depth: 8,
            max_picks: 3,
            max_path_len: 256,
            max_answer_bytes: 4096,
            max_file_bytes: 4096,
            max_request_bytes: 12 * 1024,
            max_visited: 10_000,
            hide_secrets: true,
        }
    }
}

/// Why the sandbox refused something. The messages never contain file contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoError {
    /// The repository root could not be opened or is not a directory.
    #[error("repository root unusable: {0}")]
    Root(String),
    /// The model's answer is not the expected JSON shape.
    #[error("expected a JSON array of at most {max} file paths: {reason}")]
    Shape {
        /// The configured maximum number of paths.
        max: usize,
        /// What was wrong.
        reason: String,
    },
    /// One proposed path was refused.
    #[error("path {path:?} refused: {reason}")]
    Path {
        /// The proposed path (truncated to a printable prefix).
        path: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A path a client named is not a file the listing offers, for whatever reason (missing,
    /// outside the root, hidden, secret-looking, beyond the listing's bounds, a link, …):
    /// one text for all of them, so that it does not say whether the path exists
    /// ([`Repo::read_offered`]).
    #[error("not a file this repository offers")]
    NotOffered,
    /// An I/O error while reading an already validated file or listing the root.
    #[error("I/O error on {path:?}: {message}")]
    Io {
        /// The relative path concerned.
        path: String,
        /// The error message.
        message: String,
    },
}

/// One file's bounded contents, as read by [`Repo::read_files`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileExcerpt {
    /// The path relative to the root, `/`-separated.
    pub path: String,
    /// The (possibly truncated) contents, lossily decoded as UTF-8, control characters other
    /// than newline and tab replaced by spaces; [`BINARY_PLACEHOLDER`] for a binary file.
    pub text: String,
    /// Whether the contents were cut at a bound.
    pub truncated: bool,
}

/// A repository sandbox rooted at one canonical directory.
#[derive(Debug)]
pub struct Repo {
    root: PathBuf,
    limits: Limits,
    // Keeps the materialised demo repository alive (and removes it on drop).
    _temp: Option<tempfile::TempDir>,
}

impl Repo {
    /// Opens the directory `path` as a repository.
    ///
    /// # Errors
    /// [`RepoError::Root`] when `path` does not exist or is not a directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Repo, RepoError> {
        let root = std::fs::canonicalize(path.as_ref())
            .map_err(|e| RepoError::Root(format!("{}: {e}", path.as_ref().display())))?;
        if !root.is_dir() {
            return Err(RepoError::Root(format!(
                "{} is not a directory",
                root.display()
            )));
        }
        Ok(Repo {
            root,
            limits: Limits::default(),
            _temp: None,
        })
    }

    /// The embedded demo repository, written to a fresh private temporary directory
    /// that is removed when the `Repo` is dropped.
    ///
    /// # Errors
    /// [`RepoError::Root`] when the temporary directory cannot be created or written.
    pub fn embedded_demo() -> Result<Repo, RepoError> {
        let dir = tempfile::Builder::new()
            .prefix("mcp-tool-demo-repo-")
            .tempdir()
            .map_err(|e| RepoError::Root(format!("temporary directory: {e}")))?;
        for (rel, contents) in DEMO_FILES {
            let path = dir.path().join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| RepoError::Root(format!("{rel}: {e}")))?;
            }
            std::fs::write(&path, contents).map_err(|e| RepoError::Root(format!("{rel}: {e}")))?;
        }
        let mut repo = Repo::open(dir.path())?;
        repo._temp = Some(dir);
        Ok(repo)
    }

    /// Replaces the limits.
    pub fn with_limits(mut self, limits: Limits) -> Repo {
        self.limits = limits;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The repository's regular files that git would publish, relative and `/`-separated,
    /// sorted, at most [`Limits::max_listed`] of them: a walk of the `ignore` crate skips
    /// what `.gitignore` files (nested ones and those of parent directories included),
    /// `.git/info/exclude` and the global git excludes skip, and every hidden file and
    /// directory; of the rest it skips [`SKIPPED_DIRS`] (any case), symbolic links (never
    /// followed), files with more than one hard link, secret-looking names and files not of an
    /// offered type (unless [`Limits::hide_secrets`] is off) and names that are not valid
    /// UTF-8. It descends at most [`Limits::max_depth`] levels and looks at no more than
    /// [`Limits::max_visited`] directory entries.
    ///
    /// # Errors
    /// [`RepoError::Io`] when the root cannot be read.
    pub fn list_files(&self) -> Result<Vec<String>, RepoError> {
        std::fs::read_dir(&self.root).map_err(|e| RepoError::Io {
            path: String::new(),
            message: e.to_string(),
        })?;
        let hide_secrets = self.limits.hide_secrets;
        // Entries met, counted by the filter (which sees every entry the ignore rules let
        // through, before it is skipped or descended into).
        let visited = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = visited.clone();
        let walk = ignore::WalkBuilder::new(&self.root)
            .standard_filters(false)
            .hidden(true)
            .parents(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(true)
            // a copy of a repository without its `.git` still says what is not published
            .require_git(false)
            .follow_links(false)
            .max_depth(Some(self.limits.max_depth))
            .filter_entry(move |entry| {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(name) = entry.file_name().to_str() else {
                    return false;
                };
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                !((is_dir && is_skipped_dir(name)) || (hide_secrets && is_secret_name(name)))
            })
            .build();
        let mut out = Vec::new();
        for entry in walk {
            if visited.load(std::sync::atomic::Ordering::Relaxed) > self.limits.max_visited
                // bound the output too: stop once well past the listing limit
                || out.len() >= self.limits.max_listed.saturating_mul(4)
            {
                break;
            }
            // an unreadable directory or ignore file: what could be read is still listed
            let Ok(entry) = entry else { continue };
            if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Some(rel) = self.relative(entry.path()) else {
                continue;
            };
            if hide_secrets && !rel.rsplit('/').next().is_some_and(is_offered_file_name) {
                continue;
            }
            if check_syntax(&rel, &self.limits).is_ok() && single_link(entry.path()) {
                out.push(rel);
            }
        }
        out.sort();
        out.truncate(self.limits.max_listed);
        Ok(out)
    }

    /// `path` (under the root) relative to the root, `/`-separated; `None` if a component is
    /// not valid UTF-8.
    fn relative(&self, path: &Path) -> Option<String> {
        let inner = path.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = inner
            .components()
            .map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect();
        Some(parts?.join("/"))
    }

    /// Validates the model's answer to `pick_files`: a JSON array (a fenced
    /// ```` ```json ```` block is accepted) of one to [`Limits::max_picks`] distinct
    /// strings, each accepted by [`Repo::resolve`]. Returns the paths as given.
    ///
    /// # Errors
    /// [`RepoError::Shape`] or [`RepoError::Path`]; nothing is read.
    pub fn parse_picks(&self, answer: &str) -> Result<Vec<String>, RepoError> {
        let max = self.limits.max_picks;
        let shape = |reason: String| RepoError::Shape { max, reason };
        if answer.len() > self.limits.max_answer_bytes {
            return Err(shape(format!(
                "answer is longer than {} bytes",
                self.limits.max_answer_bytes
            )));
        }
        let body = strip_fence(answer);
        let value: serde_json::Value =
            serde_json::from_str(body).map_err(|e| shape(format!("not JSON ({e})")))?;
        let serde_json::Value::Array(items) = value else {
            return Err(shape("not a JSON array".to_owned()));
        };
        if items.is_empty() {
            return Err(shape("the array is empty".to_owned()));
        }
        if items.len() > max {
            return Err(shape(format!("{} entries", items.len())));
        }
        let mut picks: Vec<String> = Vec::with_capacity(items.len());
        for item in items {
            let serde_json::Value::String(path) = item else {
                return Err(shape("an entry is not a string".to_owned()));
            };
            check_syntax(&path, &self.limits).map_err(|reason| RepoError::Path {
                path: printable(&path),
                reason,
            })?;
            if picks.contains(&path) {
                return Err(RepoError::Path {
                    path: printable(&path),
                    reason: "listed twice",
                });
            }
            picks.push(path);
        }
        // Only files the listing offered: it is deterministic, so computing it again gives
        // the list the model was shown. One reason for every path it does not offer, whether
        // it exists or not (ignored, hidden, a link, missing, …).
        let offered = self.list_files()?;
        if let Some(p) = picks.iter().find(|p| offered.binary_search(p).is_err()) {
            return Err(RepoError::Path {
                path: printable(p),
                reason: NOT_AMONG_OFFERED,
            });
        }
        for p in &picks {
            self.resolve(p)?;
        }
        Ok(picks)
    }

    /// Resolves one proposed relative path to a canonical path of a regular file inside
    /// the root, or refuses it. Nothing is read.
    ///
    /// # Errors
    /// [`RepoError::Path`] naming the reason.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, RepoError> {
        let refuse = |reason: &'static str| RepoError::Path {
            path: printable(rel),
            reason,
        };
        check_syntax(rel, &self.limits).map_err(refuse)?;
        let joined = self.root.join(rel);
        // Look at the entry itself first: a dangling or outside symlink must not be followed.
        let meta = std::fs::symlink_metadata(&joined).map_err(|_| refuse("no such file"))?;
        let canonical = std::fs::canonicalize(&joined).map_err(|_| refuse("no such file"))?;
        if !canonical.starts_with(&self.root) {
            return Err(refuse("leads outside the repository"));
        }
        if !meta.file_type().is_symlink() && !meta.is_file() {
            return Err(refuse("not a regular file"));
        }
        let target = std::fs::metadata(&canonical).map_err(|_| refuse("no such file"))?;
        if !target.is_file() {
            return Err(refuse("not a regular file"));
        }
        // The canonical form must not reach into skipped directories either (a symlink
        // inside the root pointing at `.git/config`).
        let inner = canonical
            .strip_prefix(&self.root)
            .map_err(|_| refuse("leads outside the repository"))?;
        if inner
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n.to_str().is_none_or(is_skipped_dir)))
        {
            return Err(refuse("inside a directory that is not offered"));
        }
        let hidden = |n: &str| n.starts_with('.') || self.limits.hide_secrets && is_secret_name(n);
        if inner
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n.to_str().is_none_or(hidden)))
        {
            return Err(refuse("hidden or secret-looking name"));
        }
        if self.limits.hide_secrets
            && !inner
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_offered_file_name)
        {
            return Err(refuse("not a file type the repository offers"));
        }
        if !single_link(&canonical) {
            return Err(refuse("has more than one hard link"));
        }
        Ok(canonical)
    }

    /// Reads the given files after validating each again (offered by the listing, accepted
    /// by [`Repo::resolve`]), at most [`Limits::max_file_bytes`] per file and
    /// [`Limits::max_request_bytes`] in total (later files get what is left; a file with no
    /// budget left is reported empty and truncated).
    ///
    /// # Errors
    /// [`RepoError::Path`] for a refused path ("not among the files offered" for every path
    /// the listing does not offer), [`RepoError::Io`] when reading fails.
    pub fn read_files(&self, picks: &[String]) -> Result<Vec<FileExcerpt>, RepoError> {
        let mut budget = self.limits.max_request_bytes;
        let mut out = Vec::with_capacity(picks.len());
        let picks = &picks[..picks.len().min(self.limits.max_picks)];
        if !picks.is_empty() {
            let offered = self.list_files()?;
            if let Some(p) = picks.iter().find(|p| offered.binary_search(p).is_err()) {
                return Err(RepoError::Path {
                    path: printable(p),
                    reason: NOT_AMONG_OFFERED,
                });
            }
        }
        for rel in picks {
            self.resolve(rel)?;
            let limit = self.limits.max_file_bytes.min(budget);
            let io = |e: std::io::Error| RepoError::Io {
                path: printable(rel),
                message: e.to_string(),
            };
            // Opened by the path as given, not its canonical form: a symbolic link at any
            // component is refused, so what is read is what was validated and offered.
            let file = open_regular(&self.root, Path::new(rel)).map_err(|e| match e {
                OpenError::Refused(reason) => RepoError::Path {
                    path: printable(rel),
                    reason,
                },
                OpenError::Io(e) => io(e),
            })?;
            let mut bytes = Vec::with_capacity(limit.min(64 * 1024) + 1);
            // One byte past the limit tells a truncated file from one of exactly `limit`
            // bytes; saturating, so a limit of `usize::MAX` (no limit) cannot overflow.
            file.take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(io)?;
            let truncated = bytes.len() > limit;
            bytes.truncate(limit);
            let text = if bytes.contains(&0) {
                BINARY_PLACEHOLDER.to_owned()
            } else {
                sanitize(&utf8_prefix(&bytes))
            };
            budget -= bytes.len().min(budget);
            out.push(FileExcerpt {
                path: rel.clone(),
                text,
                truncated,
            });
        }
        Ok(out)
    }
}

impl Repo {
    /// Reads the file `rel` for a client that named it (a resource URI, an answer): only a
    /// file that [`Repo::list_files`] offers — the same filter, the same depth and count
    /// limits, the same sandbox — read as [`Repo::read_files`] reads.
    ///
    /// # Errors
    /// [`RepoError::NotOffered`] for every path that is not read, whatever the reason
    /// (missing, refused by the sandbox, not offered by the listing), so that the error
    /// does not tell whether the path exists; the reason is logged at `debug`.
    /// [`RepoError::Io`] when the root cannot be listed or an offered file cannot be read.
    pub fn read_offered(&self, rel: &str) -> Result<FileExcerpt, RepoError> {
        let not_offered = |reason: &dyn std::fmt::Display| {
            tracing::debug!(
                path = %mcp_tool_runtime::server::errors::for_log(rel),
                reason = %mcp_tool_runtime::server::errors::for_log_cut(
                    &reason.to_string(),
                    mcp_tool_runtime::server::errors::MAX_LOGGED_DETAIL
                ),
                "repository path not offered"
            );
            RepoError::NotOffered
        };
        // Cheap syntax first (no file system access), then membership in the listing
        // (`read_files`): nothing that the listing does not offer is looked up.
        check_syntax(rel, &self.limits).map_err(|r| not_offered(&r))?;
        let mut read = self.read_files(&[rel.to_owned()]).map_err(|e| match e {
            RepoError::Io { .. } => e,
            other => not_offered(&other),
        })?;
        read.pop().ok_or_else(|| not_offered(&"nothing read"))
    }
}

/// Whether the file at `path` (not followed if a symbolic link) has exactly one hard link.
/// A second link could make a file from outside the root (on the same file system) appear
/// inside it, so such files are neither listed nor read. Always true off Unix.
fn single_link(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).is_ok_and(|m| m.nlink() == 1)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

/// Why [`open_regular`] did not give a file.
enum OpenError {
    /// The path exists but is not something the sandbox reads.
    Refused(&'static str),
    /// The file system said no.
    Io(std::io::Error),
}

/// Opens `inner` (relative to `root`, already validated) for reading without following a
/// symbolic link at any component and without blocking on a special file, and checks the
/// opened file itself (`fstat`): a regular file with exactly one link.
#[cfg(unix)]
fn open_regular(root: &Path, inner: &Path) -> Result<File, OpenError> {
    use rustix::fs::{CWD, FileType, Mode, OFlags, fstat, openat};
    use rustix::io::Errno;
    let errno = |e: Errno| match e {
        Errno::LOOP | Errno::NOTDIR => OpenError::Refused("symbolic link or not a directory"),
        e => OpenError::Io(std::io::Error::from(e)),
    };
    let mut dir = openat(
        CWD,
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| OpenError::Io(e.into()))?;
    let parts: Vec<_> = inner.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let Component::Normal(name) = part else {
            return Err(OpenError::Refused("not a plain relative path"));
        };
        let last = i + 1 == parts.len();
        let flags = OFlags::RDONLY
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | if last {
                OFlags::NONBLOCK | OFlags::NOCTTY
            } else {
                OFlags::DIRECTORY
            };
        let fd = openat(&dir, *name, flags, Mode::empty()).map_err(errno)?;
        if !last {
            dir = fd;
            continue;
        }
        let st = fstat(&fd).map_err(|e| OpenError::Io(e.into()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(OpenError::Refused("not a regular file"));
        }
        if st.st_nlink != 1 {
            return Err(OpenError::Refused("has more than one hard link"));
        }
        return Ok(File::from(fd));
    }
    Err(OpenError::Refused("empty path"))
}

/// Off Unix: a plain open of the validated path, then a check that it is a regular file.
#[cfg(not(unix))]
fn open_regular(root: &Path, inner: &Path) -> Result<File, OpenError> {
    let file = File::open(root.join(inner)).map_err(OpenError::Io)?;
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(file),
        Ok(_) => Err(OpenError::Refused("not a regular file")),
        Err(e) => Err(OpenError::Io(e)),
    }
}

/// What [`Repo::read_files`] shows instead of the contents of a file containing NUL bytes.
pub const BINARY_PLACEHOLDER: &str = "[binary file: contents not shown]";

/// Replaces control characters other than newline and tab with spaces (they would only bloat
/// the JSON of the request, and of the sealed state that carries it).
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Purely syntactic checks on a proposed relative path.
fn check_syntax(rel: &str, limits: &Limits) -> Result<(), &'static str> {
    if rel.is_empty() {
        return Err("empty path");
    }
    if rel.len() > limits.max_path_len {
        return Err("path too long");
    }
    if rel.chars().any(|c| c.is_control()) {
        return Err("control character in path");
    }
    if rel.contains('\\') {
        return Err("backslash in path");
    }
    if rel.starts_with('/') || Path::new(rel).is_absolute() || rel.contains(':') {
        return Err("absolute path");
    }
    for part in rel.split('/') {
        match part {
            "" => return Err("empty path component"),
            "." | ".." => return Err("`.` or `..` component"),
            p if is_skipped_dir(p) => return Err("inside a directory that is not offered"),
            p if p.starts_with('.') || limits.hide_secrets && is_secret_name(p) => {
                return Err("hidden or secret-looking name");
            }
            _ => {}
        }
    }
    if limits.hide_secrets && !rel.rsplit('/').next().is_some_and(is_offered_file_name) {
        return Err("not a file type the repository offers");
    }
    if !Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err("not a plain relative path");
    }
    Ok(())
}

/// Strips surrounding whitespace and one optional Markdown code fence (```json or ```).
fn strip_fence(answer: &str) -> &str {
    let t = answer.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let Some(inner) = rest.strip_suffix("```") else {
        return t;
    };
    // Drop the info string (e.g. `json`) on the opening line.
    match inner.find('\n') {
        Some(nl)
            if inner[..nl]
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric()) =>
        {
            inner[nl + 1..].trim()
        }
        _ => inner.trim(),
    }
}

/// The longest valid UTF-8 prefix, with invalid sequences inside replaced.
fn utf8_prefix(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) if e.error_len().is_none() => {
            // Cut in the middle of a character at the bound: drop the partial character.
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// A short, printable rendering of untrusted text for error messages.
fn printable(s: &str) -> String {
    let mut out: String = s.chars().take(80).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> Repo {
        Repo::embedded_demo().expect("demo repo")
    }

    fn path_reason(r: Result<Vec<String>, RepoError>) -> &'static str {
        match r {
            Err(RepoError::Path { reason, .. }) => reason,
            other => panic!("expected a path refusal, got {other:?}"),
        }
    }

    /// Why [`Repo::resolve`] refuses `rel`.
    fn resolve_reason(repo: &Repo, rel: &str) -> &'static str {
        match repo.resolve(rel) {
            Err(RepoError::Path { reason, .. }) => reason,
            other => panic!("expected a path refusal of {rel}, got {other:?}"),
        }
    }

    fn is_shape(r: Result<Vec<String>, RepoError>) -> bool {
        matches!(r, Err(RepoError::Shape { .. }))
    }

    #[test]
    fn lists_the_demo_repository_sorted() {
        let repo = demo();
        let files = repo.list_files().unwrap();
        let expected: Vec<String> = {
            let mut v: Vec<String> = DEMO_FILES.iter().map(|(p, _)| p.to_string()).collect();
            v.sort();
            v
        };
        assert_eq!(files, expected);
    }

    #[test]
    fn listing_skips_git_target_and_symlinks_and_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "secret").unwrap();
        std::fs::create_dir_all(dir.path().join("target/debug")).unwrap();
        std::fs::write(dir.path().join("target/debug/x"), "bin").unwrap();
        for i in 0..10 {
            std::fs::write(dir.path().join(format!("f{i}.txt")), "x").unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link")).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let files = repo.list_files().unwrap();
        assert_eq!(files.len(), 10);
        assert!(files.iter().all(|f| f.starts_with('f')));
        let small = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_listed: 3,
            ..Limits::default()
        });
        assert_eq!(
            small.list_files().unwrap(),
            vec!["f0.txt", "f1.txt", "f2.txt"]
        );
    }

    #[test]
    fn accepts_plain_and_fenced_arrays() {
        let repo = demo();
        let want = vec!["README.md".to_owned(), "server.py".to_owned()];
        assert_eq!(
            repo.parse_picks(r#"["README.md", "server.py"]"#).unwrap(),
            want
        );
        assert_eq!(
            repo.parse_picks("```json\n[\"README.md\", \"server.py\"]\n```")
                .unwrap(),
            want
        );
        assert_eq!(
            repo.parse_picks("  ```\n[\"README.md\",\"server.py\"]```  ")
                .unwrap(),
            want
        );
        assert_eq!(
            repo.parse_picks(r#"["docs/intro.md"]"#).unwrap(),
            vec!["docs/intro.md"]
        );
    }

    #[test]
    fn rejects_answers_that_are_not_json_arrays_of_strings() {
        let repo = demo();
        assert!(is_shape(repo.parse_picks("README.md, server.py")));
        assert!(is_shape(repo.parse_picks(r#"{"files": ["README.md"]}"#)));
        assert!(is_shape(repo.parse_picks(r#"["README.md", 3]"#)));
        assert!(is_shape(repo.parse_picks("[]")));
        assert!(is_shape(repo.parse_picks("")));
        assert!(is_shape(repo.parse_picks("```json\n[\"README.md\"")));
    }

    #[test]
    fn rejects_more_than_three_files() {
        let repo = demo();
        assert!(is_shape(repo.parse_picks(
            r#"["README.md", "server.py", "forecast.py", "pyproject.toml"]"#
        )));
    }

    #[test]
    fn rejects_oversized_answers() {
        let repo = demo();
        let long = format!("[\"{}\"]", "a".repeat(10_000));
        assert!(is_shape(repo.parse_picks(&long)));
    }

    #[test]
    fn rejects_duplicates() {
        let repo = demo();
        assert_eq!(
            path_reason(repo.parse_picks(r#"["README.md", "README.md"]"#)),
            "listed twice"
        );
    }

    #[test]
    fn rejects_parent_components() {
        let repo = demo();
        assert_eq!(
            path_reason(repo.parse_picks(r#"["../etc/passwd"]"#)),
            "`.` or `..` component"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["docs/../README.md"]"#)),
            "`.` or `..` component"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["./README.md"]"#)),
            "`.` or `..` component"
        );
    }

    #[test]
    fn rejects_absolute_paths() {
        let repo = demo();
        assert_eq!(
            path_reason(repo.parse_picks(r#"["/etc/passwd"]"#)),
            "absolute path"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["C:/Windows/win.ini"]"#)),
            "absolute path"
        );
        let abs = repo.root().join("README.md");
        let answer = serde_json::to_string(&[abs.to_str().unwrap()]).unwrap();
        assert_eq!(path_reason(repo.parse_picks(&answer)), "absolute path");
    }

    #[test]
    fn rejects_odd_syntax() {
        let repo = demo();
        assert_eq!(path_reason(repo.parse_picks(r#"[""]"#)), "empty path");
        assert_eq!(
            path_reason(repo.parse_picks(r#"["docs//intro.md"]"#)),
            "empty path component"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["docs\\intro.md"]"#)),
            "backslash in path"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["README.md\u0000"]"#)),
            "control character in path"
        );
        let long = format!("[\"{}\"]", "a/".repeat(200));
        assert_eq!(path_reason(repo.parse_picks(&long)), "path too long");
    }

    #[test]
    fn rejects_missing_files_and_directories() {
        let repo = demo();
        // the model's answer: one reason for every path not offered, existing or not
        assert_eq!(
            path_reason(repo.parse_picks(r#"["nope.md"]"#)),
            NOT_AMONG_OFFERED
        );
        assert_eq!(resolve_reason(&repo, "nope.md"), "no such file");
        assert_eq!(
            path_reason(repo.parse_picks(r#"["docs"]"#)),
            "not a file type the repository offers"
        );
        // A directory with a name that passes the filter is still not a regular file.
        let dir = tree(&[("notes.md/inner.md", "x")]);
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(
            path_reason(repo.parse_picks(r#"["notes.md"]"#)),
            NOT_AMONG_OFFERED
        );
        assert_eq!(resolve_reason(&repo, "notes.md"), "not a regular file");
    }

    #[test]
    fn rejects_git_and_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "secret").unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(
            path_reason(repo.parse_picks(r#"[".git/config"]"#)),
            "inside a directory that is not offered"
        );
    }

    #[cfg(unix)]
    #[test]
    fn rejects_symlinks_leading_outside() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("outside.txt"), "top secret").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.txt"), "fine").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("outside.txt"),
            dir.path().join("escape.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("outdir")).unwrap();
        std::os::unix::fs::symlink("ok.txt", dir.path().join("inside-link.txt")).unwrap();
        std::os::unix::fs::symlink("missing.txt", dir.path().join("dangling.txt")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "secret").unwrap();
        std::os::unix::fs::symlink(".git/config", dir.path().join("gitcfg.txt")).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        for (p, why) in [
            ("escape.txt", "leads outside the repository"),
            ("outdir/outside.txt", "leads outside the repository"),
            ("dangling.txt", "no such file"),
            ("gitcfg.txt", "inside a directory that is not offered"),
        ] {
            let answer = serde_json::to_string(&[p]).unwrap();
            assert_eq!(
                path_reason(repo.parse_picks(&answer)),
                NOT_AMONG_OFFERED,
                "{p}"
            );
            assert_eq!(resolve_reason(&repo, p), why, "{p}");
        }
        // A symlink that stays inside the root is not offered, so not accepted either; and
        // read_files never follows one (O_NOFOLLOW), even when called directly.
        assert_eq!(
            path_reason(repo.parse_picks(r#"["inside-link.txt"]"#)),
            "not among the files offered"
        );
        assert!(matches!(
            repo.read_files(&["inside-link.txt".to_owned()]),
            Err(RepoError::Path { .. })
        ));
        // And read_files re-validates: it never reads a refused path.
        assert!(repo.read_files(&["escape.txt".to_owned()]).is_err());
    }

    #[test]
    fn reads_are_bounded_per_file_and_per_request() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a".repeat(100)).unwrap();
        std::fs::write(dir.path().join("b.txt"), "b".repeat(100)).unwrap();
        std::fs::write(dir.path().join("c.txt"), "c".repeat(100)).unwrap();
        std::fs::write(dir.path().join("small.txt"), "tiny").unwrap();
        let repo = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_file_bytes: 60,
            max_request_bytes: 100,
            ..Limits::default()
        });
        let picks: Vec<String> = ["a.txt", "b.txt", "c.txt"].map(String::from).to_vec();
        let read = repo.read_files(&picks).unwrap();
        assert_eq!(read[0].text.len(), 60);
        assert!(read[0].truncated);
        assert_eq!(read[1].text.len(), 40);
        assert!(read[1].truncated);
        assert_eq!(read[2].text.len(), 0);
        assert!(read[2].truncated);
        let small = repo.read_files(&["small.txt".to_owned()]).unwrap();
        assert_eq!(small[0].text, "tiny");
        assert!(!small[0].truncated);
        // No limit at all: the read bound must not overflow.
        let unbounded = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_file_bytes: usize::MAX,
            max_request_bytes: usize::MAX,
            ..Limits::default()
        });
        let read = unbounded.read_files(&["small.txt".to_owned()]).unwrap();
        assert_eq!(read[0].text, "tiny");
    }

    #[test]
    fn binary_files_and_control_characters_are_not_passed_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin.json"), b"ELF\0\x01\x02").unwrap();
        std::fs::write(dir.path().join("ctl.txt"), "a\x1b[31mb\r\nc\td").unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let read = repo
            .read_files(&["bin.json".to_owned(), "ctl.txt".to_owned()])
            .unwrap();
        assert_eq!(read[0].text, BINARY_PLACEHOLDER);
        assert_eq!(read[1].text, "a [31mb \nc\td");
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("u.txt"), "ééééé").unwrap();
        let repo = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_file_bytes: 5,
            ..Limits::default()
        });
        let read = repo.read_files(&["u.txt".to_owned()]).unwrap();
        assert_eq!(read[0].text, "éé");
        assert!(read[0].truncated);
    }

    #[test]
    fn arbitrary_answers_never_panic_and_never_escape() {
        use rand::{Rng, SeedableRng};
        let repo = demo();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let atoms = [
            "[",
            "]",
            "\"",
            ",",
            "..",
            "/",
            "\\",
            "README.md",
            "docs",
            "é",
            "\\u0000",
            "```",
            "json",
            "\n",
            "{",
            "}",
            ":",
            "null",
            "1e999",
            " ",
            ".git",
            "~",
            "*",
        ];
        for _ in 0..5000 {
            let n = rng.gen_range(0..12);
            let answer: String = (0..n)
                .map(|_| atoms[rng.gen_range(0..atoms.len())])
                .collect();
            if let Ok(picks) = repo.parse_picks(&answer) {
                assert!(picks.len() <= 3);
                for p in &picks {
                    assert!(repo.resolve(p).unwrap().starts_with(repo.root()));
                }
            }
        }
    }

    #[test]
    fn open_refuses_files_and_missing_roots() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(matches!(
            Repo::open(dir.path().join("f")),
            Err(RepoError::Root(_))
        ));
        assert!(matches!(
            Repo::open(dir.path().join("missing")),
            Err(RepoError::Root(_))
        ));
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, contents) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        dir
    }

    /// Real-world secret file names (keys, credentials, cloud SDK and tool configurations,
    /// browser stores, database dumps and backups): none of them is offered, by the name
    /// filter alone (the second line of defence: no `.gitignore` here).
    const SECRET_PATHS: &[&str] = &[
        ".env",
        ".env.production",
        ".env.local",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".docker/config.json",
        ".ssh/id_ed25519",
        ".aws/credentials",
        "config/.htpasswd",
        "htpasswd",
        "id_rsa",
        "id_rsa.pub",
        "id_ed25519",
        "id_ecdsa",
        "deploy/server.pem",
        "deploy/Server.KEY",
        "deploy/tls.key",
        "certs/client.p12",
        "certs/client.pfx",
        "certs/ca.crt",
        "certs/ca.cer",
        "android/release.keystore",
        "android/release.jks",
        "putty/server.ppk",
        "apple/AuthKey_ABC123.p8",
        "credentials",
        "credentials.json",
        "secret.json",
        "Secrets.yaml",
        "config/secrets.yml",
        "client_secret_1234.apps.json",
        "kubeconfig",
        "clusters/prod.kubeconfig",
        "infra/prod.tfvars",
        "infra/terraform.tfvars.json",
        "infra/terraform.tfstate",
        "infra/terraform.tfstate.backup",
        "gcp/service-account.json",
        "gcp/service-account-prod.json",
        "firebase-adminsdk-ab12c.json",
        "api_token.txt",
        "token.json",
        "backup.gpg",
        "keys/signing.asc",
        "etc/shadow",
        "vpn/office.ovpn",
        "wp-config.php",
        "config/master.key",
        "passwords.txt",
        "vault.kdbx",
        "config/database.yml",
        "aws_access_key.csv",
        "private_key.json",
        "settings/api-key.txt",
        "gcloud.json",
        "docker-config.json",
        "cookies.txt",
        "backup.sql",
        "db/prod_dump.sql",
        "db/mysqldump.sql",
        "db/app.sqlite",
        "db/data.sqlite3",
        "gcloud/application_default_credentials.json",
        "gcloud/credentials.db",
        "gcloud/access_tokens.db",
        "legacy_credentials/me/adc.json",
        ".kube/config",
        "kubeconfig.yaml",
        "sftp-config.json",
        "filezilla/sitemanager.xml",
        "firefox/logins.json",
        "firefox/key4.db",
        "firefox/cookies.sqlite",
        "chrome/Login Data",
        "wallet.dat",
        "eth/keystore.json",
        "auth.json",
        "k8s/secret.yaml",
        "infra/plan.tfplan",
        "krb5.keytab",
        "sessions.json",
        "my.cnf",
        ".my.cnf",
        ".s3cfg",
        "rclone.conf",
        "npmrc",
        "dockercfg.json",
        "recording.har",
        "users.csv.bak",
        "oauth-client.json",
        "token.pickle",
        "client_secret.json",
        "service_account.json",
        ".env.development.local",
        "jwt-private.pem",
        "saml.crt",
        "credentials.csv",
        "rootkey.csv",
        "accessKeys.csv",
        "login.keychain",
        "secring.gpg",
        "ca-key.pem",
        "vault-token",
        ".bash_history",
        ".composer/auth.json",
        ".config/gh/hosts.yml",
    ];

    /// Ordinary project files: all offered.
    const ORDINARY_PATHS: &[&str] = &[
        "README.md",
        "LICENSE",
        "LICENSE-MIT",
        "Makefile",
        "Dockerfile",
        "Cargo.toml",
        "Cargo.lock",
        "src/main.rs",
        "src/keys.rs",
        "src/keyboard.c",
        "src/tokenizer.rs",
        "src/auth/login.js",
        "package.json",
        "tsconfig.json",
        "src/App.tsx",
        "setup.py",
        "requirements.txt",
        "go.mod",
        "cmd/server/main.go",
        "include/api.h",
        "docs/SECURITY.md",
        "docs/guide.rst",
        "web/index.html",
        "web/style.css",
        "scripts/build.sh",
        "docker-compose.yml",
        "infra/main.tf",
        "db/schema.sql",
        "config/settings.yaml",
    ];

    #[test]
    fn dotfiles_and_secret_looking_names_are_neither_listed_nor_read() {
        assert!(SECRET_PATHS.len() >= 60, "{}", SECRET_PATHS.len());
        let mut files: Vec<(&str, &str)> =
            SECRET_PATHS.iter().map(|s| (*s, "SECRET-VALUE")).collect();
        files.extend(ORDINARY_PATHS.iter().map(|s| (*s, "ordinary")));
        files.push(("assets/logo.bin", "not a type that is offered"));
        let dir = tree(&files);
        let repo = Repo::open(dir.path()).unwrap();
        let mut ordinary: Vec<&str> = ORDINARY_PATHS.to_vec();
        ordinary.sort_unstable();
        assert_eq!(repo.list_files().unwrap(), ordinary);
        for s in SECRET_PATHS {
            let answer = serde_json::to_string(&[s]).unwrap();
            assert!(repo.parse_picks(&answer).is_err(), "{s} accepted");
            assert!(repo.read_files(&[(*s).to_owned()]).is_err(), "{s} read");
            assert_eq!(repo.read_offered(s), Err(RepoError::NotOffered), "{s}");
        }
        for s in ORDINARY_PATHS {
            assert_eq!(repo.read_offered(s).unwrap().text, "ordinary", "{s}");
        }
        assert_eq!(
            path_reason(repo.parse_picks(r#"[".env"]"#)),
            "hidden or secret-looking name"
        );
        assert_eq!(
            path_reason(repo.parse_picks(r#"["assets/logo.bin"]"#)),
            "not a file type the repository offers"
        );
        // The option turns the name filter off; hidden files stay hidden.
        let open = Repo::open(dir.path()).unwrap().with_limits(Limits {
            hide_secrets: false,
            ..Limits::default()
        });
        let listed = open.list_files().unwrap();
        assert!(listed.contains(&"kubeconfig".to_owned()), "{listed:?}");
        assert!(
            listed
                .iter()
                .all(|p| !p.split('/').any(|c| c.starts_with('.'))),
            "{listed:?}"
        );
        assert_eq!(
            path_reason(open.parse_picks(r#"[".env"]"#)),
            "hidden or secret-looking name"
        );
        assert_eq!(open.read_offered(".env"), Err(RepoError::NotOffered));
    }

    #[test]
    fn the_name_filter_fails_closed() {
        for s in SECRET_PATHS {
            let name = s.rsplit('/').next().unwrap();
            let dir_hidden = s.split('/').any(is_secret_name);
            assert!(dir_hidden || !is_offered_file_name(name), "{s} offered");
        }
        for s in ORDINARY_PATHS {
            let name = s.rsplit('/').next().unwrap();
            assert!(is_offered_file_name(name), "{s} not offered");
        }
        // Unknown types, no extension, an empty stem: not offered.
        for name in [
            "data.bin",
            "notes",
            "archive.tar.gz",
            "db.sqlite3",
            ".md",
            "a.",
            "",
        ] {
            assert!(!is_offered_file_name(name), "{name:?}");
        }
        // Letter case does not matter, neither for offering nor for refusing.
        assert!(is_offered_file_name("MAIN.RS"));
        assert!(!is_offered_file_name("SECRET.JSON"));
        assert!(!is_offered_file_name("Server.PEM.txt"));
    }

    #[test]
    fn exclusions_ignore_letter_case() {
        let dir = tree(&[
            (".GIT/config", "x"),
            ("Target/debug/app", "x"),
            ("TARGET/x", "x"),
            ("ok.txt", "fine"),
        ]);
        let repo = Repo::open(dir.path()).unwrap().with_limits(Limits {
            hide_secrets: false,
            ..Limits::default()
        });
        assert_eq!(repo.list_files().unwrap(), ["ok.txt"]);
        for p in [".GIT/config", "Target/debug/app", "TARGET/x"] {
            let answer = serde_json::to_string(&[p]).unwrap();
            assert_eq!(
                path_reason(repo.parse_picks(&answer)),
                "inside a directory that is not offered",
                "{p}"
            );
        }
    }

    #[test]
    fn only_files_the_listing_offered_are_accepted() {
        let mut files: Vec<(String, String)> = (0..10)
            .map(|i| (format!("f{i}.txt"), "x".to_owned()))
            .collect();
        files.push(("deep/a/b/c/d.txt".to_owned(), "deep".to_owned()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let dir = tree(&refs);
        let repo = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_listed: 3,
            max_depth: 3,
            ..Limits::default()
        });
        assert_eq!(repo.list_files().unwrap(), ["f0.txt", "f1.txt", "f2.txt"]);
        assert_eq!(repo.parse_picks(r#"["f1.txt"]"#).unwrap(), ["f1.txt"]);
        // An existing regular file inside the root, but beyond what was offered.
        for p in [
            r#"["f7.txt"]"#,
            r#"["deep/a/b/c/d.txt"]"#,
            r#"["f0.txt", "f9.txt"]"#,
        ] {
            assert_eq!(
                path_reason(repo.parse_picks(p)),
                "not among the files offered",
                "{p}"
            );
        }
    }

    #[test]
    fn the_walk_is_bounded_by_entries_visited() {
        let names: Vec<String> = (0..300).map(|i| format!("a/f{i:03}.txt")).collect();
        let mut files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
        files.push(("z.txt", "x"));
        let dir = tree(&files);
        let repo = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_visited: 50,
            max_listed: 1000,
            ..Limits::default()
        });
        let listed = repo.list_files().unwrap();
        // The walk (depth first) stops where the budget ends: at most 50 entries met, the
        // directory `a` among them.
        assert!(!listed.is_empty());
        assert!(listed.len() <= 49, "{}", listed.len());
        let unbounded = Repo::open(dir.path()).unwrap().with_limits(Limits {
            max_listed: 1000,
            ..Limits::default()
        });
        assert_eq!(unbounded.list_files().unwrap().len(), 301);
    }

    #[cfg(unix)]
    #[test]
    fn hard_links_are_neither_listed_nor_read() {
        let outside = tree(&[("secret.txt", "OUTSIDE-SECRET")]);
        let dir = tree(&[("ok.txt", "fine")]);
        std::fs::hard_link(
            outside.path().join("secret.txt"),
            dir.path().join("linked.txt"),
        )
        .unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(repo.list_files().unwrap(), ["ok.txt"]);
        assert_eq!(
            path_reason(repo.parse_picks(r#"["linked.txt"]"#)),
            NOT_AMONG_OFFERED
        );
        assert_eq!(
            resolve_reason(&repo, "linked.txt"),
            "has more than one hard link"
        );
        assert!(repo.read_files(&["linked.txt".to_owned()]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tree(&[("ok.txt", "fine")]);
        let fifo = dir.path().join("pipe.txt");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mkfifo unavailable: skipped");
            return;
        }
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(repo.list_files().unwrap(), ["ok.txt"]);
        assert_eq!(
            path_reason(repo.parse_picks(r#"["pipe.txt"]"#)),
            NOT_AMONG_OFFERED
        );
        assert_eq!(resolve_reason(&repo, "pipe.txt"), "not a regular file");
        // The opener itself, given the FIFO's path: refused at once, never blocked (no
        // writer ever opens the FIFO; a blocking open would hang this test).
        let (tx, rx) = std::sync::mpsc::channel();
        let root = repo.root().to_owned();
        std::thread::spawn(move || {
            let r = open_regular(&root, Path::new("pipe.txt"));
            let _ = tx.send(matches!(r, Err(OpenError::Refused("not a regular file"))));
        });
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("open_regular returned without blocking");
        assert!(refused);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_symlink_after_validation_is_not_followed() {
        let outside = tree(&[("secret.txt", "OUTSIDE-SECRET")]);
        let dir = tree(&[("a/notes.txt", "fine")]);
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(
            repo.parse_picks(r#"["a/notes.txt"]"#).unwrap(),
            ["a/notes.txt"]
        );
        // The race: after validation, the file (or its directory) becomes a symlink.
        std::fs::remove_file(dir.path().join("a/notes.txt")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("a/notes.txt"),
        )
        .unwrap();
        assert!(open_regular(repo.root(), Path::new("a/notes.txt")).is_err());
        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("a")).unwrap();
        std::fs::rename(
            outside.path().join("secret.txt"),
            outside.path().join("notes.txt"),
        )
        .unwrap();
        assert!(open_regular(repo.root(), Path::new("a/notes.txt")).is_err());
    }
}
