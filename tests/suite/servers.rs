//! Real PostgreSQL and Redis servers for the `preflight` tests: Debian's `postgresql`
//! and `redis-server` (installed by `scripts/install-test-tools.sh`), each started on
//! a free loopback port in a temp dir of its own, with a password, and stopped by a
//! Drop guard, so a failing test stops them too. PostgreSQL refuses to run as root:
//! when the suite runs as root, `initdb` and `postgres` run as the `postgres` user the
//! package creates (else as `nobody`).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The folder with `initdb` and `postgres`: `SHIPSHAPE_POSTGRES_BIN` (set by
/// `scripts/test.sh`), else the newest `/usr/lib/postgresql/*/bin`. Missing, the test
/// fails; nothing is skipped.
pub fn postgres_bin() -> PathBuf {
    if let Some(dir) = std::env::var_os("SHIPSHAPE_POSTGRES_BIN").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .filter(|bin| bin.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop().unwrap_or_else(|| {
        panic!("external tool missing: PostgreSQL (no /usr/lib/postgresql/*/bin/initdb); set `SHIPSHAPE_POSTGRES_BIN` or run `scripts/install-test-tools.sh`; the suite never skips a test for a missing tool")
    })
}

/// `redis-server`: `SHIPSHAPE_REDIS_SERVER`, else `/usr/bin/redis-server`.
pub fn redis_server() -> PathBuf {
    let path = std::env::var_os("SHIPSHAPE_REDIS_SERVER")
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from("/usr/bin/redis-server"), PathBuf::from);
    assert!(
        path.exists(),
        "external tool missing: `{}`; set `SHIPSHAPE_REDIS_SERVER` or run `scripts/install-test-tools.sh`; the suite never skips a test for a missing tool",
        path.display()
    );
    path
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A temp dir under the system's temp folder (the `postgres` user must reach it),
/// removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "shipshape-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The user PostgreSQL runs as when the suite is root: `postgres`, else `nobody`.
fn unprivileged_user() -> Option<(u32, u32)> {
    // SAFETY: plain libc calls; the returned record is read before any other call.
    unsafe {
        if libc::geteuid() != 0 {
            return None;
        }
        for name in [c"postgres", c"nobody"] {
            let pw = libc::getpwnam(name.as_ptr());
            if !pw.is_null() {
                return Some(((*pw).pw_uid, (*pw).pw_gid));
            }
        }
    }
    panic!("the suite runs as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL");
}

fn chown(path: &Path, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

fn as_user(cmd: &mut Command, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
}

/// Sends `signal` and waits up to 15 s for the child to end; then kills it.
fn stop_child(child: &mut Child, signal: i32) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    // SAFETY: signals our own child by its pid.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A PostgreSQL server on loopback, stopped (fast shutdown) on drop.
pub struct Postgres {
    child: Option<Child>,
    pub port: u16,
    pub password: String,
    dir: TempDir,
}

/// The superuser the test servers are created with.
pub const PG_USER: &str = "shipshape";

impl Postgres {
    /// `initdb`, then `postgres` with `settings` (`-c name=value` arguments, as the
    /// chart renders them) on a free port; returns once it accepts a login.
    pub fn start(settings: &[String], password: &str) -> Postgres {
        let bin = postgres_bin();
        let owner = unprivileged_user();
        let dir = TempDir::new("postgres");
        chown(&dir.0, owner);
        let pwfile = dir.0.join("pwfile");
        std::fs::write(&pwfile, format!("{password}\n")).unwrap();
        chown(&pwfile, owner);
        let data = dir.0.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-D", data.to_str().unwrap(), "-U", PG_USER])
            .args([
                "--auth=scram-sha-256",
                "--no-sync",
                "--encoding=UTF8",
                "--locale=C",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .current_dir(&dir.0)
            .stdin(Stdio::null());
        as_user(&mut initdb, owner);
        let out = initdb
            .output()
            .unwrap_or_else(|e| panic!("cannot run `{}`: {e}", bin.join("initdb").display()));
        assert!(
            out.status.success(),
            "initdb failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let log = dir.0.join("postgres.log");
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.args(["-D", data.to_str().unwrap(), "-p", &port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.0.display()))
            .args(settings)
            .current_dir(&dir.0)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.0.join("postgres.err")).unwrap());
        chown(&log, owner);
        as_user(&mut cmd, owner);
        let child = cmd.spawn().unwrap();
        let mut server = Postgres {
            child: Some(child),
            port,
            password: password.to_string(),
            dir,
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                let err =
                    std::fs::read_to_string(self.dir.0.join("postgres.err")).unwrap_or_default();
                panic!("`postgres` exited with {status}:\n{err}");
            }
            if self.connect("ready-check").is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "PostgreSQL did not accept a login on port {} within 30 s",
            self.port
        );
    }

    /// A connection as the superuser, with `application` as its application name.
    pub fn connect(&self, application: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(PG_USER)
            .password(&self.password)
            .dbname("postgres")
            .application_name(application)
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls)
    }

    /// `SHOW name`.
    pub fn show(&self, name: &str) -> String {
        let mut client = self.connect("show").unwrap();
        client
            .query_one(&format!("SHOW {name}"), &[])
            .unwrap()
            .get(0)
    }

    /// The URL preflight is given (through the environment).
    pub fn url(&self) -> String {
        format!(
            "postgresql://{PG_USER}:{}@127.0.0.1:{}/postgres",
            self.password, self.port
        )
    }

    /// Stops the server (fast shutdown) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_child(&mut child, libc::SIGINT);
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Redis server on loopback, stopped on drop.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    pub password: String,
    _dir: TempDir,
}

impl Redis {
    /// `redis-server` with `settings` (`--name value` arguments, as the chart renders
    /// them) on a free port, without persistence; returns once it answers `PING`.
    pub fn start(settings: &[String], password: &str) -> Redis {
        let binary = redis_server();
        let dir = TempDir::new("redis");
        let port = free_port();
        let child = Command::new(&binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", dir.0.to_str().unwrap()])
            .args(["--requirepass", password])
            .args(settings)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.0.join("redis.log")).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", binary.display()));
        let mut server = Redis {
            child: Some(child),
            port,
            password: password.to_string(),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = server.child.as_mut().unwrap().try_wait().unwrap() {
                let log =
                    std::fs::read_to_string(server._dir.0.join("redis.log")).unwrap_or_default();
                panic!("`redis-server` exited with {status}:\n{log}");
            }
            if let Ok(mut con) = server.connect() {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer on port {port} within 15 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// A connection with the password.
    pub fn connect(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(self.url())?.get_connection_with_timeout(Duration::from_secs(5))
    }

    /// `CONFIG GET name`.
    pub fn config_get(&self, name: &str) -> String {
        let mut con = self.connect().unwrap();
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query(&mut con)
            .unwrap();
        assert_eq!(pair.len(), 2, "{pair:?}");
        pair[1].clone()
    }

    pub fn url(&self) -> String {
        format!("redis://:{}@127.0.0.1:{}", self.password, self.port)
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_child(&mut child, libc::SIGTERM);
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
