//! The example tools on the Lambda runtime emulator of `cargo lambda watch` (PyPI's
//! `cargo-lambda`), every round on a cold instance; used by `tests/lambda_emulator.rs` and
//! the `lambda_rounds` binary (`scripts/lambda.sh`).
//!
//! - [`cargo_lambda`] finds `cargo-lambda` (`$CARGO_LAMBDA`, else a venv under
//!   `<target>/peers/`, created with `pip install cargo-lambda==`[`CARGO_LAMBDA_VERSION`]).
//! - [`Emulator`] runs `cargo lambda watch --only-lambda-apis` on a free loopback port: the
//!   Lambda Runtime API and the function URL endpoint, without starting the function itself,
//!   so that the harness starts each instance.
//! - [`ColdFunction`] is a client transport that starts a **fresh function process** (the
//!   `lambda` example binary) for every message, sends the message to the emulator's function
//!   URL, and stops the process once the answer is in: every round meets a cold instance.
//!   It records how long each cold round took (process start to answer) and, when asked,
//!   how long the same message took again on the still-warm instance.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool_client::{ClientTransport, HttpTransport, TransportError};
use mcp_tool_runtime::manual::BoxFuture;
use serde_json::Value;

/// The `cargo-lambda` release installed from PyPI.
pub const CARGO_LAMBDA_VERSION: &str = "1.9.2";
/// The state key every instance shares (tests only).
pub const TEST_KEY: &str = "k1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
/// How long `pip install` may take.
const PIP_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the emulator may take to listen.
const EMULATOR_STARTUP: Duration = Duration::from_secs(120);

/// `<target>/peers` (or `$MCP_TOOL_PEERS_CACHE`), found from the running executable
/// (`<target>/<profile>/deps/<test>` or `<target>/<profile>/<bin>`).
pub fn peers_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MCP_TOOL_PEERS_CACHE") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.pop(); // the profile
    dir.join("peers")
}

/// Runs `cmd` to completion within `limit`; its combined output, or why not.
fn run_within(mut cmd: Command, limit: Duration) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{shown}: {e}"))?;
    let out = child.stdout.take();
    let err = child.stderr.take();
    let read = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = read(out.map(|o| Box::new(o) as _));
    let err = read(err.map(|e| Box::new(e) as _));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{shown}: no end within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    if status.success() {
        Ok(text)
    } else {
        Err(format!("{shown}: {status}\n{text}"))
    }
}

/// The `cargo-lambda` executable: `$CARGO_LAMBDA`, else the one in the venv
/// `<peers>/cargo-lambda-<version>`, installed there from PyPI when missing.
///
/// # Errors
/// When it cannot be installed (no python3 with venv, no network), or does not run.
pub fn cargo_lambda() -> Result<PathBuf, String> {
    let exe = match std::env::var_os("CARGO_LAMBDA").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => {
            let venv = peers_dir().join(format!("cargo-lambda-{CARGO_LAMBDA_VERSION}"));
            let exe = venv.join("bin").join("cargo-lambda");
            if !exe.is_file() {
                let partial = venv.with_extension("partial");
                let _ = std::fs::remove_dir_all(&partial);
                std::fs::create_dir_all(peers_dir()).map_err(|e| e.to_string())?;
                let mut mk = Command::new("python3");
                mk.args(["-m", "venv"]).arg(&partial);
                run_within(mk, Duration::from_secs(120))?;
                let mut pip = Command::new(partial.join("bin").join("python"));
                pip.args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .arg(format!("cargo-lambda=={CARGO_LAMBDA_VERSION}"));
                run_within(pip, PIP_TIMEOUT)?;
                let _ = std::fs::remove_dir_all(&venv);
                // a venv's scripts name their interpreter by absolute path: rename the
                // directory only after pip, and call the binary (not a script) afterwards
                std::fs::rename(&partial, &venv).map_err(|e| e.to_string())?;
            }
            exe
        }
    };
    let mut probe = Command::new(&exe);
    probe.args(["lambda", "--version"]);
    let version = run_within(probe, Duration::from_secs(30))?;
    if !version.contains("cargo-lambda") {
        return Err(format!("{} does not run: {version}", exe.display()));
    }
    Ok(exe)
}

/// A free loopback port (bound and released: another process could take it meanwhile,
/// which the emulator's start then reports).
fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// `cargo lambda watch --only-lambda-apis` on a loopback port: the Runtime API (`/.rt`) and
/// the function URL endpoint (`/lambda-url/<name>/…`). Stopped when dropped.
pub struct Emulator {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
}

impl Emulator {
    /// Starts the emulator in `workspace` (it reads the Cargo metadata there) and waits until
    /// it listens.
    ///
    /// # Errors
    /// When it does not start or does not listen in time.
    pub fn start(cargo_lambda: &Path, workspace: &Path) -> Result<Emulator, String> {
        let port = free_port()?;
        let mut cmd = Command::new(cargo_lambda);
        cmd.args(["lambda", "watch", "--only-lambda-apis", "--quiet"])
            .args(["--invoke-address", "127.0.0.1", "--invoke-port"])
            .arg(port.to_string())
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // `cargo lambda` runs `cargo metadata`: the cargo that runs this test
        if let Some(cargo) = std::env::var_os("CARGO").map(PathBuf::from)
            && let Some(dir) = cargo.parent()
        {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![dir.to_path_buf()];
            dirs.extend(std::env::split_paths(&path));
            cmd.env(
                "PATH",
                std::env::join_paths(dirs).map_err(|e| e.to_string())?,
            );
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cargo lambda watch: {e}"))?;
        let log = Arc::new(Mutex::new(String::new()));
        for pipe in [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
                    log.push_str(&line);
                    log.push('\n');
                }
            });
        }
        let emulator = Emulator { child, port, log };
        let start = Instant::now();
        let mut emulator = emulator;
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(emulator);
            }
            if let Ok(Some(status)) = emulator.child.try_wait() {
                return Err(format!(
                    "cargo lambda watch exited ({status}):\n{}",
                    emulator.log()
                ));
            }
            if start.elapsed() > EMULATOR_STARTUP {
                return Err(format!(
                    "cargo lambda watch did not listen within {EMULATOR_STARTUP:?}:\n{}",
                    emulator.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the emulator printed so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `AWS_LAMBDA_RUNTIME_API` for a function started by hand.
    pub fn runtime_api(&self) -> String {
        format!("http://127.0.0.1:{}/.rt", self.port)
    }

    /// The function URL of the MCP endpoint (`/mcp` of the function `_`, the name the
    /// emulator gives a function it does not start).
    pub fn function_url(&self) -> String {
        format!("http://127.0.0.1:{}/lambda-url/_/mcp", self.port)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One round through [`ColdFunction`].
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTiming {
    /// The JSON-RPC method.
    pub method: String,
    /// The process id of the instance that answered.
    pub pid: u32,
    /// From starting the function process to the answer: a cold invocation.
    pub cold: Duration,
    /// The same message again on the same, now warm, instance (when asked for).
    pub warm: Option<Duration>,
}

/// A [`ClientTransport`] that answers every message on a fresh instance of the function (see
/// the module documentation).
pub struct ColdFunction {
    binary: PathBuf,
    runtime_api: String,
    http: HttpTransport,
    env: Vec<(String, String)>,
    measure_warm: bool,
    timings: Mutex<Vec<RoundTiming>>,
}

impl ColdFunction {
    /// Instances of `binary` (the `lambda` example) on `emulator`, with the test key and the
    /// demo authenticator; the principal is `bearer`.
    pub fn new(binary: impl Into<PathBuf>, emulator: &Emulator, bearer: &str) -> ColdFunction {
        ColdFunction {
            binary: binary.into(),
            runtime_api: emulator.runtime_api(),
            http: HttpTransport::new(emulator.function_url()).bearer(bearer),
            env: vec![
                ("MCP_TOOL_STATE_KEY".into(), TEST_KEY.into()),
                ("MCP_TOOL_INSECURE_DEMO_AUTH".into(), "1".into()),
                ("MCP_TOOL_STORE".into(), "memory".into()),
                ("RUST_LOG".into(), "error".into()),
            ],
            measure_warm: false,
            timings: Mutex::new(Vec::new()),
        }
    }

    /// Also sends every message a second time to the instance that answered it (warm),
    /// and records how long that took.
    pub fn measuring_warm(mut self, on: bool) -> ColdFunction {
        self.measure_warm = on;
        self
    }

    /// The rounds so far.
    pub fn timings(&self) -> Vec<RoundTiming> {
        self.timings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn start_instance(&self) -> Result<Child, TransportError> {
        let mut cmd = Command::new(&self.binary);
        cmd.env("AWS_LAMBDA_RUNTIME_API", &self.runtime_api)
            .env("AWS_LAMBDA_FUNCTION_NAME", "_")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
            .env_remove("MCP_TOOL_STATE_KEY_PREVIOUS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.spawn()
            .map_err(|e| TransportError::Io(format!("starting {}: {e}", self.binary.display())))
    }
}

/// Stops an instance (and reaps it).
struct Instance(Child);

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl ClientTransport for ColdFunction {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move {
            let method = message
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let start = Instant::now();
            let mut instance = Instance(self.start_instance()?);
            let pid = instance.0.id();
            let answer = self.http.send(message.clone()).await;
            let cold = start.elapsed();
            if let Ok(Some(status)) = instance.0.try_wait() {
                return Err(TransportError::Io(format!(
                    "the function instance exited ({status})"
                )));
            }
            let warm = if self.measure_warm {
                let again = Instant::now();
                self.http.send(message).await?;
                Some(again.elapsed())
            } else {
                None
            };
            drop(instance);
            self.timings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(RoundTiming {
                    method,
                    pid,
                    cold,
                    warm,
                });
            answer
        })
    }
}
