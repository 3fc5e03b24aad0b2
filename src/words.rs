//! Counted nouns for messages and captions: "1 block", "2 blocks".

/// `n` and the noun in the number it needs: `count(1, "launch", "launches")` is "1 launch".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular_and_zero_plural() {
        assert_eq!(super::count(1, "block", "blocks"), "1 block");
        assert_eq!(super::count(0, "block", "blocks"), "0 blocks");
        assert_eq!(super::count(2, "copy", "copies"), "2 copies");
    }
}
