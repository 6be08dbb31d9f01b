//! The causes of a transport error, as far down as they go: `source()` alone stops
//! short of the `io::Error` at the bottom in two places the client meets, and the
//! words of a failure (`go_net`) and whether the bound cut it (`bound`) are read there.

use std::error::Error as StdError;

/// Every error of `err`'s chain, looking into `io::Error`s too (whose `source()`
/// skips the error they wrap, where rustls and hyper-util put theirs), and into
/// HTTP/2's errors (whose `source()` is always `None`: a connection's read timeout or
/// reset reaches each stream on it as an `h2::Error` holding the `io::Error`).
pub fn chain<'a>(err: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut all = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        all.push(e);
        let inner: Option<&(dyn StdError + 'static)> =
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                io.get_ref().map(|inner| inner as &(dyn StdError + 'static))
            } else if let Some(h2) = e.downcast_ref::<h2::Error>() {
                h2.get_io().map(|io| io as &(dyn StdError + 'static))
            } else {
                None
            };
        next = inner.or_else(|| e.source());
    }
    all
}
