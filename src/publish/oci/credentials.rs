//! Registry credentials: the Docker config file, Basic headers, `WWW-Authenticate`
//! challenges.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;

/// Registry credentials (the password is never printed by `Debug`).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Reads the credentials for `host` from a Docker or Helm registry config
/// (`config.json`): `auths.<host>.auth` (base64 of `user:password`), or
/// `username`/`password` in the same entry. Keys written as `https://HOST/...`
/// match too. Credential helpers (`credsStore`, `credHelpers`) are not consulted.
pub fn credentials_from_docker_config(config_json: &str, host: &str) -> Option<Credentials> {
    let config: serde_json::Value = serde_json::from_str(config_json).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let normalize = |key: &str| {
        let key = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(key);
        key.split('/').next().unwrap_or(key).to_string()
    };
    let entry = auths.get(host).or_else(|| {
        auths
            .iter()
            .find(|(k, _)| normalize(k) == host)
            .map(|(_, v)| v)
    })?;
    if let Some(auth) = entry
        .get("auth")
        .and_then(|a| a.as_str())
        .filter(|a| !a.is_empty())
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (username, password) = decoded.split_once(':')?;
        return Some(Credentials {
            username: username.to_string(),
            password: password.to_string(),
        });
    }
    let username = entry.get("username")?.as_str()?;
    let password = entry.get("password")?.as_str()?;
    Some(Credentials {
        username: username.to_string(),
        password: password.to_string(),
    })
}

pub(super) fn basic_auth(creds: &Credentials) -> String {
    let raw = format!("{}:{}", creds.username, creds.password);
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

/// Splits `Bearer realm="...",service="...",scope="a:b:pull,push"` into the
/// scheme and its parameters (quoted values may hold commas).
pub(super) fn parse_challenge(header: &str) -> (String, BTreeMap<String, String>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = BTreeMap::new();
    let mut chars = rest.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(c) if *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ',' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() && chars.peek().is_none() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
        }
        let key = key.trim().to_ascii_lowercase();
        if !key.is_empty() {
            params.insert(key, value.trim().to_string());
        }
        if chars.peek().is_none() {
            break;
        }
    }
    (scheme.to_string(), params)
}
