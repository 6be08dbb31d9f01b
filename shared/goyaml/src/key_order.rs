//! The order in which go-yaml v2 writes a map's keys: `keyList.Less` of its
//! `sorter.go`, which kubectl's `-o yaml` applies to every object (sigs.k8s.io/yaml
//! turns the object's JSON into Go maps first, so every key is a string).
//!
//! Not byte order: runs of digits compare as numbers (`9` before `10`), letters come
//! after everything else at the first rune where two keys differ, and a zero after a
//! non-zero digit is part of the number before it. The comparison is not transitive
//! for some sets of keys (`1e3` < `9` < `10` < `1e3`): for those, kubectl's own order
//! changes from run to run, as Go's map order feeds its sort; the keys here are sorted
//! by a stable merge sort from byte order, so the plugins always print one of the
//! orders kubectl prints, the same one each time. Rust's own sorts may panic on such a
//! comparison, hence the merge sort written here.

mod go_unicode;

/// `keyList.Less` for two string keys: whether `a` is written before `b`.
pub(crate) fn less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        // Go's int64 arithmetic wraps on long runs of digits; so does this.
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            // A zero continuing a number that has a non-zero digit before it.
            if ar[..i]
                .iter()
                .rev()
                .take_while(|c| is_digit(**c))
                .any(|c| *c != '0')
            {
                an = 1;
                bn = 1;
            }
        }
        let number = |runes: &[char], mut n: i64| {
            let mut end = i;
            while end < runes.len() && is_digit(runes[end]) {
                // `int64(r - '0')`: a digit of another script counts by its distance
                // from ASCII '0', as in Go.
                let value = i64::from(u32::from(runes[end])) - i64::from(b'0');
                n = n.wrapping_mul(10).wrapping_add(value);
                end += 1;
            }
            (n, end)
        };
        let (an, ai) = number(&ar, an);
        let (bn, bi) = number(&br, bn);
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Sorts `keys` by [`less`]: a stable bottom-up merge sort, which never panics and
/// always gives the same order for the same input, whatever the comparison does.
pub(crate) fn sort(keys: &mut Vec<&str>) {
    let n = keys.len();
    let mut from = std::mem::take(keys);
    let mut to = Vec::with_capacity(n);
    let mut width = 1;
    while width < n {
        to.clear();
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j) = (start, mid);
            while i < mid && j < end {
                // Take from the right only when it is strictly before: stable.
                if less(from[j], from[i]) {
                    to.push(from[j]);
                    j += 1;
                } else {
                    to.push(from[i]);
                    i += 1;
                }
            }
            to.extend_from_slice(&from[i..mid]);
            to.extend_from_slice(&from[j..end]);
            start = end;
        }
        std::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    *keys = from;
}

/// Go's `unicode.IsLetter`.
fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_table(go_unicode::LETTERS, c)
}

/// Go's `unicode.IsDigit`.
fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(go_unicode::DIGITS, c)
}

/// Whether `c` lies in one of the inclusive ranges of `pairs` (sorted, disjoint).
fn in_table(pairs: &[u32], c: char) -> bool {
    let c = u32::from(c);
    // The index of the first range that ends at or after `c`.
    let ranges = pairs.len() / 2;
    let (mut lo, mut hi) = (0, ranges);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pairs[2 * mid + 1] < c {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo < ranges && pairs[2 * lo] <= c
}

#[cfg(test)]
mod tests;
