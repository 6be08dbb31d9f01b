//! Parsing `-l/--selector` into kube's label [`Selector`].
//!
//! kube-core provides the selector model and its matching but no parser for the string
//! form, so this is a small hand-written one for kubectl's grammar: `k=v`, `k==v`,
//! `k!=v`, `k`, `!k`, `k in (a,b)` and `k notin (a,b)`, joined by commas.

use std::collections::BTreeSet;

use kube::core::{Expression, Selector};

use super::ResourceError;

/// Parses a label selector; an empty string selects everything.
pub fn parse_selector(input: &str) -> Result<Selector, ResourceError> {
    let mut exprs = Vec::new();
    for part in split_top_level(input)? {
        let part = part.trim();
        if part.is_empty() {
            if input.trim().is_empty() {
                continue;
            }
            return Err(ResourceError::Selector(format!(
                "empty requirement in {input:?}"
            )));
        }
        exprs.push(parse_requirement(part)?);
    }
    Ok(exprs.into_iter().collect())
}

/// Splits at commas that are not inside `( … )`.
fn split_top_level(input: &str) -> Result<Vec<&str>, ResourceError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    ResourceError::Selector(format!("unbalanced ')' in {input:?}"))
                })?
            }
            ',' if depth == 0 => {
                parts.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(ResourceError::Selector(format!(
            "unbalanced '(' in {input:?}"
        )));
    }
    parts.push(&input[start..]);
    Ok(parts)
}

fn parse_requirement(req: &str) -> Result<Expression, ResourceError> {
    if let Some(key) = req.strip_prefix('!') {
        return Ok(Expression::DoesNotExist(check_key(key.trim())?));
    }
    if let Some((key, value)) = req.split_once("!=") {
        return Ok(Expression::NotEqual(
            check_key(key.trim())?,
            check_value(value.trim())?,
        ));
    }
    if let Some((key, value)) = req.split_once("==").or_else(|| req.split_once('=')) {
        return Ok(Expression::Equal(
            check_key(key.trim())?,
            check_value(value.trim())?,
        ));
    }
    let mut words = req.splitn(2, char::is_whitespace);
    let key = check_key(words.next().unwrap_or_default())?;
    let Some(rest) = words.next().map(str::trim) else {
        return Ok(Expression::Exists(key));
    };
    let (op, set) = rest
        .split_once(|c: char| c == '(' || c.is_whitespace())
        .map(|(op, set)| (op.trim(), set))
        .ok_or_else(|| {
            ResourceError::Selector(format!("expected 'in' or 'notin' and a set in {req:?}"))
        })?;
    let set = set.trim().trim_start_matches('(');
    let set = set
        .strip_suffix(')')
        .ok_or_else(|| ResourceError::Selector(format!("expected ')' at the end of {req:?}")))?;
    let values: BTreeSet<String> = set
        .split(',')
        .map(|v| check_value(v.trim()))
        .collect::<Result<_, _>>()?;
    match op {
        "in" => Ok(Expression::In(key, values)),
        "notin" => Ok(Expression::NotIn(key, values)),
        other => Err(ResourceError::Selector(format!(
            "unknown operator {other:?} in {req:?}"
        ))),
    }
}

/// Label keys: an optional DNS-subdomain prefix and `/`, then a name of at most 63
/// characters of alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric.
fn check_key(key: &str) -> Result<String, ResourceError> {
    let name = key.rsplit_once('/').map_or(key, |(_, n)| n);
    if name.is_empty() || !is_label_token(name) {
        return Err(ResourceError::Selector(format!(
            "invalid label key {key:?}"
        )));
    }
    Ok(key.to_string())
}

fn check_value(value: &str) -> Result<String, ResourceError> {
    if !value.is_empty() && !is_label_token(value) {
        return Err(ResourceError::Selector(format!(
            "invalid label value {value:?}"
        )));
    }
    Ok(value.to_string())
}

fn is_label_token(s: &str) -> bool {
    s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::SelectorExt;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn matches(sel: &str, pairs: &[(&str, &str)]) -> bool {
        parse_selector(sel)
            .expect("valid selector")
            .matches(&labels(pairs))
    }

    #[test]
    fn equality_and_inequality() {
        assert!(matches("app=web", &[("app", "web")]));
        assert!(matches(
            "app==web,tier=fe",
            &[("app", "web"), ("tier", "fe")]
        ));
        assert!(!matches("app=web,tier=fe", &[("app", "web")]));
        assert!(matches("app!=db", &[("app", "web")]));
        assert!(matches("app!=db", &[]));
    }

    #[test]
    fn existence_and_sets() {
        assert!(matches("app", &[("app", "x")]));
        assert!(matches("!app", &[("b", "x")]));
        assert!(matches("env in (prod, staging)", &[("env", "prod")]));
        assert!(!matches("env notin (prod,staging)", &[("env", "prod")]));
        assert!(matches(
            "example.com/team=a, env in (x,y)",
            &[("example.com/team", "a"), ("env", "y")]
        ));
    }

    #[test]
    fn empty_selects_everything() {
        assert!(matches("", &[]));
    }

    #[test]
    fn bad_selectors_are_errors() {
        for bad in [
            "app=we b",
            "=x",
            "a,,b",
            "env in (a",
            "env like (a)",
            "a=b)",
        ] {
            assert!(parse_selector(bad).is_err(), "{bad} should not parse");
        }
    }
}
