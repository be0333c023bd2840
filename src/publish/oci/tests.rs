use super::artifact::sha256_digest;
use super::credentials::{basic_auth, parse_challenge};
use super::push::{percent_encode, resolve_location};
use super::reference::is_valid_tag;
use super::*;
use base64::Engine as _;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const CHART_YAML: &str = "apiVersion: v2\nname: demo\nversion: 1.2.3+build.7\ndescription: Demo <chart> & co\nhome: https://example.org/demo\nsources:\n  - https://example.org/src\n  - https://example.org/other\nmaintainers:\n  - name: Ada\n    email: ada@example.org\n  - name: Bob\nappVersion: 1.10\nannotations:\n  org.opencontainers.image.title: ignored\n  team: platform\ntype: application\nunknownField: kept-out\n";

#[test]
fn parses_references() {
    let r = parse_oci_reference("oci://127.0.0.1:5000/charts").unwrap();
    assert_eq!(r.host, "127.0.0.1:5000");
    assert_eq!(r.namespace, "charts");
    assert_eq!(r.repository("demo"), "charts/demo");
    assert_eq!(r.to_string(), "oci://127.0.0.1:5000/charts");

    let r = parse_oci_reference("oci://localhost").unwrap();
    assert_eq!((r.host.as_str(), r.namespace.as_str()), ("localhost", ""));
    assert_eq!(r.repository("demo"), "demo");

    let r = parse_oci_reference("oci://reg.internal:443/a/b-c/d__e/").unwrap();
    assert_eq!(r.namespace, "a/b-c/d__e");
    let r = parse_oci_reference("oci://[::1]:5000/x").unwrap();
    assert_eq!(r.host, "[::1]:5000");
}

#[test]
fn rejects_bad_references_with_a_clear_message() {
    let cases = [
        ("127.0.0.1:5000/charts", "the `oci://` scheme is missing"),
        (
            "https://h/charts",
            "the scheme `https://` is not supported, use `oci://`",
        ),
        ("oci://", "the host is missing"),
        ("oci:///charts", "the host is missing"),
        (
            "oci://u:p@h/charts",
            "credentials in the reference are not supported",
        ),
        ("oci://h:0/c", "port `0` is not a number from 1 to 65535"),
        ("oci://h:99999/c", "port `99999`"),
        ("oci://h:/c", "port ``"),
        ("oci://h_x/c", "`h_x` is not a host name"),
        (
            "oci://h/Charts",
            "namespace component `Charts` must be lowercase",
        ),
        ("oci://h/a//b", "namespace component ``"),
        ("oci://h/charts:1.0", "a tag or digest is not allowed"),
        ("oci://h/charts@sha256:00", "a tag or digest is not allowed"),
        ("oci://h/c?x=1", "a query or fragment is not allowed"),
        ("oci://h/c-", "namespace component `c-`"),
    ];
    for (input, expected) in cases {
        let err = parse_oci_reference(input).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("invalid OCI reference `{input}`: "))
                && err.contains(expected),
            "{input}: {err}"
        );
        assert!(err.ends_with(
            "expected `oci://HOST[:PORT][/NAMESPACE]`, e.g. `oci://localhost:5000/charts`"
        ));
    }
}

#[test]
fn tags_replace_plus() {
    assert_eq!(tag_for_version("1.2.3+build.7"), "1.2.3_build.7");
    assert_eq!(tag_for_version("0.1.0"), "0.1.0");
    assert!(is_valid_tag("1.2.3_build.7"));
    assert!(!is_valid_tag("-1"));
    assert!(!is_valid_tag(""));
    assert!(!is_valid_tag(&"a".repeat(129)));
}

#[test]
fn rfc3339_from_epoch() {
    assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339_utc(315_532_800), "1980-01-01T00:00:00Z");
    assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
    assert_eq!(rfc3339_utc(4_102_444_799), "2099-12-31T23:59:59Z");
}

#[test]
fn config_json_matches_helm_field_order_and_escaping() {
    let a = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
    assert_eq!(
        String::from_utf8(a.config.bytes.clone()).unwrap(),
        concat!(
            r#"{"name":"demo","home":"https://example.org/demo","sources":["https://example.org/src","https://example.org/other"],"#,
            r#""version":"1.2.3+build.7","description":"Demo \u003cchart\u003e \u0026 co","#,
            r#""maintainers":[{"name":"Ada","email":"ada@example.org"},{"name":"Bob"}],"#,
            r#""apiVersion":"v2","appVersion":"1.10","#,
            r#""annotations":{"org.opencontainers.image.title":"ignored","team":"platform"},"type":"application"}"#
        )
    );
    assert_eq!(a.name, "demo");
    assert_eq!(a.version, "1.2.3+build.7");
    assert_eq!(a.tag, "1.2.3_build.7");
    assert_eq!(a.config.media_type, CONFIG_MEDIA_TYPE);
    assert_eq!(a.config.digest, sha256_digest(&a.config.bytes));
    assert_eq!(a.layer.bytes, b"tgz");
    assert_eq!(a.layer.digest, sha256_digest(b"tgz"));
}

#[test]
fn dependencies_keep_name_and_repository() {
    let yaml = "apiVersion: v2\nname: d\nversion: 1.0.0\ndependencies:\n  - name: redis\n    version: ~18\n    condition: redis.enabled\n    import-values: [a, {child: x, parent: y2}]\ndeprecated: false\nkeywords: []\nhome:\n";
    let a = helm_chart_artifact(yaml, b"", "t").unwrap();
    assert_eq!(
        String::from_utf8(a.config.bytes).unwrap(),
        r#"{"name":"d","version":"1.0.0","apiVersion":"v2","dependencies":[{"name":"redis","version":"~18","repository":"","condition":"redis.enabled","import-values":["a",{"child":"x","parent":"y2"}]}]}"#
    );
}

#[test]
fn manifest_json_is_helm_like() {
    let a = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
    let expected = format!(
        concat!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","#,
            r#""config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"{}","size":{}}},"#,
            r#""layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{}","size":3}}],"#,
            r#""annotations":{{"org.opencontainers.image.authors":"Ada (ada@example.org), Bob","#,
            r#""org.opencontainers.image.created":"1980-01-01T00:00:00Z","#,
            r#""org.opencontainers.image.description":"Demo \u003cchart\u003e \u0026 co","#,
            r#""org.opencontainers.image.source":"https://example.org/src","#,
            r#""org.opencontainers.image.title":"demo","#,
            r#""org.opencontainers.image.url":"https://example.org/demo","#,
            r#""org.opencontainers.image.version":"1.2.3+build.7","team":"platform"}}}}"#
        ),
        a.config.digest,
        a.config.bytes.len(),
        a.layer.digest
    );
    assert_eq!(
        String::from_utf8(a.manifest.bytes.clone()).unwrap(),
        expected
    );
    assert_eq!(a.manifest.digest, sha256_digest(expected.as_bytes()));
    let again = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
    assert_eq!(a, again);
    let later = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:01Z").unwrap();
    assert_ne!(a.manifest.digest, later.manifest.digest);
    assert_eq!(a.config.digest, later.config.digest);
}

#[test]
fn artifact_errors() {
    let err = helm_chart_artifact("name: [", b"", "t")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot read `Chart.yaml` for the OCI config: "),
        "{err}"
    );
    let err = helm_chart_artifact("name: Demo\nversion: 1.0.0\n", b"", "t")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("chart `name` value `Demo` cannot be used in an OCI reference"),
        "{err}"
    );
    let err = helm_chart_artifact("name: demo\n", b"", "t")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("chart `version` value `` cannot be used"),
        "{err}"
    );
    let err = helm_chart_artifact("name: demo\nversion: 1.0.0\n", b"", " ")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("chart `created` value ` `"), "{err}");
}

#[test]
fn docker_config_credentials() {
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3:cret");
    let config = format!(
        r#"{{"auths":{{"127.0.0.1:5000":{{"auth":"{auth}"}},"https://reg.internal/v1/":{{"auth":"{auth}"}},"plain:1":{{"username":"u","password":"p"}},"broken:1":{{"auth":"!!"}}}}}}"#
    );
    let c = credentials_from_docker_config(&config, "127.0.0.1:5000").unwrap();
    assert_eq!(
        (c.username.as_str(), c.password.as_str()),
        ("alice", "s3:cret")
    );
    assert!(credentials_from_docker_config(&config, "reg.internal").is_some());
    let c = credentials_from_docker_config(&config, "plain:1").unwrap();
    assert_eq!((c.username.as_str(), c.password.as_str()), ("u", "p"));
    assert!(credentials_from_docker_config(&config, "broken:1").is_none());
    assert!(credentials_from_docker_config(&config, "other:5000").is_none());
    assert!(credentials_from_docker_config("not json", "127.0.0.1:5000").is_none());
    assert!(credentials_from_docker_config(r#"{"credsStore":"desktop"}"#, "h").is_none());
    let shown = format!("{c:?}");
    assert!(
        shown.contains("<redacted>") && !shown.contains("\"p\""),
        "{shown}"
    );
}

#[test]
fn challenge_parsing_and_locations() {
    let (scheme, p) = parse_challenge(
        r#"Bearer realm="http://127.0.0.1:1/token",service="reg",scope="repository:charts/demo:pull,push",error="insufficient_scope""#,
    );
    assert_eq!(scheme, "Bearer");
    assert_eq!(p["realm"], "http://127.0.0.1:1/token");
    assert_eq!(p["service"], "reg");
    assert_eq!(p["scope"], "repository:charts/demo:pull,push");
    let (scheme, p) = parse_challenge(r#"Basic realm="Registry Realm""#);
    assert_eq!(
        (scheme.as_str(), p["realm"].as_str()),
        ("Basic", "Registry Realm")
    );

    let base = "http://h:1";
    let req = "http://h:1/v2/c/d/blobs/uploads/";
    assert_eq!(
        resolve_location(base, req, "http://x:2/u/1?s=a"),
        "http://x:2/u/1?s=a"
    );
    assert_eq!(
        resolve_location(base, req, "/v2/c/d/blobs/uploads/1"),
        "http://h:1/v2/c/d/blobs/uploads/1"
    );
    assert_eq!(
        resolve_location(base, req, "1?s=a"),
        "http://h:1/v2/c/d/blobs/uploads/1?s=a"
    );
    assert_eq!(percent_encode("sha256:ab"), "sha256%3Aab");
}

#[test]
fn unreachable_registry() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let reference = parse_oci_reference(&format!("oci://127.0.0.1:{port}/charts")).unwrap();
    let a = helm_chart_artifact(CHART_YAML, b"tgz", "t").unwrap();
    let err = push_chart(&reference, &a, None, true, Duration::from_secs(5)).unwrap_err();
    assert!(matches!(err, OciError::Unreachable { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(&format!(
            "cannot reach registry `127.0.0.1:{port}` at `http://127.0.0.1:{port}/v2/charts/demo/blobs/sha256:"
        )),
        "{err}"
    );
}

// ---- a scripted in-process registry: Bearer tokens, relative Locations ----

#[derive(Debug, Clone)]
struct Req {
    method: String,
    target: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

#[derive(Default)]
struct State {
    requests: Vec<(String, String, Option<String>)>,
    blobs: HashMap<String, Vec<u8>>,
    manifests: HashMap<String, Vec<u8>>,
    uploads: usize,
}

struct MockRegistry {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl MockRegistry {
    /// Serves until the test process ends (each connection is closed after one answer).
    fn start(password: &'static str) -> MockRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = serve(stream, port, password, &shared);
            }
        });
        MockRegistry { port, state }
    }
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<Req> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(Req {
        method,
        target,
        headers,
        body,
    })
}

fn serve(
    mut stream: TcpStream,
    port: u16,
    password: &str,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    let req = read_request(&mut stream)?;
    let (status, headers, body) = handle(&req, port, password, state);
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    stream.write_all(out.as_bytes())?;
    if req.method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()
}

fn handle(
    req: &Req,
    port: u16,
    password: &str,
    state: &Mutex<State>,
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut st = state.lock().unwrap();
    let auth = req.headers.get("authorization").cloned();
    st.requests
        .push((req.method.clone(), req.target.clone(), auth.clone()));
    let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
    if path == "/token" {
        let expected = basic_auth(&Credentials {
            username: "alice".into(),
            password: password.into(),
        });
        if auth.as_deref() != Some(expected.as_str()) {
            return (
                401,
                vec![],
                br#"{"errors":[{"code":"UNAUTHORIZED","message":"bad password"}]}"#.to_vec(),
            );
        }
        assert!(query.contains("service=mock"), "{query}");
        let scope = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("scope="))
            .unwrap_or("");
        let token = if scope.contains("push") {
            "push-token"
        } else {
            "pull-token"
        };
        return (
            200,
            vec![],
            format!(r#"{{"access_token":"{token}"}}"#).into_bytes(),
        );
    }
    let repo_path = path.strip_prefix("/v2/charts/demo/").unwrap_or("");
    let needs_push = req.method != "HEAD" && req.method != "GET";
    let scope = if needs_push { "pull,push" } else { "pull" };
    let token_ok = match auth.as_deref() {
        Some("Bearer push-token") => true,
        Some("Bearer pull-token") => !needs_push,
        _ => false,
    };
    if !token_ok {
        let challenge = format!(
            r#"Bearer realm="http://127.0.0.1:{port}/token",service="mock",scope="repository:charts/demo:{scope}""#
        );
        return (
            401,
            vec![("WWW-Authenticate".into(), challenge)],
            br#"{"errors":[{"code":"UNAUTHORIZED"}]}"#.to_vec(),
        );
    }
    match (req.method.as_str(), repo_path) {
        ("HEAD", p) if p.starts_with("blobs/sha256:") => {
            // The body is not sent for HEAD; it sets the Content-Length.
            match st.blobs.get(&p["blobs/".len()..]) {
                Some(bytes) => (
                    200,
                    vec![("Docker-Content-Digest".into(), p["blobs/".len()..].into())],
                    bytes.clone(),
                ),
                None => (404, vec![], vec![]),
            }
        }
        ("GET", p) if p.starts_with("manifests/") => {
            match st.manifests.get(&p["manifests/".len()..]) {
                Some(bytes) => (
                    200,
                    vec![("Docker-Content-Digest".into(), sha256_digest(bytes))],
                    bytes.clone(),
                ),
                None => (404, vec![], vec![]),
            }
        }
        ("POST", "blobs/uploads/") => {
            st.uploads += 1;
            // A relative Location that already carries a query string.
            let loc = format!("/v2/charts/demo/blobs/uploads/u{}?_state=abc", st.uploads);
            (202, vec![("Location".into(), loc)], vec![])
        }
        ("PUT", p) if p.starts_with("blobs/uploads/u") => {
            assert!(query.starts_with("_state=abc&digest=sha256%3A"), "{query}");
            let digest = query.split("digest=").nth(1).unwrap().replace("%3A", ":");
            assert_eq!(
                digest,
                sha256_digest(&req.body),
                "uploaded bytes match the digest"
            );
            st.blobs.insert(digest.clone(), req.body.clone());
            (201, vec![("Docker-Content-Digest".into(), digest)], vec![])
        }
        ("PUT", p) if p.starts_with("manifests/") => {
            assert_eq!(
                req.headers.get("content-type").map(String::as_str),
                Some(MANIFEST_MEDIA_TYPE)
            );
            let digest = sha256_digest(&req.body);
            st.manifests
                .insert(p["manifests/".len()..].to_string(), req.body.clone());
            (201, vec![("Docker-Content-Digest".into(), digest)], vec![])
        }
        _ => (
            404,
            vec![],
            br#"{"errors":[{"code":"NOT_FOUND","message":"no route"}]}"#.to_vec(),
        ),
    }
}

#[test]
fn bearer_token_flow_with_relative_locations() {
    let mock = MockRegistry::start("pw");
    let reference = parse_oci_reference(&format!("oci://127.0.0.1:{}/charts", mock.port)).unwrap();
    let artifact = helm_chart_artifact(CHART_YAML, b"pretend tgz", "1980-01-01T00:00:00Z").unwrap();
    let creds = Credentials {
        username: "alice".into(),
        password: "pw".into(),
    };
    let timeout = Duration::from_secs(10);

    let first = push_chart(&reference, &artifact, Some(&creds), true, timeout).unwrap();
    assert_eq!(first.manifest_digest, artifact.manifest.digest);
    assert_eq!(
        first.reference,
        format!("127.0.0.1:{}/charts/demo:1.2.3_build.7", mock.port)
    );
    assert_eq!((first.uploaded_blobs, first.existing_blobs), (2, 0));
    {
        let st = mock.state.lock().unwrap();
        assert_eq!(st.manifests["1.2.3_build.7"], artifact.manifest.bytes);
        assert_eq!(st.blobs[&artifact.layer.digest], b"pretend tgz");
        // Tokens were fetched and then sent as Bearer.
        assert!(st.requests.iter().any(|(m, t, _)| m == "GET"
            && t.starts_with(
                "/token?service=mock&scope=repository%3Acharts%2Fdemo%3Apull%2Cpush"
            )));
        assert!(st
            .requests
            .iter()
            .any(|(m, _, a)| m == "PUT" && a.as_deref() == Some("Bearer push-token")));
    }

    let second = push_chart(&reference, &artifact, Some(&creds), true, timeout).unwrap();
    assert_eq!(second.manifest_digest, first.manifest_digest);
    assert_eq!((second.uploaded_blobs, second.existing_blobs), (0, 2));

    let wrong = Credentials {
        username: "alice".into(),
        password: "nope".into(),
    };
    let err = push_chart(&reference, &artifact, Some(&wrong), true, timeout).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "registry `127.0.0.1:{}` refused the credentials (401) at `GET http://127.0.0.1:{}/token`: the credentials of user `alice` were rejected (UNAUTHORIZED: bad password); pass `--username` and `--password-stdin`",
            mock.port, mock.port
        )
    );
}
