//! The bound on one paged listing (`GET …/turns`, `GET …/sessions/{sid}/events`,
//! `GET …/turns/{tid}/events`): which `next_page_token` is followed, and why a listing ends early.
//!
//! A server (or a proxy, or a bug) that answers the same `next_page_token` again would have the
//! SDK page forever; a server with more pages than the cap would have the rest silently dropped.
//! Both end the listing with what was received so far and a `protocol` warning that says so.
use crate::id_map::IdSet;
use alloc::format;
use alloc::string::String;

/// Where a listing goes after one page.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NextPage {
    /// Request the page at this token.
    Follow(String),
    /// The server says there is nothing more.
    Done,
    /// The listing ends early, with this warning (`protocol`): the token repeated one already
    /// followed in this listing, or the page cap was reached.
    Cut(String),
}

/// The tokens one listing has followed, and how many pages it has read.
#[derive(Debug, Default)]
pub(super) struct PageGuard {
    /// Every token followed in this listing (a loop may span several pages: A, B, A).
    seen: IdSet,
    /// Pages read so far, the first included.
    pages: u32,
}

impl PageGuard {
    /// One more page of `listing` (a name for the warning) arrived with `next`: decides whether
    /// the next one is requested. `max_pages` is the most pages the listing may read.
    pub(super) fn after_page(
        &mut self,
        listing: &str,
        next: Option<String>,
        max_pages: u32,
    ) -> NextPage {
        self.pages = self.pages.saturating_add(1);
        let Some(token) = next else {
            return NextPage::Done;
        };
        if self.seen.contains_key(&token) {
            return NextPage::Cut(format!(
                "the {listing} listing answered a next_page_token it had already sent after {} page(s); the listing ends there, with what was received",
                self.pages
            ));
        }
        if self.pages >= max_pages {
            return NextPage::Cut(format!(
                "the {listing} listing has more than {max_pages} pages; only the first {max_pages} were read"
            ));
        }
        self.seen.add(&token);
        NextPage::Follow(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Option<String> {
        Some(String::from(s))
    }

    #[test]
    fn follows_new_tokens_and_ends_when_there_is_none() {
        let mut g = PageGuard::default();
        assert_eq!(
            g.after_page("turns", t("a"), 10),
            NextPage::Follow("a".into())
        );
        assert_eq!(
            g.after_page("turns", t("b"), 10),
            NextPage::Follow("b".into())
        );
        assert_eq!(g.after_page("turns", None, 10), NextPage::Done);
        assert_eq!(g.pages, 3);
    }

    #[test]
    fn a_repeated_token_cuts_the_listing_even_across_pages() {
        let mut g = PageGuard::default();
        assert_eq!(
            g.after_page("turns", t("a"), 10),
            NextPage::Follow("a".into())
        );
        assert!(
            matches!(g.after_page("turns", t("a"), 10), NextPage::Cut(m) if m.contains("already sent after 2"))
        );
        let mut g = PageGuard::default();
        g.after_page("events", t("a"), 10);
        g.after_page("events", t("b"), 10);
        assert!(matches!(
            g.after_page("events", t("a"), 10),
            NextPage::Cut(_)
        ));
    }

    #[test]
    fn the_page_cap_cuts_with_a_warning() {
        let mut g = PageGuard::default();
        assert_eq!(
            g.after_page("events", t("a"), 2),
            NextPage::Follow("a".into())
        );
        assert!(
            matches!(g.after_page("events", t("b"), 2), NextPage::Cut(m) if m.contains("more than 2 pages"))
        );
        // The last page allowed, with nothing after it, is not a cut.
        let mut g = PageGuard::default();
        g.after_page("events", t("a"), 2);
        assert_eq!(g.after_page("events", None, 2), NextPage::Done);
    }
}
