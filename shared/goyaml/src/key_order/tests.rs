//! go-yaml v2's key order, against the order sigs.k8s.io/yaml v1.4.0 wrote.

use super::*;

fn sorted(keys: &[&'static str]) -> Vec<&'static str> {
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    sort(&mut keys);
    keys
}

#[test]
fn numbers_compare_as_numbers() {
    assert_eq!(
        sorted(&["10", "9", "a", "b1", "b10", "b2"]),
        ["9", "10", "a", "b1", "b2", "b10"]
    );
    assert_eq!(
        sorted(&["port-8080", "port-80", "port-443", "port-9"]),
        ["port-9", "port-80", "port-443", "port-8080"]
    );
    // Fewer digits first when the numbers are equal; a zero after a non-zero digit
    // belongs to the number before it.
    assert_eq!(
        sorted(&["a1", "a01", "a001", "a2", "a10", "a0"]),
        ["a0", "a1", "a01", "a001", "a2", "a10"]
    );
}

#[test]
fn letters_after_everything_else() {
    assert_eq!(
        sorted(&[
            "1", "10", "9", "a1", "a10", "a2", "B", "b", "_", "-", "é", "日本", "a01", "a001", "A",
            "Z", "z", "~", ".", "0", "00", "01"
        ]),
        [
            "-", ".", "_", "~", "0", "00", "1", "01", "9", "10", "A", "B", "Z", "a1", "a01",
            "a001", "a2", "a10", "b", "z", "é", "日本"
        ]
    );
    // The metadata of an object, as kubectl prints it.
    assert_eq!(
        sorted(&[
            "name",
            "labels",
            "annotations",
            "namespace",
            "generateName",
            "uid"
        ]),
        [
            "annotations",
            "generateName",
            "labels",
            "name",
            "namespace",
            "uid"
        ]
    );
}

/// Go's tests, not Rust's: `Ⅻ` (a letter number) is no letter, `٣` (an Arabic-Indic
/// digit) is a digit worth its distance from `0`.
#[test]
fn unicode_letters_and_digits_as_go_sees_them() {
    assert!(is_letter('é') && is_letter('日') && is_letter('ª'));
    assert!(!is_letter('Ⅻ') && 'Ⅻ'.is_alphabetic());
    assert!(!is_letter('\u{301}') && !is_letter('1') && !is_letter('_'));
    assert!(is_digit('٣') && is_digit('9') && !is_digit('²') && '²'.is_numeric());
    assert!(!is_digit('Ⅻ') && !is_digit('a'));
    // `٣` counts as 0x663 - 0x30 = 1587.
    assert!(less("x1586", "x٣") && less("x٣", "x1588"));
}

/// The tables are sorted, disjoint ranges, and agree with Rust's properties where
/// the two definitions coincide: every Go letter is alphabetic, every Go digit
/// numeric.
#[test]
fn tables_are_well_formed() {
    for table in [go_unicode::LETTERS, go_unicode::DIGITS] {
        assert_eq!(table.len() % 2, 0);
        for pair in table.chunks(2) {
            assert!(pair[0] <= pair[1]);
        }
        for window in table.windows(2) {
            assert!(window[0] <= window[1]);
        }
    }
    for c in ('\u{80}'..='\u{2ffff}').filter(|c| is_letter(*c)) {
        assert!(c.is_alphabetic(), "{c:?}");
    }
    for c in ('\u{80}'..='\u{2ffff}').filter(|c| is_digit(*c)) {
        assert!(c.is_numeric() && !c.is_alphabetic(), "{c:?}");
    }
}

/// `1e3` < `9` < `10` < `1e3`: kubectl's order for such keys changes from run to run;
/// here it is one of them, always the same, and the sort never panics.
#[test]
fn an_intransitive_set_sorts_the_same_every_time() {
    assert!(less("1e3", "9") && less("9", "10") && less("10", "1e3"));
    let first = sorted(&["10", "1e3", "9", "a", "b"]);
    assert_eq!(first, ["9", "10", "1e3", "a", "b"]);
    let mut reversed = vec!["b", "a", "9", "1e3", "10"];
    sort(&mut reversed);
    assert_eq!(reversed.len(), 5);
    for _ in 0..3 {
        assert_eq!(sorted(&["10", "1e3", "9", "a", "b"]), first);
    }
    // Long runs of digits wrap as Go's int64 does, without overflow panics.
    assert!(less(
        "99999999999999999999999999999",
        "99999999999999999999999999999x"
    ));
    let mut many: Vec<&str> = Vec::new();
    sort(&mut many);
    assert!(many.is_empty());
}
