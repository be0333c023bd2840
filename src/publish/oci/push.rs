//! The OCI distribution push protocol over HTTP(S): blobs by monolithic upload
//! (HEAD, POST, PUT), then the manifest under the chart version tag, with Basic or
//! Bearer-token authentication on a 401 challenge.
//!
//! Nothing the registry says is taken on trust. An upload and a manifest PUT must
//! answer `201 Created`, as the distribution spec requires (a server that answers 200
//! to everything is refused); a `Docker-Content-Digest` the registry sends must equal
//! the digest computed here; every blob is checked with a HEAD afterwards (status,
//! digest, size); and the manifest is read back under its tag and its bytes hashed:
//! the push succeeds only when that digest is the local one.

use std::time::Duration;

use super::credentials::{basic_auth, parse_challenge};
use super::error::status_name;
use super::{Blob, ChartArtifact, Credentials, OciError, OciReference, MANIFEST_MEDIA_TYPE};

/// What a successful push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOutcome {
    /// `sha256:<hex>` of the manifest, as read back from the registry (equal to the
    /// local digest, or the push fails).
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
    Get,
    Head,
    Post,
    Put,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
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
    content_length: Option<u64>,
    challenge: Option<String>,
    body: Vec<u8>,
}

impl Reply {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
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
    session.check_status(Method::Put, &url, &reply, &[201])?;
    session.check_digest(
        Method::Put,
        &url,
        &reply,
        "the manifest",
        &artifact.manifest.digest,
    )?;
    for blob in [&artifact.config, &artifact.layer] {
        if !session.blob_exists(blob)? {
            let url = session.blob_url(blob);
            return Err(session.mismatch(
                Method::Head,
                &url,
                "blob",
                &blob.digest,
                "404 Not Found",
            ));
        }
    }
    let manifest_digest = session.read_back_manifest(&url, &artifact.manifest)?;
    Ok(PushOutcome {
        manifest_digest,
        reference: format!("{}/{}:{}", reference.host, session.repository, artifact.tag),
        uploaded_blobs,
        existing_blobs,
    })
}

impl Session<'_> {
    fn blob_url(&self, blob: &Blob) -> String {
        format!("{}/v2/{}/blobs/{}", self.base, self.repository, blob.digest)
    }

    /// Whether the registry holds `blob`: 404 no, 200 yes when the digest and size it
    /// reports (if it does) are the blob's.
    fn blob_exists(&mut self, blob: &Blob) -> Result<bool, OciError> {
        let url = self.blob_url(blob);
        let reply = self.send(Method::Head, &url, None, &[])?;
        self.check_status(Method::Head, &url, &reply, &[200, 404])?;
        if reply.status == 404 {
            return Ok(false);
        }
        self.check_digest(Method::Head, &url, &reply, "the blob", &blob.digest)?;
        if let Some(length) = reply.content_length {
            if length != blob.bytes.len() as u64 {
                return Err(self.mismatch(
                    Method::Head,
                    &url,
                    "blob size",
                    &blob.bytes.len().to_string(),
                    &length.to_string(),
                ));
            }
        }
        Ok(true)
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
        self.check_status(Method::Put, &url, &reply, &[201])?;
        self.check_digest(Method::Put, &url, &reply, "the blob", &blob.digest)
    }

    /// Reads the manifest back under its tag and returns its digest, which must be
    /// `manifest`'s: the bytes hashed here, and the registry's header if it sends one.
    fn read_back_manifest(&mut self, url: &str, manifest: &Blob) -> Result<String, OciError> {
        let reply = self.send(Method::Get, url, None, &[])?;
        self.check_status(Method::Get, url, &reply, &[200])?;
        let read = super::artifact::sha256_digest(&reply.body);
        if read != manifest.digest {
            return Err(self.mismatch(
                Method::Get,
                url,
                "manifest read back",
                &manifest.digest,
                &read,
            ));
        }
        self.check_digest(Method::Get, url, &reply, "the manifest", &manifest.digest)?;
        Ok(read)
    }

    /// A `Docker-Content-Digest` header, if the registry sent one, must be `expected`.
    fn check_digest(
        &self,
        method: Method,
        url: &str,
        reply: &Reply,
        what: &str,
        expected: &str,
    ) -> Result<(), OciError> {
        match &reply.content_digest {
            Some(sent) if sent != expected => {
                Err(self.mismatch(method, url, &format!("digest of {what}"), expected, sent))
            }
            _ => Ok(()),
        }
    }

    fn mismatch(
        &self,
        method: Method,
        url: &str,
        what: &str,
        expected: &str,
        actual: &str,
    ) -> OciError {
        OciError::Mismatch {
            host: self.host.to_string(),
            request: format!("{} {url}", method.as_str()),
            what: what.to_string(),
            expected: expected.to_string(),
            actual: actual.to_string(),
        }
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
            Method::Head | Method::Get => {
                let mut rb = if method == Method::Head {
                    self.agent.head(url)
                } else {
                    self.agent.get(url).header("Accept", MANIFEST_MEDIA_TYPE)
                };
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
        let mut response = result.map_err(|e| self.transport_error(method, url, e))?;
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
        let content_length = header("Content-Length").and_then(|l| l.trim().parse().ok());
        let body = if method == Method::Head {
            Vec::new()
        } else {
            response
                .body_mut()
                .with_config()
                .limit(1 << 20)
                .read_to_vec()
                .map_err(|e| self.transport_error(method, url, e))?
        };
        Ok(Reply {
            status,
            location,
            content_digest,
            content_length,
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
        let mut response = rb
            .call()
            .map_err(|e| self.transport_error(Method::Get, &token_url, e))?;
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
                expected: "200 OK".into(),
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
            detail: self.credential_detail(&reply.text()),
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
        let detail = error_detail(&reply.text());
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
                expected: ok
                    .iter()
                    .map(|s| status_name(*s))
                    .collect::<Vec<_>>()
                    .join(" or "),
                detail,
            },
        })
    }

    fn transport_error(&self, method: Method, url: &str, error: ureq::Error) -> OciError {
        let refused = match &error {
            ureq::Error::ConnectionFailed | ureq::Error::HostNotFound | ureq::Error::Tls(_) => true,
            ureq::Error::Io(e) => matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::AddrNotAvailable
            ),
            _ => false,
        };
        match error {
            _ if refused => OciError::Unreachable {
                host: self.host.to_string(),
                url: url.to_string(),
                message: error.to_string(),
            },
            ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyExceedsLimit(_) => OciError::Broken {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                message: error.to_string(),
            },
            other => OciError::Protocol {
                host: self.host.to_string(),
                method: method.as_str(),
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
