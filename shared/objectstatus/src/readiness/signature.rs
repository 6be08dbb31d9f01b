//! What identifies a Service's Warning as one cause however the EndpointSlice
//! controller words it again: it lists the Service's endpoints in no fixed order
//! (`[endpoints[0].addresses[0]: Invalid value: "10.1.0.7": …, endpoints[1]…]`, the
//! next attempt with the two swapped) and names each slice it tried by a generated
//! name (`web-x7k2p`). The text printed stays the server's; only the signature that
//! decides whether a line is new is made independent of both.

/// `text` with the names generated from `service` masked (`web-x7k2p` → `web-*`),
/// and every bracketed list's elements sorted, their indexes masked
/// (`endpoints[1].addresses[0]` → `endpoints[*].addresses[*]`), nested lists too.
pub fn order_free(text: &str, service: &str) -> String {
    canonical(&mask_generated(text, service))
}

/// `web-x7k2p` → `web-*` wherever `service-` is followed by lowercase letters and
/// digits up to a character that cannot be in a name (`web-x7k2p EndpointSlice`,
/// `"web-x7k2p"`); a longer name of another object (`web-db-0`) keeps its text.
fn mask_generated(text: &str, service: &str) -> String {
    if service.is_empty() {
        return text.to_string();
    }
    let prefix = format!("{service}-");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&prefix) {
        let starts_word = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !is_name_char(c));
        out.push_str(&rest[..at + prefix.len()]);
        rest = &rest[at + prefix.len()..];
        let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        let suffix = &rest[..end];
        if starts_word
            && !suffix.is_empty()
            && suffix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            out.push('*');
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '.'
}

/// Lists in canonical form: each `[...]` that holds only digits becomes `[*]`, any
/// other has its top-level elements (split at `, ` outside brackets, parentheses and
/// quotes) made canonical and sorted. Quoted strings are copied as they are.
fn canonical(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or_default();
        match c {
            '"' => {
                let end = quoted_end(text, i);
                out.push_str(&text[i..end]);
                i = end;
            }
            '[' => {
                let Some(close) = matching(text, i) else {
                    out.push_str(&text[i..]);
                    break;
                };
                let inner = &text[i + 1..close];
                if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
                    out.push_str("[*]");
                } else {
                    let mut items: Vec<String> = split_top(inner).map(canonical).collect();
                    items.sort();
                    out.push('[');
                    out.push_str(&items.join(", "));
                    out.push(']');
                }
                i = close + 1;
            }
            _ => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// The index just past the quoted string opening at `start` (backslash escapes
/// honoured), or the text's end when it is not closed.
fn quoted_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// The index of the `]` closing the `[` at `open`, skipping quoted strings and
/// nested brackets and parentheses.
fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = quoted_end(text, i);
                continue;
            }
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (bytes[i] == b']').then_some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The elements of a list's inside: split at `, ` outside quotes, brackets,
/// parentheses and braces (`may not be in the loopback range (127.0.0.0/8, ::1/128)`
/// is one element).
fn split_top(inner: &str) -> impl Iterator<Item = &str> {
    let bytes = inner.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = quoted_end(inner, i);
                continue;
            }
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                parts.push(&inner[start..i]);
                start = i + 2;
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&inner[start..]);
    parts.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The controller's message for two pods on the loopback range, as a simulated
    /// node gave them: the same failure in both orders, from two slices' names.
    fn refused(slice: &str, first: &str, second: &str) -> String {
        format!(
            "FailedToUpdateEndpointSlices: Error updating Endpoint Slices for Service ns/web: failed to create EndpointSlice for Service ns/web: EndpointSlice.discovery.k8s.io \"{slice}\" is invalid: [endpoints[0].addresses[0]: Invalid value: \"{first}\": may not be in the loopback range (127.0.0.0/8, ::1/128), endpoints[1].addresses[0]: Invalid value: \"{second}\": may not be in the loopback range (127.0.0.0/8, ::1/128)]"
        )
    }

    #[test]
    fn the_order_of_the_addresses_and_the_slices_name_do_not_make_a_new_cause() {
        let one = refused("web-x7k2p", "127.0.0.2", "127.0.0.3");
        let other = refused("web-9qzrt", "127.0.0.3", "127.0.0.2");
        assert_ne!(one, other);
        assert_eq!(order_free(&one, "web"), order_free(&other, "web"));
        assert!(
            order_free(&one, "web").contains(
                "\"web-*\" is invalid: [endpoints[*].addresses[*]: Invalid value: \"127.0.0.2\""
            ),
            "{}",
            order_free(&one, "web")
        );
    }

    #[test]
    fn other_addresses_or_another_reason_are_another_cause() {
        let one = refused("web-x7k2p", "127.0.0.2", "127.0.0.3");
        let moved = refused("web-x7k2p", "127.0.0.2", "127.0.0.4");
        assert_ne!(order_free(&one, "web"), order_free(&moved, "web"));
        let conflict = "FailedToUpdateEndpointSlices: Error updating Endpoint Slices for Service ns/web: failed to update web-x7k2p EndpointSlice for Service ns/web: Operation cannot be fulfilled on endpointslices.discovery.k8s.io \"web-x7k2p\": the object has been modified; please apply your changes to the latest version and try again";
        assert_ne!(order_free(&one, "web"), order_free(conflict, "web"));
        // A conflict on another attempt's slice is the same cause.
        assert_eq!(
            order_free(conflict, "web"),
            order_free(&conflict.replace("x7k2p", "ab3cd"), "web")
        );
    }

    #[test]
    fn only_names_generated_from_the_service_are_masked() {
        assert_eq!(
            mask_generated("web-db-0 and \"web-x7k2p\" and myweb-abcde", "web"),
            "web-db-0 and \"web-*\" and myweb-abcde"
        );
        assert_eq!(mask_generated("web-", "web"), "web-");
    }

    #[test]
    fn lists_nest_and_quotes_keep_their_brackets() {
        assert_eq!(
            canonical("[b, [d, c], a(1, 0)] x[2] \"[z, y]\""),
            "[[c, d], a(1, 0), b] x[*] \"[z, y]\""
        );
        // Not closed: copied as it is.
        assert_eq!(canonical("a [b, c"), "a [b, c");
        assert_eq!(canonical("[]"), "[]");
    }
}
