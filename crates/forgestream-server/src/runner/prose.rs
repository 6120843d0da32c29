//! The generated prose of `say` steps with `generate` (the `storyteller` agent).

use crate::clock::TurnRng;

/// Non-ASCII prose of `words` words, deterministic for the rng.
pub(super) fn prose(rng: &mut TurnRng, words: usize) -> String {
    const VOCAB: &[&str] = &[
        "the",
        "river",
        "café",
        "naïve",
        "lantern",
        "日本語",
        "mountain",
        "Zoë",
        "whispered",
        "façade",
        "über",
        "ночь",
        "mañana",
        "🚀",
        "stars",
        "Ελλάδα",
        "smörgåsbord",
        "a",
        "of",
        "quietly",
        "👍🏽",
        "déjà",
        "vu",
        "garden",
        "中文",
        "and",
        "Ærø",
        "wind",
        "over",
        "the",
    ];
    let mut out = String::with_capacity(words * 7);
    let mut in_sentence = 0;
    for i in 0..words {
        let word = VOCAB[rng.below(VOCAB.len())];
        if in_sentence == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(word);
        }
        in_sentence += 1;
        let end = in_sentence >= 8 + rng.below(7) || i + 1 == words;
        if end {
            out.push('.');
            in_sentence = 0;
            if i + 1 < words {
                out.push_str(if rng.below(4) == 0 { "\n\n" } else { " " });
            }
        } else {
            out.push(' ');
        }
    }
    out
}
