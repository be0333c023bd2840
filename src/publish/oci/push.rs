//! The OCI distribution push protocol over HTTP(S): blobs by monolithic upload
//! (HEAD, POST, PUT), then the manifest under the chart version tag, with Basic or
//! Bearer-token authentication on a 401 challenge.

use std::time::Duration;

use super::credentials::{basic_auth, parse_challenge};
use super::{Blob, ChartArtifact, Credentials, OciError, OciReference, MANIFEST_MEDIA_TYPE};

/// What a successful push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOutcome {
    /// `sha256:<hex>` of the manifest, as the registry reported it (or computed).
    pub manifest_digest: String,
    /// `HOST/REPO:TAG`, e.g. `127.0.0.1:5000/charts/demo:0.1.0`.
    pub reference: String,
    /// Blobs uploaded by this push.
    pub uploaded_blobs: usize,
    /// Blobs the registry already had.
    pub existing_blobs: usize,
}

// ---- push -------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Head,
    Post,
    Put,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

struct Reply {
    status: u16,
    location: Option<String>,
    content_digest: Option<String>,
    challenge: Option<String>,
    body: String,
}

struct Session<'a> {
    agent: ureq::Agent,
    base: String,
    host: &'a str,
    repository: String,
    credentials: Option<&'a Credentials>,
    authorization: Option<String>,
}

/// Pushes a chart artifact to `reference`, under `<namespace>/<chart name>:<tag>`.
///
/// Blobs the registry already holds are not uploaded again, and the manifest
/// is put under the tag, so pushing the same artifact twice gives the same
/// digest. `plain_http` uses `http://` instead of `https://`; `timeout` bounds
/// each HTTP call.
pub fn push_chart(
    reference: &OciReference,
    artifact: &ChartArtifact,
    credentials: Option<&Credentials>,
    plain_http: bool,
    timeout: Duration,
) -> Result<PushOutcome, OciError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .max_redirects(5)
        .user_agent("shipshape")
        .build()
        .into();
    let scheme = if plain_http { "http" } else { "https" };
    let mut session = Session {
        agent,
        base: format!("{scheme}://{}", reference.host),
        host: &reference.host,
        repository: reference.repository(&artifact.name),
        credentials,
        authorization: None,
    };

    let mut uploaded_blobs = 0;
    let mut existing_blobs = 0;
    for blob in [&artifact.config, &artifact.layer] {
        if session.blob_exists(blob)? {
            existing_blobs += 1;
        } else {
            session.upload_blob(blob)?;
            uploaded_blobs += 1;
        }
    }

    let url = format!(
        "{}/v2/{}/manifests/{}",
        session.base, session.repository, artifact.tag
    );
    let reply = session.send(
        Method::Put,
        &url,
        Some(MANIFEST_MEDIA_TYPE),
        &artifact.manifest.bytes,
    )?;
    session.check_status(Method::Put, &url, &reply, &[200, 201])?;
    let manifest_digest = reply
        .content_digest
        .filter(|d| d.starts_with("sha256:"))
        .unwrap_or_else(|| artifact.manifest.digest.clone());
    Ok(PushOutcome {
        manifest_digest,
        reference: format!("{}/{}:{}", reference.host, session.repository, artifact.tag),
        uploaded_blobs,
        existing_blobs,
    })
}

impl Session<'_> {
    fn blob_exists(&mut self, blob: &Blob) -> Result<bool, OciError> {
        let url = format!("{}/v2/{}/blobs/{}", self.base, self.repository, blob.digest);
        let reply = self.send(Method::Head, &url, None, &[])?;
        self.check_status(Method::Head, &url, &reply, &[200, 404])?;
        Ok(reply.status == 200)
    }

    fn upload_blob(&mut self, blob: &Blob) -> Result<(), OciError> {
        let start = format!("{}/v2/{}/blobs/uploads/", self.base, self.repository);
        let reply = self.send(Method::Post, &start, None, &[])?;
        self.check_status(Method::Post, &start, &reply, &[202])?;
        let location = reply.location.ok_or_else(|| OciError::Protocol {
            host: self.host.to_string(),
            method: "POST",
            url: start.clone(),
            problem: "no `Location` header in the upload session answer".to_string(),
        })?;
        let mut url = resolve_location(&self.base, &start, &location);
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str("digest=");
        url.push_str(&percent_encode(&blob.digest));
        let reply = self.send(
            Method::Put,
            &url,
            Some("application/octet-stream"),
            &blob.bytes,
        )?;
        self.check_status(Method::Put, &url, &reply, &[201, 204])
    }

    /// Sends a request; on a 401 challenge authenticates once and retries.
    fn send(
        &mut self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Reply, OciError> {
        let reply = self.send_once(method, url, content_type, body)?;
        if reply.status != 401 {
            return Ok(reply);
        }
        let challenge = reply.challenge.clone().unwrap_or_default();
        self.authenticate(method, url, &challenge, &reply)?;
        let retried = self.send_once(method, url, content_type, body)?;
        if retried.status == 401 {
            return Err(self.unauthorized(method, url, &retried));
        }
        Ok(retried)
    }

    fn send_once(
        &self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Reply, OciError> {
        // Credentials go only to the registry itself, never to a foreign
        // upload location (e.g. a storage back end).
        let same_origin = url.starts_with(&format!("{}/", self.base));
        let auth = self.authorization.as_deref().filter(|_| same_origin);
        let result = match method {
            Method::Head => {
                let mut rb = self.agent.head(url);
                if let Some(auth) = auth {
                    rb = rb.header("Authorization", auth);
                }
                rb.call()
            }
            Method::Post | Method::Put => {
                let mut rb = if method == Method::Post {
                    self.agent.post(url)
                } else {
                    self.agent.put(url)
                };
                if let Some(auth) = auth {
                    rb = rb.header("Authorization", auth);
                }
                if let Some(ct) = content_type {
                    rb = rb.header("Content-Type", ct);
                }
                rb.send(body)
            }
        };
        let mut response = result.map_err(|e| self.transport_error(url, e))?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let status = response.status().as_u16();
        let location = header("Location");
        let content_digest = header("Docker-Content-Digest");
        let challenge = header("WWW-Authenticate");
        let body = if method == Method::Head {
            String::new()
        } else {
            response
                .body_mut()
                .with_config()
                .limit(1 << 20)
                .read_to_string()
                .unwrap_or_default()
        };
        Ok(Reply {
            status,
            location,
            content_digest,
            challenge,
            body,
        })
    }

    fn authenticate(
        &mut self,
        method: Method,
        url: &str,
        challenge: &str,
        reply: &Reply,
    ) -> Result<(), OciError> {
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            let creds = self
                .credentials
                .ok_or_else(|| self.unauthorized(method, url, reply))?;
            self.authorization = Some(basic_auth(creds));
            return Ok(());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(OciError::Protocol {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                problem: format!(
                    "401 with an unsupported `WWW-Authenticate` challenge `{challenge}`; expected `Basic` or `Bearer`"
                ),
            });
        }
        let realm = params
            .get("realm")
            .cloned()
            .ok_or_else(|| OciError::Protocol {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                problem: "the `Bearer` challenge has no `realm`".to_string(),
            })?;
        let mut token_url = realm.clone();
        let mut query = Vec::new();
        if let Some(service) = params.get("service") {
            query.push(format!("service={}", percent_encode(service)));
        }
        let scope = params
            .get("scope")
            .cloned()
            .unwrap_or_else(|| format!("repository:{}:pull,push", self.repository));
        query.push(format!("scope={}", percent_encode(&scope)));
        token_url.push(if token_url.contains('?') { '&' } else { '?' });
        token_url.push_str(&query.join("&"));

        let mut rb = self.agent.get(&token_url);
        if let Some(creds) = self.credentials {
            rb = rb.header("Authorization", basic_auth(creds));
        }
        let mut response = rb.call().map_err(|e| self.transport_error(&token_url, e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .unwrap_or_default();
        if status == 401 || status == 403 {
            return Err(OciError::Unauthorized {
                host: self.host.to_string(),
                method: "GET",
                url: realm,
                status,
                detail: self.credential_detail(&body),
            });
        }
        if !(200..300).contains(&status) {
            return Err(OciError::UnexpectedStatus {
                host: self.host.to_string(),
                method: "GET",
                url: realm,
                status,
                detail: error_detail(&body),
            });
        }
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let token = json
            .get("token")
            .or_else(|| json.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| OciError::Protocol {
                host: self.host.to_string(),
                method: "GET",
                url: realm.clone(),
                problem: "the token answer has neither `token` nor `access_token`".to_string(),
            })?;
        self.authorization = Some(format!("Bearer {token}"));
        Ok(())
    }

    fn credential_detail(&self, body: &str) -> String {
        let who = match self.credentials {
            None => "no credentials were given".to_string(),
            Some(c) => format!("the credentials of user `{}` were rejected", c.username),
        };
        let said = error_detail(body);
        if said.is_empty() {
            who
        } else {
            format!("{who} ({said})")
        }
    }

    fn unauthorized(&self, method: Method, url: &str, reply: &Reply) -> OciError {
        OciError::Unauthorized {
            host: self.host.to_string(),
            method: method.as_str(),
            url: url.to_string(),
            status: reply.status,
            detail: self.credential_detail(&reply.body),
        }
    }

    fn check_status(
        &self,
        method: Method,
        url: &str,
        reply: &Reply,
        ok: &[u16],
    ) -> Result<(), OciError> {
        if ok.contains(&reply.status) {
            return Ok(());
        }
        let detail = error_detail(&reply.body);
        Err(match reply.status {
            401 => self.unauthorized(method, url, reply),
            403 => OciError::Denied {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                repository: self.repository.clone(),
                detail,
            },
            status => OciError::UnexpectedStatus {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                status,
                detail,
            },
        })
    }

    fn transport_error(&self, url: &str, error: ureq::Error) -> OciError {
        match error {
            ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::Tls(_)
            | ureq::Error::Protocol(_) => OciError::Unreachable {
                host: self.host.to_string(),
                url: url.to_string(),
                message: error.to_string(),
            },
            other => OciError::Protocol {
                host: self.host.to_string(),
                method: "HTTP",
                url: url.to_string(),
                problem: other.to_string(),
            },
        }
    }
}

/// The first error of an OCI error body (`{"errors":[{"code","message"}]}`),
/// else the trimmed body, shortened.
fn error_detail(body: &str) -> String {
    let first_error = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|json| json.get("errors")?.get(0).cloned());
    if let Some(first) = first_error {
        let code = first.get("code").and_then(|c| c.as_str()).unwrap_or("");
        let message = first.get("message").and_then(|m| m.as_str()).unwrap_or("");
        return match (code.is_empty(), message.is_empty()) {
            (false, false) => format!("{code}: {message}"),
            (false, true) => code.to_string(),
            _ => message.to_string(),
        };
    }
    let trimmed = body.trim();
    match trimmed.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_string(),
    }
}

/// Resolves an upload `Location`: absolute URL, absolute path, or relative path.
pub(super) fn resolve_location(base: &str, request_url: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        location.to_string()
    } else if location.starts_with('/') {
        format!("{base}{location}")
    } else {
        let dir = match request_url.rfind('/') {
            Some(i) => &request_url[..=i],
            None => request_url,
        };
        format!("{dir}{location}")
    }
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
pub(super) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
