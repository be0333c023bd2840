//! Reading real PostgreSQL and Redis servers for `shipshape preflight`, with the
//! `postgres` and `redis` client crates: their connection limits, the slots they keep
//! reserved, the connections other clients hold now, and Redis's eviction policy.
//!
//! Credentials never leave this module in a message: every error text passes through
//! [`Redactor`], which replaces the password (as given and as decoded) with `***`, and
//! servers are named by `host:port` alone. Each read runs on its own thread under one
//! deadline (connect, authenticate, query), so a server that accepts a connection and
//! then stalls cannot hold preflight past `timeout`. TLS is not built in (no TLS
//! crate): a PostgreSQL URL with `sslmode=require` and a `rediss://` URL are refused
//! with a message saying so.

use crate::capacity::preflight::{OtherClients, ReservedSlots, ServerState};
use std::sync::mpsc;
use std::time::Duration;

/// What reading a server can fail with. Messages name the server by `host:port` and
/// never carry a password.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The URL does not parse, or asks for what this build cannot do (exit 2).
    #[error("cannot use the {what} URL from {origin}: {message}\n  hint: {hint}")]
    BadUrl {
        what: &'static str,
        origin: String,
        message: String,
        hint: String,
    },
    /// The server cannot be reached, refuses the login, or does not answer (exit 3).
    #[error("cannot reach {server}: {message}\n  hint: {hint}")]
    Unreachable {
        server: String,
        message: String,
        hint: String,
    },
}

/// Replaces every form of a password in a text with `***`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for the password of `url` as written (percent-encoded or not) and
    /// as the client decoded it (`decoded`).
    fn new(url: &str, decoded: Option<String>) -> Self {
        let mut secrets: Vec<String> = decoded.into_iter().collect();
        if let Some(raw) = raw_url_password(url) {
            secrets.push(raw.to_string());
        }
        // The key=value form: `password=...` up to the next space.
        if let Some(i) = url.find("password=") {
            let rest = &url[i + "password=".len()..];
            secrets.push(rest.split(' ').next().unwrap_or("").to_string());
        }
        secrets.retain(|s| !s.is_empty());
        // Longest first, so a password containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// `text` with every secret replaced by `***`.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_string(), |t, s| t.replace(s.as_str(), "***"))
    }
}

/// The password of a `scheme://user:password@host/...` URL as written.
fn raw_url_password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let userinfo = &rest[..rest.rfind('@')?];
    let (_, password) = userinfo.split_once(':')?;
    Some(password)
}

/// A PostgreSQL server to read.
#[derive(Clone)]
pub struct PostgresTarget {
    config: postgres::Config,
    address: String,
    redactor: Redactor,
}

/// A Redis server to read.
#[derive(Clone)]
pub struct RedisTarget {
    info: redis::ConnectionInfo,
    address: String,
    redactor: Redactor,
}

impl PostgresTarget {
    /// `host:port` (the hosts joined by `,` when the URL names several).
    #[must_use]
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Whether the URL carries a password.
    #[must_use]
    pub fn has_password(&self) -> bool {
        self.config.get_password().is_some_and(|p| !p.is_empty())
    }
}

impl RedisTarget {
    /// `host:port`, or the socket path.
    #[must_use]
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Whether the URL carries a password.
    #[must_use]
    pub fn has_password(&self) -> bool {
        self.info
            .redis_settings()
            .password()
            .is_some_and(|p| !p.is_empty())
    }
}

/// Parses a PostgreSQL URL (`postgresql://user:password@host:port/db?...`, or the
/// `key=value` form). `origin` says where it came from, for messages (`env:VAR`).
pub fn parse_postgres_url(url: &str, origin: &str) -> Result<PostgresTarget, ServerError> {
    let bad = |redactor: &Redactor, message: String, hint: &str| ServerError::BadUrl {
        what: "PostgreSQL",
        origin: origin.to_string(),
        message: redactor.redact(&message),
        hint: hint.to_string(),
    };
    let rough = Redactor::new(url, None);
    let config: postgres::Config = url.parse().map_err(|e: postgres::Error| {
        bad(
            &rough,
            e.to_string(),
            "write it as `postgresql://USER:PASSWORD@HOST:PORT/DATABASE` (percent-encode special characters in the password)",
        )
    })?;
    let decoded = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let redactor = Redactor::new(url, decoded);
    if config.get_ssl_mode() == postgres::config::SslMode::Require {
        return Err(bad(
            &redactor,
            "it requires TLS (`sslmode=require`), which preflight does not support".into(),
            "run preflight where the server accepts a plain connection (`sslmode=prefer` or `disable`), e.g. through a port-forward inside the cluster network",
        ));
    }
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports
                .get(i)
                .or_else(|| ports.first())
                .copied()
                .unwrap_or(5432);
            match host {
                postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
                postgres::config::Host::Unix(dir) => {
                    format!("{}/.s.PGSQL.{port}", dir.display())
                }
            }
        })
        .collect();
    if hosts.is_empty() {
        return Err(bad(
            &redactor,
            "it names no host".into(),
            "write it as `postgresql://USER:PASSWORD@HOST:PORT/DATABASE`",
        ));
    }
    Ok(PostgresTarget {
        config,
        address: redactor.redact(&hosts.join(",")),
        redactor,
    })
}

/// Parses a Redis URL (`redis://[:password@]host:port[/db]`).
pub fn parse_redis_url(url: &str, origin: &str) -> Result<RedisTarget, ServerError> {
    let rough = Redactor::new(url, None);
    let bad = |redactor: &Redactor, message: String, hint: &str| ServerError::BadUrl {
        what: "Redis",
        origin: origin.to_string(),
        message: redactor.redact(&message),
        hint: hint.to_string(),
    };
    let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(|e| {
        bad(
            &rough,
            e.to_string(),
            "write it as `redis://:PASSWORD@HOST:PORT` or `redis://USER:PASSWORD@HOST:PORT/DB`",
        )
    })?;
    let redactor = Redactor::new(url, info.redis_settings().password().map(str::to_string));
    if !info.addr().is_supported() {
        return Err(bad(
            &redactor,
            "it asks for TLS (`rediss://`), which preflight does not support".into(),
            "run preflight where the server accepts a plain connection, e.g. through a port-forward inside the cluster network",
        ));
    }
    Ok(RedisTarget {
        address: redactor.redact(&info.addr().to_string()),
        info,
        redactor,
    })
}

/// Runs `work` on its own thread; `None` when it has not finished within `timeout`
/// (the thread is left to end on its own).
fn within<T: Send + 'static>(
    timeout: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(timeout).ok()
}

/// The application name preflight's own PostgreSQL connection carries.
pub const APPLICATION_NAME: &str = "shipshape-preflight";

/// Reads `max_connections`, `superuser_reserved_connections`, `reserved_connections`
/// (`None` before PostgreSQL 16, which added it) and the client backends of others in
/// `pg_stat_activity`, by role and application (preflight's own connection left out).
/// `label` names the server in errors (e.g. `PostgreSQL`).
pub fn read_postgres_limits(
    target: &PostgresTarget,
    label: &str,
    timeout: Duration,
) -> Result<ServerState, ServerError> {
    let server = format!("{label} at {}", target.address);
    let mut config = target.config.clone();
    config
        .connect_timeout(timeout)
        .application_name(APPLICATION_NAME);
    let read = within(timeout, move || -> Result<ServerState, postgres::Error> {
        let mut client = config.connect(postgres::NoTls)?;
        let row = client.query_one(
            "SELECT current_setting('server_version'), \
                    current_setting('max_connections')::bigint, \
                    current_setting('superuser_reserved_connections')::bigint, \
                    current_setting('reserved_connections', true)::bigint",
            &[],
        )?;
        let version: String = row.get(0);
        let limit: i64 = row.get(1);
        let superuser: i64 = row.get(2);
        let reserved: Option<i64> = row.get(3);
        let others = client
            .query(
                "SELECT coalesce(usename::text, ''), coalesce(application_name, ''), count(*) \
                 FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() \
                 GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
                &[],
            )?
            .iter()
            .map(|r| {
                let role: String = r.get(0);
                let application: String = r.get(1);
                let role = if role.is_empty() { "?".into() } else { role };
                OtherClients {
                    name: if application.is_empty() {
                        role
                    } else {
                        format!("{role}/{application}")
                    },
                    connections: u64::try_from(r.get::<_, i64>(2)).unwrap_or(0),
                }
            })
            .collect();
        let count = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(ServerState {
            // `15.18 (Debian 15.18-0+deb12u1)`: the version is the first word.
            version: format!(
                "PostgreSQL {}",
                version
                    .split_whitespace()
                    .next()
                    .unwrap_or("(unknown version)")
            ),
            limit_setting: "max_connections".into(),
            limit: count(limit),
            reserved_slots: vec![
                ReservedSlots {
                    setting: "superuser_reserved_connections".into(),
                    value: Some(count(superuser)),
                },
                ReservedSlots {
                    setting: "reserved_connections".into(),
                    value: reserved.map(count),
                },
            ],
            others,
            maxmemory_policy: None,
        })
    });
    match read {
        None => Err(timed_out(server, timeout)),
        Some(Ok(state)) => Ok(state),
        Some(Err(e)) => {
            // The server's own words (`password authentication failed ...`) when it
            // sent an error, else the client's.
            let message = match e.as_db_error() {
                Some(db) => format!("{}: {}", db.severity(), db.message()),
                None => with_causes(&e),
            };
            Err(ServerError::Unreachable {
                server,
                message: target.redactor.redact(&message),
                hint: "check that the server runs, that the URL's host, port, user and password are right, and that this user may connect to the database; `--timeout-seconds` sets how long to wait".into(),
            })
        }
    }
}

/// An error and its causes, `: `-separated (`error connecting to server: Connection
/// refused (os error 111)`).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let part = c.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = c.source();
    }
    text
}

fn timed_out(server: String, timeout: Duration) -> ServerError {
    ServerError::Unreachable {
        server,
        message: format!("no answer within {} s", timeout.as_secs()),
        hint: "check that the server runs and the URL's host and port; `--timeout-seconds` sets how long to wait".into(),
    }
}

/// The value of `key` in the text `INFO` prints (`key:value` lines).
fn info_field<'a>(info: &'a str, key: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// Reads `maxclients` and `maxmemory-policy` (`CONFIG GET`) and the connected clients
/// (`INFO`), preflight's own connection left out. `label` names the server in errors
/// (e.g. ``Redis `cache` ``).
pub fn read_redis_limits(
    target: &RedisTarget,
    label: &str,
    timeout: Duration,
) -> Result<ServerState, ServerError> {
    let server = format!("{label} at {}", target.address);
    let info = target.info.clone();
    let read = within(timeout, move || -> Result<ServerState, String> {
        let client = redis::Client::open(info).map_err(|e| e.to_string())?;
        let mut con = client
            .get_connection_with_timeout(timeout)
            .map_err(|e| e.to_string())?;
        con.set_read_timeout(Some(timeout))
            .and_then(|()| con.set_write_timeout(Some(timeout)))
            .map_err(|e| e.to_string())?;
        let mut config_get = |name: &str| -> Result<String, String> {
            let pairs: Vec<String> = redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query(&mut con)
                .map_err(|e| {
                    format!("`CONFIG GET {name}` failed: {e} (managed services may disable CONFIG)")
                })?;
            match pairs.as_slice() {
                [key, value] if key == name => Ok(value.clone()),
                _ => Err(format!("`CONFIG GET {name}` answered {pairs:?}")),
            }
        };
        let maxclients = config_get("maxclients")?;
        let policy = config_get("maxmemory-policy")?;
        let info: String = redis::cmd("INFO")
            .query(&mut con)
            .map_err(|e| format!("`INFO` failed: {e}"))?;
        let connected: u64 = info_field(&info, "connected_clients")
            .and_then(|v| v.parse().ok())
            .ok_or("`INFO` has no `connected_clients`")?;
        let version = match info_field(&info, "valkey_version") {
            Some(v) => format!("Valkey {v}"),
            None => format!(
                "Redis {}",
                info_field(&info, "redis_version").unwrap_or("(unknown version)")
            ),
        };
        Ok(ServerState {
            version,
            limit_setting: "maxclients".into(),
            limit: maxclients
                .parse()
                .map_err(|_| format!("`maxclients` is `{maxclients}`, not a number"))?,
            reserved_slots: vec![],
            others: vec![OtherClients {
                name: "clients".into(),
                connections: connected.saturating_sub(1),
            }],
            maxmemory_policy: Some(policy),
        })
    });
    match read {
        None => Err(timed_out(server, timeout)),
        Some(Ok(state)) => Ok(state),
        Some(Err(message)) => Err(ServerError::Unreachable {
            server,
            message: target.redactor.redact(&message),
            hint: "check that the server runs, that the URL's host, port and password are right, and that this user may run `CONFIG GET` and `INFO`; `--timeout-seconds` sets how long to wait".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_the_password_is_redacted() {
        let url = "postgresql://app:p%40ss%20w0rd@db.internal:6432/app";
        let target = parse_postgres_url(url, "env:DB").unwrap();
        assert_eq!(target.address(), "db.internal:6432");
        assert!(target.has_password());
        let r = &target.redactor;
        assert_eq!(r.redact("x p@ss w0rd y p%40ss%20w0rd z"), "x *** y *** z");
        let kv =
            parse_postgres_url("host=db port=5433 user=app password=hunter2", "file:x").unwrap();
        assert_eq!(kv.address(), "db:5433");
        assert_eq!(kv.redactor.redact("hunter2!"), "***!");
    }

    #[test]
    fn a_url_without_a_password_has_none() {
        let target = parse_postgres_url("postgresql://app@127.0.0.1/app", "`--postgres`").unwrap();
        assert!(!target.has_password());
        assert_eq!(target.address(), "127.0.0.1:5432");
        let redis = parse_redis_url("redis://127.0.0.1:6380/2", "`--redis`").unwrap();
        assert!(!redis.has_password());
        assert_eq!(redis.address(), "127.0.0.1:6380");
        let redis = parse_redis_url("redis://:s3cret@kv:6379", "`--redis`").unwrap();
        assert!(redis.has_password());
        assert_eq!(redis.redactor.redact("auth s3cret"), "auth ***");
    }

    #[test]
    fn a_bad_url_is_refused_without_echoing_its_password() {
        let e = parse_postgres_url("postgresql://app:t0psecret@db:notaport/app", "env:DB")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("cannot use the PostgreSQL URL from env:DB: "),
            "{e}"
        );
        assert!(!e.contains("t0psecret"), "{e}");
        let e = parse_redis_url("redis://:t0psecret@kv:notaport", "env:KV")
            .err()
            .unwrap()
            .to_string();
        assert!(!e.contains("t0psecret"), "{e}");
        let e = parse_redis_url("rediss://:t0psecret@kv:6379", "env:KV")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("TLS"), "{e}");
        let e = parse_postgres_url("postgresql://db/app?sslmode=require", "env:DB")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sslmode=require"), "{e}");
    }

    #[test]
    fn info_fields_are_read_by_key() {
        let info = "# Clients\r\nconnected_clients:7\r\nmaxclients:1024\r\n";
        assert_eq!(info_field(info, "connected_clients"), Some("7"));
        assert_eq!(info_field(info, "maxclients"), Some("1024"));
        assert_eq!(info_field(info, "clients"), None);
    }

    #[test]
    fn a_closed_port_is_unreachable_and_named() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = parse_postgres_url(
            &format!("postgresql://app:zz9secret@127.0.0.1:{port}/app"),
            "env:DB",
        )
        .unwrap();
        let e = read_postgres_limits(&target, "PostgreSQL", Duration::from_secs(2))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with(&format!("cannot reach PostgreSQL at 127.0.0.1:{port}: ")),
            "{e}"
        );
        assert!(!e.contains("zz9secret"), "{e}");
        let target =
            parse_redis_url(&format!("redis://:zz9secret@127.0.0.1:{port}"), "env:KV").unwrap();
        let e = read_redis_limits(&target, "Redis `cache`", Duration::from_secs(2))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with(&format!("cannot reach Redis `cache` at 127.0.0.1:{port}: ")),
            "{e}"
        );
        assert!(!e.contains("zz9secret"), "{e}");
    }

    #[test]
    fn a_server_that_never_answers_times_out() {
        // A listener that accepts and never speaks.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = parse_redis_url(&format!("redis://127.0.0.1:{port}"), "`--redis`").unwrap();
        let started = std::time::Instant::now();
        let e = read_redis_limits(&target, "Redis `critical`", Duration::from_secs(1))
            .err()
            .unwrap()
            .to_string();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.contains(&format!("Redis `critical` at 127.0.0.1:{port}")),
            "{e}"
        );
        drop(listener);
    }
}
