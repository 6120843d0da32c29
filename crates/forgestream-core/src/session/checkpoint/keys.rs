//! Storage keys of one client's namespace (DESIGN.md "Persistence"):
//!
//! - `<ns>:v1:session:<id>`: a session's [`Checkpoint`](super::Checkpoint);
//! - `<ns>:v1:last`: the last-session pointer of a same-origin client without a scope (the key
//!   of every version so far, so those pointers stay readable);
//! - `<ns>:v1:last@<hash>`: the pointer of one (base URL, scope) pair, `hash` = FNV-1a 64 of
//!   `base \0 scope` as 16 hex digits (two agents, two backends or two users on one origin keep
//!   their own "last session", while checkpoints and engines stay shared per namespace);
//! - `<ns>:v1:index`: the checkpoint index used for expiry (see [`super::index`]).
//!
//! Before 0.2 the TS layer gave each (base URL, scope) pair its own namespace
//! `<ns[..40]>@<hash>`; [`legacy_pointer_key`] names that pointer so it can be moved once.
use alloc::format;
use alloc::string::String;

/// FNV-1a, 64 bit, as 16 lower-case hex digits: a short, stable key part (not a secret).
pub fn fnv1a64_hex(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn scope_hash(base: &str, scope: Option<&str>) -> String {
    let text = [base, "\u{0}", scope.unwrap_or("")].concat();
    fnv1a64_hex(text.as_bytes())
}

/// `<ns>:v1:session:<id>`.
pub fn checkpoint_key(namespace: &str, session_id: &str) -> String {
    [namespace, ":v1:session:", session_id].concat()
}

/// `<ns>:v1:index`.
pub fn index_key(namespace: &str) -> String {
    [namespace, ":v1:index"].concat()
}

/// The last-session pointer of `scope` for a client of base URL `base` (`""` = same origin).
pub fn pointer_key(namespace: &str, base: &str, scope: Option<&str>) -> String {
    if base.is_empty() && scope.is_none() {
        [namespace, ":v1:last"].concat()
    } else {
        [namespace, ":v1:last@", &scope_hash(base, scope)].concat()
    }
}

/// The namespace an earlier version kept `scope`'s records in (`None` when it used the plain
/// namespace, whose keys are unchanged).
pub fn legacy_namespace(namespace: &str, base: &str, scope: Option<&str>) -> Option<String> {
    if base.is_empty() && scope.is_none() {
        return None;
    }
    let short: String = namespace.chars().take(40).collect();
    Some([short.as_str(), "@", &scope_hash(base, scope)].concat())
}

/// The pointer key of [`legacy_namespace`].
pub fn legacy_pointer_key(namespace: &str, base: &str, scope: Option<&str>) -> Option<String> {
    legacy_namespace(namespace, base, scope).map(|ns| [ns.as_str(), ":v1:last"].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_reference_vectors() {
        // FNV-1a 64 test vectors (Fowler/Noll/Vo): "" and "a".
        assert_eq!(fnv1a64_hex(b""), "cbf29ce484222325");
        assert_eq!(fnv1a64_hex(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn pointer_keys_differ_by_base_and_scope_only() {
        assert_eq!(pointer_key("fs", "", None), "fs:v1:last");
        let a = pointer_key("fs", "", Some("a"));
        let b = pointer_key("fs", "", Some("b"));
        let other_base = pointer_key("fs", "https://x", Some("a"));
        assert!(a.starts_with("fs:v1:last@") && a.len() == "fs:v1:last@".len() + 16);
        assert_ne!(a, b);
        assert_ne!(a, other_base);
        assert_eq!(a, pointer_key("fs", "", Some("a")));
        assert_eq!(checkpoint_key("fs", "s1"), "fs:v1:session:s1");
        assert_eq!(legacy_pointer_key("fs", "", None), None);
        assert_eq!(
            legacy_pointer_key("fs", "", Some("a")).unwrap(),
            ["fs@", &a["fs:v1:last@".len()..], ":v1:last"].concat()
        );
    }
}
