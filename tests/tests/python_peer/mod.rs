//! Harness for the official MCP Python SDK as an independent client of our server.
//!
//! - [`SdkSpec`] names an SDK version (`mcp==X` on PyPI) and the venv that holds it;
//!   [`sdk`] makes sure the venv exists with that version (creating it with
//!   `python3 -m venv` and `pip install`, once per process, and reusing it across runs), or
//!   fails with a message that says what is missing. Every external command runs under a
//!   deadline, so a machine without network fails instead of hanging.
//! - [`Fixture`] runs the `conformance_fixture` binary over Streamable HTTP on a free
//!   loopback port; [`stdio_transport`] tells a Python client to run it as its child.
//!   [`HttpServer`] runs any other server command that announces `listening on URL` on
//!   stderr (the example server [`example_serve_bin`], a Python reference server).
//! - [`PyClient`] runs a checked-in client script (`tests/python/`) with the venv's
//!   interpreter and drives it one JSON line at a time: the test writes an operation, the
//!   script runs it through the SDK and answers with its parsed result (a [`Reply`]) and
//!   what its elicitation / sampling / roots callbacks were asked.
//!
//! The venvs live under `<target>/peers/python/` (`MCP_TOOL_PEERS_CACHE` overrides
//! `<target>/peers`); `MCP_TOOL_PYTHON` names the interpreter that creates them (default
//! `python3`, 3.10 or newer).

#![allow(dead_code)] // each test binary uses the part it needs

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long `python3 -m venv` may take.
const VENV_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the whole `pip install` may take (cold cache, slow mirror).
const PIP_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a quick probe (`python --version`, the installed version) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the client script may take to start and connect (imports, discover).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(90);
/// How long one operation may take.
pub const OP_TIMEOUT: Duration = Duration::from_secs(60);

/// An SDK version and where its venv lives.
#[derive(Debug, Clone)]
pub struct SdkSpec {
    /// The `mcp` package version, e.g. `2.3.0`.
    pub version: String,
    /// The venv directory.
    pub venv: PathBuf,
    /// A pip constraints file pinning the SDK's dependencies, if any.
    pub constraints: Option<PathBuf>,
    /// An index URL instead of pip's default (PyPI or the user's pip configuration).
    pub index_url: Option<String>,
}

impl SdkSpec {
    /// `mcp==version` in `<cache>/python/mcp-<version>`, with the dependency pins of
    /// `tests/python/constraints/mcp-<version>.txt` when that file exists.
    pub fn pinned(version: &str) -> SdkSpec {
        let constraints = python_dir()
            .join("constraints")
            .join(format!("mcp-{version}.txt"));
        SdkSpec {
            version: version.to_owned(),
            venv: cache_dir().join("python").join(format!("mcp-{version}")),
            constraints: constraints.is_file().then_some(constraints),
            index_url: None,
        }
    }
}

/// A venv with a given SDK version installed.
#[derive(Debug, Clone)]
pub struct PythonSdk {
    /// The `mcp` package version installed.
    pub version: String,
    /// The venv directory.
    pub venv: PathBuf,
    /// The venv's interpreter.
    pub python: PathBuf,
    /// Whether this process created the venv (false: an existing one was reused).
    pub installed_now: bool,
    /// How long making sure of the venv took.
    pub took: Duration,
}

/// `tests/python/`, where the client scripts are. (This file is also compiled into the
/// tests of `mcp-tool-rmcp`, another package at the root of the workspace: hence the path
/// through the workspace root.)
pub fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python")
}

/// The fixture binary (built by cargo for the tests of `mcp-tool-tests`; other packages
/// sharing this harness have none).
pub fn fixture_bin() -> PathBuf {
    let bin = option_env!("CARGO_BIN_EXE_conformance_fixture");
    PathBuf::from(bin.expect("conformance_fixture is a binary of mcp-tool-tests only"))
}

/// The example server `serve` of `mcp-tool-examples`, built from the same source as the
/// `example_serve` binary of `mcp-tool-tests` (cargo hands a test only its own package's
/// binaries).
pub fn example_serve_bin() -> PathBuf {
    let bin = option_env!("CARGO_BIN_EXE_example_serve");
    PathBuf::from(bin.expect("example_serve is a binary of mcp-tool-tests only"))
}

/// `$MCP_TOOL_PEERS_CACHE`, or `peers/` in cargo's target directory (found from the
/// running test's path, `<target>/<profile>/deps/<test>`).
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MCP_TOOL_PEERS_CACHE") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().ok();
    let target = exe
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("peers")
}

/// The venv for `spec`, installed if needed, once per process for each venv path. Every
/// caller gets the same outcome (the error too, so one failed install is not retried by
/// every test).
pub fn sdk(spec: &SdkSpec) -> Result<Arc<PythonSdk>, String> {
    type Slot = Arc<OnceLock<Result<Arc<PythonSdk>, String>>>;
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, Slot>>> = OnceLock::new();
    let slot = SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(spec.venv.clone())
        .or_default()
        .clone();
    slot.get_or_init(|| ensure(spec).map(Arc::new)).clone()
}

/// Reuses the venv when it has the version, or builds a new one beside it and renames it
/// into place (so an interrupted install never leaves a venv that looks ready).
pub fn ensure(spec: &SdkSpec) -> Result<PythonSdk, String> {
    let start = Instant::now();
    let python = venv_python(&spec.venv);
    if installed_version(&python).as_deref() == Some(spec.version.as_str()) {
        return Ok(PythonSdk {
            version: spec.version.clone(),
            venv: spec.venv.clone(),
            python,
            installed_now: false,
            took: start.elapsed(),
        });
    }

    let base = std::env::var("MCP_TOOL_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let probe = run(
        Command::new(&base).args([
            "-c",
            "import sys; print('%d.%d' % sys.version_info[:2]); sys.exit(sys.version_info < (3, 10))",
        ]),
        PROBE_TIMEOUT,
    )
    .map_err(|e| format!("the Python SDK tests need Python 3.10 or newer as `{base}` (set MCP_TOOL_PYTHON to another interpreter): {e}"))?;
    if !probe.status.success() {
        return Err(format!(
            "the Python SDK tests need Python 3.10 or newer; `{base}` is {} (set MCP_TOOL_PYTHON)",
            probe.stdout.trim()
        ));
    }

    let parent = spec
        .venv
        .parent()
        .ok_or_else(|| format!("no parent directory for {}", spec.venv.display()))?;
    std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
    let partial = spec
        .venv
        .with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);

    let out = run(
        Command::new(&base).arg("-m").arg("venv").arg(&partial),
        VENV_TIMEOUT,
    )?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(format!(
            "`{base} -m venv {}` failed ({}); on Debian the `python3-venv` package provides it\n{}",
            partial.display(),
            out.status,
            tail(&out.stderr, 2000)
        ));
    }

    let requirement = format!("mcp=={}", spec.version);
    let mut pip = Command::new(venv_python(&partial));
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--timeout",
        "20",
        "--retries",
        "2",
    ]);
    if let Some(c) = &spec.constraints {
        pip.arg("--constraint").arg(c);
    }
    if let Some(url) = &spec.index_url {
        pip.arg("--index-url").arg(url);
    }
    pip.arg(&requirement);
    let out = run(&mut pip, PIP_TIMEOUT);
    let failed = match &out {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "pip exited with {}\n{}",
            o.status,
            tail(&o.stderr, 3000)
        )),
        Err(e) => Some(e.clone()),
    };
    if let Some(why) = failed {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(format!(
            "could not install {requirement} from the package index into {}: this test needs \
             network access to PyPI (or a venv with {requirement} prepared there; \
             MCP_TOOL_PEERS_CACHE moves the cache)\n{why}",
            spec.venv.display()
        ));
    }
    let got = installed_version(&venv_python(&partial));
    if got.as_deref() != Some(spec.version.as_str()) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(format!(
            "pip installed {requirement} but the venv reports mcp {got:?}"
        ));
    }

    // A stale or broken venv goes; another process may have put a good one in place.
    if installed_version(&python).as_deref() == Some(spec.version.as_str()) {
        let _ = std::fs::remove_dir_all(&partial);
    } else {
        let _ = std::fs::remove_dir_all(&spec.venv);
        if let Err(e) = std::fs::rename(&partial, &spec.venv) {
            let _ = std::fs::remove_dir_all(&partial);
            if installed_version(&python).as_deref() != Some(spec.version.as_str()) {
                return Err(format!(
                    "move {} to {}: {e}",
                    partial.display(),
                    spec.venv.display()
                ));
            }
        }
    }
    let took = start.elapsed();
    eprintln!(
        "python peer: installed {requirement} into {} in {:.1} s",
        spec.venv.display(),
        took.as_secs_f64()
    );
    Ok(PythonSdk {
        version: spec.version.clone(),
        venv: spec.venv.clone(),
        python,
        installed_now: true,
        took,
    })
}

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// The `mcp` version the interpreter sees, if it runs and has one.
fn installed_version(python: &Path) -> Option<String> {
    if !python.exists() {
        return None;
    }
    let out = run(
        Command::new(python).args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ]),
        PROBE_TIMEOUT,
    )
    .ok()?;
    out.status
        .success()
        .then(|| out.stdout.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Output {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// Runs `cmd` (no stdin) and waits at most `timeout`; past that it is killed and the run
/// is an error. Output is read on threads, so a chatty command cannot block on a full pipe.
pub fn run(cmd: &mut Command, timeout: Duration) -> Result<Output, String> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                let err = stderr.join().unwrap_or_default();
                return Err(format!(
                    "{shown} did not finish within {} s and was killed\n{}",
                    timeout.as_secs(),
                    tail(&err, 3000)
                ));
            }
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = pipe {
            let mut bytes = Vec::new();
            let _ = p.read_to_end(&mut bytes);
            s = String::from_utf8_lossy(&bytes).into_owned();
        }
        s
    })
}

/// The last `max` bytes of `s` (on a character boundary).
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = s.len() - max;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// Collects a child's stderr on a thread, for error messages.
fn collect(pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let log = Arc::new(Mutex::new(String::new()));
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
            s.push_str(&line);
            s.push('\n');
        }
    });
    log
}

fn snapshot(log: &Arc<Mutex<String>>) -> String {
    let s = log.lock().unwrap_or_else(|e| e.into_inner());
    tail(&s, 4000).to_owned()
}

/// The fixture server over Streamable HTTP on a free loopback port; killed on drop.
pub struct Fixture {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Fixture {
    /// Starts `conformance_fixture --http 127.0.0.1:0` and reads the bound URL from its
    /// first line of output.
    pub fn http() -> Fixture {
        let mut child = Command::new(fixture_bin())
            .args(["--http", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start conformance_fixture");
        let stderr = collect(child.stderr.take().expect("stderr"));
        let (tx, rx) = channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let Some(url) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            panic!(
                "conformance_fixture did not announce its URL (got {line:?})\n{}",
                snapshot(&stderr)
            );
        };
        Fixture {
            url: url.to_owned(),
            child,
            stderr,
        }
    }

    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `transport` of a `connect` operation for this server.
    pub fn transport(&self) -> Value {
        json!({"http": self.url})
    }

    /// What the server logged so far (warnings and errors).
    pub fn log(&self) -> String {
        snapshot(&self.stderr)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server process over Streamable HTTP that writes `listening on URL` to stderr once
/// bound (`serve --http 127.0.0.1:0`, `reference_legacy_server.py --http 127.0.0.1:0`);
/// the rest of its stderr is kept for error messages. Killed on drop.
pub struct HttpServer {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Starts `cmd` (stdin closed, stdout discarded, stderr read) and waits up to 60 s for
    /// its `listening on` line.
    pub fn start(mut cmd: Command) -> HttpServer {
        let shown = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {shown}: {e}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let pipe = child.stderr.take().expect("stderr");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.trim().strip_prefix("listening on ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.to_owned());
                }
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                s.push_str(&line);
                s.push('\n');
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{shown} did not announce its URL within 60 s\n{}",
                snapshot(&stderr)
            );
        };
        HttpServer { child, url, stderr }
    }

    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `transport` of a `connect` operation for this server.
    pub fn transport(&self) -> Value {
        json!({"http": self.url})
    }

    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        snapshot(&self.stderr)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `transport` of a `connect` operation that makes the Python client start
/// `conformance_fixture --stdio` as its child process.
pub fn stdio_transport() -> Value {
    json!({"stdio": {
        "command": fixture_bin(),
        "args": ["--stdio"],
        "env": {"RUST_LOG": "warn"},
    }})
}

/// One answer of the client script.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The whole line, parsed.
    pub raw: Value,
}

impl Reply {
    /// Whether the operation succeeded.
    pub fn ok(&self) -> bool {
        self.raw["ok"] == true
    }

    /// The SDK's result (panics with the error otherwise).
    pub fn result(&self) -> &Value {
        assert!(self.ok(), "the operation failed: {}", self.raw);
        &self.raw["result"]
    }

    /// The error (panics if the operation succeeded).
    pub fn error(&self) -> &Value {
        assert!(!self.ok(), "the operation succeeded: {}", self.raw);
        &self.raw["error"]
    }

    /// What the callbacks were asked during the operation: `{kind, key, params}`
    /// (`sdk1_client.py`: `{method, params, raw, requestId, ...}`).
    pub fn asked(&self) -> &[Value] {
        self.raw["asked"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The JSON-RPC messages of the operation, `{dir: "out" | "in", msg}` (`sdk1_client.py`).
    pub fn wire(&self) -> &[Value] {
        self.raw["wire"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The HTTP requests and responses of the operation (`sdk1_client.py` over HTTP).
    pub fn http(&self) -> &[Value] {
        self.raw["http"].as_array().map_or(&[], Vec::as_slice)
    }
}

/// A client script running on a [`PythonSdk`], driven one line at a time; killed on drop.
pub struct PyClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    script: PathBuf,
}

impl PyClient {
    /// Starts `script` (a path, or a file name under `tests/python/`) with the venv's
    /// interpreter.
    pub fn start(sdk: &PythonSdk, script: impl AsRef<Path>) -> PyClient {
        let script = python_dir().join(script.as_ref());
        let mut child = Command::new(&sdk.python)
            .arg(&script)
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONIOENCODING", "utf-8")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", script.display()));
        let stderr = collect(child.stderr.take().expect("stderr"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        PyClient {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            script,
        }
    }

    /// Connects through `transport` (see [`Fixture::transport`], [`stdio_transport`]);
    /// `answers` maps input-request keys to `{"elicitation" | "sampling" | "roots": result}`.
    /// Returns what the client learned: `protocolVersion`, `serverInfo`, `capabilities`,
    /// `instructions`, `discovered`, `initialized`, `sdkVersion`.
    pub fn connect(&mut self, transport: Value, answers: Value) -> Value {
        let reply = self.send_with(
            json!({"op": "connect", "transport": transport, "answers": answers}),
            CONNECT_TIMEOUT,
        );
        reply.result().clone()
    }

    /// Sends a whole `connect` operation (or any first operation) with the connect timeout
    /// and returns the reply as it is, failed or not.
    pub fn start_op(&mut self, op: Value) -> Reply {
        self.send_with(op, CONNECT_TIMEOUT)
    }

    /// Runs one operation (see the script's docstring).
    pub fn op(&mut self, op: Value) -> Reply {
        self.send_with(op, OP_TIMEOUT)
    }

    fn send_with(&mut self, op: Value, timeout: Duration) -> Reply {
        let stdin = self.stdin.as_mut().expect("the client is closed");
        if let Err(e) = writeln!(stdin, "{op}").and_then(|()| stdin.flush()) {
            panic!(
                "{} is gone ({e}) before {op}\n{}",
                self.script.display(),
                snapshot(&self.stderr)
            );
        }
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                let raw: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("not a JSON reply ({e}): {line}\n{}", snapshot(&self.stderr))
                });
                Reply { raw }
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                panic!(
                    "no reply to {op} within {} s\n{}",
                    timeout.as_secs(),
                    snapshot(&self.stderr)
                );
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().ok();
                panic!(
                    "{} ended ({status:?}) without replying to {op}\n{}",
                    self.script.display(),
                    snapshot(&self.stderr)
                );
            }
        }
    }

    /// Ends the session and waits for the script to exit cleanly.
    pub fn close(mut self) {
        let reply = self.op(json!({"op": "close"}));
        assert!(reply.ok(), "close: {}", reply.raw);
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    assert!(
                        status.success(),
                        "{} exited with {status}\n{}",
                        self.script.display(),
                        snapshot(&self.stderr)
                    );
                    return;
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => panic!(
                    "{} did not exit after close\n{}",
                    self.script.display(),
                    snapshot(&self.stderr)
                ),
            }
        }
    }

    /// What the script wrote to stderr so far.
    pub fn log(&self) -> String {
        snapshot(&self.stderr)
    }
}

impl Drop for PyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
