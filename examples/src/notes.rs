//! The notes store of the notes example: one SQLite file, through `rusqlite` with the SQLite
//! library compiled in (feature `bundled`: no system `libsqlite3` needed).
//!
//! A [`Notes`] is what the tools receive as application state (`notes: State<Notes>`). It
//! wraps one connection behind a mutex: the statements are short, so one connection per
//! process is enough for an example (a busy server would keep a pool of them). Several
//! processes — replicas of the server — may share one file:
//!
//! * the journal is in **WAL mode**, so readers never wait for a writer;
//! * every connection has a **busy timeout** ([`BUSY_TIMEOUT`]): a writer waits for the
//!   other process's write to finish instead of failing with `SQLITE_BUSY`;
//! * every write runs in an `IMMEDIATE` transaction, which takes the write lock at `BEGIN`
//!   (a read-then-write transaction that upgrades later could fail without waiting);
//! * ids come from `AUTOINCREMENT`, so the id of a deleted note is never given to a new one,
//!   and every note carries a `revision` bumped by each change: a tool that keeps
//!   `(id, revision)` in its `requestState` across rounds can tell, rounds later, whether the
//!   note it asked about is still the same one ([`Notes::delete_unchanged`],
//!   [`Notes::replace_body`]).
//!
//! **Every note has an owner**: the principal that added it ([`Owner::of`]; the anonymous
//! principal is an owner of its own, distinct from every named one). Every method takes the
//! caller's [`Owner`] and sees only that owner's notes: another principal's note is, to it,
//! exactly like a note that does not exist (not listed, not found, not changed, not
//! deleted, reported as gone). Files written before owners existed (schema version 1) are
//! migrated on open: their notes get the owner [`Owner::unowned`], which no principal is,
//! so they are visible to nobody until an operator gives them to someone (see
//! [`SCHEMA_VERSION`]).
//!
//! Every statement is parameterised (`?1`, `?2`): no text from a client is ever spliced into
//! SQL. The methods are `async`: each runs its blocking SQLite call on tokio's blocking pool
//! ([`tokio::task::spawn_blocking`]) so a slow disk or a lock held by another process never
//! stalls the async workers serving other requests. (Called outside a tokio runtime, the call
//! runs inline.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_tool_runtime::Principal;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long a connection waits for another connection's (or process's) write lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// The schema version this build writes (`PRAGMA user_version`). Version 2 added the
/// `owner` column; a version-1 file is migrated when opened (`ALTER TABLE … ADD COLUMN
/// owner … DEFAULT 'unowned'`): its notes belong to nobody until an operator assigns them,
/// e.g. `UPDATE notes SET owner = 'principal:alice' WHERE owner = 'unowned'` (the encoding
/// is [`Owner::as_str`]). Version 3 added the `balances` table of `donate` and `balance`
/// (`crate::balances`; created by the migration from 2).
pub const SCHEMA_VERSION: i64 = 3;
/// The file name [`Notes::temporary`] uses inside its fresh directory.
pub const TEMP_FILE_NAME: &str = "notes.sqlite3";

/// The schema of a new file (version 3).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS notes (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    title    TEXT    NOT NULL,
    body     TEXT    NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1,
    owner    TEXT    NOT NULL DEFAULT 'unowned'
);
CREATE INDEX IF NOT EXISTS notes_title ON notes(title);
CREATE INDEX IF NOT EXISTS notes_owner ON notes(owner, id);
CREATE TABLE IF NOT EXISTS balances (
    owner   TEXT    PRIMARY KEY,
    balance INTEGER NOT NULL DEFAULT 0
);
";

/// Version 2 to 3: each owner's balance (`donate`, `balance`).
const MIGRATE_2_TO_3: &str = "
CREATE TABLE IF NOT EXISTS balances (
    owner   TEXT    PRIMARY KEY,
    balance INTEGER NOT NULL DEFAULT 0
);
";

/// Version 1 to 2: the owner column (existing notes: [`Owner::unowned`]) and its index.
const MIGRATE_1_TO_2: &str = "
ALTER TABLE notes ADD COLUMN owner TEXT NOT NULL DEFAULT 'unowned';
CREATE INDEX IF NOT EXISTS notes_owner ON notes(owner, id);
";

/// `WHERE` clause of the owner `?3` and a text filter `?1` (`NULL`: every note of the
/// owner): ASCII case-insensitive substring of the title or the body. `instr`, not `LIKE`,
/// so `%` and `_` in the filter are plain characters.
const FILTER: &str = "owner = ?3 AND (?1 IS NULL OR instr(lower(title), lower(?1)) > 0 \
                      OR instr(lower(body), lower(?1)) > 0)";

/// Whose notes: the principal that added them, encoded so that no two principals share an
/// owner (`anonymous` for the anonymous principal, `principal:<key>` for a named one, by
/// [`Principal::key`], so the same subject at two issuers owns two sets of notes) and
/// [`Owner::unowned`] is nobody's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner(String);

impl Owner {
    /// The owner of the notes `principal` adds, lists and deletes.
    pub fn of(principal: &Principal) -> Owner {
        match principal.key() {
            None => Owner("anonymous".to_owned()),
            Some(key) => Owner(format!("principal:{key}")),
        }
    }

    /// The owner of notes migrated from a file without owners: no principal's.
    pub fn unowned() -> Owner {
        Owner("unowned".to_owned())
    }

    /// The encoding stored in the `owner` column.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// The note's id (never reused).
    pub id: i64,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
    /// 1 when added, bumped by every change.
    pub revision: i64,
}

impl Note {
    /// The note's id and title.
    pub fn to_ref(&self) -> NoteRef {
        NoteRef {
            id: self.id,
            title: self.title.clone(),
        }
    }
}

/// A note named by id and title (what tools keep across rounds and report: never the body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoteRef {
    /// The note's id.
    pub id: i64,
    /// Its title (when it was read).
    pub title: String,
}

/// What [`Notes::delete_unchanged`] did with one note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// Deleted.
    Deleted,
    /// There was no note with that id any more (deleted by someone else).
    Gone,
    /// The note exists with another revision (changed by someone else): not deleted.
    Changed,
}

/// What [`Notes::replace_body`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceOutcome {
    /// Replaced; the note's new revision.
    Replaced {
        /// The revision after the change.
        revision: i64,
    },
    /// There was no note with that id any more.
    Gone,
    /// The note exists with another revision: not changed.
    Changed,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    /// SQLite reported an error (I/O, a lock held longer than [`BUSY_TIMEOUT`], …).
    #[error("notes database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The directory for a temporary database could not be made.
    #[error("notes database: cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    /// The file cannot be shared safely: its journal mode is not WAL (e.g. `:memory:`, or a
    /// file system without shared memory).
    #[error("notes database: journal mode is {0:?}, not WAL: use a file on a local disk")]
    NotWal(String),
    /// The file was written by a newer version of this program.
    #[error("notes database: schema version {found} is newer than this build's {SCHEMA_VERSION}")]
    NewerSchema {
        /// The file's `user_version`.
        found: i64,
    },
    /// A blocking task failed (panicked or was cancelled at shutdown).
    #[error("notes database: a blocking task failed: {0}")]
    Task(String),
}

impl From<NotesError> for mcp_tool_runtime::ToolError {
    fn from(e: NotesError) -> Self {
        tracing::warn!(error = %e, "notes store");
        mcp_tool_runtime::ToolError::Failed(e.to_string())
    }
}

struct Inner {
    // Dropped before `_dir`: the connection closes before its directory is removed.
    conn: Mutex<Connection>,
    path: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

/// The notes store: a handle on one SQLite file, cheap to clone. Two handles opened on the
/// same path — in one process or in two — see each other's writes.
#[derive(Clone)]
pub struct Notes {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Notes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notes")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Notes {
    /// Opens (or creates) the database at `path`: WAL mode, the busy timeout, the schema.
    ///
    /// # Errors
    /// When the file cannot be opened or created, is not a SQLite database, cannot use WAL,
    /// or has a newer schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Notes, NotesError> {
        Self::open_in(path.as_ref().to_path_buf(), None)
    }

    /// A database in a fresh temporary directory, removed when the last handle is dropped
    /// (written without syncs: it does not outlive the process).
    ///
    /// # Errors
    /// When the directory cannot be made, or as [`Notes::open`].
    pub fn temporary() -> Result<Notes, NotesError> {
        let dir = tempfile::Builder::new()
            .prefix("mcp-tool-notes-")
            .tempdir()
            .map_err(NotesError::TempDir)?;
        let path = dir.path().join(TEMP_FILE_NAME);
        Self::open_in(path, Some(dir))
    }

    fn open_in(path: PathBuf, dir: Option<tempfile::TempDir>) -> Result<Notes, NotesError> {
        let mut conn = Connection::open(&path)?;
        if dir.is_some() {
            // A temporary database goes with the process: no fsync is worth waiting for
            // (its creation's syncs were most of `serve`'s start-up).
            conn.pragma_update(None, "synchronous", "OFF")?;
        }
        init(&mut conn)?;
        Ok(Notes {
            inner: Arc::new(Inner {
                conn: Mutex::new(conn),
                path,
                _dir: dir,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` with the connection on the blocking pool.
    pub(crate) async fn run<R, F>(&self, f: F) -> Result<R, NotesError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, NotesError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let job = move || {
            // A panic while the lock was held leaves no half-done transaction behind (a
            // `Transaction` rolls back when dropped), so the connection is still usable.
            let mut conn = inner.conn.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut conn)
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(job)
                .await
                .map_err(|e| NotesError::Task(e.to_string()))?,
            Err(_) => job(),
        }
    }

    /// Adds a note (revision 1) owned by `owner`. The caller validates the texts (the tools
    /// do).
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn add(
        &self,
        owner: &Owner,
        title: String,
        body: String,
    ) -> Result<Note, NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO notes (title, body, revision, owner) VALUES (?1, ?2, 1, ?3)",
                params![title, body, owner.0],
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(Note {
                id,
                title,
                body,
                revision: 1,
            })
        })
        .await
    }

    /// The note `id` of `owner`, if it exists (another owner's note: `None`).
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn get(&self, owner: &Owner, id: i64) -> Result<Option<Note>, NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT id, title, body, revision FROM notes WHERE id = ?1 AND owner = ?2",
                )?
                .query_row(params![id, owner.0], note_from_row)
                .optional()?)
        })
        .await
    }

    /// The first `limit` notes (by id) of `owner` matching `filter` (`None`: all), and how
    /// many match in all. The filter is an ASCII case-insensitive substring of the title or
    /// the body.
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn list(
        &self,
        owner: &Owner,
        filter: Option<String>,
        limit: usize,
    ) -> Result<(Vec<Note>, usize), NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            // One read transaction: the page and the count see the same snapshot.
            let tx = conn.transaction()?;
            let notes = tx
                .prepare_cached(&format!(
                    "SELECT id, title, body, revision FROM notes WHERE {FILTER} \
                     ORDER BY id LIMIT ?2"
                ))?
                .query_map(params![filter, to_sql_limit(limit), owner.0], note_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            let total = count(&tx, &owner, filter.as_deref())?;
            tx.commit()?;
            Ok((notes, total))
        })
        .await
    }

    /// Like [`Notes::list`], with ids and titles only.
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn find(
        &self,
        owner: &Owner,
        filter: Option<String>,
        limit: usize,
    ) -> Result<(Vec<NoteRef>, usize), NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let refs = tx
                .prepare_cached(&format!(
                    "SELECT id, title FROM notes WHERE {FILTER} ORDER BY id LIMIT ?2"
                ))?
                .query_map(params![filter, to_sql_limit(limit), owner.0], |row| {
                    Ok(NoteRef {
                        id: row.get(0)?,
                        title: row.get(1)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            let total = count(&tx, &owner, filter.as_deref())?;
            tx.commit()?;
            Ok((refs, total))
        })
        .await
    }

    /// Replaces the body of `owner`'s note `id` if it is still at `revision` (and bumps the
    /// revision). Another owner's note is [`ReplaceOutcome::Gone`].
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn replace_body(
        &self,
        owner: &Owner,
        id: i64,
        revision: i64,
        body: String,
    ) -> Result<ReplaceOutcome, NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = tx.execute(
                "UPDATE notes SET body = ?3, revision = revision + 1 \
                 WHERE id = ?1 AND revision = ?2 AND owner = ?4",
                params![id, revision, body, owner.0],
            )?;
            let outcome = if n == 1 {
                ReplaceOutcome::Replaced {
                    revision: revision + 1,
                }
            } else if exists(&tx, &owner, id)? {
                ReplaceOutcome::Changed
            } else {
                ReplaceOutcome::Gone
            };
            tx.commit()?;
            Ok(outcome)
        })
        .await
    }

    /// Deletes each `(id, revision)` of `owner` whose note is still at that revision, in one
    /// transaction; the outcome of each, in order. Another owner's note is never deleted
    /// ([`DeleteOutcome::Gone`]).
    ///
    /// # Errors
    /// When SQLite fails (then nothing is deleted).
    pub async fn delete_unchanged(
        &self,
        owner: &Owner,
        notes: Vec<(i64, i64)>,
    ) -> Result<Vec<DeleteOutcome>, NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut outcomes = Vec::with_capacity(notes.len());
            for (id, revision) in notes {
                let n = tx.execute(
                    "DELETE FROM notes WHERE id = ?1 AND revision = ?2 AND owner = ?3",
                    params![id, revision, owner.0],
                )?;
                outcomes.push(if n == 1 {
                    DeleteOutcome::Deleted
                } else if exists(&tx, &owner, id)? {
                    DeleteOutcome::Changed
                } else {
                    DeleteOutcome::Gone
                });
            }
            tx.commit()?;
            Ok(outcomes)
        })
        .await
    }

    /// Deletes `owner`'s note `id` whatever its revision; whether it existed (another
    /// owner's note: `false`, not deleted).
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn delete(&self, owner: &Owner, id: i64) -> Result<bool, NotesError> {
        let owner = owner.clone();
        self.run(move |conn| {
            Ok(conn.execute(
                "DELETE FROM notes WHERE id = ?1 AND owner = ?2",
                params![id, owner.0],
            )? == 1)
        })
        .await
    }
}

fn init(conn: &mut Connection) -> Result<(), NotesError> {
    // First, so that everything below waits for another process instead of failing.
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(NotesError::NotWal(mode));
    }
    // Two processes may create the schema at the same time: the write lock orders them.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(NotesError::NewerSchema { found: version });
    }
    if version < SCHEMA_VERSION {
        // A version-1 file has the table without owners: migrate it. (A new file, version
        // 0, gets the whole schema; `IF NOT EXISTS` leaves an existing version-1 table
        // alone, so the migration below is what adds the column.)
        let has_table: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'notes')",
            [],
            |row| row.get(0),
        )?;
        if (1..=2).contains(&version) && has_table {
            if version == 1 {
                tx.execute_batch(MIGRATE_1_TO_2)?;
            }
            tx.execute_batch(MIGRATE_2_TO_3)?;
        } else {
            tx.execute_batch(SCHEMA)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

fn note_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Note> {
    Ok(Note {
        id: row.get(0)?,
        title: row.get(1)?,
        body: row.get(2)?,
        revision: row.get(3)?,
    })
}

fn count(conn: &Connection, owner: &Owner, filter: Option<&str>) -> rusqlite::Result<usize> {
    // `?2` (the page limit of the queries sharing FILTER) is not used here.
    let n: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM notes WHERE {FILTER}"))?
        .query_row(params![filter, None::<i64>, owner.0], |row| row.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Whether `owner` has a note `id` (another owner's note does not exist for it).
fn exists(conn: &Connection, owner: &Owner, id: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1 AND owner = ?2)")?
        .query_row(params![id, owner.0], |row| row.get(0))
}

fn to_sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anonymous() -> Owner {
        Owner::of(&Principal::anonymous())
    }

    #[tokio::test]
    async fn a_store_round_trip() {
        let me = anonymous();
        let notes = Notes::temporary().unwrap();
        assert!(notes.path().exists());
        let a = notes
            .add(&me, "Groceries".into(), "milk, eggs".into())
            .await
            .unwrap();
        let b = notes
            .add(&me, "100% done".into(), "ship_it".into())
            .await
            .unwrap();
        assert_eq!((a.id, a.revision), (1, 1));
        assert_eq!(notes.get(&me, a.id).await.unwrap(), Some(a.clone()));
        // ASCII case-insensitive, title or body; `%` and `_` are plain characters
        let (found, total) = notes.find(&me, Some("MILK".into()), 10).await.unwrap();
        assert_eq!((found, total), (vec![a.to_ref()], 1));
        assert_eq!(notes.find(&me, Some("%".into()), 10).await.unwrap().1, 1);
        assert_eq!(notes.find(&me, Some("p_i".into()), 10).await.unwrap().1, 1);
        let (all, total) = notes.list(&me, None, 1).await.unwrap();
        assert_eq!((all.len(), total), (1, 2));
        // a stale revision changes nothing
        assert_eq!(
            notes.replace_body(&me, a.id, 7, "x".into()).await.unwrap(),
            ReplaceOutcome::Changed
        );
        assert_eq!(
            notes
                .replace_body(&me, a.id, 1, "bread".into())
                .await
                .unwrap(),
            ReplaceOutcome::Replaced { revision: 2 }
        );
        assert_eq!(
            notes
                .delete_unchanged(&me, vec![(a.id, 1), (b.id, 1), (99, 1)])
                .await
                .unwrap(),
            [
                DeleteOutcome::Changed,
                DeleteOutcome::Deleted,
                DeleteOutcome::Gone
            ]
        );
        assert!(notes.delete(&me, a.id).await.unwrap());
        assert!(!notes.delete(&me, a.id).await.unwrap());
        // ids are never reused
        let c = notes.add(&me, "again".into(), "x".into()).await.unwrap();
        assert_eq!(c.id, 3);
    }

    #[test]
    fn without_a_runtime_the_calls_run_inline() {
        let me = anonymous();
        let notes = Notes::temporary().unwrap();
        let fut = notes.add(&me, "t".into(), "b".into());
        // a minimal executor: the future completes on its first poll
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut fut = std::pin::pin!(fut);
        match fut.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(note) => assert_eq!(note.unwrap().id, 1),
            std::task::Poll::Pending => panic!("pending without a runtime"),
        }
    }

    #[test]
    fn a_reopened_file_keeps_its_notes_and_refuses_a_newer_schema() {
        let me = anonymous();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.db");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let notes = Notes::open(&path).unwrap();
        rt.block_on(notes.add(&me, "kept".into(), "b".into()))
            .unwrap();
        drop(notes);
        let notes = Notes::open(&path).unwrap();
        assert_eq!(rt.block_on(notes.list(&me, None, 10)).unwrap().1, 1);
        drop(notes);
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        assert!(matches!(
            Notes::open(&path),
            Err(NotesError::NewerSchema { found }) if found == SCHEMA_VERSION + 1
        ));
        // not a database
        std::fs::write(dir.path().join("junk"), b"not sqlite at all, really not").unwrap();
        assert!(Notes::open(dir.path().join("junk")).is_err());
    }

    #[tokio::test]
    async fn notes_are_owned_by_their_principal() {
        let notes = Notes::temporary().unwrap();
        let alice = Owner::of(&Principal::named("alice"));
        let bob = Owner::of(&Principal::named("bob"));
        let anon = anonymous();
        // distinct owners, also for names that look like another encoding
        let tricky = [
            Owner::of(&Principal::named("")),
            Owner::of(&Principal::named("anonymous")),
            Owner::of(&Principal::named("unowned")),
            Owner::of(&Principal::issued("https://a.example", "alice")),
            Owner::of(&Principal::issued("https://b.example", "alice")),
        ];
        let mut all = vec![alice.clone(), bob.clone(), anon.clone(), Owner::unowned()];
        all.extend(tricky.iter().cloned());
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let a1 = notes
            .add(&alice, "Alice's".into(), "milk".into())
            .await
            .unwrap();
        let n1 = notes
            .add(&anon, "Anon's".into(), "milk".into())
            .await
            .unwrap();
        for other in [&bob, &anon, &tricky[0], &tricky[1], &tricky[2]] {
            assert_eq!(notes.get(other, a1.id).await.unwrap(), None);
            let (found, total) = notes.list(other, None, 10).await.unwrap();
            assert!(found.iter().all(|n| n.id != a1.id));
            assert_eq!(total, found.len());
            assert_eq!(
                notes.find(other, Some("Alice".into()), 10).await.unwrap().1,
                0
            );
            assert_eq!(
                notes
                    .replace_body(other, a1.id, 1, "x".into())
                    .await
                    .unwrap(),
                ReplaceOutcome::Gone
            );
            assert_eq!(
                notes
                    .delete_unchanged(other, vec![(a1.id, 1)])
                    .await
                    .unwrap(),
                [DeleteOutcome::Gone]
            );
            assert!(!notes.delete(other, a1.id).await.unwrap());
        }
        assert_eq!(notes.get(&alice, a1.id).await.unwrap(), Some(a1.clone()));
        assert_eq!(notes.list(&alice, None, 10).await.unwrap(), (vec![a1], 1));
        assert_eq!(notes.list(&anon, None, 10).await.unwrap(), (vec![n1], 1));
        assert_eq!(notes.list(&bob, None, 10).await.unwrap().1, 0);
    }

    #[tokio::test]
    async fn a_version_1_file_is_migrated_and_its_notes_belong_to_nobody() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        {
            // the schema and rows a build before owners wrote
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 CREATE TABLE notes (
                     id       INTEGER PRIMARY KEY AUTOINCREMENT,
                     title    TEXT    NOT NULL,
                     body     TEXT    NOT NULL,
                     revision INTEGER NOT NULL DEFAULT 1
                 );
                 CREATE INDEX notes_title ON notes(title);
                 INSERT INTO notes (title, body) VALUES ('old', 'milk'), ('older', 'eggs');
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let notes = Notes::open(&path).unwrap();
        let alice = Owner::of(&Principal::named("alice"));
        for who in [&anonymous(), &alice] {
            assert_eq!(notes.list(who, None, 10).await.unwrap().1, 0);
            assert_eq!(notes.get(who, 1).await.unwrap(), None);
            assert!(!notes.delete(who, 1).await.unwrap());
        }
        let (old, total) = notes.list(&Owner::unowned(), None, 10).await.unwrap();
        assert_eq!((old.len(), total), (2, 2));
        // new notes get new ids and their owner
        let new = notes.add(&alice, "new".into(), "b".into()).await.unwrap();
        assert_eq!(new.id, 3);
        drop(notes);
        // reopening does not migrate again; an operator can hand the old notes over
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        conn.execute(
            "UPDATE notes SET owner = ?1 WHERE owner = ?2",
            params![alice.as_str(), Owner::unowned().as_str()],
        )
        .unwrap();
        drop(conn);
        let notes = Notes::open(&path).unwrap();
        assert_eq!(notes.list(&alice, None, 10).await.unwrap().1, 3);
        // the migration went on to version 3: balances work on the old file
        assert_eq!(
            notes.donate(&alice, 4).await.unwrap(),
            crate::balances::Donation::Added(4)
        );
        assert_eq!(notes.balance(&alice).await.unwrap(), 4);
    }
}
