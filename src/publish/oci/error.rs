//! [`OciError`]: every way a reference, an artifact or a push can fail.

const EXAMPLE_REFERENCE: &str = "oci://localhost:5000/charts";

/// Errors of OCI reference parsing, artifact building and pushing.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The `oci://` reference is malformed.
    #[error(
        "invalid OCI reference `{input}`: {problem}; expected `oci://HOST[:PORT][/NAMESPACE]`, e.g. `{EXAMPLE_REFERENCE}`"
    )]
    InvalidReference {
        /// The rejected reference.
        input: String,
        /// What is wrong with it.
        problem: String,
    },
    /// `Chart.yaml` cannot be read as chart metadata.
    #[error("cannot read `Chart.yaml` for the OCI config: {message}")]
    ChartYaml {
        /// The parser's message (with line and column).
        message: String,
    },
    /// The chart metadata cannot be used as an OCI repository name or tag.
    #[error("chart `{field}` value `{value}` cannot be used in an OCI reference: {problem}")]
    InvalidChart {
        /// `name`, `version` or `created`.
        field: &'static str,
        /// The rejected value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The connection to the registry failed (refused, DNS, timeout, TLS).
    #[error(
        "cannot reach registry `{host}` at `{url}`: {message}; check the address, that the registry runs, and `--plain-http` for a registry without TLS"
    )]
    Unreachable {
        /// `host[:port]` of the registry.
        host: String,
        /// The URL being requested.
        url: String,
        /// The transport error.
        message: String,
    },
    /// The registry answered 401 after the authentication attempt.
    #[error(
        "registry `{host}` refused the credentials ({status}) at `{method} {url}`: {detail}; pass `--username` and `--password-stdin`"
    )]
    Unauthorized {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// HTTP status (401).
        status: u16,
        /// Whether credentials were given, and the registry's words.
        detail: String,
    },
    /// The registry answered 403.
    #[error(
        "registry `{host}` denied `{method} {url}` (403): {detail}; check that the user may push to `{repository}`"
    )]
    Denied {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// The repository pushed to.
        repository: String,
        /// The registry's words.
        detail: String,
    },
    /// The connection broke during a request (reset, closed mid-answer, timed out).
    #[error(
        "the connection to registry `{host}` broke during `{method} {url}`: {message}; the push is incomplete, run it again"
    )]
    Broken {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// The transport error.
        message: String,
    },
    /// The registry's answer does not match what was pushed.
    #[error(
        "registry `{host}` did not store what was pushed: `{request}` gave {what} `{actual}`, expected `{expected}`"
    )]
    Mismatch {
        /// `host[:port]` of the registry.
        host: String,
        /// `METHOD URL` of the request.
        request: String,
        /// What was compared (`digest of the blob`, `manifest read back`, ...).
        what: String,
        /// The local value.
        expected: String,
        /// The registry's value.
        actual: String,
    },
    /// Any other unexpected HTTP status.
    #[error("registry `{host}` answered `{method} {url}` with status {}, expected {expected}{}", status_name(*status), said(detail))]
    UnexpectedStatus {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// HTTP status.
        status: u16,
        /// The status or statuses the protocol requires here.
        expected: String,
        /// The registry's words (first error of the OCI error body, or the body).
        detail: String,
    },
    /// The registry broke the protocol (missing header, bad token response).
    #[error("registry `{host}` sent an unusable answer to `{method} {url}`: {problem}")]
    Protocol {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// What is wrong with the answer.
        problem: String,
    },
}

/// `201 Created`, `202 Accepted`...: how a status reads in messages.
pub(super) fn status_name(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "",
    };
    format!("{status} {reason}").trim_end().to_string()
}

/// `: what the registry said`, or nothing when it said nothing.
fn said(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}
