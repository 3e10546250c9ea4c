//! The scrape endpoint's web configuration: Prometheus's exporter-toolkit
//! file (`--web.config.file` of node_exporter and every official exporter),
//! read as it reads it, and read again when it or a file it names changes.
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt          # relative to this file
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert
//!   client_ca_file: clients-ca.crt
//! basic_auth_users:
//!   prometheus: $2y$10$...         # htpasswd -nBC 10 "" | tr -d ':\n'
//! http_server_config:
//!   headers:
//!     X-Content-Type-Options: nosniff
//! ```
//!
//! Whether the endpoint speaks TLS is decided when it starts, as in
//! exporter-toolkit; everything else (certificates, client CAs, users,
//! headers, the rate limit) follows the files while it runs.

mod basic_auth;
mod client_auth;
mod error;
mod file;
mod rate_limit;
mod settings;
mod tls;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

pub use error::WebConfigError;
pub(crate) use settings::Settings;

/// A web configuration file, read again when it (or a certificate, key or
/// CA file it names) changes: checked on every new connection and every
/// request, by the files' size, modification time and inode, so a
/// rotated certificate or a new password takes effect at the next scrape.
/// A change that makes the file invalid closes the endpoint (500, or a
/// failed handshake) until it is fixed, as exporter-toolkit does: a broken
/// file never opens it.
pub struct WebConfig {
    path: PathBuf,
    tls_at_start: bool,
    state: Mutex<State>,
    auth: basic_auth::BasicAuth,
}

struct State {
    stamp: Vec<Stamp>,
    current: Result<Arc<Loaded>, String>,
}

/// What changes when a file is rewritten or replaced.
type Stamp = Option<(SystemTime, u64, u64)>;

/// One reading of the file, ready to serve with.
pub(crate) struct Loaded {
    pub(crate) settings: Settings,
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    limiter: Option<Mutex<rate_limit::Bucket>>,
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("path", &self.path)
            .field("tls", &self.tls_at_start)
            .finish_non_exhaustive()
    }
}

impl WebConfig {
    /// Reads and checks the file at `path`, loading the certificates it
    /// names: an error names the file, or the key and value at fault.
    pub fn load(path: impl Into<PathBuf>) -> Result<Arc<WebConfig>, WebConfigError> {
        let path = path.into();
        let loaded = load(&path)?;
        Ok(Arc::new(WebConfig {
            tls_at_start: loaded.tls.is_some(),
            state: Mutex::new(State {
                stamp: stamps(&path, &loaded.settings),
                current: Ok(Arc::new(loaded)),
            }),
            path,
            auth: basic_auth::BasicAuth::default(),
        }))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the endpoint speaks TLS (decided at start).
    pub fn tls(&self) -> bool {
        self.tls_at_start
    }

    /// Whether the file, as first read, keeps strangers out: TLS with
    /// client certificates required, or basic auth.
    pub fn authenticates(&self) -> bool {
        match self.current() {
            Ok(loaded) => {
                !loaded.settings.users.is_empty()
                    || loaded.settings.tls.as_ref().is_some_and(|t| {
                        matches!(
                            t.client_auth,
                            settings::ClientAuth::RequireAnyClientCert
                                | settings::ClientAuth::RequireAndVerifyClientCert
                        )
                    })
            }
            Err(_) => false,
        }
    }

    /// The configuration now, read again if a file changed.
    pub(crate) fn current(&self) -> Result<Arc<Loaded>, String> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let files = match &state.current {
            Ok(loaded) => loaded.settings.files(),
            // After a failed reading, the web configuration alone decides.
            Err(_) => Vec::new(),
        };
        let stamp = stamp_of(&self.path, &files);
        if stamp != state.stamp {
            state.current = load(&self.path)
                .map_err(|e| e.to_string())
                .and_then(|loaded| {
                    if loaded.tls.is_none() && self.tls_at_start {
                        Err(
                            "tls_server_config was removed from the file: the endpoint speaks TLS \
                             until it restarts"
                                .to_owned(),
                        )
                    } else {
                        Ok(Arc::new(loaded))
                    }
                });
            state.stamp = match &state.current {
                Ok(loaded) => stamps(&self.path, &loaded.settings),
                Err(_) => stamp_of(&self.path, &[]),
            };
            match &state.current {
                Ok(_) => {
                    tracing::info!(target: "nemo_lens", path = %self.path.display(), "Prometheus web configuration read again")
                }
                Err(error) => {
                    tracing::error!(target: "nemo_lens", path = %self.path.display(), %error, "the Prometheus web configuration is invalid: the endpoint refuses scrapes until it is fixed")
                }
            }
        }
        state.current.clone()
    }

    /// Whether the request may be served under `loaded`: `Err` with the
    /// status to answer (429 rate limited, 401 unauthenticated).
    pub(crate) async fn admit(
        &self,
        loaded: &Loaded,
        authorization: Option<&[u8]>,
    ) -> Result<(), u16> {
        if let Some(limiter) = &loaded.limiter
            && !limiter
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .allow(Instant::now())
        {
            return Err(429);
        }
        if !loaded.settings.users.is_empty()
            && !self
                .auth
                .allows(&loaded.settings.users, authorization)
                .await
        {
            return Err(401);
        }
        Ok(())
    }
}

fn load(path: &Path) -> Result<Loaded, WebConfigError> {
    let settings = settings::read(path)?;
    let tls = match &settings.tls {
        Some(tls) => Some(tls::server_config(path, tls)?),
        None => None,
    };
    let limiter = settings
        .rate_limit
        .map(|(every, burst)| Mutex::new(rate_limit::Bucket::new(every, burst, Instant::now())));
    Ok(Loaded {
        settings,
        tls,
        limiter,
    })
}

fn stamps(path: &Path, settings: &Settings) -> Vec<Stamp> {
    stamp_of(path, &settings.files())
}

fn stamp_of(path: &Path, files: &[PathBuf]) -> Vec<Stamp> {
    std::iter::once(path)
        .chain(files.iter().map(PathBuf::as_path))
        .map(|file| {
            let meta = std::fs::metadata(file).ok()?;
            #[cfg(unix)]
            let inode = std::os::unix::fs::MetadataExt::ino(&meta);
            #[cfg(not(unix))]
            let inode = 0;
            Some((meta.modified().ok()?, meta.len(), inode))
        })
        .collect()
}
