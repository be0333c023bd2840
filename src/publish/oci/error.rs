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
    /// Any other unexpected HTTP status.
    #[error("registry `{host}` answered `{method} {url}` with status {status}: {detail}")]
    UnexpectedStatus {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// HTTP status.
        status: u16,
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
