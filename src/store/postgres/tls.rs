//! TLS for the PostgreSQL connection, with libpq's `sslmode` meanings: `disable` (plain),
//! `prefer` (TLS when the server offers it, unverified, else plain), `require` (TLS, unverified
//! unless `sslrootcert` is given, then as `verify-ca`), `verify-ca` (the chain) and
//! `verify-full` (the chain and the host name). `sslrootcert=PATH` (PEM) names the trusted CAs;
//! without it verification trusts the public CAs of webpki-roots. `PGSSLMODE`/`PGSSLROOTCERT`
//! apply when the URL lacks them, as with libpq.

use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What the URL (or the environment) asks of TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// libpq's sslmode, lower case.
    pub mode: String,
    /// `sslrootcert`, a PEM file of trusted CAs.
    pub root_cert: Option<String>,
}

/// Takes `sslmode` and `sslrootcert` out of `url` (the client library knows neither
/// `verify-*` nor `sslrootcert`), filling them from `PGSSLMODE`/`PGSSLROOTCERT` when absent.
pub fn split(url: &str) -> Result<(String, Tls), String> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let (mut mode, mut root_cert) = (None, None);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sslmode" => mode = Some(decode(v)),
            "sslrootcert" => root_cert = Some(decode(v)),
            "sslcert" | "sslkey" => return Err("TLS client certificates (sslcert, sslkey) are not supported".into()),
            _ => kept.push(pair),
        }
    }
    let mode = mode
        .or_else(|| std::env::var("PGSSLMODE").ok().filter(|m| !m.is_empty()))
        .unwrap_or_else(|| "prefer".into())
        .to_ascii_lowercase();
    if !["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(&mode.as_str()) {
        return Err(format!("unknown sslmode={mode} (disable, prefer, require, verify-ca or verify-full)"));
    }
    let root_cert = root_cert.or_else(|| std::env::var("PGSSLROOTCERT").ok()).filter(|p| !p.is_empty());
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, Tls { mode, root_cert }))
}

/// `%XX` escapes of a URL parameter.
fn decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(x) = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(x);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Tls {
    /// The client library's sslmode (`allow` is taken as `prefer`).
    pub fn ssl_mode(&self) -> SslMode {
        match self.mode.as_str() {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            _ => SslMode::Require,
        }
    }

    /// The connector; errors are the cause alone (the caller names the server).
    pub fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verify = match self.mode.as_str() {
            "verify-full" => Some(true),
            "verify-ca" => Some(false),
            // libpq: a root certificate given to require makes it verify-ca.
            "require" if self.root_cert.is_some() => Some(false),
            _ => None,
        };
        let verifier: Arc<dyn ServerCertVerifier> = match verify {
            None => Arc::new(Unverified(provider.clone())),
            Some(check_name) => {
                let mut roots = RootCertStore::empty();
                match &self.root_cert {
                    Some(path) => {
                        let certs = CertificateDer::pem_file_iter(path)
                            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                            .map_err(|e| format!("sslrootcert {path}: {e}"))?;
                        let (added, _) = roots.add_parsable_certificates(certs);
                        if added == 0 {
                            return Err(format!("sslrootcert {path}: no certificate in it"));
                        }
                    }
                    None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
                }
                let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| format!("TLS: {e}"))?;
                Arc::new(Verified { inner, check_name })
            }
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

/// `prefer`/`require`: encryption without authentication, as libpq does; the handshake's
/// signatures are still checked.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca` (the chain) and `verify-full` (the chain and the host name).
#[derive(Debug)]
struct Verified {
    inner: Arc<WebPkiServerVerifier>,
    check_name: bool,
}

impl ServerCertVerifier for Verified {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            // webpki checks the name after the chain: a name error means the chain held.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A TLS failure in words a user can act on, or `None` when `text` is not one.
pub fn explain(text: &str, host: &str) -> Option<String> {
    let t = text;
    if t.contains("server does not support TLS") {
        return Some("the server does not support TLS, which sslmode requires".into());
    }
    if t.contains("NotValidForName") || t.contains("not valid for name") {
        // rustls lists the names as `DnsName("db.example")` and `IpAddress(10.0.0.1)`.
        let names = t.split("only valid for ").nth(1).map(|v| {
            v.trim_end_matches([')', ' ']).replace("DnsName(\"", "").replace("IpAddress(", "").replace(['"', ')'], "")
        });
        let listed = names.map(|n| format!(" (it names {n})")).unwrap_or_default();
        return Some(format!(
            "TLS: host name mismatch: the server's certificate is not valid for {host}{listed}; \
             connect by a name it lists, or use sslmode=verify-ca"
        ));
    }
    if t.contains("UnknownIssuer") || t.contains("BadSignature") || t.contains("invalid peer certificate") {
        let why = t.rsplit("invalid peer certificate: ").next().unwrap_or(t);
        return Some(format!(
            "TLS: the server's certificate is not trusted ({why}); give its CA with sslrootcert=PATH"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_takes_out_tls_parameters() {
        let (url, tls) =
            split("postgres://u:p@h:5/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&connect_timeout=3")
                .expect("split");
        assert_eq!(url, "postgres://u:p@h:5/db?connect_timeout=3");
        assert_eq!(tls, Tls { mode: "verify-full".into(), root_cert: Some("/tmp/ca.pem".into()) });
        assert!(split("postgres://h/db?sslmode=bogus").is_err());
        assert!(split("postgres://h/db?sslcert=a").is_err());
    }

    #[test]
    fn a_host_name_mismatch_names_the_host_and_what_the_certificate_names() {
        let text = "error performing TLS handshake: invalid peer certificate: certificate not valid for name \
                    \"wrong.example\"; certificate is only valid for DnsName(\"localhost\") or IpAddress(127.0.0.1)";
        assert_eq!(
            explain(text, "wrong.example").as_deref(),
            Some(
                "TLS: host name mismatch: the server's certificate is not valid for wrong.example \
                 (it names localhost or 127.0.0.1); connect by a name it lists, or use sslmode=verify-ca"
            )
        );
    }
}
