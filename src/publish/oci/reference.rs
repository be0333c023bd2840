//! `oci://HOST[:PORT]/NAMESPACE` references, repository names and tags.

use std::fmt;

use super::OciError;

/// A parsed `oci://HOST[:PORT][/NAMESPACE...]` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciReference {
    /// `host[:port]`, e.g. `127.0.0.1:5000` or `[::1]:5000`.
    pub host: String,
    /// Repository path after the host, without leading or trailing `/`; may be empty.
    pub namespace: String,
}

impl OciReference {
    /// The repository of a chart: `<namespace>/<chart name>`, or the name alone.
    pub fn repository(&self, chart_name: &str) -> String {
        if self.namespace.is_empty() {
            chart_name.to_string()
        } else {
            format!("{}/{chart_name}", self.namespace)
        }
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "oci://{}", self.host)
        } else {
            write!(f, "oci://{}/{}", self.host, self.namespace)
        }
    }
}

/// Parses `oci://HOST[:PORT][/NAMESPACE...]`.
///
/// The namespace follows the OCI repository grammar (lowercase components);
/// a tag or digest is refused: the tag is always the chart version.
pub fn parse_oci_reference(s: &str) -> Result<OciReference, OciError> {
    let fail = |problem: &str| OciError::InvalidReference {
        input: s.to_string(),
        problem: problem.to_string(),
    };
    let rest = match s.strip_prefix("oci://") {
        Some(rest) => rest,
        None => {
            let problem = match s.split_once("://") {
                Some((scheme, _)) => {
                    format!("the scheme `{scheme}://` is not supported, use `oci://`")
                }
                None => "the `oci://` scheme is missing".to_string(),
            };
            return Err(fail(&problem));
        }
    };
    if rest.contains(['?', '#']) {
        return Err(fail("a query or fragment is not allowed"));
    }
    if rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(fail("whitespace is not allowed"));
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(fail("the host is missing"));
    }
    if authority.contains('@') {
        return Err(fail(
            "credentials in the reference are not supported, pass `--username` and `--password-stdin`",
        ));
    }
    validate_authority(authority).map_err(|p| fail(&p))?;

    let path = path.strip_suffix('/').unwrap_or(path);
    if !path.is_empty() {
        if path.contains(['@', ':']) {
            return Err(fail(
                "a tag or digest is not allowed; the tag is always the chart version",
            ));
        }
        for component in path.split('/') {
            if !is_repository_component(component) {
                return Err(fail(&format!(
                    "namespace component `{component}` must be lowercase letters and digits, separated by `.`, `_`, `__` or `-`"
                )));
            }
        }
    }
    Ok(OciReference {
        host: authority.to_string(),
        namespace: path.to_string(),
    })
}

fn validate_authority(authority: &str) -> Result<(), String> {
    let (host, port) = if let Some(after) = authority.strip_prefix('[') {
        let (v6, tail) = after
            .split_once(']')
            .ok_or_else(|| "unclosed `[` in an IPv6 host".to_string())?;
        if v6.is_empty()
            || !v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(format!("`[{v6}]` is not an IPv6 address"));
        }
        match tail {
            "" => (v6, None),
            t => match t.strip_prefix(':') {
                Some(p) => (v6, Some(p)),
                None => return Err(format!("unexpected `{t}` after the IPv6 host")),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if !authority.starts_with('[') {
        let ok = !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !ok {
            return Err(format!("`{host}` is not a host name or IP address"));
        }
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && matches!(port.parse::<u32>(), Ok(1..=65535));
        if !valid {
            return Err(format!("port `{port}` is not a number from 1 to 65535"));
        }
    }
    Ok(())
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`, the OCI distribution path component.
pub(super) fn is_repository_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && alnum(b[i]) {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i == b.len() {
            return true;
        }
        match b[i] {
            b'.' => i += 1,
            b'_' => {
                i += 1;
                if b.get(i) == Some(&b'_') {
                    i += 1;
                }
            }
            b'-' => {
                while b.get(i) == Some(&b'-') {
                    i += 1;
                }
            }
            _ => return false,
        }
        if i == b.len() {
            return false;
        }
    }
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`, the OCI distribution tag grammar.
pub(super) fn is_valid_tag(tag: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && word(b[0])
        && b[1..].iter().all(|&c| word(c) || c == b'.' || c == b'-')
}

/// The OCI tag of a chart version: `+` (build metadata) becomes `_`, as Helm does.
pub fn tag_for_version(version: &str) -> String {
    version.replace('+', "_")
}
