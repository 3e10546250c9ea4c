//! `basic_auth_users`: bcrypt hashes checked off the server's thread, one
//! at a time (bcrypt is meant to be slow), with the outcome of each
//! credential kept so a scrape every second pays bcrypt once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;

/// Outcomes kept at most; past it the cache starts over (a flood of
/// distinct guesses costs bcrypt each, as it should).
const CACHED: usize = 1024;

/// The outcome of each credential seen, by a digest of user, hash and
/// password (never the password itself), and the dummy hashes that keep an
/// unknown user as slow as a known one.
#[derive(Default)]
pub(crate) struct BasicAuth {
    outcomes: Mutex<HashMap<[u8; 32], bool>>,
    /// One bcrypt at a time, as exporter-toolkit does.
    bcrypt: Arc<Mutex<()>>,
    dummies: Arc<Mutex<HashMap<u32, String>>>,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuth").finish_non_exhaustive()
    }
}

impl BasicAuth {
    /// Whether `authorization` (the request's header) names a user of
    /// `users` with its password.
    pub(crate) async fn allows(
        &self,
        users: &BTreeMap<String, String>,
        authorization: Option<&[u8]>,
    ) -> bool {
        let Some((user, password)) = authorization.and_then(credentials) else {
            return false;
        };
        let known = users.get(&user);
        let cost = users
            .values()
            .filter_map(|hash| super::settings::bcrypt_cost(hash))
            .max()
            .unwrap_or(10);
        let key = digest(&user, known.map_or("", String::as_str), &password);
        if let Some(outcome) = self
            .outcomes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return *outcome;
        }
        let (hash, exists) = match known {
            Some(hash) => (hash.clone(), true),
            None => (String::new(), false),
        };
        let (serial, dummies) = (self.bcrypt.clone(), self.dummies.clone());
        // bcrypt takes tens to hundreds of milliseconds: off the server's
        // only thread, so other scrapes go on meanwhile.
        let matched = tokio::task::spawn_blocking(move || {
            let _one_at_a_time = serial.lock().unwrap_or_else(PoisonError::into_inner);
            // An unknown user costs the same bcrypt as a known one, so the
            // time of a refusal does not tell whether the user exists.
            let hash = if exists { hash } else { dummy(&dummies, cost) };
            bcrypt::verify(password, &hash).unwrap_or(false) && exists
        })
        .await
        .unwrap_or(false);
        let mut outcomes = self.outcomes.lock().unwrap_or_else(PoisonError::into_inner);
        if outcomes.len() >= CACHED {
            outcomes.clear();
        }
        outcomes.insert(key, matched);
        matched
    }
}

/// A hash of a password nobody has, at `cost`: made once per cost.
fn dummy(dummies: &Mutex<HashMap<u32, String>>, cost: u32) -> String {
    let mut dummies = dummies.lock().unwrap_or_else(PoisonError::into_inner);
    dummies
        .entry(cost)
        .or_insert_with(|| {
            bcrypt::hash_with_salt("nemo-lens: no such user", cost, [7u8; 16])
                .map(|h| h.format_for_version(bcrypt::Version::TwoB))
                .unwrap_or_default()
        })
        .clone()
}

/// User and password of a `Basic` authorization header.
fn credentials(header: &[u8]) -> Option<(String, String)> {
    let header = std::str::from_utf8(header).ok()?.trim();
    let (scheme, token) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

fn digest(user: &str, hash: &str, password: &str) -> [u8; 32] {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [user, hash, password] {
        context.update(&(part.len() as u64).to_le_bytes());
        context.update(part.as_bytes());
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(context.finish().as_ref());
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user: &str, password: &str) -> Vec<u8> {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        )
        .into_bytes()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn known_users_with_their_password_pass_and_nobody_else() {
        let users: BTreeMap<String, String> =
            [("prometheus".to_owned(), bcrypt::hash("s3cret", 4).unwrap())].into();
        let auth = BasicAuth::default();
        assert!(
            auth.allows(&users, Some(&header("prometheus", "s3cret")))
                .await
        );
        // Cached: the same answer again.
        assert!(
            auth.allows(&users, Some(&header("prometheus", "s3cret")))
                .await
        );
        assert!(
            !auth
                .allows(&users, Some(&header("prometheus", "wrong")))
                .await
        );
        assert!(!auth.allows(&users, Some(&header("nobody", "s3cret"))).await);
        assert!(!auth.allows(&users, None).await);
        assert!(!auth.allows(&users, Some(b"Bearer abc")).await);
        assert!(!auth.allows(&users, Some(b"Basic !!!")).await);
        // A password with a colon is split at the first one, as RFC 7617 says.
        let users: BTreeMap<String, String> =
            [("u".to_owned(), bcrypt::hash("a:b", 4).unwrap())].into();
        assert!(auth.allows(&users, Some(&header("u", "a:b"))).await);
        assert_eq!(auth.outcomes.lock().unwrap().len(), 4);
    }
}
