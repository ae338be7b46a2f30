//! What the tests that start real services (PostgreSQL in store_postgres.rs, Redis in
//! store_redis.rs) share: installing a Debian package when it is missing, and a free
//! loopback port.

use std::process::Command;

/// Whether this process runs as root (PostgreSQL then runs as the `postgres` user, and
/// `apt-get` may install what is missing).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `apt-get install -y PACKAGE` (after an `apt-get update` if the first try fails).
///
/// # Errors
/// Not root, or apt-get failed (the text says which).
pub fn install_debian_package(package: &str) -> Result<(), String> {
    if !is_root() {
        return Err(format!("not root, cannot apt-get install {package}"));
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("apt-get: {e}"))
    };
    if !apt(&["install", "-y", "-q", package])?.success() {
        apt(&["update", "-q"])?;
        if !apt(&["install", "-y", "-q", package])?.success() {
            return Err(format!("apt-get install {package} failed"));
        }
    }
    Ok(())
}

/// A loopback port free at the time of the call.
///
/// # Panics
/// When the system has none to give (the test fails).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
